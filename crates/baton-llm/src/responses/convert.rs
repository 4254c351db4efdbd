//! OpenAI Responses bodies ↔ canonical messages.
//!
//! | canonical | Responses input/output item |
//! |---|---|
//! | system / developer / user message | `{"role", "content"}` (`text` → `input_text`, `image_url` → `input_image`) |
//! | assistant text | `message` item with `output_text` parts |
//! | assistant `tool_calls` | `function_call` items (`call_id`, `name`, `arguments`) |
//! | `tool` message | `function_call_output` (`call_id`, `output`) |
//! | `reasoning_details` (format `openai-responses-v1`) | `reasoning` items (`summary`, `encrypted_content`), grouped by `id` |
//!
//! The response's whole `output` array is also kept verbatim in `ChatResponse::metadata`
//! (`output`), so nothing the API returned is lost even where the message has no field for it.
//! `stop` has no Responses equivalent and is not sent.

use crate::errors::LlmError;
use crate::reasoning_models::takes_sampling_params;
use crate::request::ChatRequest;
use crate::response::{ChatResponse, FinishReason};
use baton_core::compress::markers::strip_internal_keys;
use baton_core::formats::codex::{REASONING_FORMAT, reasoning_entries};
use baton_core::message::{
    Content, ContentPart, FUNCTION_KIND, FunctionCall, Message, Role, ToolCall,
};
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value, json};

type Object = Map<String, Value>;

const OWN_FIELDS: [&str; 4] = ["id", "model", "usage", "output"];

