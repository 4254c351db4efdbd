//! Claude Code session JSONL (`~/.claude/projects/*/<session>.jsonl`) and the Claude Agent SDK
//! `stream-json` log, imported as one OpenAI chat conversation.
//!
//! | record | becomes |
//! |---|---|
//! | `user` / `assistant` with a `message` | messages, in file order (not the `parentUuid` tree) |
//! | assistant records sharing `message.id` | one assistant message: `text` blocks joined into `content`, `tool_use` / `server_tool_use` → `tool_calls` (arguments = the `input` as a JSON string), `thinking` / `redacted_thinking` → `reasoning_details` (`reasoning.text` with its `signature` / `reasoning.encrypted`, as the Anthropic loader does) |
//! | a user record's `tool_result` blocks | `tool` messages, in order (text blocks joined, images as `[image]`) |
//! | a user record's other blocks | one `user` message after those (text joined; image blocks kept as `image_url` parts) |
//! | `isCompactSummary` user record | kept as a user message; its index goes to `meta.compaction_summary_indices` |
//! | user rows Claude Code wrote in the user's name (`isMeta`, slash-command markup, task notifications, reminders, interruption markers, continuation summaries) | kept, flagged `meta.synthetic = "<kind>"` on the message ([`crate::synthetic`]); their count in `meta.synthetic_rows` |
//! | `system` `compact_boundary` | index of the next message in `meta.compact_boundary_indices` |
//! | `system` `init` (SDK) | `meta.sdk_tools`, `meta.models` |
//! | `isSidechain` records | skipped when the file also has main-thread records |
//! | `progress`, `file-history-snapshot`, `queue-operation`, `summary`, other `system`, `result` | skipped |
//!
//! Claude Code logs each content block of a streamed assistant message as its own record, and a
//! parallel tool call's block can be logged after an earlier call's result; the merged message
//! keeps every call, and the repair pass ([`repair_tool_pairing`]) then puts each result
//! directly after its call, inserting placeholders for calls never answered.
//!
//! The SDK log does not contain the first user prompt; pass it as `prompt` to
//! [`from_lines`] / [`parse`] when you have it (the `prompt.txt` beside the log).

use crate::conversation::Conversation;
// Reasoning entries made from thinking blocks use the Anthropic loader's `format`, so a
// conversion to Anthropic rebuilds the thinking blocks with their signatures.
use crate::formats::anthropic::REASONING_FORMAT;
use crate::formats::detect::{Parsed, parse_text};
use crate::formats::error::{FormatError, required_field};
use crate::formats::load::{LoadError, format_error_at};
use crate::formats::transcript::{
    RecordSink, SessionFacts, append_text, arguments_string, assistant, block_text, feed_lines,
    push_reasoning, put, remap, repair_tool_pairing, text_of,
};
use crate::message::{Content, ContentPart, Message, Role, ToolCall, describe_value};
use crate::synthetic::{self, SyntheticKind};
use crate::usage::{ApiShape, normalize_usage};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

type Object = Map<String, Value>;

