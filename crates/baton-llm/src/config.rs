//! Choosing and building a provider client from a few settings.

use crate::anthropic::{ANTHROPIC_VERSION, AnthropicClient};
use crate::errors::LlmError;
use crate::models::Listing;
use crate::openai::OpenAiClient;
use crate::provider::Provider;
use crate::redact_key::ApiKey;
use crate::responses::ResponsesClient;
use crate::transport::{AuthStyle, HttpSettings, Transport};
use std::sync::Arc;

/// The wire families and the servers with their own model listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions (OpenAI, OpenRouter, vLLM, llama.cpp…).
    OpenAi,
    Anthropic,
    /// OpenAI Responses.
    Responses,
    /// Ollama: Chat Completions under `/v1`, models from `/api/tags` + `/api/show`.
    Ollama,
    /// LM Studio: Chat Completions under `/v1`, models from `/api/v0/models`.
    LmStudio,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 5] = [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Responses,
        ProviderKind::Ollama,
        ProviderKind::LmStudio,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Responses => "responses",
            ProviderKind::Ollama => "ollama",
            ProviderKind::LmStudio => "lmstudio",
        }
    }

    /// Parses a provider id; `None` for an unknown one (the caller lists the valid ids).
    pub fn parse(s: &str) -> Option<ProviderKind> {
        let s = s.trim().to_ascii_lowercase();
        ProviderKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::Responses => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Ollama => "http://localhost:11434",
            ProviderKind::LmStudio => "http://localhost:1234",
        }
    }

    /// The environment variable the key is read from by default; local servers need none.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi | ProviderKind::Responses => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Ollama | ProviderKind::LmStudio => None,
        }
    }
}

/// Hosts of hosted APIs that answer nothing without a key. A missing key for one of them is
/// reported before any request; any other server (vLLM, llama.cpp, a proxy) may run without
/// one, so it is asked, and a 401/403 to a keyless request is reported the same way.
const KEYED_HOSTS: [&str; 12] = [
    "api.openai.com",
    "api.anthropic.com",
    "openrouter.ai",
    "api.deepseek.com",
    "generativelanguage.googleapis.com",
    "api.groq.com",
    "api.together.xyz",
    "api.mistral.ai",
    "api.x.ai",
    "api.fireworks.ai",
    "api.moonshot.ai",
    "api.cerebras.ai",
];

/// Whether a `kind` server at `base_url` is known to need a key. Local servers (Ollama,
/// LM Studio) never do; an unparsable URL is left to `build` to report.
pub fn needs_api_key(kind: ProviderKind, base_url: &str) -> bool {
    if matches!(kind, ProviderKind::Ollama | ProviderKind::LmStudio) {
        return false;
    }
    reqwest::Url::parse(base_url.trim())
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| {
            KEYED_HOSTS
                .iter()
                .any(|k| host == *k || host.ends_with(&format!(".{k}")))
        })
}

/// Everything needed to build a client.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// `None` uses [`ProviderKind::default_base_url`].
    pub base_url: Option<String>,
    pub api_key: Option<ApiKey>,
    pub http: HttpSettings,
    /// Provider id for the prompt-cache layout decision on Chat Completions routes
    /// (`openrouter` relays Claude's cache); defaults to the kind's id.
    pub cache_route: Option<String>,
    /// The environment variable the key is (or would be) read from, named by errors that
    /// need a key: [`ProviderConfig::key_from_env`] sets it.
    pub key_env: Option<String>,
}

