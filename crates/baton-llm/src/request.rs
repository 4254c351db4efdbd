//! One model call, independent of the wire format.

use baton_core::caching::CacheTtl;
use baton_core::message::Message;
use serde_json::Value;
use std::sync::Arc;

/// Everything a provider needs for one call. Each client converts it to its own wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    /// Sent as the leading system message (Chat Completions), `system` (Anthropic) or
    /// `instructions` (Responses).
    pub system: Option<String>,
    /// The conversation, canonical (OpenAI chat) messages. A leading system message here is
    /// joined after `system`. Shared, so an agent sends its history without copying it each
    /// call (`Arc::make_mut` gives a mutable copy where one is needed).
    pub messages: Arc<Vec<Message>>,
    /// Tool schemas in OpenAI form (`{"type":"function","function":{…}}`).
    pub tools: Vec<Value>,
    /// Output cap. `None` sends none where the API allows it (Anthropic requires one, so its
    /// client uses [`DEFAULT_ANTHROPIC_MAX_TOKENS`](crate::anthropic::DEFAULT_MAX_TOKENS)).
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stop: Vec<String>,
    /// Prompt-cache layout: `Some(ttl)` places `cache_control` markers with `baton-core`'s
    /// `system_and_3` layout where the route honours them; `None` sends none.
    pub cache: Option<CacheTtl>,
}

impl ChatRequest {
    /// A request for `model` with only the messages set.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> ChatRequest {
        ChatRequest::shared(model, Arc::new(messages))
    }

    /// A request over a shared history (no copy of the messages is made).
    pub fn shared(model: impl Into<String>, messages: Arc<Vec<Message>>) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            system: None,
            messages,
            tools: Vec::new(),
            max_output_tokens: None,
            temperature: None,
            stop: Vec::new(),
            cache: None,
        }
    }

    /// The system prompt followed by the messages: the canonical conversation as sent.
    pub(crate) fn full_messages(&self) -> Vec<Message> {
        let system = self
            .system
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| Message::system(s.clone()));
        system
            .into_iter()
            .chain(self.messages.iter().cloned())
            .collect()
    }

    /// Rejects what no provider accepts, before anything is sent.
    pub(crate) fn validate(&self) -> Result<(), crate::LlmError> {
        if self.model.trim().is_empty() {
            return Err(crate::LlmError::InvalidRequest {
                message: "no model given".into(),
            });
        }
        if self.messages.is_empty() {
            return Err(crate::LlmError::InvalidRequest {
                message: "no messages to send".into(),
            });
        }
        Ok(())
    }
}
