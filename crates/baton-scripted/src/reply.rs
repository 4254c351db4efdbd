//! What the server answers to one request.

use crate::server::Api;
use serde_json::{Value, json};
use std::time::Duration;

/// Token usage reported with a reply. `prompt` includes the cached tokens (as Chat Completions
/// and Responses count them); each API's own shape is derived from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    pub cache_write: u64,
    pub completion: u64,
}

/// One tool call the model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    pub name: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReplyKind {
    /// A final answer.
    Text(String),
    /// Tool calls (several means parallel calls), with optional text before them.
    ToolCalls {
        text: Option<String>,
        calls: Vec<ScriptedCall>,
    },
    /// An HTTP error with this status and body.
    Error {
        status: u16,
        body: String,
        retry_after: Option<u64>,
    },
    /// A streamed answer that stops after `text` without its end event.
    BrokenStream(String),
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub kind: ReplyKind,
    /// `None`: derived from the request (and the simulated cache, when on).
    pub usage: Option<Usage>,
    /// Wait before answering (interrupt and timeout tests).
    pub delay: Duration,
    /// Pause between streamed events (a visibly streaming answer for terminal tests).
    pub stream_interval: Duration,
    pub reasoning: Option<String>,
}

impl Reply {
    fn of(kind: ReplyKind) -> Reply {
        Reply {
            kind,
            usage: None,
            delay: Duration::ZERO,
            stream_interval: Duration::ZERO,
            reasoning: None,
        }
    }

    pub fn text(text: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Text(text.into()))
    }

    /// One tool call.
    pub fn tool_call(name: &str, arguments: Value) -> Reply {
        Reply::tool_calls(vec![(name, arguments)])
    }

    /// Several tool calls in one answer (parallel calls).
    pub fn tool_calls(calls: Vec<(&str, Value)>) -> Reply {
        Reply::of(ReplyKind::ToolCalls {
            text: None,
            calls: calls
                .into_iter()
                .map(|(name, arguments)| ScriptedCall {
                    name: name.to_string(),
                    arguments,
                })
                .collect(),
        })
    }

    pub fn error(status: u16, body: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Error {
            status,
            body: body.into(),
            retry_after: None,
        })
    }

    /// A context-window overflow as `api`'s servers word it, stating the window `limit`.
    pub fn context_overflow(api: Api, limit: u64, requested: u64) -> Reply {
        let body = match api {
            Api::ChatCompletions => json!({"error": {
                "message": format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {requested} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
            Api::Messages => json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("prompt is too long: {requested} tokens > {limit} maximum")}}),
            Api::Responses => json!({"error": {
                "message": format!("Your input exceeds the context window of this model: maximum context length is {limit} tokens, requested {requested}."),
                "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}}),
        };
        Reply::error(400, body.to_string())
    }

    /// An overflow that does not state the window (a proxy's 413).
    pub fn payload_too_large() -> Reply {
        Reply::error(
            413,
            json!({"error": {"message": "Request entity too large", "type": "invalid_request_error"}})
                .to_string(),
        )
    }

    /// The requested output cap is over the model's: `available` is its maximum.
    pub fn output_cap_too_large(api: Api, requested: u64, available: u64) -> Reply {
        let body = match api {
            Api::Messages => json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("max_tokens: {requested} > {available}, which is the maximum allowed number of output tokens for claude-scripted")}}),
            Api::ChatCompletions | Api::Responses => json!({"error": {
                "message": format!("max_tokens is too large: {requested}. This model supports at most {available} completion tokens, whereas you provided {requested}."),
                "type": "invalid_request_error", "param": "max_tokens", "code": "invalid_value"}}),
        };
        Reply::error(400, body.to_string())
    }

    /// 429 with a `Retry-After` of `seconds`.
    pub fn rate_limited(seconds: u64) -> Reply {
        Reply::of(ReplyKind::Error {
            status: 429,
            body: json!({"error": {"message": "Rate limit reached, please retry", "type": "rate_limit_error"}})
                .to_string(),
            retry_after: Some(seconds),
        })
    }

    pub fn server_error() -> Reply {
        Reply::error(
            500,
            json!({"error": {"message": "The server had an error processing your request", "type": "server_error"}})
                .to_string(),
        )
    }

    pub fn broken_stream(text: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::BrokenStream(text.into()))
    }

    pub fn with_usage(mut self, usage: Usage) -> Reply {
        self.usage = Some(usage);
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    pub fn with_stream_interval(mut self, interval: Duration) -> Reply {
        self.stream_interval = interval;
        self
    }

    pub fn with_reasoning(mut self, text: impl Into<String>) -> Reply {
        self.reasoning = Some(text.into());
        self
    }

    /// Text said before this reply's tool calls.
    pub fn with_text(mut self, said: impl Into<String>) -> Reply {
        if let ReplyKind::ToolCalls { text, .. } = &mut self.kind {
            *text = Some(said.into());
        }
        self
    }
}
