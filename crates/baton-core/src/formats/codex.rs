//! Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), imported as one
//! OpenAI chat conversation.
//!
//! | record | becomes |
//! |---|---|
//! | `session_meta` | `base_instructions.text` (or `instructions`) → the system message; id, cwd, CLI version → `meta` |
//! | `response_item` `message` | role `developer` → `system`, `user` / `assistant` as they are (`input_text` / `output_text` joined, images as `[image]`) |
//! | `function_call` / `custom_tool_call` / `local_shell_call` | `tool_calls`, appended to the preceding assistant message when nothing came after it; a custom tool's free-text `input` becomes `{"input": …}` |
//! | `function_call_output` / `custom_tool_call_output` | `tool` messages by `call_id` |
//! | `web_search_call` | a synthetic `web_search` call (`websearch_N`) and a note as its result (the results are never logged) |
//! | `reasoning` | `reasoning_details` of the next assistant message: `reasoning.summary` / `reasoning.text` entries and the `reasoning.encrypted` blob (format `openai-responses-v1`) |
//! | `compacted` | a user message `[compacted history summary]\n…`, indexed in `meta.compaction_indices` |
//! | `turn_context` | the model → `meta.models` |
//! | user messages Codex writes itself (`<environment_context>`, AGENTS.md / `<user_instructions>`, `<turn_aborted>`, subagent notifications, compactions) | kept, flagged `meta.synthetic = "<kind>"` on the message ([`crate::synthetic`]); their count in `meta.synthetic_rows` |
//! | `event_msg` | skipped (UI duplicates of response items), except a `user_message` whose text is not among the last user messages (logs trimmed to their events) |
//!
//! The repair pass ([`repair_tool_pairing`](super::transcript::repair_tool_pairing)) then makes
//! the conversation API-valid.

use crate::conversation::Conversation;
use crate::formats::detect::{Parsed, parse_text};
use crate::formats::error::{FormatError, required_field};
use crate::formats::load::{LoadError, format_error_at};
use crate::formats::transcript::{
    RecordSink, SessionFacts, arguments_string, assistant, feed_lines, push_reasoning, put, remap,
    repair_tool_pairing, text_of,
};
use crate::message::{Message, Role, ToolCall, describe_value};
use crate::synthetic;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// `format` of the reasoning entries made from Codex reasoning items (OpenRouter's name).
pub const REASONING_FORMAT: &str = "openai-responses-v1";

/// Record types of the rollout envelope.
const ENVELOPE_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// Response item types (bare lines in early rollouts).
const ITEM_TYPES: [&str; 9] = [
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "reasoning",
    "compacted",
];

/// Whether a record is a rollout envelope: `type` one of the rollout record types and an object
/// `payload`.
pub(crate) fn is_rollout_record(obj: &Object) -> bool {
    obj.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| ENVELOPE_TYPES.contains(&t))
        && obj.get("payload").is_some_and(Value::is_object)
}

/// Parses a Codex rollout.
pub fn parse(text: &str) -> Result<Conversation, LoadError> {
    let lines = match parse_text(text).map_err(|e| format_error_at(None, e))? {
        Parsed::Lines(lines) => lines,
        Parsed::Single(v) => vec![(1, v)],
    };
    from_lines(&lines)
}

/// Converts parsed rollout records (with their 1-based line numbers).
pub fn from_lines(lines: &[(usize, Value)]) -> Result<Conversation, LoadError> {
    let mut b = Builder::default();
    feed_lines(
        &mut b,
        lines,
        "no Codex rollout record found; expected lines like \
         {\"type\": \"response_item\", \"payload\": {...}}",
    )?;
    Ok(b.finish())
}

#[derive(Default)]
struct Builder {
    out: Vec<Message>,
    /// Reasoning items waiting for the assistant output they precede.
    reasoning: Vec<Value>,
    reasoning_items: usize,
    synthetic: usize,
    from_events: usize,
    compactions: Vec<usize>,
    models: Vec<Value>,
    meta: Object,
    /// Records that were rollout records (envelopes or early bare items).
    recognized: usize,
    facts: SessionFacts,
    /// `token_count` events that carried usage (one per API call).
    token_events: u64,
}

