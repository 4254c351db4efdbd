//! Conversation file formats: detection, loading and writing.
//!
//! A file holds one or more conversations in one *dialect* (OpenAI chat, Anthropic Messages,
//! ShareGPT) laid out in one *layout* (a single JSON value, a JSON array of records, JSON
//! Lines). Loading remembers both so that writing a loaded [`Document`] back reproduces the
//! file's shape; converting changes only the dialect.

pub mod anthropic;
pub mod claude_code;
pub mod codex;
mod detect;
pub mod error;
pub mod gemini_cli;
pub(crate) mod json_values;
mod load;
mod notes;
pub mod openai;
pub mod sharegpt;
pub mod stream;
pub mod transcript;
mod typed;

pub use detect::{Detected, detect};
pub use error::FormatError;
pub use load::{LoadError, load_file, parse_document, write_file, write_file_with};
pub use transcript::{Repaired, Repairs, Transcript, repair_tool_pairing};

use crate::compress::markers::{has_baton_metadata, strip_baton_metadata, strip_changes};
use crate::conversation::Conversation;
use crate::message::Message;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Which conversation schema a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Chat Completions messages (canonical).
    OpenAi,
    /// Anthropic Messages: `system` + messages of content blocks.
    Anthropic,
    /// ShareGPT: `conversations` of `{from, value}` turns.
    ShareGpt,
}

/// How conversations sit in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One JSON array of messages (or ShareGPT turns): one conversation.
    MessageArray,
    /// JSON Lines, one message per line: one conversation.
    MessageLines,
    /// One JSON object (`{"messages": ...}`, `{"conversations": ...}`): one conversation.
    Object,
    /// A JSON array of record objects: many conversations.
    ObjectArray,
    /// JSON Lines, one record object per line: many conversations.
    ObjectLines,
}

/// A format the user can force with `--format`. The names are the ones users know: `openai`
/// (OpenAI chat, any layout), `json` (an
/// array of messages), `object`, `jsonl` (one message per line), `records` (one conversation
/// object per line, as in the shared corpus), `anthropic`, `sharegpt`, and the agent-CLI
/// transcripts `claude-code` (also the Claude Agent SDK stream-json log), `codex`, `gemini-cli`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatName {
    /// OpenAI chat in whatever layout the file has.
    OpenAi,
    Json,
    Object,
    Jsonl,
    Records,
    Anthropic,
    ShareGpt,
    /// Claude Code session JSONL / Claude Agent SDK stream-json (read-only).
    ClaudeCode,
    /// Codex CLI rollout JSONL (read-only).
    Codex,
    /// Gemini CLI session JSON (read-only).
    GeminiCli,
}

