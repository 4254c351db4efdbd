//! The common shapes of OpenAI conversation files read straight into their types.
//!
//! The general reader parses the whole text into a `Value` tree, detects the format from it,
//! then converts; for a large conversation that tree (ordered maps, arbitrary-precision
//! numbers) costs several times the file in memory and a third of the time of a `compress`
//! (issue #17). The shapes that carry almost all large files (a record object, JSON Lines of
//! records, a message array) are read here without it. Whatever these readers cannot take as
//! it is (another dialect or layout, a transcript, invalid input) makes them return `None`,
//! and the general reader runs instead: it gives the same conversation for every input read
//! here and keeps every error message exactly as it was.

use super::detect::{detect_object, message_has_anthropic_block};
use super::json_values::{JsonValues, MAX_NESTING};
use super::{Dialect, Document, Layout, openai};
use crate::conversation::Conversation;
use crate::message::Message;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// `text` as a document of one of the common OpenAI shapes, or `None` when the general reader
/// must decide.
pub(crate) fn document(text: &str) -> Option<Document> {
    match text.trim_start().as_bytes().first()? {
        b'{' => record_object(text).or_else(|| record_lines(text)),
        b'[' => message_array(text),
        _ => None,
    }
}

/// A file holding one record object or one message array, read from `reader` as it is parsed:
/// the file's text is never held whole, so reading a large conversation costs the parsed
/// conversation alone, and each message is parsed from its own bytes (`json_values.rs`).
/// `None` for anything else (the caller reads the file the general way).
pub(crate) fn document_from_reader(reader: impl std::io::Read) -> Option<Document> {
    document_from_values(JsonValues::new(reader))
}

fn document_from_values(mut json: JsonValues<impl std::io::Read>) -> Option<Document> {
    let document = match json.peek_token()? {
        b'{' => {
            let (obj, messages) = record_from_values(&mut json)?;
            is_openai_record(&obj, &messages, Layout::Object)
                .then(|| conversation(obj, messages))
                .flatten()
                .map(|c| single(Layout::Object, c))?
        }
        b'[' => {
            let messages = messages_from_values(&mut json, 1)?;
            if messages.iter().any(message_has_anthropic_block) {
                return None;
            }
            single(Layout::MessageArray, Conversation::new(messages))
        }
        _ => return None,
    };
    // Nothing but whitespace may follow the value.
    json.next_token().is_none().then_some(document)
}

/// A JSON array of messages, each parsed from its own bytes; `around` is how deeply the array
/// itself nests.
fn messages_from_values(
    json: &mut JsonValues<impl std::io::Read>,
    around: usize,
) -> Option<Vec<Message>> {
    if json.next_token()? != b'[' {
        return None;
    }
    let mut messages = Vec::new();
    if json.peek_token()? == b']' {
        json.next_token();
        return Some(messages);
    }
    loop {
        let bytes = json.next_value()?;
        let message: Message = serde_json::from_slice(bytes).ok()?;
        if json.depth() + around > MAX_NESTING {
            return None;
        }
        messages.push(message);
        match json.next_token()? {
            b',' => {}
            b']' => break,
            _ => return None,
        }
    }
    // The vector grew by doubling: up to half its slots are empty.
    messages.shrink_to_fit();
    Some(messages)
}

