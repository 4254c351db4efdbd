//! Assembling a streamed Messages answer from its typed events.
//!
//! `message_start` carries the message skeleton and the input usage; each content block opens
//! with `content_block_start`, grows through `content_block_delta` (`text_delta`,
//! `thinking_delta`, `signature_delta`, `input_json_delta`, `citations_delta`) and closes with
//! `content_block_stop`; `message_delta` brings the stop reason and the output usage;
//! `message_stop` ends it. The blocks are rebuilt into the same body a non-streamed call
//! returns and read by the same converter, so both paths give identical messages.

use crate::anthropic::convert::parse_response;
use crate::errors::LlmError;
use crate::response::{ChatResponse, StreamEvent};
use baton_core::formats::anthropic::RAW_ARGUMENTS_KEY;
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value, json};

#[derive(Debug)]
struct Block {
    value: Map<String, Value>,
    /// Partial JSON of a `tool_use` input.
    input_json: String,
    /// Ordinal among tool calls, for [`StreamEvent::ToolCallDelta`].
    tool_index: Option<usize>,
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicAssembler {
    message: Map<String, Value>,
    usage: Map<String, Value>,
    blocks: Vec<Block>,
    tool_calls: usize,
    pub done: bool,
    pub error: Option<String>,
}

impl AnthropicAssembler {
    pub fn on_event(&mut self, name: Option<&str>, data: &str, sink: &mut dyn FnMut(StreamEvent)) {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(data) else {
            self.error
                .get_or_insert_with(|| format!("event data is not a JSON object: {data}"));
            return;
        };
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .or(name)
            .unwrap_or_default();
        match kind {
            "message_start" => {
                if let Some(Value::Object(message)) = event.get("message") {
                    self.message = message.clone();
                    if let Some(Value::Object(usage)) = message.get("usage") {
                        self.usage = usage.clone();
                    }
                }
            }
            "content_block_start" => self.start_block(&event, sink),
            "content_block_delta" => self.apply_delta(&event, sink),
            "content_block_stop" => self.stop_block(&event),
            "message_delta" => {
                if let Some(Value::Object(delta)) = event.get("delta") {
                    for (k, v) in delta {
                        self.message.insert(k.clone(), v.clone());
                    }
                }
                if let Some(Value::Object(usage)) = event.get("usage") {
                    // Cumulative counts: later values replace earlier ones.
                    for (k, v) in usage.iter().filter(|(_, v)| !v.is_null()) {
                        self.usage.insert(k.clone(), v.clone());
                    }
                    sink(StreamEvent::Usage(normalize_usage(
                        ApiShape::AnthropicMessages,
                        &Value::Object(self.usage.clone()),
                    )));
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let message = event
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or(data);
                self.error = Some(message.to_string());
            }
            _ => {} // ping and future event types
        }
    }

    fn block_mut(&mut self, event: &Map<String, Value>) -> Option<&mut Block> {
        let index = event.get("index").and_then(Value::as_u64)? as usize;
        self.blocks.get_mut(index)
    }

    fn start_block(&mut self, event: &Map<String, Value>, sink: &mut dyn FnMut(StreamEvent)) {
        let Some(Value::Object(block)) = event.get("content_block") else {
            return;
        };
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .map_or(self.blocks.len(), |i| i as usize);
        let mut value = block.clone();
        let tool_index =
            (block.get("type").and_then(Value::as_str) == Some("tool_use")).then(|| {
                self.tool_calls += 1;
                self.tool_calls - 1
            });
        if let Some(tool_index) = tool_index {
            sink(StreamEvent::ToolCallDelta {
                index: tool_index,
                id: block.get("id").and_then(Value::as_str).map(str::to_string),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                arguments: String::new(),
            });
            value.insert("input".into(), json!({}));
        }
        if let Some(text) = block
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            sink(StreamEvent::TextDelta(text.to_string()));
        }
        while self.blocks.len() <= index {
            self.blocks.push(Block {
                value: Map::new(),
                input_json: String::new(),
                tool_index: None,
            });
        }
        if let Some(slot) = self.blocks.get_mut(index) {
            *slot = Block {
                value,
                input_json: String::new(),
                tool_index,
            };
        }
    }

    fn apply_delta(&mut self, event: &Map<String, Value>, sink: &mut dyn FnMut(StreamEvent)) {
        let Some(Value::Object(delta)) = event.get("delta").cloned() else {
            return;
        };
        let Some(block) = self.block_mut(event) else {
            return;
        };
        let text_of = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "text_delta" => {
                let piece = text_of("text");
                append(&mut block.value, "text", &piece);
                sink(StreamEvent::TextDelta(piece));
            }
            "thinking_delta" => {
                let piece = text_of("thinking");
                append(&mut block.value, "thinking", &piece);
                sink(StreamEvent::ReasoningDelta(piece));
            }
            "signature_delta" => {
                block
                    .value
                    .insert("signature".into(), Value::String(text_of("signature")));
            }
            "input_json_delta" => {
                let piece = text_of("partial_json");
                block.input_json.push_str(&piece);
                if let Some(index) = block.tool_index {
                    sink(StreamEvent::ToolCallDelta {
                        index,
                        id: None,
                        name: None,
                        arguments: piece,
                    });
                }
            }
            "citations_delta" => {
                if let Some(citation) = delta.get("citation") {
                    let list = block
                        .value
                        .entry("citations")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(items) = list {
                        items.push(citation.clone());
                    }
                }
            }
            _ => {}
        }
    }

    fn stop_block(&mut self, event: &Map<String, Value>) {
        if let Some(block) = self.block_mut(event) {
            close_tool_input(block);
        }
    }

    /// The response as assembled so far (open tool inputs closed as well as they parse).
    pub fn finish(&mut self, provider: &str, attempts: u32) -> Result<ChatResponse, LlmError> {
        self.blocks.iter_mut().for_each(close_tool_input);
        let mut body = self.message.clone();
        body.insert(
            "content".into(),
            Value::Array(
                self.blocks
                    .iter()
                    .filter(|b| !b.value.is_empty())
                    .map(|b| Value::Object(b.value.clone()))
                    .collect(),
            ),
        );
        body.insert("usage".into(), Value::Object(self.usage.clone()));
        parse_response(provider, Value::Object(body), attempts)
    }
}

fn append(block: &mut Map<String, Value>, key: &str, piece: &str) {
    match block.get_mut(key) {
        Some(Value::String(s)) => s.push_str(piece),
        _ => {
            block.insert(key.into(), Value::String(piece.to_string()));
        }
    }
}

/// Parses the buffered input JSON of a tool_use block into `input`; text that is not a JSON
/// object (a cut stream) is kept under the raw-arguments key instead of being lost.
fn close_tool_input(block: &mut Block) {
    if block.tool_index.is_none() || block.input_json.is_empty() {
        return;
    }
    let raw = std::mem::take(&mut block.input_json);
    let input = match serde_json::from_str::<Value>(&raw) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ RAW_ARGUMENTS_KEY: raw }),
    };
    block.value.insert("input".into(), input);
}
