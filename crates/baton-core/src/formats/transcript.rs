//! What the agent-CLI transcript loaders ([`claude_code`](super::claude_code),
//! [`codex`](super::codex), [`gemini_cli`](super::gemini_cli)) share: the [`Transcript`] kinds,
//! flattening of content blocks into text, and the tool-pairing repair pass that makes an
//! imported log a valid chat conversation.
//!
//! A transcript is read-only: it is imported into one OpenAI chat conversation (written back as
//! an OpenAI conversation object), with the session's metadata under the conversation's `meta`
//! field (see [`Conversation::meta`](crate::conversation::Conversation::meta)).

use crate::message::{Content, Message, Role};
use serde_json::{Map, Value};
use std::fmt;

/// Text of the tool message inserted for a call the log never answered.
pub const PLACEHOLDER_RESULT: &str = "[no tool result recorded in the source log]";

/// An agent CLI's own session log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transcript {
    /// Claude Code session JSONL (`~/.claude/projects/*/<session>.jsonl`), and the Claude Agent
    /// SDK `stream-json` log, which uses the same records.
    ClaudeCode,
    /// Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// Gemini CLI session JSON (`~/.gemini/tmp/<hash>/chats/session-*.json`).
    GeminiCli,
}

impl Transcript {
    pub const ALL: [Transcript; 3] = [
        Transcript::ClaudeCode,
        Transcript::Codex,
        Transcript::GeminiCli,
    ];

    /// The `--format` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Transcript::ClaudeCode => "claude-code",
            Transcript::Codex => "codex",
            Transcript::GeminiCli => "gemini-cli",
        }
    }
}

impl fmt::Display for Transcript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the repair pass changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Repairs {
    /// Placeholder tool results inserted for calls the log never answered.
    pub missing_tool_results: usize,
    /// Tool results with no open call, turned into user messages.
    pub orphan_tool_results: usize,
    /// Empty user/system messages and empty assistant messages (no text, calls or reasoning)
    /// dropped.
    pub empty_messages_dropped: usize,
}

impl Repairs {
    pub fn is_empty(&self) -> bool {
        *self == Repairs::default()
    }

    /// The non-zero counts as a JSON object (the shared corpus's `meta.repairs`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in [
            ("missing_tool_results", self.missing_tool_results),
            ("orphan_tool_results", self.orphan_tool_results),
            ("empty_messages_dropped", self.empty_messages_dropped),
        ] {
            if v > 0 {
                m.insert(k.into(), v.into());
            }
        }
        Value::Object(m)
    }
}

/// The result of [`repair_tool_pairing`].
#[derive(Debug, Clone)]
pub struct Repaired {
    pub messages: Vec<Message>,
    pub repairs: Repairs,
    /// For each input message, its index in `messages` (`None` when it was dropped).
    pub new_index: Vec<Option<usize>>,
}

/// Makes a conversation valid for the chat APIs: every tool call is answered by a tool message
/// directly after its assistant message (a [`PLACEHOLDER_RESULT`] is inserted where none
/// follows), a tool result with no open call becomes a user message
/// `"[tool result ID] content"`, and empty messages are dropped. Messages already valid come
/// out unchanged and in order.
pub fn repair_tool_pairing(messages: Vec<Message>) -> Repaired {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut repairs = Repairs::default();
    let mut new_index = Vec::with_capacity(messages.len());
    // Ids of the last assistant message's calls not yet answered, in call order.
    let mut pending: Vec<String> = Vec::new();

    fn close(out: &mut Vec<Message>, pending: &mut Vec<String>, repairs: &mut Repairs) {
        for id in pending.drain(..) {
            out.push(Message::tool(id, PLACEHOLDER_RESULT));
            repairs.missing_tool_results += 1;
        }
    }

    for mut m in messages {
        if m.role == Role::Tool {
            let id = m.tool_call_id.clone().unwrap_or_default();
            if let Some(pos) = pending.iter().position(|p| *p == id) {
                pending.remove(pos);
                new_index.push(Some(out.len()));
                out.push(m);
            } else {
                repairs.orphan_tool_results += 1;
                new_index.push(Some(out.len()));
                let mut user = Message::user(format!("[tool result {id}] {}", m.text()));
                user.extra = std::mem::take(&mut m.extra);
                out.push(user);
            }
            continue;
        }
        close(&mut out, &mut pending, &mut repairs);
        match m.role {
            Role::Assistant => {
                if m.has_tool_calls() {
                    pending.extend(m.calls().iter().map(|c| c.id.clone()));
                } else {
                    m.tool_calls = None;
                    if m.text().trim().is_empty() && m.reasoning.is_empty() {
                        repairs.empty_messages_dropped += 1;
                        new_index.push(None);
                        continue;
                    }
                }
            }
            Role::User | Role::System | Role::Developer => {
                let empty = match &m.content {
                    Some(Content::Text(s)) => s.trim().is_empty(),
                    Some(Content::Parts(parts)) => parts.is_empty(),
                    Some(Content::Null) | None => true,
                };
                if empty {
                    repairs.empty_messages_dropped += 1;
                    new_index.push(None);
                    continue;
                }
            }
            Role::Tool => {}
        }
        new_index.push(Some(out.len()));
        out.push(m);
    }
    close(&mut out, &mut pending, &mut repairs);
    Repaired {
        messages: out,
        repairs,
        new_index,
    }
}

