//! OpenAI chat format, the canonical one: a message array, or a record object
//! `{"messages": [...], "tools": [...], ...}` whose other keys travel with the conversation.

use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::message::{Message, describe_value, write_message, write_str};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Borrow;
use std::io::{self, Write};

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
    let out = record_fields(conv)
        .into_iter()
        .map(|(key, field)| {
            let value = match field {
                RecordField::Messages => messages_to_array(conv),
                RecordField::Tools(tools) => Value::Array(tools.to_vec()),
                RecordField::Other(v) => v.clone(),
            };
            (key.to_string(), value)
        })
        .collect();
    Value::Object(out)
}

/// A record object written as JSON straight from the conversation: the text of
/// [`conversation_to_object`] without building its tree (which copied every message twice).
pub struct RecordJson<'a>(pub &'a Conversation);

impl Serialize for RecordJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RecordWithMessages(self.0, &self.0.messages).serialize(serializer)
    }
}

/// A record written from a conversation's fields with these messages in place of its own
/// (a writer's copies of the few it had to change, beside the rest borrowed).
pub(crate) struct RecordWithMessages<'a, M>(pub &'a Conversation, pub &'a [M]);

impl<M: Serialize> Serialize for RecordWithMessages<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = record_fields(self.0);
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, field) in fields {
            match field {
                RecordField::Messages => map.serialize_entry(key, self.1)?,
                RecordField::Tools(tools) => map.serialize_entry(key, tools)?,
                RecordField::Other(value) => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// How much of the hand-written text gathers before it is handed on: the writes `out` sees
/// are the size of the buffer serde_json's text went through (`Document::write_text`), and the
/// text is copied once on its way, not into a second buffer first.
pub(crate) const SPILL_AT: usize = 64 * 1024;

/// Hands `buf` to `out` once it holds [`SPILL_AT`] bytes.
pub(crate) fn spill_if_full<W: Write + ?Sized>(out: &mut W, buf: &mut Vec<u8>) -> io::Result<()> {
    if buf.len() >= SPILL_AT {
        out.write_all(buf)?;
        buf.clear();
    }
    Ok(())
}

/// Appends the record [`RecordWithMessages`] serializes to `buf`, the same bytes, each message
/// through [`crate::message::write_message`] (serde_json escapes strings a byte at a time),
/// handing `buf` to `out` as it fills ([`spill_if_full`]): the record is never held whole,
/// only what gathered since the last spill and one message's text (as the large-file reader
/// holds one message's bytes, `json_values.rs`).
pub(crate) fn write_record<W: Write + ?Sized, M: Borrow<Message>>(
    out: &mut W,
    buf: &mut Vec<u8>,
    conv: &Conversation,
    messages: &[M],
) -> io::Result<()> {
    buf.push(b'{');
    for (i, (key, field)) in record_fields(conv).into_iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_str(buf, key);
        buf.push(b':');
        match field {
            RecordField::Messages => write_message_array(out, buf, messages)?,
            RecordField::Tools(tools) => serde_json::to_writer(&mut *buf, tools)?,
            RecordField::Other(value) => serde_json::to_writer(&mut *buf, value)?,
        }
    }
    buf.push(b'}');
    Ok(())
}

/// Appends `messages` as a JSON array to `buf`, handing `buf` to `out` as it fills.
pub(crate) fn write_message_array<W: Write + ?Sized, M: Borrow<Message>>(
    out: &mut W,
    buf: &mut Vec<u8>,
    messages: &[M],
) -> io::Result<()> {
    buf.push(b'[');
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_message(buf, message.borrow())?;
        spill_if_full(out, buf)?;
    }
    buf.push(b']');
    Ok(())
}

/// What a record key holds.
enum RecordField<'a> {
    Messages,
    Tools(&'a [Value]),
    Other(&'a Value),
}

/// A record's keys and what each holds, in the order they are written: the order they were
/// read in, then fields added since (or all of them, for a conversation built in code), then
/// `messages`, then `tools`. Each key once.
fn record_fields(conv: &Conversation) -> Vec<(&str, RecordField<'_>)> {
    let mut out: Vec<(&str, RecordField<'_>)> = Vec::with_capacity(conv.field_order.len() + 2);
    let written =
        |out: &Vec<(&str, RecordField<'_>)>, key: &str| out.iter().any(|(k, _)| *k == key);
    for key in &conv.field_order {
        let field = match (key.as_str(), &conv.tools) {
            _ if written(&out, key) => None,
            ("messages", _) => Some(RecordField::Messages),
            ("tools", Some(tools)) => Some(RecordField::Tools(tools)),
            _ => conv.extra.get(key).map(RecordField::Other),
        };
        out.extend(field.map(|f| (key.as_str(), f)));
    }
    for (key, value) in &conv.extra {
        if !written(&out, key) {
            out.push((key.as_str(), RecordField::Other(value)));
        }
    }
    if !written(&out, "messages") {
        out.push(("messages", RecordField::Messages));
    }
    if let (false, Some(tools)) = (written(&out, "tools"), &conv.tools) {
        out.push(("tools", RecordField::Tools(tools)));
    }
    out
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