impl FormatName {
    pub const ALL: [FormatName; 10] = [
        FormatName::OpenAi,
        FormatName::Json,
        FormatName::Object,
        FormatName::Jsonl,
        FormatName::Records,
        FormatName::Anthropic,
        FormatName::ShareGpt,
        FormatName::ClaudeCode,
        FormatName::Codex,
        FormatName::GeminiCli,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FormatName::OpenAi => "openai",
            FormatName::Json => "json",
            FormatName::Object => "object",
            FormatName::Jsonl => "jsonl",
            FormatName::Records => "records",
            FormatName::Anthropic => "anthropic",
            FormatName::ShareGpt => "sharegpt",
            FormatName::ClaudeCode => Transcript::ClaudeCode.as_str(),
            FormatName::Codex => Transcript::Codex.as_str(),
            FormatName::GeminiCli => Transcript::GeminiCli.as_str(),
        }
    }

    pub fn parse(s: &str) -> Result<FormatName, FormatError> {
        let lower = s.trim().to_ascii_lowercase();
        FormatName::ALL
            .into_iter()
            .find(|f| f.as_str() == lower)
            .ok_or_else(|| FormatError::UnknownFormat {
                hint: format!(
                    "`{s}` is not a format name; expected one of {}",
                    FormatName::ALL.map(FormatName::as_str).join(", ")
                ),
            })
    }

    /// The dialect this name forces.
    pub fn dialect(self) -> Dialect {
        match self {
            FormatName::Anthropic => Dialect::Anthropic,
            FormatName::ShareGpt => Dialect::ShareGpt,
            _ => Dialect::OpenAi,
        }
    }

    /// The layout this name forces, if it names one.
    pub fn layout(self) -> Option<Layout> {
        match self {
            FormatName::Json => Some(Layout::MessageArray),
            FormatName::Object => Some(Layout::Object),
            FormatName::Jsonl => Some(Layout::MessageLines),
            FormatName::Records => Some(Layout::ObjectLines),
            FormatName::OpenAi
            | FormatName::Anthropic
            | FormatName::ShareGpt
            | FormatName::ClaudeCode
            | FormatName::Codex
            | FormatName::GeminiCli => None,
        }
    }

    /// The agent-CLI transcript this name forces, if it names one.
    pub fn transcript(self) -> Option<Transcript> {
        match self {
            FormatName::ClaudeCode => Some(Transcript::ClaudeCode),
            FormatName::Codex => Some(Transcript::Codex),
            FormatName::GeminiCli => Some(Transcript::GeminiCli),
            _ => None,
        }
    }

    /// The name describing a detected dialect and layout, for reports.
    pub fn describe(dialect: Dialect, layout: Layout) -> &'static str {
        match (dialect, layout) {
            (Dialect::Anthropic, Layout::ObjectLines | Layout::ObjectArray) => "anthropic records",
            (Dialect::Anthropic, _) => "anthropic",
            (Dialect::ShareGpt, Layout::ObjectLines | Layout::ObjectArray) => "sharegpt records",
            (Dialect::ShareGpt, _) => "sharegpt",
            (Dialect::OpenAi, Layout::MessageArray) => "json",
            (Dialect::OpenAi, Layout::MessageLines) => "jsonl",
            (Dialect::OpenAi, Layout::Object) => "object",
            (Dialect::OpenAi, Layout::ObjectArray) => "json records",
            (Dialect::OpenAi, Layout::ObjectLines) => "records",
        }
    }
}

impl fmt::Display for FormatName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The shape a file's conversations came in: dialect, layout, and the agent-CLI transcript
/// format if it was one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub dialect: Dialect,
    pub layout: Layout,
    pub transcript: Option<Transcript>,
}

impl Shape {
    /// Human name of the format (`records`, `anthropic`, `claude-code`, ...).
    pub fn format_name(&self) -> &'static str {
        match self.transcript {
            Some(t) => t.as_str(),
            None => FormatName::describe(self.dialect, self.layout),
        }
    }
}

/// Conversations loaded from one file, with the shape they came in.
///
/// An imported agent-CLI transcript (`transcript` set) is read-only: it loads as one OpenAI
/// conversation object (`dialect` OpenAI, `layout` object) and is written as such.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub dialect: Dialect,
    pub layout: Layout,
    pub conversations: Vec<Conversation>,
    /// The agent-CLI transcript format the conversations were imported from, if any.
    pub transcript: Option<Transcript>,
}