/// [`read_record`] from JSON read value by value.
fn record_from_values(
    json: &mut JsonValues<impl std::io::Read>,
) -> Option<(Map<String, Value>, Vec<Message>)> {
    if json.next_token()? != b'{' {
        return None;
    }
    let mut obj = Map::new();
    let mut messages = None;
    if json.peek_token()? == b'}' {
        json.next_token();
        return Some((obj, messages?));
    }
    loop {
        if json.peek_token()? != b'"' {
            return None;
        }
        let key: String = serde_json::from_slice(json.next_value()?).ok()?;
        if json.next_token()? != b':' {
            return None;
        }
        if key == "messages" {
            messages = Some(messages_from_values(json, 2)?);
            obj.insert(key, Value::Array(Vec::new()));
        } else {
            let value: Value = serde_json::from_slice(json.next_value()?).ok()?;
            if json.depth() + 1 > MAX_NESTING {
                return None;
            }
            obj.insert(key, value);
        }
        match json.next_token()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    Some((obj, messages?))
}

/// One JSON Lines line of a file already detected as OpenAI records, as its conversation.
pub(crate) fn record_line(text: &str) -> Option<Conversation> {
    let (obj, messages) = read_record(text)?;
    conversation(obj, messages)
}

/// A whole file holding one record object.
fn record_object(text: &str) -> Option<Document> {
    let (obj, messages) = read_record(text)?;
    if !is_openai_record(&obj, &messages, Layout::Object) {
        return None;
    }
    Some(single(Layout::Object, conversation(obj, messages)?))
}

/// JSON Lines of record objects (two lines or more). The first line decides the dialect, as
/// detection does; every line must read here, or the general reader takes the file.
fn record_lines(text: &str) -> Option<Document> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    let first = lines.next()?;
    // One line is one JSON value: the general reader takes that as a single document.
    lines.peek()?;
    let (obj, messages) = read_record(first)?;
    if !is_openai_record(&obj, &messages, Layout::ObjectLines) {
        return None;
    }
    let mut conversations = vec![conversation(obj, messages)?];
    for line in lines {
        conversations.push(record_line(line)?);
    }
    Some(Document {
        dialect: Dialect::OpenAi,
        layout: Layout::ObjectLines,
        conversations,
        transcript: None,
    })
}

/// A whole file holding one array of messages.
fn message_array(text: &str) -> Option<Document> {
    message_array_from(serde_json::Deserializer::from_str(text))
}

fn message_array_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Option<Document> {
    let messages: Vec<Message> = serde::Deserialize::deserialize(&mut de).ok()?;
    de.end().ok()?;
    if messages.iter().any(message_has_anthropic_block) {
        return None;
    }
    Some(single(Layout::MessageArray, Conversation::new(messages)))
}

fn single(layout: Layout, conversation: Conversation) -> Document {
    Document {
        dialect: Dialect::OpenAi,
        layout,
        conversations: vec![conversation],
        transcript: None,
    }
}

/// Whether detection would call this record OpenAI in `layout` (its messages are already known
/// to be OpenAI messages; the object holds an empty `messages` in their place).
fn is_openai_record(obj: &Map<String, Value>, messages: &[Message], layout: Layout) -> bool {
    let detected = detect_object(obj, layout);
    matches!(detected, Ok(d) if d.dialect == Dialect::OpenAi && d.layout == layout && d.transcript.is_none())
        && !messages.iter().any(message_has_anthropic_block)
}

/// The conversation the general reader builds from this record (`record` with the OpenAI
/// dialect): the object's fields and order, the typed messages, the writer's flags restored.
fn conversation(obj: Map<String, Value>, messages: Vec<Message>) -> Option<Conversation> {
    let mut conv = openai::conversation_from_object(obj).ok()?;
    conv.messages = messages;
    crate::synthetic::restore_flags(&mut conv);
    Some(conv)
}

/// A record object's fields with `messages` read as typed messages (an empty array holds its
/// place among the fields); `None` unless `text` is one object whose `messages` is an array of
/// valid OpenAI messages.
fn read_record(text: &str) -> Option<(Map<String, Value>, Vec<Message>)> {
    read_record_from(serde_json::Deserializer::from_str(text))
}

