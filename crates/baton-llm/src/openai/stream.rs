//! Assembling a streamed Chat Completions answer from its chunks.
//!
//! Text and reasoning arrive as string deltas; each tool call arrives as fragments keyed by
//! `index`, with its id and name in the first fragment and the arguments JSON split anywhere.
//! With `stream_options.include_usage` the usage comes in a last chunk with no choices.

use crate::response::{ChatResponse, FinishReason, StreamEvent};
use baton_core::message::{
    Content, FUNCTION_KIND, FunctionCall, Message, Role, ToolCall, call_kind,
};
use baton_core::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value};

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    kind: Option<String>,
    name: String,
    arguments: String,
}

/// Stream state; [`ChatAssembler::finish`] builds the response from whatever arrived.
#[derive(Debug, Default)]
pub(crate) struct ChatAssembler {
    text: String,
    /// Reasoning text per field name (`reasoning_content`, `reasoning`), in arrival order.
    reasoning: Map<String, Value>,
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: Option<Value>,
    id: Option<String>,
    model: Option<String>,
    metadata: Map<String, Value>,
    /// `[DONE]` arrived.
    pub done: bool,
    /// An `error` object the server sent inside the stream.
    pub error: Option<String>,
}

impl ChatAssembler {
    /// Whether the answer is known to be complete.
    pub fn is_complete(&self) -> bool {
        self.done || self.finish.is_some()
    }

    /// Applies one SSE `data` payload.
    pub fn on_data(&mut self, data: &str, sink: &mut dyn FnMut(StreamEvent)) {
        if data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(Value::Object(chunk)) = serde_json::from_str::<Value>(data) else {
            self.error
                .get_or_insert_with(|| format!("chunk is not a JSON object: {data}"));
            return;
        };
        if let Some(error) = chunk.get("error") {
            self.error = Some(error.to_string());
            return;
        }
        self.note_metadata(&chunk);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
            sink(StreamEvent::Usage(normalize_usage(
                ApiShape::ChatCompletions,
                usage,
            )));
        }
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(choice) = choice {
            if let Some(delta) = choice.get("delta") {
                self.apply_delta(delta, sink);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(reason.to_string());
            }
        }
    }

    fn note_metadata(&mut self, chunk: &Map<String, Value>) {
        for (key, value) in chunk {
            match key.as_str() {
                "id" => self.id = value.as_str().map(str::to_string).or(self.id.take()),
                "model" => self.model = value.as_str().map(str::to_string).or(self.model.take()),
                "choices" | "usage" | "object" => {}
                _ if !value.is_null() => {
                    self.metadata.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
    }

    fn apply_delta(&mut self, delta: &Value, sink: &mut dyn FnMut(StreamEvent)) {
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            sink(StreamEvent::TextDelta(text.to_string()));
        }
        for field in ["reasoning_content", "reasoning"] {
            if let Some(piece) = delta.get(field).and_then(Value::as_str)
                && !piece.is_empty()
            {
                let entry = self
                    .reasoning
                    .entry(field.to_string())
                    .or_insert_with(|| Value::String(String::new()));
                if let Value::String(s) = entry {
                    s.push_str(piece);
                }
                sink(StreamEvent::ReasoningDelta(piece.to_string()));
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for (position, call) in calls.into_iter().flatten().enumerate() {
            self.apply_call_delta(position, call, sink);
        }
    }

    fn apply_call_delta(
        &mut self,
        position: usize,
        call: &Value,
        sink: &mut dyn FnMut(StreamEvent),
    ) {
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| i as usize);
        while self.calls.len() <= index {
            self.calls.push(PartialCall::default());
        }
        let Some(slot) = self.calls.get_mut(index) else {
            return;
        };
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let arguments = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(id) = id {
            slot.id = id.to_string();
        }
        if let Some(kind) = call.get("type").and_then(Value::as_str) {
            slot.kind = Some(kind.to_string());
        }
        if let Some(name) = name {
            slot.name.push_str(name);
        }
        slot.arguments.push_str(arguments);
        sink(StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: arguments.to_string(),
        });
    }

    /// The response as assembled so far.
    pub fn finish(&self, attempts: u32) -> ChatResponse {
        let calls: Vec<ToolCall> = self
            .calls
            .iter()
            .filter(|c| !c.name.is_empty() || !c.arguments.is_empty())
            .map(|c| ToolCall {
                id: c.id.clone(),
                kind: Some(c.kind.clone().map_or(FUNCTION_KIND.into(), call_kind)),
                function: FunctionCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    extra: Default::default(),
                },
                extra: Default::default(),
            })
            .collect();
        let content = if self.text.is_empty() && !calls.is_empty() {
            Content::Null
        } else {
            Content::Text(self.text.clone())
        };
        let mut message = Message::new(Role::Assistant, Some(content));
        if !calls.is_empty() {
            message.tool_calls = Some(calls);
        }
        message.reasoning = self.reasoning.clone().into();
        ChatResponse {
            message,
            finish_reason: self
                .finish
                .as_deref()
                .map_or(FinishReason::Unknown, FinishReason::parse),
            usage: self
                .usage
                .as_ref()
                .map(|u| normalize_usage(ApiShape::ChatCompletions, u))
                .unwrap_or_default(),
            raw_usage: self.usage.clone(),
            model: self.model.clone(),
            id: self.id.clone(),
            metadata: self.metadata.clone(),
            attempts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_deltas_keep_their_field_name_and_errors_are_recorded() {
        let mut a = ChatAssembler::default();
        let mut events = Vec::new();
        let mut sink = |e: StreamEvent| events.push(e);
        a.on_data(
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}"#,
            &mut sink,
        );
        a.on_data(
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"more","content":"ok"}}]}"#,
            &mut sink,
        );
        a.on_data(r#"{"error":{"message":"upstream died"}}"#, &mut sink);
        let r = a.finish(1);
        assert_eq!(r.message.reasoning["reasoning_content"], "think more");
        assert_eq!(r.message.text(), "ok");
        assert!(
            a.error
                .as_deref()
                .is_some_and(|e| e.contains("upstream died"))
        );
        assert!(!a.is_complete());
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, StreamEvent::ReasoningDelta(_)))
                .count(),
            2
        );
    }
}
