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
}

impl ProviderConfig {
    pub fn new(kind: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: None,
            api_key: None,
            http: HttpSettings::default(),
            cache_route: None,
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
        let base = self
            .base_url
            .clone()
            .unwrap_or_else(|| self.kind.default_base_url().to_string());
        let name = self.kind.as_str();
        let key = self.api_key.clone();
        let bearer = |base: &str| {
            Transport::new(
                name,
                base,
                key.clone(),
                AuthStyle::Bearer,
                Vec::new(),
                self.http,
            )
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
                )?;
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
