//! Converting messages to `messages` rows and back.
//!
//! The reference columns are filled so reference tools (and full-text search) see our data, and
//! `raw_json` keeps the message exactly as appended wherever the columns would lose something
//! of it (a tool result's `name`, provider-specific fields, an absent `content`). Most messages
//! rebuild exactly from their columns, and storing their JSON a second time was a third of the
//! database; [`to_row`] checks the rebuild and leaves `raw_json` empty only when it is exact.
//! Reading prefers `raw_json`; rows without it (ours, and every row the reference wrote) are
//! rebuilt from the columns.

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

/// When a row carries the message's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawJson {
    /// Every row (for checking that a row's JSON reads back as the message).
    Always,
    /// Only rows whose columns do not rebuild the message exactly.
    WhereColumnsLose,
}

/// Columns of a message for storage. `call_names` maps tool-call ids seen so far to their
/// function names, to fill `tool_name` on tool results that do not carry a `name`.
pub fn to_row(m: &Message, call_names: &HashMap<String, String>, raw: RawJson) -> MessageRow {
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
    let mut row = MessageRow {
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
        raw_json: None,
        token_count: i64::try_from(RoughCounter.count_message(m)).ok(),
    };
    if raw == RawJson::WhereColumnsLose && columns_rebuild_plainly(m) {
        return row;
    }
    let value = m.to_value();
    if raw == RawJson::Always || columns_to_value(&row) != value {
        row.raw_json = Some(value.to_string());
    }
    row
}

/// The rows of a new session's messages, in order. A tool result without a `name` takes its
/// call's function name from an earlier message of the list: a new session has no earlier
/// calls stored, so this needs no database and can run beside the writer.
pub fn new_session_rows(messages: &[Message]) -> Vec<MessageRow> {
    let mut call_names = HashMap::new();
    messages
        .iter()
        .map(|m| {
            for call in m.calls() {
                call_names.insert(call.id.clone(), call.function.name.clone());
            }
            to_row(m, &call_names, RawJson::WhereColumnsLose)
        })
        .collect()
}

