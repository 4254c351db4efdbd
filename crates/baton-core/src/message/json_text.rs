//! A message written as JSON text by hand: the bytes its `Serialize` impl gives through
//! serde_json's compact writer, with each string escaped a word at a time.
//!
//! serde_json escapes a string a byte at a time (a table lookup and a split per byte), and the
//! output of a compaction is mostly long strings: kept results, file contents, arguments.
//! Escaping them was the largest single symbol of a `baton compress` process of a real
//! session (4.4% of its samples, `perf record`, issue #17). Here the bytes that need an escape
//! (a quote, a backslash, a control byte) are found eight at a time
//! ([`crate::json_check::next_special`]) and the runs between them copied whole. What is not
//! one of a message's own fields (an unknown field's value, a content part) is written by
//! serde_json itself, and a message whose unknown fields reuse a known key goes through its
//! `Serialize` impl, so the text is the same either way (the tests compare both writers on
//! generated messages, and `formats` on every message of the shared corpus).

use super::ser::reuses_a_key;
use super::{Content, Fields, Message, ToolCall};
use crate::json_check::next_special;
use serde::Serialize;
use std::io;

/// Appends `message` as compact JSON to `out`.
pub fn write_message(out: &mut Vec<u8>, message: &Message) -> io::Result<()> {
    const KNOWN: [&str; 5] = ["role", "content", "tool_calls", "tool_call_id", "name"];
    if reuses_a_key(&message.reasoning, &message.extra, &KNOWN) {
        return write_serialized(out, message);
    }
    out.extend_from_slice(b"{\"role\":");
    write_str(out, message.role.as_str());
    if let Some(content) = &message.content {
        out.extend_from_slice(b",\"content\":");
        match content {
            Content::Null => out.extend_from_slice(b"null"),
            Content::Text(text) => write_str(out, text),
            Content::Parts(parts) => {
                out.push(b'[');
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_serialized(out, part.fields())?;
                }
                out.push(b']');
            }
        }
    }
    if let Some(calls) = &message.tool_calls {
        out.extend_from_slice(b",\"tool_calls\":[");
        for (i, call) in calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_call(out, call)?;
        }
        out.push(b']');
    }
    if let Some(id) = &message.tool_call_id {
        out.extend_from_slice(b",\"tool_call_id\":");
        write_str(out, id);
    }
    if let Some(name) = &message.name {
        out.extend_from_slice(b",\"name\":");
        write_str(out, name);
    }
    write_fields(out, message.reasoning.iter().chain(message.extra.iter()))?;
    out.push(b'}');
    Ok(())
}

fn write_call(out: &mut Vec<u8>, call: &ToolCall) -> io::Result<()> {
    if reuses_a_key(&call.extra, &Fields::new(), &["id", "type", "function"])
        || reuses_a_key(&call.function.extra, &Fields::new(), &["name", "arguments"])
    {
        return write_serialized(out, call);
    }
    out.extend_from_slice(b"{\"id\":");
    write_str(out, &call.id);
    if let Some(kind) = &call.kind {
        out.extend_from_slice(b",\"type\":");
        write_str(out, kind);
    }
    out.extend_from_slice(b",\"function\":{\"name\":");
    write_str(out, &call.function.name);
    out.extend_from_slice(b",\"arguments\":");
    write_str(out, &call.function.arguments);
    write_fields(out, call.function.extra.iter())?;
    out.push(b'}');
    write_fields(out, call.extra.iter())?;
    out.push(b'}');
    Ok(())
}

/// `,"key":value` for each entry, the values written by serde_json.
fn write_fields<'v>(
    out: &mut Vec<u8>,
    entries: impl Iterator<Item = (&'v String, &'v serde_json::Value)>,
) -> io::Result<()> {
    for (key, value) in entries {
        out.push(b',');
        write_str(out, key);
        out.push(b':');
        write_serialized(out, value)?;
    }
    Ok(())
}

/// `value` as serde_json's compact writer writes it.
pub(crate) fn write_serialized<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::other)
}

/// `text` as a JSON string, escaped as serde_json escapes it: a quote, a backslash and the
/// control bytes, the five with a short form written so, the others as `\u00xx`; nothing
/// else (not `/`, not DEL, not non-ASCII).
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    while let Some(at) = next_special(bytes, start) {
        out.extend_from_slice(&bytes[start..at]);
        write_escape(out, bytes[at]);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::{ContentPart, Role};
    use proptest::prelude::*;
    use serde_json::json;

    fn written(m: &Message) -> String {
        let mut out = Vec::new();
        write_message(&mut out, m).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Text with every byte class the escaper tells apart: plain ASCII, quotes, backslashes,
    /// the short-form controls, other controls, DEL, slashes and multi-byte characters.
    fn tricky_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-z \"\\\\/\u{0}-\u{1f}\u{7f}é✓😀]{0,40}".prop_map(String::from),
            "[a-z]{0,30}".prop_map(String::from),
        ]
    }

    proptest! {
        /// A string is escaped to the bytes serde_json writes for it.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(text in tricky_text()) {
            let mut out = Vec::new();
            write_str(&mut out, &text);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&text).unwrap());
        }

        /// A message with any of its fields is written as its `Serialize` impl writes it.
        #[test]
        fn a_message_is_written_as_serde_json_writes_it(
            role in prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]),
            content in prop::option::of(prop_oneof![
                Just(Content::Null),
                tricky_text().prop_map(Content::Text),
                proptest::collection::vec(tricky_text(), 0..3)
                    .prop_map(|t| Content::Parts(t.into_iter().map(ContentPart::text).collect())),
            ]),
            calls in prop::option::of(proptest::collection::vec(
                (tricky_text(), tricky_text(), tricky_text(), any::<bool>(), any::<bool>()),
                0..3,
            )),
            id in prop::option::of(tricky_text()),
            name in prop::option::of(tricky_text()),
            extra in proptest::collection::vec(("[a-z_]{1,8}", tricky_text()), 0..3),
        ) {
            let mut m = Message::user("");
            m.role = role;
            m.content = content;
            m.tool_calls = calls.map(|calls| {
                calls
                    .into_iter()
                    .map(|(id, name, arguments, typed, extras)| {
                        let mut call = ToolCall::function(id, name, arguments);
                        if !typed {
                            call.kind = None;
                        }
                        if extras {
                            call.extra.insert("index".into(), json!(3));
                            call.function.extra.insert("strict".into(), json!(true));
                        }
                        call
                    })
                    .collect()
            });
            m.tool_call_id = id;
            m.name = name;
            for (k, v) in extra {
                m.extra.insert(k, json!({ "v": v, "n": [1.5, null, -2] }));
            }
            prop_assert_eq!(written(&m), serde_json::to_string(&m).unwrap());
        }
    }

    /// A message whose unknown fields reuse a known key is written once per key, as its
    /// `Serialize` impl writes it (through `to_value`).
    #[test]
    fn reused_keys_are_written_as_serde_json_writes_them() {
        let mut m = Message::user("hi");
        m.extra.insert("role".into(), json!("system"));
        let mut call = ToolCall::function("c", "f", "{}");
        call.extra.insert("id".into(), json!("other"));
        let mut calls = Message::assistant_tool_calls(vec![call]);
        calls.reasoning.insert("thought".into(), json!("r"));
        for m in [m, calls] {
            assert_eq!(written(&m), serde_json::to_string(&m).unwrap());
        }
    }
}