impl ProviderConfig {
    pub fn new(kind: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: None,
            api_key: None,
            http: HttpSettings::default(),
            cache_route: None,
            key_env: None,
        }
    }

    /// The base URL requests go to: the configured one, else the kind's default.
    pub fn effective_base_url(&self) -> String {
        self.base_url
            .clone()
            .unwrap_or_else(|| self.kind.default_base_url().to_string())
    }

    /// Reads the key from `variable`, or from the kind's default variable (`OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY`) when `None`. Set the base URL first: whether a missing key is an
    /// error depends on the server.
    ///
    /// Fails with [`LlmError::MissingApiKey`], naming the variable, before anything is sent,
    /// when a variable the caller named explicitly is unset or empty, or when the server is
    /// one that needs a key ([`needs_api_key`]). Local and self-hosted servers run without one.
    pub fn key_from_env(mut self, variable: Option<&str>) -> Result<ProviderConfig, LlmError> {
        let explicit = variable.map(str::trim).filter(|v| !v.is_empty());
        let var = explicit.or(self.kind.default_key_env());
        self.key_env = var.map(str::to_string);
        self.api_key = var.and_then(ApiKey::from_env);
        let base = self.effective_base_url();
        let required = explicit.is_some() || needs_api_key(self.kind, &base);
        match (&self.api_key, var) {
            (None, Some(var)) if required => Err(LlmError::MissingApiKey {
                provider: self.kind.as_str().to_string(),
                url: base,
                variable: var.to_string(),
                status: None,
            }),
            _ => Ok(self),
        }
    }

    pub fn base_url(mut self, url: impl Into<String>) -> ProviderConfig {
        self.base_url = Some(url.into());
        self
    }

    pub fn api_key(mut self, key: Option<ApiKey>) -> ProviderConfig {
        self.api_key = key;
        self
    }

    pub fn http(mut self, http: HttpSettings) -> ProviderConfig {
        self.http = http;
        self
    }

    /// Builds the client. Fails only on a bad base URL or an HTTP client that cannot start.
    pub fn build(&self) -> Result<Arc<dyn Provider>, LlmError> {
        let base = self.effective_base_url();
        let name = self.kind.as_str();
        let key = self.api_key.clone();
        let key_env = self.key_env.clone();
        let bearer = |base: &str| {
            Transport::new(
                name,
                base,
                key.clone(),
                AuthStyle::Bearer,
                Vec::new(),
                self.http,
            )
            .map(|t| t.with_key_env(key_env.clone()))
        };
        let route = self.cache_route.clone().unwrap_or_else(|| name.to_string());
        Ok(match self.kind {
            ProviderKind::OpenAi => {
                Arc::new(OpenAiClient::new(bearer(&base)?, Listing::OpenAi, route))
            }
            ProviderKind::Ollama => Arc::new(OpenAiClient::new(
                bearer(server_root(&base))?,
                Listing::Ollama,
                route,
            )),
            ProviderKind::LmStudio => Arc::new(OpenAiClient::new(
                bearer(server_root(&base))?,
                Listing::LmStudio,
                route,
            )),
            ProviderKind::Responses => Arc::new(ResponsesClient::new(bearer(&base)?)),
            ProviderKind::Anthropic => {
                let headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
                let transport = Transport::new(
                    name,
                    server_root(&base),
                    key,
                    AuthStyle::XApiKey,
                    headers,
                    self.http,
                )?
                .with_key_env(key_env);
                Arc::new(AnthropicClient::new(transport))
            }
        })
    }
}

/// Ollama, LM Studio and Anthropic paths start at the server root; users often paste the
/// OpenAI-style `…/v1` URL, so a trailing `/v1` is dropped.
fn server_root(base: &str) -> &str {
    let trimmed = base.trim().trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_apis_need_a_key_and_local_or_self_hosted_servers_do_not() {
        use ProviderKind::*;
        assert!(needs_api_key(OpenAi, "https://api.openai.com/v1"));
        assert!(needs_api_key(Anthropic, "https://api.anthropic.com"));
        assert!(needs_api_key(OpenAi, "https://openrouter.ai/api/v1"));
        assert!(needs_api_key(Responses, "https://API.OpenAI.com/v1/"));
        assert!(!needs_api_key(OpenAi, "http://localhost:8000/v1"));
        assert!(!needs_api_key(OpenAi, "http://gpu-box:8000/v1"));
        assert!(!needs_api_key(Ollama, "https://api.openai.com"));
        assert!(!needs_api_key(
            OpenAi,
            "https://evil-api.openai.com.example/v1"
        ));
        assert!(!needs_api_key(OpenAi, "not a url"));
    }
}