/// Whether `m` is a message the columns are known to rebuild exactly without comparing: a
/// role, text content (not the list sentinel's), and nothing else but a non-empty
/// `tool_call_id`. Most messages of a transcript are this, and building both JSON values to
/// compare them cost a tenth of a bulk import (issue #17); every other message is compared.
fn columns_rebuild_plainly(m: &Message) -> bool {
    let plain_text = match &m.content {
        Some(Content::Text(s)) => !s.starts_with(JSON_CONTENT_SENTINEL),
        Some(Content::Null) => true,
        _ => false,
    };
    plain_text
        && m.tool_calls.is_none()
        && m.name.is_none()
        && m.reasoning.is_empty()
        && m.extra.is_empty()
        && m.tool_call_id.as_ref().is_none_or(|id| !id.is_empty())
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

fn decode_content(s: Option<&str>) -> Value {
    match s {
        None => Value::Null,
        Some(s) => match s.strip_prefix(JSON_CONTENT_SENTINEL) {
            Some(json) => serde_json::from_str(json).unwrap_or_else(|_| Value::String(s.into())),
            None => Value::String(s.into()),
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
    columns_to_value(&row)
}

/// The message the reference columns describe (what a row without `raw_json` reads as).
fn columns_to_value(row: &MessageRow) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::String(row.role.clone()));
    m.insert("content".into(), decode_content(row.content.as_deref()));
    if let Some(calls) = row
        .tool_calls
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    {
        m.insert("tool_calls".into(), calls);
    }
    if let Some(id) = row.tool_call_id.as_deref().filter(|s| !s.is_empty()) {
        m.insert("tool_call_id".into(), Value::String(id.into()));
    }
    if Role::parse(&row.role) == Some(Role::Assistant) {
        if let Some(f) = row.finish_reason.as_deref().filter(|s| !s.is_empty()) {
            m.insert("finish_reason".into(), Value::String(f.into()));
        }
        if let Some(r) = row.reasoning.as_deref().filter(|s| !s.is_empty()) {
            m.insert("reasoning".into(), Value::String(r.into()));
        }
        if let Some(r) = row.reasoning_content.as_deref() {
            m.insert("reasoning_content".into(), Value::String(r.into()));
        }
        for (key, text) in [
            ("reasoning_details", &row.reasoning_details),
            ("codex_reasoning_items", &row.codex_reasoning_items),
            ("codex_message_items", &row.codex_message_items),
        ] {
            if let Some(v) = text
                .as_deref()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
            {
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
        let v = decode_content(Some(&s));
        assert_eq!(v[0]["text"], "hi");
    }

    /// The shortcut in `to_row` is only taken where the comparison it skips would find the
    /// rebuild exact.
    #[test]
    fn messages_taken_as_plainly_rebuilt_are_rebuilt_exactly() {
        let mut tool_named = Message::tool("c1", "x");
        tool_named.name = Some("grep".into());
        let mut extra = Message::assistant("a");
        extra
            .extra
            .insert("finish_reason".into(), Value::from("stop"));
        let mut reasoning = Message::assistant("a");
        reasoning
            .reasoning
            .insert("reasoning".into(), Value::from("r"));
        let cases = [
            (Message::user("hi"), true),
            (Message::assistant(""), true),
            (Message::system("s"), true),
            (Message::tool("c1", "out"), true),
            (Message::new(Role::Assistant, Some(Content::Null)), true),
            (Message::tool("", "empty id"), false),
            (Message::user(format!("{JSON_CONTENT_SENTINEL}[1]")), false),
            (Message::new(Role::User, None), false),
            (
                Message::assistant_tool_calls(vec![ToolCall::function("c", "f", "{}")]),
                false,
            ),
            (tool_named, false),
            (extra, false),
            (reasoning, false),
        ];
        for (m, plain) in cases {
            assert_eq!(columns_rebuild_plainly(&m), plain, "{m:?}");
            let row = to_row(&m, &HashMap::new(), RawJson::Always);
            let exact = columns_to_value(&row) == m.to_value();
            if plain {
                assert!(exact, "taken as plain but not rebuilt exactly: {m:?}");
            }
            let lean = to_row(&m, &HashMap::new(), RawJson::WhereColumnsLose);
            assert_eq!(lean.raw_json.is_none(), exact, "{m:?}");
        }
    }

    #[test]
    fn reference_rows_are_rebuilt_from_columns() {
        let mut names = HashMap::new();
        let call = Message::assistant_tool_calls(vec![ToolCall::function("c1", "grep", "{}")]);
        let mut row = to_row(&call, &names, RawJson::Always);
        names.insert("c1".to_string(), "grep".to_string());
        row.raw_json = None;
        let back = Message::from_value(row_to_value(row), 0).unwrap();
        assert_eq!(back, call);

        let mut tool_row = to_row(&Message::tool("c1", "found"), &names, RawJson::Always);
        assert_eq!(tool_row.tool_name.as_deref(), Some("grep"));
        tool_row.raw_json = None;
        let back = Message::from_value(row_to_value(tool_row), 1).unwrap();
        assert_eq!(back, Message::tool("c1", "found"));
    }

    /// What a stored row reads back as.
    fn read_back(row: MessageRow, index: usize) -> Message {
        Message::from_value(row_to_value(row), index).unwrap()
    }

    #[test]
    fn raw_json_is_kept_only_where_the_columns_lose_something() {
        let mut names = HashMap::new();
        names.insert("c1".to_string(), "grep".to_string());
        let plain = [
            Message::user("find the bug"),
            Message::assistant_tool_calls(vec![ToolCall::function("c1", "grep", "{\"q\":1}")]),
            Message::tool("c1", "found"),
            Message::new(
                Role::User,
                Some(Content::Parts(vec![
                    ContentPart::text("see"),
                    ContentPart::image_url("u"),
                ])),
            ),
        ];
        for (i, m) in plain.iter().enumerate() {
            let row = to_row(m, &names, RawJson::WhereColumnsLose);
            assert_eq!(row.raw_json, None, "message {i} rebuilds from its columns");
            assert_eq!(&read_back(row, i), m);
        }
        let mut named = Message::tool("c1", "found");
        named.name = Some("grep".into());
        let mut extra = Message::user("hi");
        extra.extra.insert("provider_field".into(), Value::from(7));
        let mut absent = Message::assistant_tool_calls(vec![ToolCall::function("c2", "ls", "{}")]);
        absent.content = None;
        for (i, m) in [named, extra, absent].iter().enumerate() {
            let row = to_row(m, &names, RawJson::WhereColumnsLose);
            assert!(row.raw_json.is_some(), "message {i} needs its JSON");
            assert_eq!(&read_back(row, i), m);
        }
    }
}