/// Flattens a string or a list of content blocks into text, the way the shared corpus's
/// converter does: text blocks as they are, images as `[image]`, a block with a `text` field
/// as that text, `tool_reference` as `[tool_reference NAME]`, any other block as its JSON;
/// joined with newlines.
/// What a transcript says about its session beyond the messages: when it ran and what its API
/// calls used. Importers give stored sessions their real start time (so pruning by age and
/// daily statistics are right) and their token counters.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionFacts {
    first_timestamp: Option<String>,
    last_timestamp: Option<String>,
    usage: crate::usage::CanonicalUsage,
    api_calls: u64,
}

impl SessionFacts {
    /// Notes a record's timestamp (RFC 3339 text, kept as written).
    pub(crate) fn saw_timestamp(&mut self, value: Option<&Value>) {
        if let Some(t) = value.and_then(Value::as_str).filter(|t| !t.is_empty()) {
            if self.first_timestamp.is_none() {
                self.first_timestamp = Some(t.to_string());
            }
            self.last_timestamp = Some(t.to_string());
        }
    }

    /// Adds one API call's usage.
    pub(crate) fn add_call(&mut self, usage: crate::usage::CanonicalUsage) {
        self.usage += usage;
        self.api_calls += 1;
    }

    /// Replaces the totals (for formats that log running totals rather than per-call usage).
    pub(crate) fn set_totals(&mut self, usage: crate::usage::CanonicalUsage, api_calls: u64) {
        self.usage = usage;
        self.api_calls = api_calls;
    }

    /// Writes `started_at` / `ended_at` and, when any call reported usage, `usage` into `meta`.
    pub(crate) fn put_into(self, meta: &mut Map<String, Value>) {
        if let Some(t) = self.first_timestamp {
            meta.insert("started_at".into(), t.into());
        }
        if let Some(t) = self.last_timestamp {
            meta.insert("ended_at".into(), t.into());
        }
        if self.api_calls > 0 {
            let u = self.usage;
            meta.insert(
                "usage".into(),
                serde_json::json!({
                    "input": u.input,
                    "output": u.output,
                    "cache_read": u.cache_read,
                    "cache_write": u.cache_write,
                    "reasoning": u.reasoning,
                    "api_calls": self.api_calls,
                }),
            );
        }
    }
}

/// A converter that takes a transcript one JSONL record at a time.
pub(crate) trait RecordSink {
    fn record(&mut self, record: &Value) -> Result<(), crate::formats::error::FormatError>;
    /// How many records so far were of this transcript format.
    fn recognized(&self) -> usize;
}

/// Feeds every record to `sink` (an error names its line), then refuses a file in which not
/// one record was of the format, with `hint` saying what such records look like.
pub(crate) fn feed_lines(
    sink: &mut impl RecordSink,
    lines: &[(usize, Value)],
    hint: &str,
) -> Result<(), crate::formats::load::LoadError> {
    use crate::formats::error::FormatError;
    use crate::formats::load::format_error_at;
    for (line, record) in lines {
        sink.record(record)
            .map_err(|e| format_error_at(Some(*line), e))?;
    }
    if sink.recognized() == 0 {
        return Err(format_error_at(
            None,
            FormatError::UnknownFormat { hint: hint.into() },
        ));
    }
    Ok(())
}

pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().map(block_text).collect::<Vec<_>>().join("\n"),
        other => block_text(other),
    }
}

/// One block as text (see [`text_of`]).
pub(crate) fn block_text(block: &Value) -> String {
    let Value::Object(obj) = block else {
        return match block {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "text" | "input_text" | "output_text" => value_text(obj.get("text")),
        "image" | "input_image" | "image_url" => "[image]".into(),
        _ if obj.contains_key("text") => value_text(obj.get("text")),
        "tool_reference" => format!(
            "[tool_reference {}]",
            value_text(obj.get("tool_name")).as_str()
        ),
        _ => block.to_string(),
    }
}

fn value_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Tool-call arguments as the JSON string the API carries: a string as it is, `null` or absent
/// as `{}`, anything else as compact JSON.
pub(crate) fn arguments_string(args: Option<&Value>) -> String {
    match args {
        None | Some(Value::Null) => "{}".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// An assistant message: `content` is the text, or `null` when there is none.
pub(crate) fn assistant(text: String) -> Message {
    let content = if text.is_empty() {
        Content::Null
    } else {
        Content::Text(text)
    };
    Message::new(Role::Assistant, Some(content))
}

/// Appends `text` to an assistant message's content, on a new line.
pub(crate) fn append_text(m: &mut Message, text: &str) {
    if text.is_empty() {
        return;
    }
    let joined = match m.content.take() {
        Some(Content::Text(s)) if !s.is_empty() => format!("{s}\n{text}"),
        _ => text.to_string(),
    };
    m.content = Some(Content::Text(joined));
}

/// Appends reasoning entries to a message's `reasoning_details`.
pub(crate) fn push_reasoning(m: &mut Message, entries: Vec<Value>) {
    if entries.is_empty() {
        return;
    }
    let slot = m
        .reasoning
        .entry("reasoning_details")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = slot {
        list.extend(entries);
    }
}

/// Maps indices of messages before the repair pass to indices after it, dropping the ones whose
/// message was dropped.
pub(crate) fn remap(indices: &[usize], new_index: &[Option<usize>]) -> Vec<Value> {
    indices
        .iter()
        .filter_map(|&i| new_index.get(i).copied().flatten())
        .map(Value::from)
        .collect()
}

/// Inserts `value` under `key` unless it is null, an empty string or an empty array.
pub(crate) fn put(meta: &mut Map<String, Value>, key: &str, value: Value) {
    let empty = match &value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if !empty {
        meta.insert(key.into(), value);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall::function(id, "f", "{}")
    }

    #[test]
    fn repair_inserts_placeholders_and_turns_orphans_into_user_messages() {
        let msgs = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("a"), call("b")]),
            Message::tool("b", "B"),
            Message::user("next"),
            Message::tool("zz", "late"),
            Message::assistant(""),
        ];
        let r = repair_tool_pairing(msgs);
        let roles: Vec<&str> = r.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"]);
        assert_eq!(r.messages[2].tool_call_id.as_deref(), Some("b"));
        assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("a"));
        assert_eq!(r.messages[3].text(), PLACEHOLDER_RESULT);
        assert_eq!(r.messages[5].text(), "[tool result zz] late");
        assert_eq!(
            r.repairs,
            Repairs {
                missing_tool_results: 1,
                orphan_tool_results: 1,
                empty_messages_dropped: 1
            }
        );
        assert_eq!(
            r.new_index,
            [Some(0), Some(1), Some(2), Some(4), Some(5), None]
        );
    }

    #[test]
    fn text_of_flattens_blocks() {
        let v = serde_json::json!([
            {"type": "text", "text": "a"},
            {"type": "image", "source": {}},
            {"type": "tool_reference", "tool_name": "Grep"},
            {"type": "other", "x": 1}
        ]);
        assert_eq!(
            text_of(&v),
            "a\n[image]\n[tool_reference Grep]\n{\"type\":\"other\",\"x\":1}"
        );
    }
}
