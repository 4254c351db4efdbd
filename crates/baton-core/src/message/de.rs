//! Reading a [`Message`] straight from JSON text, without building a `Value` tree of the whole
//! message first.
//!
//! The object's known keys are set apart as they arrive and every other key goes into the
//! message's `extra`; [`MessageFields::build`] then applies the same checks as
//! [`Message::from_value`], so both readers accept the same messages and build the same
//! values (the general reader's `Value` tree of a message, with its ordered map, was a third
//! of loading a large conversation file: issue #17).

use super::{Message, MessageFields};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut fields = MessageFields::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            // A repeated key replaces the earlier value, as it does in a `Value` object.
            match key {
                Key::Role => fields.role = Some(map.next_value()?),
                Key::Content => fields.content = Some(map.next_value()?),
                Key::ToolCalls => fields.tool_calls = Some(map.next_value()?),
                Key::ToolCallId => fields.tool_call_id = Some(map.next_value()?),
                Key::Name => fields.name = Some(map.next_value()?),
                Key::Other(k) => {
                    let v: Value = map.next_value()?;
                    fields.rest.insert(k, v);
                }
            }
        }
        fields.build(0).map_err(de::Error::custom)
    }
}

/// A message key: one of the fields the model knows, or another (kept as written).
enum Key {
    Role,
    Content,
    ToolCalls,
    ToolCallId,
    Name,
    Other(String),
}

impl Key {
    fn of(k: &str) -> Key {
        match k {
            "role" => Key::Role,
            "content" => Key::Content,
            "tool_calls" => Key::ToolCalls,
            "tool_call_id" => Key::ToolCallId,
            "name" => Key::Name,
            other => Key::Other(other.to_string()),
        }
    }
}

/// Reads a key without allocating for the known ones.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(Key::of(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
        Ok(match Key::of(&v) {
            Key::Other(_) => Key::Other(v),
            known => known,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both readers, on the same text: the same message, or both an error.
    fn same_as_value_reader(text: &str) {
        let typed = serde_json::from_str::<Message>(text);
        let general = serde_json::from_str::<Value>(text)
            .map_err(|e| e.to_string())
            .and_then(|v| Message::from_value(v, 0).map_err(|e| e.to_string()));
        match (typed, general) {
            (Ok(t), Ok(g)) => {
                assert_eq!(t, g, "{text}");
                assert_eq!(t.to_json(), g.to_json(), "{text}");
            }
            (Err(_), Err(_)) => {}
            (t, g) => panic!("readers disagree on {text}: typed {t:?}, general {g:?}"),
        }
    }

    #[test]
    fn typed_reading_keeps_unknown_fields_their_order_and_the_null_quirks() {
        for text in [
            r#"{"role":"user","content":"hi"}"#,
            r#"{"content":"late role","x":1,"role":"assistant"}"#,
            r#"{"role":"assistant","tool_calls":null,"content":null,"z":[1,{"a":2}],"reasoning":"r"}"#,
            r#"{"role":"assistant","tool_call_id":null,"y":true,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","extra":1},"idx":0}]}"#,
            r#"{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"t"},{"type":"image_url","image_url":{"url":"u"}}],"name":"f"}"#,
            r#"{"role":"user","content":"a","content":"b","k":1,"k":2}"#,
            r#"{"ro\u006ce":"user","cont\u0065nt":"escaped keys"}"#,
            r#"{"role":"user","reasoning_details":[{"type":"reasoning.text","text":"x"}],"n":1.0000000000000000001}"#,
        ] {
            same_as_value_reader(text);
        }
    }

    #[test]
    fn typed_reading_refuses_what_the_value_reader_refuses() {
        for text in [
            r#"{"content":"no role"}"#,
            r#"{"role":"wizard"}"#,
            r#"{"role":3}"#,
            r#"{"role":"tool","content":"x"}"#,
            r#"{"role":"tool","tool_call_id":null}"#,
            r#"{"role":"user","content":5}"#,
            r#"{"role":"user","content":[{"text":"no type"}]}"#,
            r#"{"role":"assistant","tool_calls":[{"function":{"name":"f"}}]}"#,
            r#"{"role":"assistant","tool_calls":{}}"#,
            r#"{"role":"user","name":1}"#,
            r#"["role","user"]"#,
            r#""text""#,
        ] {
            same_as_value_reader(text);
            assert!(serde_json::from_str::<Message>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn a_typed_error_names_the_field_like_the_value_reader() {
        let err = serde_json::from_str::<Message>(r#"{"role":"tool","content":"x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("tool_call_id"), "{err}");
        for (text, field) in [
            (r#"[{"function":{"name":"f"}}]"#, "tool_calls[0].id"),
            (
                r#"[{"id":"a","function":{"name":"f"}},{"id":"c","type":2,"function":{}}]"#,
                "tool_calls[1].type",
            ),
            (
                r#"[{"id":"c","function":{"name":1}}]"#,
                "tool_calls[0].function.name",
            ),
            (
                r#"[{"id":"c","function":{"name":"f","arguments":{}}}]"#,
                "tool_calls[0].function.arguments",
            ),
            (r#"[{"id":"c"}]"#, "tool_calls[0].function"),
            (r#"[7]"#, "tool_calls[0]"),
        ] {
            let text = format!(r#"{{"role":"assistant","tool_calls":{text}}}"#);
            let err = serde_json::from_str::<Message>(&text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(field), "{text}: {err}");
        }
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("role".to_string()),
            Just("content".to_string()),
            Just("tool_calls".to_string()),
            Just("tool_call_id".to_string()),
            Just("name".to_string()),
            Just("reasoning".to_string()),
            "[a-z_]{1,6}",
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            prop_oneof![
                Just("user"),
                Just("assistant"),
                Just("tool"),
                Just("system"),
                Just("x")
            ]
            .prop_map(|s| Value::String(s.into())),
            "[ -~]{0,8}".prop_map(Value::String),
            any::<i32>().prop_map(Value::from),
            Just(serde_json::json!([{"type":"text","text":"p"}])),
            Just(serde_json::json!([{"id":"c","function":{"name":"f","arguments":"{}"}}])),
            Just(serde_json::json!({"a":[1,2]})),
        ]
    }

    proptest! {
        #[test]
        fn any_object_reads_the_same_both_ways(
            entries in proptest::collection::vec((key(), value()), 0..8)
        ) {
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), v))
                .collect();
            same_as_value_reader(&format!("{{{}}}", body.join(",")));
        }
    }
}
