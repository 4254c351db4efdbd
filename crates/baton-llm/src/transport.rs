//! The HTTP layer the clients share: one configured reqwest client, auth headers, retries,
//! error mapping, JSON bodies and SSE bodies.

use crate::errors::{LlmError, bound, error_chain};
use crate::redact_key::{ApiKey, scrub};
use crate::retry::RetryPolicy;
use crate::sse::{SseEvent, SseParser};
use reqwest::header::RETRY_AFTER;
use serde_json::Value;
use std::time::Duration;

/// Timeouts and retries for one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// Limit on establishing a connection: an unreachable host fails fast.
    pub connect_timeout: Duration,
    /// Limit on each wait for bytes (the response headers, every body chunk). Not a limit on
    /// the whole call: a long answer streams for as long as bytes keep coming.
    pub read_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// How the key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthStyle {
    /// `Authorization: Bearer <key>` (OpenAI and compatibles).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
}

/// Builds the reqwest client. The rustls ring provider is installed here so no caller can
/// forget it (installing twice is harmless; the error says it already is).
pub fn http_client(settings: &HttpSettings) -> Result<reqwest::Client, LlmError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .read_timeout(settings.read_timeout)
        .build()
        .map_err(|e| LlmError::InvalidRequest {
            message: format!("cannot build the HTTP client: {}", error_chain(&e)),
        })
}

/// Checks that `base_url` is an absolute http(s) URL and returns it without a trailing slash.
pub fn normalize_base_url(base_url: &str) -> Result<String, LlmError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|e| LlmError::InvalidRequest {
        message: format!("base URL `{trimmed}` is not a valid URL: {e}"),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(LlmError::InvalidRequest {
            message: format!("base URL `{trimmed}` must start with http:// or https://"),
        });
    }
    Ok(trimmed.to_string())
}

/// One provider's connection: where, with which key, how patiently.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub provider: String,
    pub base_url: String,
    key: Option<ApiKey>,
    auth: AuthStyle,
    headers: Vec<(&'static str, String)>,
    settings: HttpSettings,
    /// The variable the key comes from, named when a keyless request is refused.
    key_env: Option<String>,
}

impl Transport {
    pub fn new(
        provider: &str,
        base_url: &str,
        key: Option<ApiKey>,
        auth: AuthStyle,
        headers: Vec<(&'static str, String)>,
        settings: HttpSettings,
    ) -> Result<Transport, LlmError> {
        Ok(Transport {
            client: http_client(&settings)?,
            provider: provider.to_string(),
            base_url: normalize_base_url(base_url)?,
            key,
            auth,
            headers,
            settings,
            key_env: None,
        })
    }

    pub fn with_key_env(mut self, key_env: Option<String>) -> Transport {
        self.key_env = key_env;
        self
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    pub fn key(&self) -> Option<&ApiKey> {
        self.key.as_ref()
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let mut builder = self.client.request(method, url);
        if let Some(key) = &self.key {
            builder = match self.auth {
                AuthStyle::Bearer => builder.bearer_auth(key.expose()),
                AuthStyle::XApiKey => builder.header("x-api-key", key.expose()),
            };
        }
        for (name, value) in &self.headers {
            builder = builder.header(*name, value);
        }
        builder
    }

    /// POSTs `body` as JSON to `path`, retrying per the policy; returns the 2xx response and
    /// the attempts it took.
    pub async fn post(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<(reqwest::Response, u32), LlmError> {
        let url = self.url(path);
        let (result, attempts) = self
            .settings
            .retry
            .run(|| self.send(self.request(reqwest::Method::POST, &url).json(body), &url))
            .await;
        result.map(|r| (r, attempts))
    }

    /// GETs `path` and parses the JSON body, retrying per the policy.
    pub async fn get_json(&self, path: &str) -> Result<Value, LlmError> {
        let url = self.url(path);
        let (result, _) = self
            .settings
            .retry
            .run(|| self.send(self.request(reqwest::Method::GET, &url), &url))
            .await;
        self.read_json(result?, &url).await
    }

    /// POSTs and parses the JSON answer (used for listings such as Ollama's `/api/show`).
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, LlmError> {
        let url = self.url(path);
        let (response, _) = self.post(path, body).await?;
        self.read_json(response, &url).await
    }

    async fn send(
        &self,
        builder: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::Response, LlmError> {
        let response = builder
            .send()
            .await
            .map_err(|e| self.transport_error(url, &e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.text().await.unwrap_or_default();
        if let (None, Some(variable), 401 | 403) = (&self.key, &self.key_env, status.as_u16()) {
            // A request without a key was refused: the fix is the key, not the server.
            return Err(LlmError::MissingApiKey {
                provider: self.provider.clone(),
                url: url.to_string(),
                variable: variable.clone(),
                status: Some(status.as_u16()),
            });
        }
        Err(LlmError::from_http(
            &self.provider,
            status.as_u16(),
            &body,
            retry_after.as_deref(),
            self.key(),
        ))
    }

    pub fn transport_error(&self, url: &str, e: &reqwest::Error) -> LlmError {
        LlmError::from_transport(
            &self.provider,
            url,
            e,
            (self.settings.connect_timeout, self.settings.read_timeout),
            self.key(),
        )
    }

    /// Reads a whole JSON body.
    pub async fn read_json(
        &self,
        response: reqwest::Response,
        url: &str,
    ) -> Result<Value, LlmError> {
        let text = response
            .text()
            .await
            .map_err(|e| self.transport_error(url, &e))?;
        serde_json::from_str(&text).map_err(|e| {
            LlmError::invalid_response(
                &self.provider,
                format!(
                    "body is not JSON ({e}): {}",
                    bound(&scrub(&text, self.key()))
                ),
            )
        })
    }

    /// Feeds the SSE events of `response` to `on_event` as they arrive. `Err` carries a
    /// scrubbed description of why the body ended early (reset, timeout); a clean end of body
    /// is `Ok` whether or not the provider's final event came, which the caller checks.
    pub async fn read_sse(
        &self,
        mut response: reqwest::Response,
        mut on_event: impl FnMut(SseEvent),
    ) -> Result<(), LlmError> {
        let url = response.url().to_string();
        let mut parser = SseParser::new();
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => parser.push(&bytes).into_iter().for_each(&mut on_event),
                Ok(None) => {
                    if let Some(event) = parser.finish() {
                        on_event(event);
                    }
                    return Ok(());
                }
                Err(e) => return Err(self.transport_error(&url, &e)),
            }
        }
    }
}