impl Document {
    /// Human name of the detected format (`records`, `anthropic`, `claude-code`, ...).
    pub fn format_name(&self) -> &'static str {
        self.shape().format_name()
    }

    /// What the file held, without the conversations.
    pub fn shape(&self) -> Shape {
        Shape {
            dialect: self.dialect,
            layout: self.layout,
            transcript: self.transcript,
        }
    }

    /// Total number of messages over all conversations.
    pub fn message_count(&self) -> usize {
        self.conversations.iter().map(|c| c.messages.len()).sum()
    }

    /// The same conversations in another dialect. Layouts that only exist in OpenAI form
    /// (bare message arrays and lines) become objects / object lines. The round-trip notes a
    /// converter left (`_anthropic`, `_sharegpt`) are dropped when the dialect changes: they
    /// only make sense to their own writer, and an API would reject them.
    pub fn converted_to(&self, dialect: Dialect) -> Document {
        let layout = match (dialect, self.layout) {
            (Dialect::OpenAi, l) => l,
            (_, Layout::MessageArray) => Layout::Object,
            (_, Layout::MessageLines) => Layout::ObjectLines,
            (_, l) => l,
        };
        let conversations = if dialect == self.dialect {
            self.conversations.clone()
        } else {
            self.conversations
                .iter()
                .map(without_format_notes)
                .collect()
        };
        Document {
            dialect,
            layout,
            conversations,
            transcript: None,
        }
    }

    /// Serializes the document in its dialect and layout. Baton's in-process metadata
    /// (`_baton_summary`…) is left out: a written file may be sent to a provider as it is, and
    /// a summary is recognised again by its text.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        // Writing into memory fails only if serializing does, which these types never do
        // (every map key is a string).
        let _ = self.write_text(&mut out);
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Writes what [`Document::to_text`] returns into `out`, piece by piece, without holding
    /// the whole text: a command writing a file or a pipe needs only a buffer (the text of a
    /// long conversation was as large as the conversation, and building it touched that much
    /// fresh memory; issue #17).
    ///
    /// Buffered here (64 KiB) in a writer of a concrete type: serializing writes each token
    /// separately, and through `dyn Write` every one was an indirect call. The OpenAI layouts
    /// gather their hand-written text in a buffer of their own, handed to `out` as it fills.
    pub fn write_text(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.dialect == Dialect::OpenAi {
            let written: Vec<Written<'_>> = self.conversations.iter().map(Written::of).collect();
            write_openai(out, self.layout, &written)?;
            return out.flush();
        }
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
        self.write_text_buffered(&mut out)?;
        std::io::Write::flush(&mut out)
    }

    fn write_text_buffered<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        let conversations: Vec<Cow<'_, Conversation>> = self
            .conversations
            .iter()
            .map(without_baton_metadata)
            .collect();
        let records = || conversations.iter().map(|c| self.record_value(c));
        match self.layout {
            Layout::MessageArray => {
                let v = conversations
                    .first()
                    .map_or(Value::Array(Vec::new()), |c| self.message_array(c));
                json_line(out, &v)
            }
            Layout::Object => {
                let v = conversations.first().map_or_else(
                    || self.record_value(&Conversation::default()),
                    |c| self.record_value(c),
                );
                json_line(out, &v)
            }
            Layout::ObjectArray => json_line(out, &Value::Array(records().collect())),
            Layout::MessageLines => conversations
                .iter()
                .flat_map(|c| c.messages.iter())
                .try_for_each(|m| json_line(out, m)),
            Layout::ObjectLines => records().try_for_each(|v| json_line(out, &v)),
        }
    }

    fn record_value(&self, conv: &Conversation) -> Value {
        match self.dialect {
            Dialect::OpenAi => openai::conversation_to_object(conv),
            Dialect::Anthropic => anthropic::to_anthropic(conv),
            Dialect::ShareGpt => sharegpt::to_sharegpt(conv),
        }
    }

    /// A bare array: OpenAI messages, Anthropic messages (no system), or ShareGPT turns.
    fn message_array(&self, conv: &Conversation) -> Value {
        let key = match self.dialect {
            Dialect::OpenAi => return openai::messages_to_array(conv),
            Dialect::Anthropic => "messages",
            Dialect::ShareGpt => "conversations",
        };
        match self.record_value(conv) {
            Value::Object(mut obj) => obj.shift_remove(key).unwrap_or(Value::Array(Vec::new())),
            other => other,
        }
    }
}

/// OpenAI documents, written straight from the messages (the same text as through
/// [`openai::conversation_to_object`], without building a `Value` tree of the whole document).
fn write_openai(
    out: &mut dyn std::io::Write,
    layout: Layout,
    conversations: &[Written<'_>],
) -> std::io::Result<()> {
    // The text `json_line` gives each value (the tests compare them), written by hand and
    // handed to `out` as it gathers.
    let mut buf = Vec::with_capacity(openai::SPILL_AT);
    let empty = Written::of(&EMPTY_CONVERSATION);
    let record = |out: &mut dyn std::io::Write, buf: &mut Vec<u8>, c: &Written<'_>| {
        openai::write_record(out, buf, &c.fields, &c.messages)
    };
    match layout {
        Layout::MessageArray => {
            let messages = conversations.first().map_or(&[][..], |c| &c.messages[..]);
            openai::write_message_array(out, &mut buf, messages)?;
            buf.push(b'\n');
        }
        Layout::Object => {
            record(out, &mut buf, conversations.first().unwrap_or(&empty))?;
            buf.push(b'\n');
        }
        Layout::ObjectArray => {
            buf.push(b'[');
            for (i, c) in conversations.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                record(out, &mut buf, c)?;
            }
            buf.extend_from_slice(b"]\n");
        }
        Layout::MessageLines => {
            for message in conversations.iter().flat_map(|c| c.messages.iter()) {
                crate::message::write_message(&mut buf, message)?;
                buf.push(b'\n');
                openai::spill_if_full(out, &mut buf)?;
            }
        }
        Layout::ObjectLines => {
            for c in conversations {
                record(out, &mut buf, c)?;
                buf.push(b'\n');
                openai::spill_if_full(out, &mut buf)?;
            }
        }
    }
    out.write_all(&buf)
}

