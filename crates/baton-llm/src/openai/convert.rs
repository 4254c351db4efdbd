//! Chat Completions bodies ↔ canonical messages.
//!
//! The canonical model *is* the Chat Completions message format, so a request is the messages
//! as they are (after the cache layout) and a response message is read with
//! `Message::from_value`, which keeps every field it does not know (`refusal`, `annotations`,
//! `reasoning_content`, provider extensions) for the round trip.

use crate::errors::LlmError;
use crate::reasoning_models::{is_openai_reasoning_model, takes_sampling_params};
use crate::request::ChatRequest;
use crate::response::{ChatResponse, FinishReason};
use baton_core::caching::{layout_for, strip_cache_markers};
use baton_core::compress::markers::strip_internal_keys;
use baton_core::message::Message;
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value, json};

/// Response fields that have their own place in [`ChatResponse`].
const OWN_FIELDS: [&str; 4] = ["id", "model", "choices", "usage"];

/// The request body. `cache_route` is the provider id the cache layout decides on
/// (`openrouter`, `nous`…; plain OpenAI caches by itself and gets no markers).
pub(crate) fn request_body(req: &ChatRequest, cache_route: &str, stream: bool) -> Value {
    let messages = req.full_messages();
    let messages = match req.cache {
        Some(ttl) => layout_for(cache_route, &req.model, &messages, ttl),
        None => strip_cache_markers(&messages),
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "messages".into(),
        Value::Array(messages.into_iter().map(wire_message).collect()),
    );
    if !req.tools.is_empty() {
        body.insert("tools".into(), Value::Array(req.tools.clone()));
    }
    let reasoning = is_openai_reasoning_model(&req.model);
    if let Some(max) = req.max_output_tokens {
        // Reasoning models reject `max_tokens` ("Unsupported parameter … use
        // 'max_completion_tokens' instead"); other OpenAI-compatible servers may not know the
        // newer name, so it is sent only where it is required.
        let key = if reasoning {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(max));
    }
    if let Some(t) = req
        .temperature
        .filter(|t| takes_sampling_params(&req.model, *t))
    {
        body.insert("temperature".into(), json!(t));
    }
    if !req.stop.is_empty() && !reasoning {
        body.insert("stop".into(), json!(req.stop));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// A message as Chat Completions receives it: the canonical JSON without internal keys
/// (Baton's metadata such as `_baton_summary`, converters' round-trip notes, any `_`-key),
/// which strict servers reject.
pub(crate) fn wire_message(mut message: Message) -> Value {
    strip_internal_keys(&mut message);
    message.to_value()
}

/// Reads a (non-streamed) Chat Completions response.
pub(crate) fn parse_response(
    provider: &str,
    body: Value,
    attempts: u32,
) -> Result<ChatResponse, LlmError> {
    let invalid = |message: String| LlmError::invalid_response(provider, message);
    let obj = crate::errors::response_object(provider, body)?;
    let choice = obj
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("no `choices[0]` object".into()))?;
    let message_value = choice
        .get("message")
        .cloned()
        .ok_or_else(|| invalid("no `choices[0].message`".into()))?;
    let message = Message::from_value(message_value, 0)
        .map_err(|e| invalid(format!("choices[0].message: {e}")))?;
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map_or(FinishReason::Unknown, FinishReason::parse);
    let raw_usage = obj.get("usage").filter(|u| u.is_object()).cloned();
    let usage = raw_usage
        .as_ref()
        .map(|u| normalize_usage(ApiShape::ChatCompletions, u))
        .unwrap_or_default();
    let mut metadata: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !OWN_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let choice_rest: Map<String, Value> = choice
        .iter()
        .filter(|(k, _)| !["index", "message", "finish_reason"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !choice_rest.is_empty() {
        metadata.insert("choice".into(), Value::Object(choice_rest));
    }
    Ok(ChatResponse {
        message,
        finish_reason,
        usage,
        raw_usage,
        model: obj.get("model").and_then(Value::as_str).map(str::to_string),
        id: obj.get("id").and_then(Value::as_str).map(str::to_string),
        metadata,
        attempts,
    })
}
