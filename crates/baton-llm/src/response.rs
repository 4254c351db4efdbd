//! What a call returns, and what a stream yields on the way.

use baton_core::message::Message;
use baton_core::usage::CanonicalUsage;
use serde_json::{Map, Value};

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// Natural end or a stop sequence.
    Stop,
    /// The output cap was hit: the answer is truncated.
    Length,
    /// The model wants tool results.
    ToolCalls,
    ContentFilter,
    /// A reason this crate does not know, as the provider spelled it.
    Other(String),
    /// The provider gave none (an interrupted stream).
    Unknown,
}

impl FinishReason {
    /// Maps the values of all three APIs (`stop`, `length`, `tool_calls`, `end_turn`,
    /// `max_tokens`, `tool_use`, `stop_sequence`, `content_filter`, `refusal`…).
    pub fn parse(value: &str) -> FinishReason {
        match value {
            "stop" | "end_turn" | "stop_sequence" | "completed" => FinishReason::Stop,
            "length" | "max_tokens" | "max_output_tokens" | "model_context_window_exceeded" => {
                FinishReason::Length
            }
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
            FinishReason::Unknown => "unknown",
        }
    }
}

/// The assistant's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// Canonical assistant message: text, tool calls, reasoning, and every field the provider
    /// put on it.
    pub message: Message,
    pub finish_reason: FinishReason,
    /// Usage normalized for the API family (cached tokens apart from uncached input).
    pub usage: CanonicalUsage,
    /// The usage object as the provider sent it.
    pub raw_usage: Option<Value>,
    /// The model that answered, as the provider named it.
    pub model: Option<String>,
    /// The provider's response id.
    pub id: Option<String>,
    /// Every other top-level field of the response (`created`, `system_fingerprint`,
    /// `stop_sequence`, …), kept apart from the message so it is never sent back.
    pub metadata: Map<String, Value>,
    /// HTTP attempts this response took (1 without retries).
    pub attempts: u32,
}

/// A piece of a streamed answer, delivered as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// A fragment of tool call number `index`: the id and name arrive once, the arguments in
    /// pieces.
    ToolCallDelta {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    /// The usage report (usually in the last event).
    Usage(CanonicalUsage),
}
