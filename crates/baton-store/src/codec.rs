//! Converting messages to `messages` rows and back.
//!
//! The reference columns are filled so reference tools (and full-text search) see our data, and
//! `raw_json` keeps the message exactly as appended. Reading prefers `raw_json`; rows written by
//! the reference (no `raw_json`) are rebuilt from the columns.

use baton_core::tokens::{RoughCounter, TokenCounter};
use baton_core::{Content, Message, Role};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Prefix the reference uses to store list-valued (multimodal) content in the TEXT column.
pub const JSON_CONTENT_SENTINEL: &str = "\u{0}json:";

/// The reference columns of one message row (plus `raw_json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageRow {
    pub role: String,
    pub content: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_calls: Option<String>,
    pub tool_name: Option<String>,
    pub finish_reason: Option<String>,
    pub reasoning: Option<String>,
    pub reasoning_content: Option<String>,
    pub reasoning_details: Option<String>,
    pub codex_reasoning_items: Option<String>,
    pub codex_message_items: Option<String>,
    pub raw_json: Option<String>,
    /// The reference's `token_count`: the rough estimate (characters / 4, CJK ¾ token each),
    /// cheap enough for every insert; exact counts depend on the model's tokenizer.
    pub token_count: Option<i64>,
}

/// Columns of a message for storage. `call_names` maps tool-call ids seen so far to their
/// function names, to fill `tool_name` on tool results that do not carry a `name`.
pub fn to_row(m: &Message, call_names: &HashMap<String, String>) -> MessageRow {
    let tool_calls = m
        .tool_calls
        .as_ref()
        .filter(|c| !c.is_empty())
        .map(|calls| Value::Array(calls.iter().map(|c| c.to_value()).collect()).to_string());
    let tool_name = m.name.clone().or_else(|| {
        m.tool_call_id
            .as_ref()
            .and_then(|id| call_names.get(id).cloned())
    });
    let str_field =
        |map: &Map<String, Value>, k: &str| map.get(k).and_then(Value::as_str).map(String::from);
    let json_field = |map: &Map<String, Value>, k: &str| {
        map.get(k).filter(|v| !v.is_null()).map(|v| v.to_string())
    };
    MessageRow {
        role: m.role.as_str().to_string(),
        content: encode_content(m.content.as_ref()),
        tool_call_id: m.tool_call_id.clone(),
        tool_calls,
        tool_name,
        finish_reason: str_field(&m.extra, "finish_reason"),
        reasoning: str_field(&m.reasoning, "reasoning"),
        reasoning_content: str_field(&m.reasoning, "reasoning_content"),
        reasoning_details: json_field(&m.reasoning, "reasoning_details"),
        codex_reasoning_items: json_field(&m.extra, "codex_reasoning_items"),
        codex_message_items: json_field(&m.extra, "codex_message_items"),
        raw_json: Some(m.to_json()),
        token_count: i64::try_from(RoughCounter.count_message(m)).ok(),
    }
}

/// Text content as is; parts as the reference's sentinel-prefixed JSON; null/absent as NULL.
pub fn encode_content(c: Option<&Content>) -> Option<String> {
    match c? {
        Content::Null => None,
        Content::Text(s) => Some(s.clone()),
        Content::Parts(parts) => {
            let arr = Value::Array(
                parts
                    .iter()
                    .map(|p| Value::Object(p.fields().clone()))
                    .collect(),
            );
            Some(format!("{JSON_CONTENT_SENTINEL}{arr}"))
        }
    }
}

fn decode_content(s: Option<String>) -> Value {
    match s {
        None => Value::Null,
        Some(s) => match s.strip_prefix(JSON_CONTENT_SENTINEL) {
            Some(json) => serde_json::from_str(json).unwrap_or(Value::String(s)),
            None => Value::String(s),
        },
    }
}

/// The JSON value of a stored row: `raw_json` when present and valid, else rebuilt from the
/// reference columns.
pub fn row_to_value(row: MessageRow) -> Value {
    if let Some(v) = row
        .raw_json
        .as_deref()
        .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        .filter(Value::is_object)
    {
        return v;
    }
    let mut m = Map::new();
    m.insert("role".into(), Value::String(row.role.clone()));
    m.insert("content".into(), decode_content(row.content));
    if let Some(calls) = row
        .tool_calls
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    {
        m.insert("tool_calls".into(), calls);
    }
    if let Some(id) = row.tool_call_id.filter(|s| !s.is_empty()) {
        m.insert("tool_call_id".into(), Value::String(id));
    }
    if Role::parse(&row.role) == Some(Role::Assistant) {
        if let Some(f) = row.finish_reason.filter(|s| !s.is_empty()) {
            m.insert("finish_reason".into(), Value::String(f));
        }
        if let Some(r) = row.reasoning.filter(|s| !s.is_empty()) {
            m.insert("reasoning".into(), Value::String(r));
        }
        if let Some(r) = row.reasoning_content {
            m.insert("reasoning_content".into(), Value::String(r));
        }
        for (key, text) in [
            ("reasoning_details", row.reasoning_details),
            ("codex_reasoning_items", row.codex_reasoning_items),
            ("codex_message_items", row.codex_message_items),
        ] {
            if let Some(v) = text.and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
                m.insert(key.into(), v);
            }
        }
    }
    Value::Object(m)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use baton_core::{ContentPart, ToolCall};

    #[test]
    fn multimodal_content_uses_the_reference_sentinel_and_decodes_back() {
        let c = Content::Parts(vec![ContentPart::text("hi"), ContentPart::image_url("u")]);
        let s = encode_content(Some(&c)).unwrap();
        assert!(s.starts_with(JSON_CONTENT_SENTINEL));
        let v = decode_content(Some(s));
        assert_eq!(v[0]["text"], "hi");
    }

    #[test]
    fn reference_rows_are_rebuilt_from_columns() {
        let mut names = HashMap::new();
        let call = Message::assistant_tool_calls(vec![ToolCall::function("c1", "grep", "{}")]);
        let mut row = to_row(&call, &names);
        names.insert("c1".to_string(), "grep".to_string());
        row.raw_json = None;
        let back = Message::from_value(row_to_value(row), 0).unwrap();
        assert_eq!(back, call);

        let mut tool_row = to_row(&Message::tool("c1", "found"), &names);
        assert_eq!(tool_row.tool_name.as_deref(), Some("grep"));
        tool_row.raw_json = None;
        let back = Message::from_value(row_to_value(tool_row), 1).unwrap();
        assert_eq!(back, Message::tool("c1", "found"));
    }
}