impl RecordSink for Builder {
    fn record(&mut self, record: &Value) -> Result<(), FormatError> {
        let Value::Object(r) = record else {
            return Err(FormatError::shape(
                "",
                "a Codex rollout record object",
                record,
            ));
        };
        let ty = match r.get("type") {
            Some(Value::String(s)) => Some(s.as_str()),
            None | Some(Value::Null) => None,
            Some(other) => return Err(FormatError::shape("type", "a record type string", other)),
        };
        if r.contains_key("payload") || ty.is_some_and(|t| ITEM_TYPES.contains(&t)) {
            self.recognized += 1;
            self.facts.saw_timestamp(r.get("timestamp"));
        }
        let p = match r.get("payload") {
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(FormatError::shape("payload", "a payload object", other));
            }
            None => r,
        };
        match ty {
            Some("session_meta") => {
                self.session_meta(p);
                Ok(())
            }
            Some("turn_context") => {
                if let Some(m) = p.get("model").filter(|m| m.is_string())
                    && !self.models.contains(m)
                {
                    self.models.push(m.clone());
                }
                Ok(())
            }
            Some("compacted") => {
                self.flush_reasoning();
                self.compactions.push(self.out.len());
                let summary = p.get("message").and_then(Value::as_str).unwrap_or("");
                self.out.push(Message::user(format!(
                    "[compacted history summary]\n{summary}"
                )));
                Ok(())
            }
            Some("event_msg") => {
                match p.get("type").and_then(Value::as_str) {
                    Some("user_message") => self.event_user_message(p),
                    Some("token_count") => self.token_count(p),
                    _ => {}
                }
                Ok(())
            }
            // The untyped first line of early rollouts (no envelope) holds their instructions.
            None if p.contains_key("instructions") => {
                self.session_meta(p);
                Ok(())
            }
            // `response_item`, and the bare items of early rollouts.
            Some("response_item") | None => self.item(p),
            Some(_) if !r.contains_key("payload") => self.item(p),
            Some(_) => Ok(()),
        }
    }

    fn recognized(&self) -> usize {
        self.recognized
    }
}

impl Builder {
    fn session_meta(&mut self, p: &Object) {
        let instructions = match p.get("base_instructions") {
            Some(Value::Object(o)) => o.get("text").cloned(),
            Some(other) => Some(other.clone()),
            None => None,
        }
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .or_else(|| p.get("instructions").cloned())
        .and_then(|v| v.as_str().map(str::to_string))
        .filter(|s| !s.is_empty());
        if let Some(text) = instructions {
            self.out.push(Message::system(text));
        }
        for (from, to) in [
            ("id", "session_id"),
            ("cwd", "cwd"),
            ("cli_version", "cli_version"),
            ("originator", "originator"),
            ("model_provider", "model_provider"),
            ("git", "git"),
        ] {
            if !self.meta.contains_key(to)
                && let Some(v) = p.get(from)
            {
                put(&mut self.meta, to, v.clone());
            }
        }
    }

    fn event_user_message(&mut self, p: &Object) {
        let text = p
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        if text.is_empty() {
            return;
        }
        let start = self.out.len().saturating_sub(6);
        let seen = self.out[start..]
            .iter()
            .filter(|m| m.role == Role::User)
            .any(|m| m.text().contains(&text));
        if !seen {
            self.flush_reasoning();
            self.out.push(Message::user(text));
            self.from_events += 1;
        }
    }

