//! Gemini CLI session JSON (`~/.gemini/tmp/<project hash>/chats/session-*.json`), imported as
//! one OpenAI chat conversation.
//!
//! | session message | becomes |
//! |---|---|
//! | `type: user` | a `user` message (`content` flattened to text) |
//! | `type: gemini` | an `assistant` message: `content`, `toolCalls[].{id, name, args}` → `tool_calls`, `thoughts[]` → `reasoning_content` (`subject: description` lines) |
//! | each tool call's `result[].functionResponse.response` | a `tool` message after the assistant message: `output`, else `error`, else the response as JSON (`resultDisplay` when no result was logged) |
//! | `info`, `error`, `warning`, … | skipped (CLI notices, never sent to the model) |
//! | user messages the CLI wrote itself (its setup message, `<state_snapshot>` compressions) | kept, flagged `meta.synthetic = "<kind>"` ([`crate::synthetic`]); their count in `meta.synthetic_rows` |
//!
//! The session id, project hash, start time and models go to `meta`; the repair pass
//! ([`repair_tool_pairing`]) then makes the conversation API-valid.

use crate::conversation::Conversation;
use crate::formats::error::{FormatError, required_field};
use crate::formats::transcript::{
    SessionFacts, arguments_string, assistant, put, repair_tool_pairing, text_of,
};
use crate::message::{Message, ToolCall, describe_value};
use crate::synthetic;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Whether a JSON object looks like a Gemini CLI session: a `messages` array whose entries have
/// a `type` (`user`, `gemini`, …) and no `role`, at least one of them `user` or `gemini`.
pub(crate) fn is_session(obj: &Object) -> bool {
    let Some(Value::Array(messages)) = obj.get("messages") else {
        return false;
    };
    !messages.is_empty()
        && messages.iter().all(|m| m.get("role").is_none())
        && messages.iter().any(|m| {
            matches!(
                m.get("type").and_then(Value::as_str),
                Some("user" | "gemini")
            )
        })
}

/// Converts a parsed session object.
pub fn from_session(session: &Value) -> Result<Conversation, FormatError> {
    let Value::Object(d) = session else {
        return Err(FormatError::shape(
            "",
            "a Gemini CLI session object ({sessionId, messages})",
            session,
        ));
    };
    let messages = required_field(
        d,
        "",
        "messages",
        "an array of session messages",
        Value::as_array,
    )?;
    let mut out = Vec::new();
    let mut models: Vec<Value> = Vec::new();
    let mut facts = SessionFacts::default();
    facts.saw_timestamp(d.get("startTime"));
    for (i, m) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let Value::Object(m) = m else {
            return Err(FormatError::shape(at, "a session message object", m));
        };
        facts.saw_timestamp(m.get("timestamp"));
        if let Some(tokens) = m.get("tokens").filter(|t| t.is_object()) {
            facts.add_call(call_usage(tokens));
        }
        let ty = required_field(
            m,
            &at,
            "type",
            "a message type string (user, gemini, info, ...)",
            Value::as_str,
        )?;
        let content = m.get("content").unwrap_or(&Value::Null);
        match ty {
            "user" => out.push(Message::user(text_of(content))),
            "gemini" => {
                if let Some(model) = m.get("model").filter(|v| v.is_string())
                    && !models.contains(model)
                {
                    models.push(model.clone());
                }
                let mut a = assistant(text_of(content));
                if let Some(thoughts) = m.get("thoughts").and_then(Value::as_array)
                    && !thoughts.is_empty()
                {
                    let lines: Vec<String> = thoughts
                        .iter()
                        .filter_map(Value::as_object)
                        .map(|t| format!("{}: {}", str_of(t, "subject"), str_of(t, "description")))
                        .collect();
                    a.reasoning
                        .insert("reasoning_content".into(), lines.join("\n").into());
                }
                let mut calls = Vec::new();
                let mut results = Vec::new();
                let tool_calls = match m.get("toolCalls") {
                    Some(Value::Array(t)) => t.as_slice(),
                    None | Some(Value::Null) => &[],
                    Some(other) => {
                        return Err(FormatError::shape(
                            format!("{at}.toolCalls"),
                            "an array of tool calls",
                            other,
                        ));
                    }
                };
                for (j, tc) in tool_calls.iter().enumerate() {
                    let at = format!("{at}.toolCalls[{j}]");
                    let Value::Object(tc) = tc else {
                        return Err(FormatError::shape(at, "a tool call object", tc));
                    };
                    let id = required_string(tc, "id", &at)?;
                    let name = required_string(tc, "name", &at)?;
                    calls.push(ToolCall::function(
                        id.clone(),
                        name,
                        arguments_string(tc.get("args")),
                    ));
                    results.push(Message::tool(id, tool_result_text(tc)));
                }
                if !calls.is_empty() {
                    a.tool_calls = Some(calls);
                }
                out.push(a);
                out.extend(results);
            }
            _ => {}
        }
    }
    let synthetic_rows = synthetic::mark_synthetic_rows(&mut out);
    let repaired = repair_tool_pairing(out);
    let mut meta = Object::new();
    meta.insert("format".into(), "gemini-cli-session-json".into());
    for (from, to) in [
        ("sessionId", "session_id"),
        ("projectHash", "project_hash"),
        ("startTime", "start_time"),
    ] {
        put(&mut meta, to, d.get(from).cloned().unwrap_or_default());
    }
    put(&mut meta, "models", Value::Array(models));
    facts.saw_timestamp(d.get("lastUpdated"));
    facts.put_into(&mut meta);
    if !repaired.repairs.is_empty() {
        meta.insert("repairs".into(), repaired.repairs.to_value());
    }
    if synthetic_rows > 0 {
        meta.insert("synthetic_rows".into(), synthetic_rows.into());
    }
    let mut conv = Conversation::new(repaired.messages);
    conv.extra.insert("meta".into(), Value::Object(meta));
    Ok(conv)
}

/// A tool call's result text: each `functionResponse.response`'s `output`, else `error`, else
/// the response as JSON; `resultDisplay` when nothing was recorded.
fn tool_result_text(tc: &Object) -> String {
    let mut parts: Vec<String> = Vec::new();
    for r in tc
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let resp = r
            .get("functionResponse")
            .and_then(|f| f.get("response"))
            .cloned()
            .unwrap_or_else(|| Value::Object(Object::new()));
        let text = match &resp {
            Value::Object(o) if o.contains_key("output") => o.get("output").cloned(),
            Value::Object(o) if o.contains_key("error") => o.get("error").cloned(),
            other => Some(Value::String(other.to_string())),
        };
        match text {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => parts.push(s),
            Some(other) => parts.push(other.to_string()),
        }
    }
    if parts.is_empty()
        && let Some(display) = tc.get("resultDisplay").filter(|d| !d.is_null())
    {
        let text = text_of(display);
        if !text.is_empty() {
            parts.push(text);
        }
    }
    parts.join("\n")
}

fn str_of(obj: &Object, key: &str) -> String {
    match obj.get(key) {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
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

/// One response's `tokens`: `input` includes the cached prompt tokens, and `thoughts` are
/// counted apart from `output` (canonical output includes reasoning).
fn call_usage(tokens: &Value) -> crate::usage::CanonicalUsage {
    let n = |k: &str| tokens.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("cached");
    crate::usage::CanonicalUsage {
        input: n("input").saturating_sub(cached),
        // Saturating: a hand-edited or corrupt count must not overflow (found by fuzzing).
        output: n("output").saturating_add(n("thoughts")),
        cache_read: cached,
        cache_write: 0,
        reasoning: n("thoughts"),
    }
}
