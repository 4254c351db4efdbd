//! Assembling a streamed Responses answer.
//!
//! Output items open with `response.output_item.added`, grow through
//! `response.output_text.delta`, `response.reasoning_summary_text.delta` and
//! `response.function_call_arguments.delta`, and close with `response.output_item.done`.
//! `response.completed` (or `.incomplete`) carries the whole final response, which is then read
//! exactly like a non-streamed one; the per-item state only matters when the stream breaks off.

use crate::errors::LlmError;
use crate::response::{ChatResponse, StreamEvent};
use crate::responses::convert::parse_response;
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value, json};

#[derive(Debug, Default)]
pub(crate) struct ResponsesAssembler {
    items: Vec<Value>,
    /// Tool-call ordinal of each output item that is a function call.
    call_index: Vec<Option<usize>>,
    calls: usize,
    final_response: Option<Value>,
    pub error: Option<String>,
}

impl ResponsesAssembler {
    pub fn done(&self) -> bool {
        self.final_response.is_some()
    }

    pub fn on_event(&mut self, data: &str, sink: &mut dyn FnMut(StreamEvent)) {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(data) else {
            self.error
                .get_or_insert_with(|| format!("event data is not a JSON object: {data}"));
            return;
        };
        let index = event
            .get("output_index")
            .and_then(Value::as_u64)
            .map(|i| i as usize);
        let delta = event
            .get("delta")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "response.output_item.added" | "response.output_item.done" => {
                if let (Some(i), Some(item)) = (index, event.get("item")) {
                    self.set_item(i, item.clone(), sink);
                }
            }
            "response.output_text.delta" => {
                sink(StreamEvent::TextDelta(delta.clone()));
                if let Some(item) = index.and_then(|i| self.items.get_mut(i)) {
                    append_text(item, &delta);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                sink(StreamEvent::ReasoningDelta(delta));
            }
            "response.function_call_arguments.delta" => {
                let Some(i) = index else { return };
                if let Some(Value::Object(item)) = self.items.get_mut(i) {
                    let args = item.entry("arguments").or_insert_with(|| json!(""));
                    if let Value::String(s) = args {
                        s.push_str(&delta);
                    }
                }
                if let Some(Some(call)) = self.call_index.get(i) {
                    sink(StreamEvent::ToolCallDelta {
                        index: *call,
                        id: None,
                        name: None,
                        arguments: delta,
                    });
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = event.get("response") {
                    if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
                        sink(StreamEvent::Usage(normalize_usage(
                            ApiShape::Responses,
                            usage,
                        )));
                    }
                    self.final_response = Some(response.clone());
                }
            }
            "response.failed" | "error" => {
                let message = event
                    .get("response")
                    .and_then(|r| r.pointer("/error/message"))
                    .or_else(|| event.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or(data);
                self.error = Some(message.to_string());
            }
            _ => {}
        }
    }

    fn set_item(&mut self, index: usize, item: Value, sink: &mut dyn FnMut(StreamEvent)) {
        while self.items.len() <= index {
            self.items.push(Value::Null);
            self.call_index.push(None);
        }
        let is_call = item.get("type").and_then(Value::as_str) == Some("function_call");
        if is_call && self.call_index.get(index).is_some_and(Option::is_none) {
            if let Some(slot) = self.call_index.get_mut(index) {
                *slot = Some(self.calls);
            }
            sink(StreamEvent::ToolCallDelta {
                index: self.calls,
                id: item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                name: item.get("name").and_then(Value::as_str).map(str::to_string),
                arguments: String::new(),
            });
            self.calls += 1;
        }
        if let Some(slot) = self.items.get_mut(index) {
            *slot = item;
        }
    }

    /// The final response, or what arrived of it.
    pub fn finish(&self, provider: &str, attempts: u32) -> Result<ChatResponse, LlmError> {
        let body = match &self.final_response {
            Some(response) => response.clone(),
            None => {
                let mut partial = Map::new();
                let items = self.items.iter().filter(|i| !i.is_null()).cloned();
                partial.insert("output".into(), Value::Array(items.collect()));
                Value::Object(partial)
            }
        };
        parse_response(provider, body, attempts)
    }
}

/// Appends streamed text to a message item's last `output_text` part, creating it if needed.
fn append_text(item: &mut Value, delta: &str) {
    let Some(obj) = item.as_object_mut() else {
        return;
    };
    let content = obj.entry("content").or_insert_with(|| json!([]));
    let Some(parts) = content.as_array_mut() else {
        return;
    };
    if parts.is_empty() {
        parts.push(json!({"type": "output_text", "text": ""}));
    }
    if let Some(Value::String(text)) = parts.last_mut().and_then(|p| p.get_mut("text")) {
        text.push_str(delta);
    }
}