/// What a layout of one conversation writes when there is none.
static EMPTY_CONVERSATION: std::sync::LazyLock<Conversation> =
    std::sync::LazyLock::new(Conversation::default);

/// A conversation as an OpenAI file gets it: without Baton's in-process metadata, like
/// [`without_baton_metadata`], but copying only the messages that carry some (after a
/// compaction, the summary) instead of the whole conversation, which was 1.5% of a real
/// session's `compress` process (issue #17).
struct Written<'a> {
    /// The record's fields; its own messages are not read (they are `messages`).
    fields: Cow<'a, Conversation>,
    messages: Vec<Cow<'a, Message>>,
}

impl<'a> Written<'a> {
    fn of(conv: &'a Conversation) -> Self {
        // The same decision as `without_baton_metadata`: a conversation without metadata is
        // written as it is; one with some has every message stripped (here: copied only where
        // stripping changes it) and its flags recorded on the record.
        if !conv.messages.iter().any(has_baton_metadata) {
            return Written {
                fields: Cow::Borrowed(conv),
                messages: conv.messages.iter().map(Cow::Borrowed).collect(),
            };
        }
        let messages = conv
            .messages
            .iter()
            .map(|m| {
                if strip_changes(m) {
                    let mut copy = m.clone();
                    strip_baton_metadata(&mut copy);
                    Cow::Owned(copy)
                } else {
                    Cow::Borrowed(m)
                }
            })
            .collect();
        let mut fields = Conversation {
            messages: Vec::new(),
            tools: conv.tools.clone(),
            extra: conv.extra.clone(),
            field_order: conv.field_order.clone(),
        };
        crate::synthetic::record_flags_into(&conv.messages, &mut fields.extra);
        Written {
            fields: Cow::Owned(fields),
            messages,
        }
    }
}

/// `value` as compact JSON, then a newline.
fn json_line<W: std::io::Write, T: serde::Serialize + ?Sized>(
    out: &mut W,
    value: &T,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

/// `conv` without Baton's in-process message metadata; borrowed when it has none. The
/// importers' per-message synthetic flags move to the record's `meta`
/// ([`crate::synthetic::record_flags`]), where a provider never looks and a reader restores them.
fn without_baton_metadata(conv: &Conversation) -> Cow<'_, Conversation> {
    if !conv.messages.iter().any(has_baton_metadata) {
        return Cow::Borrowed(conv);
    }
    let mut out = conv.clone();
    crate::synthetic::record_flags(&mut out);
    out.messages.iter_mut().for_each(strip_baton_metadata);
    Cow::Owned(out)
}

/// Keys converters use for round-trip notes.
const NOTE_KEYS: [&str; 2] = [anthropic::MARKER, sharegpt::MARKER];

/// A copy of `conv` without any converter's round-trip notes.
pub fn without_format_notes(conv: &Conversation) -> Conversation {
    let mut out = conv.clone();
    for key in NOTE_KEYS {
        out.extra.shift_remove(key);
    }
    out.field_order.retain(|k| !NOTE_KEYS.contains(&k.as_str()));
    for (i, m) in out.messages.iter_mut().enumerate() {
        let mut v = m.to_value();
        strip_notes(&mut v);
        if let Ok(clean) = crate::message::Message::from_value(v, i) {
            *m = clean;
        }
    }
    out
}

fn strip_notes(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            for key in NOTE_KEYS {
                obj.shift_remove(key);
            }
            obj.values_mut().for_each(strip_notes);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_notes),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod writing_tests;
