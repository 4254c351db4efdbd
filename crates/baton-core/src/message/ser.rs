//! Writing a message as JSON straight from its fields.
//!
//! The text is exactly that of [`Message::to_value`]: the same keys in the same order. Going
//! through the `Value` copied every string of the conversation into a tree only to print it;
//! on a real session, building and printing those trees was a third of a `baton compress`
//! process (issue #17). A message whose unknown fields reuse a known key (possible only for
//! one built in code) still goes through `to_value`, whose map keeps the first position and
//! the last value; that rule is not worth a second implementation.

use super::{Content, Fields, Message, ToolCall};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const KNOWN: [&str; 5] = ["role", "content", "tool_calls", "tool_call_id", "name"];
        if reuses_a_key(&self.reasoning, &self.extra, &KNOWN) {
            return self.to_value().serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", self.role.as_str())?;
        if let Some(content) = &self.content {
            map.serialize_entry("content", content)?;
        }
        if let Some(calls) = &self.tool_calls {
            map.serialize_entry("tool_calls", calls)?;
        }
        if let Some(id) = &self.tool_call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        if let Some(name) = &self.name {
            map.serialize_entry("name", name)?;
        }
        for (key, value) in self.reasoning.iter().chain(self.extra.iter()) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Null => serializer.serialize_unit(),
            Content::Text(text) => serializer.serialize_str(text),
            Content::Parts(parts) => {
                let mut seq = serializer.serialize_seq(Some(parts.len()))?;
                for part in parts {
                    seq.serialize_element(part.fields())?;
                }
                seq.end()
            }
        }
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if reuses_a_key(&self.extra, &Fields::new(), &["id", "type", "function"])
            || reuses_a_key(&self.function.extra, &Fields::new(), &["name", "arguments"])
        {
            return self.to_value().serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.id)?;
        if let Some(kind) = &self.kind {
            map.serialize_entry("type", kind)?;
        }
        map.serialize_entry("function", &FunctionJson(self))?;
        for (key, value) in self.extra.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A call's `function` object.
struct FunctionJson<'a>(&'a ToolCall);

impl Serialize for FunctionJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let function = &self.0.function;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &function.name)?;
        map.serialize_entry("arguments", &function.arguments)?;
        for (key, value) in function.extra.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Whether `first` then `then`, written after the `known` keys, would repeat a key. A map
/// holds each key once, so only the known keys and keys shared by the two maps can repeat.
/// Almost always false at once: the maps are nearly always empty.
pub(super) fn reuses_a_key(first: &Fields, then: &Fields, known: &[&str]) -> bool {
    first
        .keys()
        .any(|k| known.contains(&k.as_str()) || then.contains_key(k))
        || then.keys().any(|k| known.contains(&k.as_str()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::{ContentPart, Role};
    use serde_json::{Value, json};

    fn written_as_its_value(m: &Message) {
        assert_eq!(m.to_json(), m.to_value().to_string(), "{m:?}");
    }

    #[test]
    fn every_field_is_written_as_to_value_writes_it() {
        let mut assistant = Message::assistant_tool_calls(vec![
            ToolCall::function("c1", "Bash", r#"{"command":"ls \"a\""}"#),
            ToolCall::function("c2", "Read", "not json ✓"),
        ]);
        assistant.content = Some(Content::Text("läuft \u{1} \"q\"".into()));
        assistant
            .reasoning
            .insert("reasoning_content".into(), json!("thinking…"));
        assistant
            .extra
            .insert("x_meta".into(), json!({"n": 1.5, "z": [null, true]}));
        if let Some(calls) = &mut assistant.tool_calls {
            calls[0].kind = None;
            calls[0].extra.insert("index".into(), json!(0));
            calls[1].function.extra.insert("strict".into(), json!(true));
        }
        let mut parts = Message::user("");
        parts.content = Some(Content::Parts(vec![
            ContentPart::text("look"),
            ContentPart::image_url("https://example.com/a.png"),
        ]));
        let mut tool = Message::tool("c1", "out");
        tool.name = Some("Bash".into());
        let mut null_content = Message::assistant("");
        null_content.content = Some(Content::Null);
        let mut no_content = Message::assistant("");
        no_content.content = None;
        for m in [
            assistant,
            parts,
            tool,
            null_content,
            no_content,
            Message::user("plain"),
        ] {
            written_as_its_value(&m);
        }
    }

    /// A key written twice keeps its first position and its last value, as in `to_value`.
    #[test]
    fn an_unknown_field_reusing_a_known_key_is_written_once() {
        let mut m = Message::user("hi");
        m.extra.insert("role".into(), json!("system"));
        written_as_its_value(&m);
        let text = m.to_json();
        assert_eq!(text.matches("\"role\"").count(), 1, "{text}");
        let mut both = Message::assistant("a");
        both.reasoning.insert("thought".into(), json!("r"));
        both.extra.insert("thought".into(), json!("e"));
        written_as_its_value(&both);
        let mut call = ToolCall::function("c", "f", "{}");
        call.extra.insert("id".into(), json!("other"));
        call.function
            .extra
            .insert("arguments".into(), json!("{\"a\":1}"));
        let m = Message::assistant_tool_calls(vec![call]);
        written_as_its_value(&m);
        let back: Value = serde_json::from_str(&m.to_json()).unwrap();
        assert_eq!(back["tool_calls"][0]["id"], "other");
        assert_eq!(m.role, Role::Assistant);
    }
}