pub(crate) fn request_body(req: &ChatRequest, stream: bool) -> Value {
    let mut body = Object::new();
    body.insert("model".into(), json!(req.model));
    if let Some(system) = req.system.as_ref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), json!(system));
    }
    let input: Vec<Value> = req
        .messages
        .iter()
        .cloned()
        .flat_map(|mut m| {
            // Content parts of types this converter does not rewrite are sent as they are.
            strip_internal_keys(&mut m);
            input_items(&m)
        })
        .collect();
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(req.tools.iter().map(flat_tool).collect()),
        );
    }
    if let Some(max) = req.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if let Some(t) = req
        .temperature
        .filter(|t| takes_sampling_params(&req.model, *t))
    {
        body.insert("temperature".into(), json!(t));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// `{"type":"function","function":{name,…}}` → `{"type":"function",name,…}`.
fn flat_tool(tool: &Value) -> Value {
    match tool.get("function").and_then(Value::as_object) {
        Some(function) => {
            let mut out = Object::new();
            out.insert("type".into(), json!("function"));
            out.extend(function.clone());
            Value::Object(out)
        }
        None => tool.clone(),
    }
}

fn input_items(message: &Message) -> Vec<Value> {
    match message.role {
        Role::Tool => vec![json!({
            "type": "function_call_output",
            "call_id": message.tool_call_id.clone().unwrap_or_default(),
            "output": message.text(),
        })],
        Role::Assistant => assistant_items(message),
        role => vec![
            json!({ "role": role.as_str(), "content": input_content(message.content.as_ref()) }),
        ],
    }
}

fn input_content(content: Option<&Content>) -> Value {
    match content {
        Some(Content::Parts(parts)) => Value::Array(parts.iter().map(input_part).collect()),
        other => Value::String(other.map(Content::text).unwrap_or_default()),
    }
}

fn input_part(part: &ContentPart) -> Value {
    let fields = part.fields();
    match part.type_name() {
        "text" => json!({"type": "input_text", "text": part.text_value().unwrap_or_default()}),
        "image_url" => {
            let url = fields
                .get("image_url")
                .and_then(|v| v.get("url").or(Some(v)))
                .and_then(Value::as_str)
                .unwrap_or_default();
            json!({"type": "input_image", "image_url": url})
        }
        _ => Value::Object(fields.clone()),
    }
}

fn assistant_items(message: &Message) -> Vec<Value> {
    let mut items = reasoning_items(message);
    let text = message.text();
    if !text.is_empty() {
        items.push(json!({
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }));
    }
    for call in message.calls() {
        items.push(json!({
            "type": "function_call",
            "call_id": call.id,
            "name": call.function.name,
            "arguments": call.function.arguments,
        }));
    }
    items
}

/// Rebuilds `reasoning` items from this API's `reasoning_details` entries (others cannot be
/// replayed here and are dropped).
fn reasoning_items(message: &Message) -> Vec<Value> {
    let entries = message
        .reasoning
        .get("reasoning_details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e.get("format").and_then(Value::as_str) == Some(REASONING_FORMAT));
    let mut items: Vec<Object> = Vec::new();
    for entry in entries {
        let id = entry.get("id").cloned().unwrap_or(Value::Null);
        let position = items.iter().position(|i| i.get("id") == Some(&id));
        let item = match position.and_then(|p| items.get_mut(p)) {
            Some(item) => item,
            None => {
                let mut item = Object::new();
                item.insert("type".into(), json!("reasoning"));
                if !id.is_null() {
                    item.insert("id".into(), id);
                }
                item.insert("summary".into(), json!([]));
                items.push(item);
                let last = items.len() - 1;
                let Some(item) = items.get_mut(last) else {
                    continue;
                };
                item
            }
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("reasoning.summary") => {
                if let Some(Value::Array(summary)) = item.get_mut("summary") {
                    summary.push(json!({"type": "summary_text", "text": entry.get("summary").cloned().unwrap_or_default()}));
                }
            }
            Some("reasoning.encrypted") => {
                item.insert(
                    "encrypted_content".into(),
                    entry.get("data").cloned().unwrap_or_default(),
                );
            }
            _ => {}
        }
    }
    items.into_iter().map(Value::Object).collect()
}

/// Reads a Responses object (non-streamed body, or the `response` of `response.completed`).
pub(crate) fn parse_response(
    provider: &str,
    body: Value,
    attempts: u32,
) -> Result<ChatResponse, LlmError> {
    let invalid = |message: String| LlmError::invalid_response(provider, message);
    let obj = crate::errors::response_object(provider, body)?;
    let output = obj
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no `output` array".into()))?;
    let message = message_from_output(output);
    let raw_usage = obj.get("usage").filter(|u| u.is_object()).cloned();
    let usage = raw_usage
        .as_ref()
        .map(|u| normalize_usage(ApiShape::Responses, u))
        .unwrap_or_default();
    let mut metadata: Object = obj
        .iter()
        .filter(|(k, _)| !OWN_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    metadata.insert("output".into(), Value::Array(output.clone()));
    Ok(ChatResponse {
        finish_reason: finish_reason(&obj, &message),
        message,
        usage,
        raw_usage,
        model: obj.get("model").and_then(Value::as_str).map(str::to_string),
        id: obj.get("id").and_then(Value::as_str).map(str::to_string),
        metadata,
        attempts,
    })
}

fn finish_reason(obj: &Object, message: &Message) -> FinishReason {
    match obj.get("status").and_then(Value::as_str) {
        Some("incomplete") => obj
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map_or(FinishReason::Length, FinishReason::parse),
        Some("completed") if message.has_tool_calls() => FinishReason::ToolCalls,
        Some(status) => FinishReason::parse(status),
        None => FinishReason::Unknown,
    }
}

/// Folds the output items into one assistant message.
pub(crate) fn message_from_output(output: &[Value]) -> Message {
    let mut text = String::new();
    let mut reasoning = Vec::new();
    let mut calls = Vec::new();
    let mut extra = Object::new();
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            text.push_str(
                                part.get("text").and_then(Value::as_str).unwrap_or_default(),
                            );
                        }
                        Some("refusal") => {
                            extra.insert(
                                "refusal".into(),
                                part.get("refusal").cloned().unwrap_or_default(),
                            );
                        }
                        _ => {}
                    }
                }
            }
            Some("reasoning") => {
                reasoning.extend(item.as_object().map(reasoning_entries).unwrap_or_default())
            }
            Some("function_call") => calls.push(function_call(item)),
            _ => {}
        }
    }
    let content = if text.is_empty() && !calls.is_empty() {
        Content::Null
    } else {
        Content::Text(text)
    };
    let mut message = Message::new(Role::Assistant, Some(content));
    if !calls.is_empty() {
        message.tool_calls = Some(calls);
    }
    if !reasoning.is_empty() {
        message
            .reasoning
            .insert("reasoning_details".into(), Value::Array(reasoning));
    }
    message.extra = extra.into();
    message
}

fn function_call(item: &Value) -> ToolCall {
    let text = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut extra = Object::new();
    if let Some(id) = item.get("id") {
        // The item id differs from the call id; keep it for the record.
        extra.insert("item_id".into(), id.clone());
    }
    ToolCall {
        id: text("call_id"),
        kind: Some(FUNCTION_KIND.into()),
        function: FunctionCall {
            name: text("name"),
            arguments: text("arguments"),
            extra: Default::default(),
        },
        extra: extra.into(),
    }
}