    fn item(&mut self, p: &Object) -> Result<(), FormatError> {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "message" => {
                let role = required_field(
                    p,
                    "payload",
                    "role",
                    "a role string (user, assistant, developer, system)",
                    Value::as_str,
                )?;
                let text = text_of(p.get("content").unwrap_or(&Value::Null));
                match role {
                    "assistant" => {
                        let mut m = Message::assistant(text);
                        push_reasoning(&mut m, std::mem::take(&mut self.reasoning));
                        self.out.push(m);
                    }
                    "user" => {
                        self.flush_reasoning();
                        self.out.push(Message::user(text));
                    }
                    "developer" | "system" => {
                        self.flush_reasoning();
                        self.out.push(Message::system(text));
                    }
                    _ => {}
                }
            }
            "function_call" | "custom_tool_call" => {
                let id = required_string(p, "call_id")?;
                let name = required_string(p, "name")?;
                let arguments = if ty == "function_call" {
                    arguments_string(p.get("arguments"))
                } else {
                    let mut o = Object::new();
                    o.insert("input".into(), p.get("input").cloned().unwrap_or_default());
                    Value::Object(o).to_string()
                };
                self.add_call(ToolCall::function(id, name, arguments));
            }
            "local_shell_call" => {
                let id = required_string(p, "call_id")?;
                self.add_call(ToolCall::function(
                    id,
                    "local_shell",
                    arguments_string(p.get("action")),
                ));
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = required_string(p, "call_id")?;
                let output = match p.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Object(o)) => match o.get("content") {
                        Some(c) if !is_falsy(c) => match c {
                            Value::String(s) => s.clone(),
                            other => text_of(other),
                        },
                        _ => Value::Object(o.clone()).to_string(),
                    },
                    Some(other) => text_of(other),
                    None => String::new(),
                };
                self.out.push(Message::tool(id, output));
            }
            "web_search_call" => {
                self.synthetic += 1;
                let id = format!("websearch_{}", self.synthetic);
                self.add_call(ToolCall::function(
                    id.clone(),
                    "web_search",
                    arguments_string(p.get("action")),
                ));
                let status = p.get("status").and_then(Value::as_str).unwrap_or("");
                self.out.push(Message::tool(
                    id,
                    format!(
                        "[web search {status}; results were given to the model server-side and \
                         are not in the log]"
                    ),
                ));
            }
            "reasoning" => {
                self.reasoning_items += 1;
                self.reasoning.extend(reasoning_entries(p));
            }
            _ => {}
        }
        Ok(())
    }

    /// Attaches a call to the trailing assistant message, or starts one.
    fn add_call(&mut self, call: ToolCall) {
        let reasoning = std::mem::take(&mut self.reasoning);
        if let Some(last) = self.out.last_mut()
            && last.role == Role::Assistant
        {
            last.tool_calls.get_or_insert_with(Vec::new).push(call);
            push_reasoning(last, reasoning);
            return;
        }
        let mut m = assistant(String::new());
        m.tool_calls = Some(vec![call]);
        push_reasoning(&mut m, reasoning);
        self.out.push(m);
    }

    /// Reasoning with no assistant output after it (an interrupted turn) becomes a
    /// reasoning-only assistant message, so it is not lost.
    fn flush_reasoning(&mut self) {
        if self.reasoning.is_empty() {
            return;
        }
        let mut m = assistant(String::new());
        push_reasoning(&mut m, std::mem::take(&mut self.reasoning));
        self.out.push(m);
    }

    /// A `token_count` event: running session totals (`total_token_usage`, where
    /// `input_tokens` includes the cached ones and `output_tokens` the reasoning ones).
    fn token_count(&mut self, p: &Object) {
        let Some(total) = p.get("info").and_then(|i| i.get("total_token_usage")) else {
            return;
        };
        let n = |k: &str| total.get(k).and_then(Value::as_u64).unwrap_or(0);
        let cached = n("cached_input_tokens");
        self.token_events += 1;
        let usage = crate::usage::CanonicalUsage {
            input: n("input_tokens").saturating_sub(cached),
            output: n("output_tokens"),
            cache_read: cached,
            cache_write: 0,
            reasoning: n("reasoning_output_tokens"),
        };
        self.facts.set_totals(usage, self.token_events);
    }

    fn finish(mut self) -> Conversation {
        self.flush_reasoning();
        let synthetic_rows = synthetic::mark_synthetic_rows(&mut self.out);
        let repaired = repair_tool_pairing(self.out);
        let mut meta = Object::new();
        meta.insert("format".into(), "codex-rollout-jsonl".into());
        meta.extend(self.meta);
        put(&mut meta, "models", Value::Array(self.models));
        meta.insert("reasoning_items".into(), self.reasoning_items.into());
        meta.insert("synthetic_tool_calls".into(), self.synthetic.into());
        if self.from_events > 0 {
            meta.insert("user_turns_from_event_msg".into(), self.from_events.into());
        }
        put(
            &mut meta,
            "compaction_indices",
            Value::Array(remap(&self.compactions, &repaired.new_index)),
        );
        if !repaired.repairs.is_empty() {
            meta.insert("repairs".into(), repaired.repairs.to_value());
        }
        if synthetic_rows > 0 {
            meta.insert("synthetic_rows".into(), synthetic_rows.into());
        }
        self.facts.put_into(&mut meta);
        let mut conv = Conversation::new(repaired.messages);
        conv.extra.insert("meta".into(), Value::Object(meta));
        conv
    }
}

/// The `reasoning_details` entries of one OpenAI Responses reasoning item (Codex logs them
/// verbatim; `baton-llm` reads them from live responses): its summaries, its plain reasoning
/// text when present, and the encrypted blob (only the provider can read it, but it is what a
/// replay to the Responses API needs).
pub fn reasoning_entries(p: &Object) -> Vec<Value> {
    let id = p.get("id").filter(|v| v.is_string());
    let entry = |ty: &str, key: &str, value: Value| {
        let mut e = Object::new();
        e.insert("type".into(), ty.into());
        e.insert(key.into(), value);
        if let Some(id) = id {
            e.insert("id".into(), id.clone());
        }
        e.insert("format".into(), REASONING_FORMAT.into());
        Value::Object(e)
    };
    let mut out = Vec::new();
    for s in p
        .get("summary")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(text) = s.get("text").and_then(Value::as_str) {
            out.push(entry("reasoning.summary", "summary", text.into()));
        }
    }
    for c in p
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(text) = c.get("text").and_then(Value::as_str) {
            out.push(entry("reasoning.text", "text", text.into()));
        }
    }
    if let Some(data) = p.get("encrypted_content").filter(|v| v.is_string()) {
        out.push(entry("reasoning.encrypted", "data", data.clone()));
    }
    out
}

fn is_falsy(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(true) => false,
    }
}

fn required_string(p: &Object, key: &str) -> Result<String, FormatError> {
    match p.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(FormatError::Shape {
            at: format!("payload.{key}"),
            expected: "a string".into(),
            found: describe_value(other),
        }),
        None => Err(FormatError::missing(format!("payload.{key}"), "a string")),
    }
}
