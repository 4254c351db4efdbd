//! Rendering a reply in each API's wire format, whole or as SSE events.

mod chat;
mod messages;
mod responses;

use crate::reply::{Reply, Usage};
use crate::server::Api;
use serde_json::Value;

/// Everything needed to render one answer.
pub(crate) struct Answer<'a> {
    pub api: Api,
    /// The request's number (1-based), for deterministic ids.
    pub number: usize,
    pub model: String,
    pub reply: &'a Reply,
    pub usage: Usage,
}

impl Answer<'_> {
    pub(crate) fn call_id(&self, index: usize) -> String {
        format!("call_{}_{}", self.number, index)
    }
}

pub(crate) fn json(answer: &Answer<'_>) -> Value {
    match answer.api {
        Api::ChatCompletions => chat::json(answer),
        Api::Messages => messages::json(answer),
        Api::Responses => responses::json(answer),
    }
}

pub(crate) fn events(answer: &Answer<'_>) -> Vec<String> {
    match answer.api {
        Api::ChatCompletions => chat::events(answer),
        Api::Messages => messages::events(answer),
        Api::Responses => responses::events(answer),
    }
}

/// `data: …` with an optional `event:` line, as one SSE event.
pub(crate) fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// Splits text into a few stream deltas (on spaces, so words stay whole).
pub(crate) fn deltas(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for word in text.split_inclusive(' ') {
        current.push_str(word);
        if current.len() >= 16 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

pub(crate) fn last_user_text(api: Api, body: &Value) -> String {
    let list = match api {
        Api::Responses => body.get("input"),
        _ => body.get("messages"),
    };
    let Some(items) = list.and_then(Value::as_array) else {
        return String::new();
    };
    let Some(last) = items
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return String::new();
    };
    match last.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