fn read_record_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Option<(Map<String, Value>, Vec<Message>)> {
    let read = (&mut de).deserialize_map(RecordVisitor).ok()?;
    de.end().ok()?;
    let (obj, messages) = read;
    Some((obj, messages?))
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = (Map<String, Value>, Option<Vec<Message>>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a conversation record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut obj = Map::new();
        let mut messages = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "messages" {
                let mut read = map.next_value::<Vec<Message>>()?;
                // The vector grew by doubling: up to half its slots are empty.
                read.shrink_to_fit();
                messages = Some(read);
                obj.insert(key, Value::Array(Vec::new()));
            } else {
                let value: Value = map.next_value()?;
                obj.insert(key, value);
            }
        }
        Ok((obj, messages))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::formats::load::parse_general;

    /// What the typed reader gives (when it takes the text) equals the general reader's.
    fn agrees(text: &str) -> bool {
        let Some(typed) = document(text) else {
            return false;
        };
        let general = parse_general(text, None).expect("the general reader takes it too");
        assert_eq!(typed, general, "{text}");
        true
    }

    #[test]
    fn the_common_openai_shapes_read_the_same_both_ways() {
        let record = r#"{"id":"r1","meta":{"src":"x"},"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi","extra":1},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"out"}],"tools":[{"type":"function","function":{"name":"f"}}],"z":null}"#;
        assert!(agrees(record));
        assert!(agrees(&format!("{record}\n\n{record}\n")));
        assert!(agrees(&format!("  {record}\r\n{record}")));
        assert!(agrees(
            r#"[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":"b"}]}]"#
        ));
        assert!(agrees("[]"));
        assert!(agrees(r#"{"messages":[],"tools":null}"#));
        // A writer's flags (meta.baton_flags) are put back on their messages by both readers.
        assert!(agrees(
            r#"{"meta":{"baton_flags":{"0":"reminder"}},"messages":[{"role":"user","content":"<system-reminder>x</system-reminder>"}]}"#
        ));
    }

    #[test]
    fn a_file_read_as_it_is_parsed_gives_the_same_document() {
        let record = r#" {"id":"r","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"out"}],"z":1}"#;
        let array = r#"[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]"#;
        for text in [record, array] {
            let read = document_from_reader(text.as_bytes()).expect("taken");
            assert_eq!(read, parse_general(text, None).unwrap(), "{text}");
        }
        // JSON Lines, other dialects and broken input are left to the caller's general path.
        for text in [
            &format!("{record}\n{record}\n"),
            r#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#,
            r#"{"messages":[{"role":"user","content":"hi"}]"#,
            "",
            "  ",
        ] {
            assert!(document_from_reader(text.as_bytes()).is_none(), "{text}");
        }
    }

    /// The reader this one replaced: `serde_json` reading the whole value from `io::Read`.
    fn by_serde_reader(text: &str) -> Option<Document> {
        let de = serde_json::Deserializer::from_reader(text.as_bytes());
        match text.trim_start().as_bytes().first()? {
            b'{' => {
                let (obj, messages) = read_record_from(de)?;
                is_openai_record(&obj, &messages, Layout::Object)
                    .then(|| conversation(obj, messages))
                    .flatten()
                    .map(|c| single(Layout::Object, c))
            }
            b'[' => message_array_from(de),
            _ => None,
        }
    }

    /// Value by value, refilled every few bytes, gives what `serde_json`'s reader gave, on
    /// well-formed files and on every kind of broken one.
    #[test]
    fn reading_value_by_value_agrees_with_the_serde_reader() {
        let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let message =
            r#"{"role":"user","content":"a \"quoted\" [bracket] {brace} \\ é 日本 \u00e9"}"#;
        let mut texts: Vec<String> = vec![
            format!(
                "{{\"id\":\"r\",\"messages\":[{message},{message}],\"z\":[1,{{\"a\":null}}],\"n\":-1.5e3,\"t\":true}}"
            ),
            format!(" \n\t[{message} , {message}]\r\n"),
            format!("{{\"mess\\u0061ges\":[{message}]}}"),
            format!("{{\"messages\":[{message}],\"messages\":[]}}"),
            "[]".into(),
            "{\"messages\":[]}".into(),
            "{}".into(),
            // Broken: trailing commas, a missing colon, bytes after the end, cut short.
            format!("[{message},]"),
            format!("{{\"messages\":[{message}],}}"),
            format!("{{\"messages\" [{message}]}}"),
            format!("[{message}] x"),
            format!("[{message}"),
            format!("{{\"messages\":[{message}]"),
            "{\"messages\":null}".into(),
            "{\"a\":tru,\"messages\":[]}".into(),
            "[{\"role\":\"user\",\"content\":\"unterminated}]".into(),
            "[{\"role\":\"user\",\"content\":\"a\\".into(),
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}}]}".into(),
            "[1]".into(),
            "".into(),
        ];
        // Around serde_json's recursion limit, in a record field and inside a message.
        for n in [123, 124, 125, 126, 127, 128] {
            texts.push(format!("{{\"deep\":{},\"messages\":[]}}", nested(n)));
            texts.push(format!(
                "[{{\"role\":\"user\",\"content\":\"x\",\"extra\":{}}}]",
                nested(n)
            ));
            texts.push(format!(
                "{{\"messages\":[{{\"role\":\"user\",\"content\":\"x\",\"extra\":{}}}]}}",
                nested(n)
            ));
        }
        let mut taken = 0;
        for text in &texts {
            let expected = by_serde_reader(text);
            taken += usize::from(expected.is_some());
            for block in [1, 2, 3, 7, 64, 1 << 20] {
                let read = document_from_values(JsonValues::with_block(text.as_bytes(), block));
                assert_eq!(read, expected, "block {block}: {text}");
            }
        }
        assert!(taken >= 12, "{taken}");
    }

    #[test]
    fn other_dialects_transcripts_and_bad_input_are_left_to_the_general_reader() {
        for text in [
            // Anthropic: a `system` key, tools with `input_schema`, or Anthropic-only blocks.
            r#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#,
            r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}]}"#,
            r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}"#,
            r#"[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"x"}}]}]"#,
            // ShareGPT, Gemini CLI, Claude Code, record arrays.
            r#"{"conversations":[{"from":"human","value":"hi"}]}"#,
            r#"{"sessionId":"s","messages":[{"type":"user","content":"hi"}]}"#,
            r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u","messages":[]}"#,
            r#"[{"messages":[{"role":"user","content":"hi"}]}]"#,
            // A message the general reader refuses, and broken JSON.
            r#"{"messages":[{"role":"tool","content":"no id"}]}"#,
            r#"{"messages":[{"role":"user","content":"hi"}]"#,
            "{\"messages\":[]}\n{\"conversations\":[]}\n",
        ] {
            assert!(document(text).is_none(), "{text}");
        }
        // An Anthropic block on a later line does not change the first line's dialect, as in
        // detection: both readers read the line as OpenAI.
        let first = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
        let later = r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}"#;
        assert!(agrees(&format!("{first}\n{later}\n")));
    }

    /// Every sample of the repository (all formats) and every file of the shared corpus: where
    /// the typed reader takes a file, it reads it exactly as the general reader does.
    #[test]
    fn sample_and_corpus_files_read_the_same_both_ways() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![root.join("../../data/samples")];
        let corpus = root.join("../../../shared/data/normalized");
        if corpus.is_dir() {
            dirs.push(corpus);
        } else {
            eprintln!("note: ../shared/data/normalized is absent; only the samples are compared");
        }
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|x| x == "json" || x == "jsonl")
                {
                    files.push(path);
                }
            }
        }
        let (mut taken, mut messages) = (0, 0);
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            if let Some(typed) = document(&text) {
                let general = parse_general(&text, None)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(typed, general, "{}", path.display());
                taken += 1;
                messages += typed.message_count();
            }
        }
        assert!(
            taken >= 3,
            "the typed reader took only {taken} of {} files",
            files.len()
        );
        eprintln!(
            "{taken} of {} files ({messages} messages) read the same both ways",
            files.len()
        );
    }
}
