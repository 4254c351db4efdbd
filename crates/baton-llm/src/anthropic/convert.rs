//! Anthropic Messages bodies ↔ canonical messages, through `baton-core`'s lossless converter.
//!
//! The request is the canonical conversation laid out with `baton-core`'s cache layout (native
//! form: `cache_control` on the system block, on the last blocks of the newest messages and on
//! tool results) and written by `formats::anthropic::to_anthropic`. A response's content blocks
//! are read back by `from_anthropic`, which records whatever the generic rebuild would change,
//! so the assistant message replays byte-identically on the next turn — thinking signatures
//! included, which Anthropic checks.

use crate::errors::LlmError;
use crate::request::ChatRequest;
use crate::response::{ChatResponse, FinishReason};
use baton_core::caching::{apply_cache_layout, strip_cache_markers};
use baton_core::compress::markers::strip_internal_keys_except;
use baton_core::conversation::Conversation;
use baton_core::formats::anthropic::MARKER as ANTHROPIC_NOTES;
use baton_core::formats::anthropic::{from_anthropic, to_anthropic};
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value, json};

/// Used when the request sets no output cap: Anthropic requires `max_tokens`.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Response fields that have their own place in [`ChatResponse`].
const OWN_FIELDS: [&str; 5] = ["id", "model", "content", "usage", "stop_reason"];

pub(crate) fn request_body(req: &ChatRequest, stream: bool) -> Value {
    let messages = req.full_messages();
    let messages = match req.cache {
        Some(ttl) => apply_cache_layout(&messages, ttl, true),
        None => strip_cache_markers(&messages),
    };
    // Internal keys (`_baton_summary`, any `_`-key) would be written as message or block
    // fields, which the Messages API rejects; the converter's own notes are consumed by it.
    let messages = messages
        .into_iter()
        .map(|mut m| {
            strip_internal_keys_except(&mut m, Some(ANTHROPIC_NOTES));
            m
        })
        .collect();
    let mut conv = Conversation::new(messages);
    if !req.tools.is_empty() {
        conv.tools = Some(req.tools.clone());
    }
    let mut written = to_anthropic(&conv);
    move_message_markers_into_blocks(&mut written);
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Value::Object(fields) = written {
        body.extend(fields);
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !req.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(req.stop));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// The native layout marks an assistant message that only calls tools at message level (it has
/// no text to carry the marker), but the Messages API accepts `cache_control` only on blocks:
/// the marker moves to the message's last block, so the breakpoint stays where the layout put
/// it and the request is not rejected.
fn move_message_markers_into_blocks(body: &mut Value) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for message in messages.iter_mut().filter_map(Value::as_object_mut) {
        let Some(marker) = message.remove("cache_control") else {
            continue;
        };
        match message.get_mut("content") {
            Some(Value::Array(blocks)) => {
                if let Some(Value::Object(last)) = blocks.last_mut() {
                    last.entry("cache_control").or_insert(marker);
                }
            }
            Some(Value::String(text)) if !text.is_empty() => {
                let block = json!([{ "type": "text", "text": text, "cache_control": marker }]);
                message.insert("content".into(), block);
            }
            _ => {}
        }
    }
}

/// Reads a Messages response (`{"type":"message","content":[…],"usage":{…}}`).
pub(crate) fn parse_response(
    provider: &str,
    body: Value,
    attempts: u32,
) -> Result<ChatResponse, LlmError> {
    let invalid = |message: String| LlmError::invalid_response(provider, message);
    let obj = crate::errors::response_object(provider, body)?;
    let content = obj
        .get("content")
        .cloned()
        .ok_or_else(|| invalid("no `content`".into()))?;
    let conv = from_anthropic(&json!([{ "role": "assistant", "content": content }]))
        .map_err(|e| invalid(format!("content: {e}")))?;
    let message = conv
        .messages
        .into_iter()
        .next()
        .ok_or_else(|| invalid("no assistant message in `content`".into()))?;
    let raw_usage = obj.get("usage").filter(|u| u.is_object()).cloned();
    let usage = raw_usage
        .as_ref()
        .map(|u| normalize_usage(ApiShape::AnthropicMessages, u))
        .unwrap_or_default();
    Ok(ChatResponse {
        message,
        finish_reason: obj
            .get("stop_reason")
            .and_then(Value::as_str)
            .map_or(FinishReason::Unknown, FinishReason::parse),
        usage,
        raw_usage,
        model: obj.get("model").and_then(Value::as_str).map(str::to_string),
        id: obj.get("id").and_then(Value::as_str).map(str::to_string),
        metadata: obj
            .iter()
            .filter(|(k, _)| !OWN_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        attempts,
    })
}
