//! OpenAI chat format, the canonical one: a message array, or a record object
//! `{"messages": [...], "tools": [...], ...}` whose other keys travel with the conversation.

use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::message::{Message, describe_value};
use serde_json::{Map, Value};

/// Parses a JSON array of OpenAI messages.
pub fn messages_from_array(items: Vec<Value>) -> Result<Vec<Message>, FormatError> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| Message::from_value(v, i).map_err(FormatError::from))
        .collect()
}

/// Parses a record object: `messages` is required, `tools` optional, everything else is kept.
pub fn conversation_from_object(obj: Map<String, Value>) -> Result<Conversation, FormatError> {
    let field_order: Vec<String> = obj.keys().cloned().collect();
    let mut extra = obj;
    let messages = match extra.shift_remove("messages") {
        Some(Value::Array(items)) => messages_from_array(items)?,
        Some(other) => return Err(shape("messages", "an array of messages", &other)),
        None => {
            return Err(FormatError::Shape {
                at: "messages".into(),
                expected: "an array of messages".into(),
                found: "nothing (field missing)".into(),
            });
        }
    };
    let tools = match extra.shift_remove("tools") {
        None => None,
        Some(Value::Array(tools)) => Some(tools),
        Some(other) => {
            // Not a schema list (e.g. `null`): keep it as an opaque field so it round-trips.
            extra.insert("tools".into(), other);
            None
        }
    };
    Ok(Conversation {
        messages,
        tools,
        extra,
        field_order,
    })
}

/// The conversation as a record object, keys in their original order.
pub fn conversation_to_object(conv: &Conversation) -> Value {
    let messages = Value::Array(conv.messages.iter().map(Message::to_value).collect());
    let tools = conv.tools.as_ref().map(|t| Value::Array(t.clone()));
    let mut out = Map::new();
    for key in &conv.field_order {
        match key.as_str() {
            "messages" => {
                out.insert(key.clone(), messages.clone());
            }
            "tools" => {
                if let Some(v) = conv.tools.as_ref().map(|t| Value::Array(t.clone())) {
                    out.insert(key.clone(), v);
                } else if let Some(v) = conv.extra.get(key) {
                    out.insert(key.clone(), v.clone());
                }
            }
            _ => {
                if let Some(v) = conv.extra.get(key) {
                    out.insert(key.clone(), v.clone());
                }
            }
        }
    }
    // Anything added since loading (or everything, for a conversation built in code).
    for (k, v) in &conv.extra {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    if !out.contains_key("messages") {
        out.insert("messages".into(), messages);
    }
    if let (false, Some(t)) = (out.contains_key("tools"), tools) {
        out.insert("tools".into(), t);
    }
    Value::Object(out)
}

/// The conversation's messages as a JSON array.
pub fn messages_to_array(conv: &Conversation) -> Value {
    Value::Array(conv.messages.iter().map(Message::to_value).collect())
}

fn shape(at: &str, expected: &str, found: &Value) -> FormatError {
    FormatError::Shape {
        at: at.into(),
        expected: expected.into(),
        found: describe_value(found),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn record_keys_keep_their_original_order_on_write() {
        let v = json!({"id": "x", "messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"type": "function", "function": {"name": "f"}}], "meta": {"k": 1}});
        let Value::Object(obj) = v.clone() else {
            unreachable!()
        };
        let conv = conversation_from_object(obj).unwrap();
        let out = conversation_to_object(&conv);
        assert_eq!(out.to_string(), v.to_string());
    }

    #[test]
    fn record_without_messages_names_the_missing_field() {
        let err = conversation_from_object(Map::new()).unwrap_err();
        assert!(err.to_string().contains("messages"), "{err}");
    }

    #[test]
    fn null_tools_round_trip_as_null() {
        let v = json!({"messages": [], "tools": null});
        let Value::Object(obj) = v.clone() else {
            unreachable!()
        };
        let conv = conversation_from_object(obj).unwrap();
        assert!(conv.tools.is_none());
        assert_eq!(conversation_to_object(&conv), v);
    }
}