/// Whether a record looks like a Claude Code / Agent SDK message record: `type` user or
/// assistant, a `message` object, and a `uuid` / `sessionId` / `session_id`.
pub(crate) fn is_message_record(obj: &Object) -> bool {
    matches!(
        obj.get("type").and_then(Value::as_str),
        Some("user" | "assistant")
    ) && obj.get("message").is_some_and(Value::is_object)
        && ["uuid", "sessionId", "session_id"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// Parses a Claude Code / Agent SDK log. `prompt`, when given, becomes the first user message.
pub fn parse(text: &str, prompt: Option<&str>) -> Result<Conversation, LoadError> {
    let lines = match parse_text(text).map_err(|e| format_error_at(None, e))? {
        Parsed::Lines(lines) => lines,
        Parsed::Single(v) => vec![(1, v)],
    };
    from_lines(&lines, prompt)
}

/// Converts parsed JSONL records (with their 1-based line numbers).
pub fn from_lines(
    lines: &[(usize, Value)],
    prompt: Option<&str>,
) -> Result<Conversation, LoadError> {
    let has_main = lines.iter().any(|(_, r)| {
        matches!(
            r.get("type").and_then(Value::as_str),
            Some("user" | "assistant")
        ) && !r.get("isSidechain").is_some_and(truthy)
    });
    let mut b = Builder {
        has_main,
        ..Builder::default()
    };
    if let Some(p) = prompt {
        b.out.push(Message::user(p));
    }
    feed_lines(
        &mut b,
        lines,
        "no Claude Code record found; expected lines like \
         {\"type\": \"user\", \"message\": {...}, \"uuid\": ...}",
    )?;
    Ok(b.finish(prompt.is_some()))
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
}

#[derive(Default)]
struct Builder {
    out: Vec<Message>,
    has_main: bool,
    saw_sidechain: bool,
    by_message_id: HashMap<String, usize>,
    models: BTreeSet<String>,
    summary_indices: Vec<usize>,
    boundary_indices: Vec<usize>,
    thinking_blocks: usize,
    sdk: bool,
    session_id: Option<Value>,
    agent_id: Option<Value>,
    cwd: Option<Value>,
    git_branch: Option<Value>,
    version: Option<Value>,
    sdk_tools: Option<Value>,
    /// Records of a type Claude Code writes.
    recognized: usize,
    facts: SessionFacts,
    /// Usage per API response: the lines of one response repeat it, the last is final.
    usage_by_message_id: HashMap<String, crate::usage::CanonicalUsage>,
}

/// Record types Claude Code and the Agent SDK write.
const RECORD_TYPES: [&str; 8] = [
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "result",
];

impl RecordSink for Builder {
    fn record(&mut self, record: &Value) -> Result<(), FormatError> {
        let Value::Object(r) = record else {
            return Err(FormatError::shape(
                "",
                "a Claude Code record object",
                record,
            ));
        };
        let ty = match r.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return Err(FormatError::shape("type", "a record type string", other)),
            None => {
                return Err(FormatError::missing(
                    "type",
                    "a record type string (user, assistant, system, ...)",
                ));
            }
        };
        if RECORD_TYPES.contains(&ty) {
            self.recognized += 1;
            self.facts.saw_timestamp(r.get("timestamp"));
        }
        if r.contains_key("session_id") || r.contains_key("parent_tool_use_id") {
            self.sdk = true;
        }
        match ty {
            "system" => {
                match r.get("subtype").and_then(Value::as_str) {
                    Some("compact_boundary") => self.boundary_indices.push(self.out.len()),
                    Some("init") => {
                        self.sdk = true;
                        if let Some(tools) = r.get("tools").filter(|t| truthy(t)) {
                            self.sdk_tools = Some(tools.clone());
                        }
                        if let Some(m) = r.get("model").and_then(Value::as_str) {
                            self.models.insert(m.to_string());
                        }
                        remember(&mut self.cwd, r.get("cwd"));
                        remember(&mut self.session_id, r.get("session_id"));
                        remember(&mut self.version, r.get("claude_code_version"));
                    }
                    _ => {}
                }
                Ok(())
            }
            "user" | "assistant" => {
                let message = required_field(
                    r,
                    "",
                    "message",
                    "a message object ({role, content})",
                    Value::as_object,
                )?;
                let sidechain = r.get("isSidechain").is_some_and(truthy);
                self.saw_sidechain |= sidechain;
                if self.has_main && sidechain {
                    return Ok(());
                }
                remember(
                    &mut self.session_id,
                    r.get("sessionId").or(r.get("session_id")),
                );
                remember(&mut self.agent_id, r.get("agentId"));
                remember(&mut self.cwd, r.get("cwd"));
                remember(&mut self.git_branch, r.get("gitBranch"));
                remember(&mut self.version, r.get("version"));
                if ty == "assistant" {
                    if let (Some(id), Some(_)) = (
                        message.get("id").and_then(Value::as_str),
                        message.get("usage"),
                    ) {
                        let usage = normalize_usage(ApiShape::AnthropicMessages, &r["message"]);
                        self.usage_by_message_id.insert(id.to_string(), usage);
                    }
                    self.assistant(message)
                } else {
                    let injected = if r.get("isCompactSummary").is_some_and(truthy) {
                        self.summary_indices.push(self.out.len());
                        Some(SyntheticKind::CompactionSummary)
                    } else if r.get("isMeta").is_some_and(truthy) {
                        // Claude Code's own flag for rows it wrote in the user's name: skill
                        // bodies, slash-command expansions, caveats, reminders.
                        Some(SyntheticKind::CommandExpansion)
                    } else {
                        None
                    };
                    self.user(message, injected)
                }
            }
            // progress, file-history-snapshot, queue-operation, summary, result, and record
            // types newer than this loader.
            _ => Ok(()),
        }
    }

    fn recognized(&self) -> usize {
        self.recognized
    }
}

impl Builder {
    fn assistant(&mut self, message: &Object) -> Result<(), FormatError> {
        if let Some(m) = message.get("model").and_then(Value::as_str) {
            self.models.insert(m.to_string());
        }
        let single;
        let blocks: &[Value] = match message.get("content") {
            Some(Value::Array(blocks)) => blocks,
            Some(Value::String(s)) => {
                single = [Value::String(s.clone())];
                &single
            }
            None | Some(Value::Null) => &[],
            Some(other) => {
                return Err(FormatError::shape(
                    "message.content",
                    "a string or an array of content blocks",
                    other,
                ));
            }
        };
        let mut texts: Vec<String> = Vec::new();
        let mut calls: Vec<ToolCall> = Vec::new();
        let mut reasoning: Vec<Value> = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let at = format!("message.content[{i}]");
            let obj = match block {
                Value::Object(o) => o,
                Value::String(s) => {
                    texts.push(s.clone());
                    continue;
                }
                other => {
                    return Err(FormatError::shape(at, "a content block object", other));
                }
            };
            match obj.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => texts.push(block_text(block)),
                "tool_use" | "server_tool_use" => calls.push(ToolCall::function(
                    required_string(obj, "id", &at)?,
                    required_string(obj, "name", &at)?,
                    arguments_string(obj.get("input")),
                )),
                "thinking" => {
                    self.thinking_blocks += 1;
                    let mut e = Object::new();
                    e.insert("type".into(), "reasoning.text".into());
                    e.insert(
                        "text".into(),
                        obj.get("thinking").cloned().unwrap_or_else(|| "".into()),
                    );
                    if let Some(sig) = obj.get("signature") {
                        e.insert("signature".into(), sig.clone());
                    }
                    e.insert("format".into(), REASONING_FORMAT.into());
                    reasoning.push(Value::Object(e));
                }
                "redacted_thinking" => {
                    self.thinking_blocks += 1;
                    let mut e = Object::new();
                    e.insert("type".into(), "reasoning.encrypted".into());
                    e.insert("data".into(), obj.get("data").cloned().unwrap_or_default());
                    e.insert("format".into(), REASONING_FORMAT.into());
                    reasoning.push(Value::Object(e));
                }
                "web_search_tool_result" => {
                    texts.push(text_of(obj.get("content").unwrap_or(&Value::Null)));
                }
                _ => {}
            }
        }
        let text = join_nonempty(&texts);
        let id = message.get("id").and_then(Value::as_str);
        if let Some(&idx) = id.and_then(|id| self.by_message_id.get(id)) {
            let target = &mut self.out[idx];
            append_text(target, &text);
            if !calls.is_empty() {
                target.tool_calls.get_or_insert_with(Vec::new).extend(calls);
            }
            push_reasoning(target, reasoning);
            return Ok(());
        }
        let mut m = assistant(text);
        if !calls.is_empty() {
            m.tool_calls = Some(calls);
        }
        push_reasoning(&mut m, reasoning);
        if let Some(id) = id {
            self.by_message_id.insert(id.to_string(), self.out.len());
        }
        self.out.push(m);
        Ok(())
    }

    /// A user record's messages; `injected` flags its user message as not typed by the user
    /// (refined by the text's own kind when it has one).
    fn user(
        &mut self,
        message: &Object,
        injected: Option<SyntheticKind>,
    ) -> Result<(), FormatError> {
        let before = self.out.len();
        self.user_messages(message)?;
        if let Some(flag) = injected
            && let Some(m) = self.out[before..]
                .iter_mut()
                .rev()
                .find(|m| m.role == Role::User)
        {
            let kind = synthetic::kind_of(m).unwrap_or(flag);
            synthetic::mark(m, kind);
        }
        Ok(())
    }

    fn user_messages(&mut self, message: &Object) -> Result<(), FormatError> {
        let blocks = match message.get("content") {
            Some(Value::String(s)) => {
                self.out.push(Message::user(s.clone()));
                return Ok(());
            }
            Some(Value::Array(blocks)) => blocks,
            None | Some(Value::Null) => return Ok(()),
            Some(other) => {
                return Err(FormatError::shape(
                    "message.content",
                    "a string or an array of content blocks",
                    other,
                ));
            }
        };
        let mut rest: Vec<&Value> = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let is_result = block.get("type").and_then(Value::as_str) == Some("tool_result");
            if !is_result {
                rest.push(block);
                continue;
            }
            let at = format!("message.content[{i}]");
            let Some(obj) = block.as_object() else {
                continue;
            };
            let id = required_field(
                obj,
                &at,
                "tool_use_id",
                "the id of the tool_use this result answers",
                Value::as_str,
            )?
            .to_string();
            let content = text_of(obj.get("content").unwrap_or(&Value::Null));
            self.out.push(Message::tool(id, content));
        }
        if rest.is_empty() {
            return Ok(());
        }
        let has_image = rest
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("image"));
        if has_image {
            let parts: Vec<ContentPart> = rest.iter().map(|b| user_part(b)).collect();
            self.out
                .push(Message::new(Role::User, Some(Content::Parts(parts))));
        } else {
            let texts: Vec<String> = rest.iter().map(|b| block_text(b)).collect();
            let text = join_nonempty(&texts);
            if !text.is_empty() {
                self.out.push(Message::user(text));
            }
        }
        Ok(())
    }

    fn finish(mut self, with_prompt: bool) -> Conversation {
        let synthetic_rows = synthetic::mark_synthetic_rows(&mut self.out);
        let repaired = repair_tool_pairing(self.out);
        let mut meta = Object::new();
        let mut calls: Vec<_> = self.usage_by_message_id.drain().collect();
        calls.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, usage) in calls {
            self.facts.add_call(usage);
        }
        let format = if self.sdk {
            "claude-agent-sdk-stream-json"
        } else {
            "claude-code-jsonl"
        };
        meta.insert("format".into(), format.into());
        for (key, value) in [
            ("session_id", self.session_id),
            ("agent_id", self.agent_id),
            ("cwd", self.cwd),
            ("git_branch", self.git_branch),
            ("version", self.version),
        ] {
            put(&mut meta, key, value.unwrap_or_default());
        }
        put(
            &mut meta,
            "models",
            Value::Array(self.models.into_iter().map(Value::String).collect()),
        );
        if !self.has_main && self.saw_sidechain {
            meta.insert("sidechain".into(), true.into());
        }
        meta.insert("thinking_blocks".into(), self.thinking_blocks.into());
        if let Some(tools) = self.sdk_tools {
            meta.insert("sdk_tools".into(), tools);
        }
        if with_prompt {
            meta.insert("prompt_prepended".into(), true.into());
        }
        put(
            &mut meta,
            "compaction_summary_indices",
            Value::Array(remap(&self.summary_indices, &repaired.new_index)),
        );
        put(
            &mut meta,
            "compact_boundary_indices",
            Value::Array(remap(&self.boundary_indices, &repaired.new_index)),
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

/// A non-tool-result user block as a content part: images as `image_url` (when their source
/// says a URL or base64 data), text as text, anything else as its text rendering.
fn user_part(block: &Value) -> ContentPart {
    if let Some(obj) = block.as_object()
        && obj.get("type").and_then(Value::as_str) == Some("image")
        && let Some(part) = crate::formats::anthropic::image_to_part(obj)
    {
        return ContentPart::from_object(part);
    }
    ContentPart::text(block_text(block))
}

fn remember(slot: &mut Option<Value>, value: Option<&Value>) {
    if slot.is_none()
        && let Some(v) = value.filter(|v| truthy(v))
    {
        *slot = Some(v.clone());
    }
}

fn join_nonempty(texts: &[String]) -> String {
    texts
        .iter()
        .filter(|t| !t.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

fn required_string(obj: &Object, key: &str, at: &str) -> Result<String, FormatError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(FormatError::Shape {
            at: format!("{at}.{key}"),
            expected: "a string".into(),
            found: describe_value(other),
        }),
        None => Err(FormatError::missing(format!("{at}.{key}"), "a string")),
    }
}
