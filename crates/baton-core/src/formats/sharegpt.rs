//! ShareGPT records (`{"conversations": [{"from", "value"}…], "tools": …}`) ↔ canonical
//! (OpenAI chat) conversations, including the tool-calling dialect LLaMA-Factory uses
//! (`function_call` / `observation` turns, `tools` as a JSON string).
//!
//! # Mapping
//!
//! | ShareGPT turn | canonical message |
//! |---|---|
//! | `system` | `system` |
//! | `human` (`user`) | `user` |
//! | `gpt` (`assistant`, `chatgpt`, `bing`, `bard`) | `assistant` |
//! | `function_call`, value `{"name", "arguments"}` or a list of them | `assistant` with `tool_calls`, `content: null` |
//! | `observation` (`tool`) | `tool`, answering the oldest unanswered call of the `function_call` turns just before it |
//! | `observation` with no call to answer | `user` (the call was written as text; a tool message would dangle) |
//!
//! A top-level `system` string becomes the leading system message; `tools` (a JSON string or an
//! array of `{name, description, parameters}`) becomes OpenAI function tools. A turn's `name`
//! maps to the message's `name`; every other key of a turn or record is kept in `extra`.
//!
//! Calls without an `id` get `call_<turn index>` (`call_<turn>_<k>` inside a list), marked as
//! synthesized so the writer leaves them out; real ids are written back as an `id` key.
//!
//! # Exact round trip
//!
//! ShareGPT → canonical → ShareGPT gives back the same JSON, key order included, and the same
//! text inside the JSON-encoded strings: they are written the way Python's
//! `json.dumps(…, ensure_ascii=False)` writes them, and when an original was written otherwise
//! it is kept under [`MARKER`] (`"_sharegpt"`) and reused while the calls or tools it encodes are
//! unchanged. The marker also records a non-default `from` spelling, a non-default key order, a
//! top-level system prompt, and `tools` given as an array. Keys named `_sharegpt` in the input
//! are reserved. Other writers should drop `_sharegpt` keys.
//!
//! # What ShareGPT cannot represent (canonical → ShareGPT is lossy here)
//!
//! - Content parts: only their text is written (joined with newlines); images are dropped.
//! - An assistant message with both text and tool calls becomes a `gpt` turn followed by a
//!   `function_call` turn, which read back as two assistant messages.
//! - Tool results are matched to calls by position, so `tool_call_id`s survive only when tool
//!   messages answer their calls in order; `developer` becomes `system`.
//! - Tool-call arguments come back re-serialised compactly.

use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::formats::notes::{
    Notes, apply_key_order, identical, identical_objects, key_order_note, merge_missing,
};
use crate::message::{
    Content, FUNCTION_KIND, Fields, FunctionCall, Message, REASONING_FIELDS, Role, ToolCall,
};
use serde_json::{Map, Value};
use std::collections::VecDeque;

type Object = Map<String, Value>;

/// Key under which round-trip bookkeeping is stored in canonical objects.
pub const MARKER: &str = "_sharegpt";

/// This converter's round-trip notes.
const NOTES: Notes = Notes(MARKER);

const CALL_EXPECTED: &str = "a JSON object {\"name\", \"arguments\"} or a list of them";

/// The kind of turn a `from` value names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnKind {
    System,
    Human,
    Gpt,
    FunctionCall,
    Observation,
}

impl TurnKind {
    fn parse(from: &str) -> Option<TurnKind> {
        Some(match from {
            "system" => TurnKind::System,
            "human" | "user" => TurnKind::Human,
            "gpt" | "assistant" | "chatgpt" | "bing" | "bard" => TurnKind::Gpt,
            "function_call" => TurnKind::FunctionCall,
            "observation" | "tool" => TurnKind::Observation,
            _ => return None,
        })
    }
}

// ------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------

/// Reads one ShareGPT record, or a bare array of turns.
pub fn from_sharegpt(value: &Value) -> Result<Conversation, FormatError> {
    match value {
        Value::Array(turns) => {
            let mut conv = Conversation::new(read_turns(turns, "")?);
            NOTES.add(&mut conv.extra, single("bare", Value::Bool(true)));
            Ok(conv)
        }
        Value::Object(obj) => read_record(obj),
        other => Err(FormatError::shape(
            "$",
            "a ShareGPT record with `conversations`, or an array of turns",
            other,
        )),
    }
}

fn read_record(obj: &Object) -> Result<Conversation, FormatError> {
    let mut conv = Conversation::default();
    let mut turns = None;
    let mut system = None;
    let mut marker = Object::new();
    for (key, value) in obj {
        match key.as_str() {
            "conversations" => match value {
                Value::Array(items) => turns = Some(read_turns(items, "conversations")?),
                other => {
                    return Err(FormatError::shape(
                        "conversations",
                        "an array of turns",
                        other,
                    ));
                }
            },
            "system" => system = Some(read_top_level_system(value)?),
            "tools" => {
                let (tools, tools_marker) = read_tools_field(value)?;
                conv.tools = Some(tools);
                marker.extend(tools_marker);
            }
            _ => {
                conv.extra.insert(key.clone(), value.clone());
            }
        }
    }
    let Some(turns) = turns else {
        return Err(FormatError::missing("conversations", "an array of turns"));
    };
    let default_keys = ["conversations", "system", "tools"]
        .into_iter()
        .filter(|k| obj.contains_key(*k))
        .chain(conv.extra.keys().map(String::as_str));
    if !obj.keys().map(String::as_str).eq(default_keys) {
        marker.extend(key_order_note("keys", obj));
    }
    NOTES.add(&mut conv.extra, marker);
    conv.messages = system.into_iter().chain(turns).collect();
    Ok(conv)
}

fn read_top_level_system(value: &Value) -> Result<Message, FormatError> {
    let Value::String(text) = value else {
        return Err(FormatError::shape("system", "a string", value));
    };
    let mut msg = Message::new(Role::System, Some(Content::Text(text.clone())));
    NOTES.add(&mut msg.extra, single("top_level", Value::Bool(true)));
    Ok(msg)
}

fn read_turns(items: &[Value], prefix: &str) -> Result<Vec<Message>, FormatError> {
    let mut out = Vec::with_capacity(items.len());
    // Ids of calls made by the `function_call` turns just before, not yet answered.
    let mut unanswered: VecDeque<String> = VecDeque::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{prefix}[{i}]");
        let Value::Object(turn) = item else {
            return Err(FormatError::shape(
                at,
                "a turn object with `from` and `value`",
                item,
            ));
        };
        let from = string_field(turn, "from", &at)?;
        let value = string_field(turn, "value", &at)?;
        let kind = TurnKind::parse(from).ok_or_else(|| {
            FormatError::shape(
                format!("{at}.from"),
                "one of system, human, gpt, function_call, observation",
                &Value::String(from.into()),
            )
        })?;
        let mut msg = match kind {
            TurnKind::System => Message::new(Role::System, Some(Content::Text(value.into()))),
            TurnKind::Human => Message::new(Role::User, Some(Content::Text(value.into()))),
            TurnKind::Gpt => Message::new(Role::Assistant, Some(Content::Text(value.into()))),
            TurnKind::FunctionCall => {
                let calls = parse_calls(value, i, &format!("{at}.value"))?;
                unanswered.extend(calls.iter().map(|c| c.id.clone()));
                let mut msg = Message::new(Role::Assistant, Some(Content::Null));
                msg.tool_calls = Some(calls);
                msg
            }
            TurnKind::Observation => answer_oldest_call(&mut unanswered, value),
        };
        if !matches!(kind, TurnKind::FunctionCall | TurnKind::Observation) {
            unanswered.clear();
        }
        take_turn_fields(&mut msg, turn);
        record_turn_exactness(&mut msg, turn, from, value);
        out.push(msg);
    }
    Ok(out)
}

fn string_field<'a>(turn: &'a Object, key: &str, at: &str) -> Result<&'a str, FormatError> {
    match turn.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(FormatError::shape(format!("{at}.{key}"), "a string", other)),
        None => Err(FormatError::missing(format!("{at}.{key}"), "a string")),
    }
}

/// An observation answers the oldest open call; with none open it is only text the user
/// passed on, and becomes a user message (the writer restores its `from`).
fn answer_oldest_call(unanswered: &mut VecDeque<String>, value: &str) -> Message {
    match unanswered.pop_front() {
        Some(id) => {
            let mut msg = Message::new(Role::Tool, Some(Content::Text(value.into())));
            msg.tool_call_id = Some(id);
            msg
        }
        None => Message::new(Role::User, Some(Content::Text(value.into()))),
    }
}

/// Moves the turn's other keys onto the message: `name` to `name`, reasoning fields to
/// `reasoning`, the rest to `extra`.
fn take_turn_fields(msg: &mut Message, turn: &Object) {
    for (key, value) in turn {
        match (key.as_str(), value) {
            ("from" | "value", _) => {}
            ("name", Value::String(name)) => msg.name = Some(name.clone()),
            (k, _) if REASONING_FIELDS.contains(&k) => {
                msg.reasoning.insert(key.clone(), value.clone());
            }
            _ => {
                msg.extra.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Records what the writer cannot guess: a `from` other than its default spelling, a call
/// value written in another style, and a different key order.
fn record_turn_exactness(msg: &mut Message, turn: &Object, from: &str, value: &str) {
    let mut marker = Object::new();
    if from != default_from(msg) {
        marker.insert("from".into(), Value::String(from.into()));
    }
    if msg.tool_calls.is_some() && render_calls(msg.calls()) != value {
        marker.insert("value".into(), Value::String(value.into()));
    }
    NOTES.add(&mut msg.extra, marker);
    let rebuilt = turn_object(msg, turn_from(msg), turn_value(msg));
    if !identical_objects(&rebuilt, turn) {
        NOTES.add(&mut msg.extra, key_order_note("keys", turn));
    }
}

fn parse_calls(value: &str, turn: usize, at: &str) -> Result<Vec<ToolCall>, FormatError> {
    let parsed: Value = serde_json::from_str(value).map_err(|e| FormatError::Shape {
        at: at.into(),
        expected: CALL_EXPECTED.into(),
        found: format!("invalid JSON ({e})"),
    })?;
    match &parsed {
        Value::Object(call) => Ok(vec![read_call(call, format!("call_{turn}"), at)?]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(k, item)| {
                let at = format!("{at}[{k}]");
                match item {
                    Value::Object(call) => read_call(call, format!("call_{turn}_{k}"), &at),
                    other => Err(FormatError::shape(at, "a call object", other)),
                }
            })
            .collect(),
        other => Err(FormatError::shape(at, CALL_EXPECTED, other)),
    }
}

fn read_call(call: &Object, fallback_id: String, at: &str) -> Result<ToolCall, FormatError> {
    let name = match call.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(FormatError::shape(format!("{at}.name"), "a string", other)),
        None => {
            return Err(FormatError::missing(
                format!("{at}.name"),
                "the function name",
            ));
        }
    };
    let arguments = match call.get("arguments") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let given_id = call.get("id").and_then(Value::as_str).map(str::to_string);
    let mut extra: Object = call
        .iter()
        .filter(|(k, v)| match k.as_str() {
            "name" | "arguments" => false,
            "id" => !v.is_string(),
            _ => true,
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let id = match given_id {
        Some(id) => id,
        None => {
            NOTES.add(&mut extra, single("synthetic_id", Value::Bool(true)));
            fallback_id
        }
    };
    Ok(ToolCall {
        id,
        kind: Some(FUNCTION_KIND.into()),
        function: FunctionCall {
            name,
            arguments,
            extra: Fields::new(),
        },
        extra: extra.into(),
    })
}

/// Parses `tools` and returns the OpenAI-form tools plus what the writer needs to give the
/// field back exactly.
fn read_tools_field(value: &Value) -> Result<(Vec<Value>, Object), FormatError> {
    let (items, as_array) = match value {
        Value::String(text) if text.trim().is_empty() => (Vec::new(), false),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => (items, false),
            Ok(other) => {
                return Err(FormatError::shape(
                    "tools",
                    "a JSON-encoded array of tool definitions",
                    &other,
                ));
            }
            Err(e) => {
                return Err(FormatError::Shape {
                    at: "tools".into(),
                    expected: "a JSON-encoded array of tool definitions".into(),
                    found: format!("invalid JSON ({e})"),
                });
            }
        },
        Value::Array(items) => (items.clone(), true),
        other => {
            return Err(FormatError::shape(
                "tools",
                "a JSON string or an array of tool definitions",
                other,
            ));
        }
    };
    let tools = items
        .iter()
        .enumerate()
        .map(|(i, tool)| openai_tool(tool, &format!("tools[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut marker = Object::new();
    if as_array {
        marker.insert("tools_as".into(), "array".into());
    }
    if !identical(&tools_field(&tools, as_array), value) {
        marker.insert("tools_original".into(), value.clone());
    }
    Ok((tools, marker))
}

/// A tool definition in OpenAI form: wrapped as a function unless it already is one.
fn openai_tool(tool: &Value, at: &str) -> Result<Value, FormatError> {
    let Value::Object(obj) = tool else {
        return Err(FormatError::shape(at, "a tool definition object", tool));
    };
    if is_openai_function(obj) {
        return Ok(tool.clone());
    }
    let mut out = Object::new();
    out.insert("type".into(), "function".into());
    out.insert("function".into(), tool.clone());
    Ok(Value::Object(out))
}

fn is_openai_function(tool: &Object) -> bool {
    tool.get("type").and_then(Value::as_str) == Some("function")
        && tool.get("function").is_some_and(Value::is_object)
}

// ------------------------------------------------------------------------------------------
// Writing
// ------------------------------------------------------------------------------------------

/// Writes a conversation as a ShareGPT record (or as a bare array of turns when it was read
/// from one and nothing else needs saying).
pub fn to_sharegpt(conv: &Conversation) -> Value {
    let marker = NOTES.of(&conv.extra);
    let (system, rest) = match conv.messages.split_first() {
        Some((first, rest)) if NOTES.flag(&first.extra, "top_level") => {
            (Some(Value::String(first.text())), rest)
        }
        _ => (None, conv.messages.as_slice()),
    };
    let turns: Vec<Value> = rest.iter().flat_map(write_message).collect();
    let fields = NOTES.without(&conv.extra);
    let bare = NOTES.flag(&conv.extra, "bare");
    if bare && system.is_none() && conv.tools.is_none() && fields.is_empty() {
        return Value::Array(turns);
    }
    let mut out = Object::new();
    out.insert("conversations".into(), Value::Array(turns));
    if let Some(system) = system {
        out.insert("system".into(), system);
    }
    if let Some(tools) = &conv.tools {
        out.insert("tools".into(), write_tools(tools, marker));
    }
    merge_missing(&mut out, fields);
    Value::Object(apply_key_order(out, marker, "keys"))
}

/// The turns for one message: usually one; two when an assistant message has both text and
/// tool calls, which ShareGPT keeps in separate turns.
fn write_message(msg: &Message) -> Vec<Value> {
    let from = turn_from(msg);
    let mut turns = Vec::new();
    if TurnKind::parse(&from) == Some(TurnKind::FunctionCall) {
        let text = msg.text();
        if !text.is_empty() {
            let mut gpt = Object::new();
            gpt.insert("from".into(), "gpt".into());
            gpt.insert("value".into(), Value::String(text));
            turns.push(Value::Object(gpt));
        }
    }
    let turn = turn_object(msg, from, turn_value(msg));
    turns.push(Value::Object(apply_key_order(
        turn,
        NOTES.of(&msg.extra),
        "keys",
    )));
    turns
}

/// The `from` to write: the recorded spelling, else the default for the message.
fn turn_from(msg: &Message) -> String {
    NOTES
        .of(&msg.extra)
        .and_then(|m| m.get("from"))
        .and_then(Value::as_str)
        .map_or_else(|| default_from(msg).to_string(), str::to_string)
}

fn default_from(msg: &Message) -> &'static str {
    match msg.role {
        Role::System | Role::Developer => "system",
        Role::User => "human",
        Role::Assistant if msg.tool_calls.is_some() => "function_call",
        Role::Assistant => "gpt",
        Role::Tool => "observation",
    }
}

fn turn_value(msg: &Message) -> String {
    if TurnKind::parse(&turn_from(msg)) == Some(TurnKind::FunctionCall) {
        calls_value(msg)
    } else {
        msg.text()
    }
}

/// The turn object in the writer's own key order: `from`, `value`, `name`, reasoning fields,
/// then the message's other fields.
fn turn_object(msg: &Message, from: String, value: String) -> Object {
    let mut turn = Object::new();
    turn.insert("from".into(), Value::String(from));
    turn.insert("value".into(), Value::String(value));
    if let Some(name) = &msg.name {
        turn.insert("name".into(), Value::String(name.clone()));
    }
    merge_missing(&mut turn, msg.reasoning.clone().into_map());
    merge_missing(&mut turn, NOTES.without(&msg.extra));
    turn
}

/// The recorded value while it still encodes the message's calls, else a fresh rendering.
fn calls_value(msg: &Message) -> String {
    let recorded = NOTES
        .of(&msg.extra)
        .and_then(|m| m.get("value"))
        .and_then(Value::as_str);
    if let Some(recorded) = recorded
        && let Ok(calls) = parse_calls(recorded, 0, "")
        && call_objects(&calls) == call_objects(msg.calls())
    {
        return recorded.to_string();
    }
    render_calls(msg.calls())
}

fn render_calls(calls: &[ToolCall]) -> String {
    match call_objects(calls).as_slice() {
        [one] => python_json(one),
        many => python_json(&Value::Array(many.to_vec())),
    }
}

fn call_objects(calls: &[ToolCall]) -> Vec<Value> {
    calls.iter().map(call_object).collect()
}

/// `{"name", "arguments", "id"}` for one call; the id only when it is real, and arguments as
/// the JSON they encode (text when they are not JSON).
fn call_object(call: &ToolCall) -> Value {
    let mut obj = Object::new();
    obj.insert("name".into(), Value::String(call.function.name.clone()));
    let arguments = &call.function.arguments;
    let arguments = if arguments.trim().is_empty() {
        Value::Object(Object::new())
    } else {
        serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.clone()))
    };
    obj.insert("arguments".into(), arguments);
    if !NOTES.flag(&call.extra, "synthetic_id") {
        obj.insert("id".into(), Value::String(call.id.clone()));
    }
    merge_missing(&mut obj, call.function.extra.clone().into_map());
    merge_missing(&mut obj, NOTES.without(&call.extra));
    Value::Object(obj)
}

fn write_tools(tools: &[Value], marker: Option<&Object>) -> Value {
    if let Some(original) = marker.and_then(|m| m.get("tools_original"))
        && read_tools_field(original).is_ok_and(|(read, _)| read == tools)
    {
        return original.clone();
    }
    let as_array = marker
        .and_then(|m| m.get("tools_as"))
        .and_then(Value::as_str)
        == Some("array");
    tools_field(tools, as_array)
}

/// The `tools` field in ShareGPT form: plain `{name, description, parameters}` definitions,
/// JSON-encoded unless the record had them as an array.
fn tools_field(tools: &[Value], as_array: bool) -> Value {
    let plain: Vec<Value> = tools
        .iter()
        .map(|tool| match tool {
            Value::Object(obj) if is_openai_function(obj) => {
                obj.get("function").cloned().unwrap_or(Value::Null)
            }
            other => other.clone(),
        })
        .collect();
    if as_array {
        Value::Array(plain)
    } else {
        Value::String(python_json(&Value::Array(plain)))
    }
}

/// JSON text the way Python's `json.dumps(value, ensure_ascii=False)` writes it (`", "` and
/// `": "` separators), which is how ShareGPT datasets encode their embedded JSON.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_python_json(value, &mut out);
    out
}

fn write_python_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(obj) => {
            out.push('{');
            for (i, (k, v)) in obj.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_python_json(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

// ------------------------------------------------------------------------------------------
// Markers
// ------------------------------------------------------------------------------------------

fn single(key: &str, value: Value) -> Object {
    let mut obj = Object::new();
    obj.insert(key.into(), value);
    obj
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assert_round_trip(record: &Value) -> Conversation {
        let conv = from_sharegpt(record).unwrap();
        let back = to_sharegpt(&conv);
        assert_eq!(&back, record);
        assert_eq!(back.to_string(), record.to_string(), "key order differs");
        conv
    }

    fn openai(messages: Value) -> Vec<Message> {
        messages
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, m)| Message::from_value(m.clone(), i).unwrap())
            .collect()
    }

    /// Every tool message answers a call of the nearest assistant message before it.
    fn assert_tool_pairing(conv: &Conversation) {
        let mut open: Vec<String> = Vec::new();
        for msg in &conv.messages {
            match msg.role {
                Role::Assistant => open = msg.calls().iter().map(|c| c.id.clone()).collect(),
                Role::Tool => {
                    let id = msg.tool_call_id.clone().unwrap();
                    assert!(open.contains(&id), "tool result {id} answers no open call");
                }
                _ => open.clear(),
            }
        }
    }

    #[test]
    fn llamafactory_tool_record_round_trips() {
        let record = json!({
            "conversations": [
                {"from": "human", "value": "Convert 100 USD to EUR and JPY."},
                {"from": "function_call", "value": "{\"name\": \"convert\", \"arguments\": {\"amount\": 100, \"from\": \"USD\", \"to\": \"EUR\"}}"},
                {"from": "observation", "value": "{\"result\": 92.5}"},
                {"from": "function_call", "value": "[{\"name\": \"convert\", \"arguments\": {\"to\": \"JPY\"}}, {\"name\": \"rate\", \"arguments\": {}}]"},
                {"from": "observation", "value": "15000"},
                {"from": "observation", "value": "150.0"},
                {"from": "gpt", "value": "100 USD is 92.5 EUR or 15000 JPY."}
            ],
            "tools": "[{\"name\": \"convert\", \"description\": \"Convert currency\", \"parameters\": {\"type\": \"object\", \"properties\": {\"amount\": {\"type\": \"number\"}}}}]"
        });
        let conv = assert_round_trip(&record);
        assert_tool_pairing(&conv);
        use Role::*;
        let roles: Vec<Role> = conv.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [User, Assistant, Tool, Assistant, Tool, Tool, Assistant]
        );
        let call = &conv.messages[1].calls()[0];
        assert_eq!(call.id, "call_1");
        assert_eq!(
            call.function.arguments,
            r#"{"amount":100,"from":"USD","to":"EUR"}"#
        );
        assert_eq!(call.extra[MARKER]["synthetic_id"], true);
        assert_eq!(conv.messages[5].tool_call_id.as_deref(), Some("call_3_1"));
        assert_eq!(
            conv.tools.as_ref().unwrap()[0]["function"]["name"],
            "convert"
        );
        // Nothing needed recording beyond the synthesized ids.
        assert!(conv.extra.is_empty());
        assert!(!conv.messages[1].extra.contains_key(MARKER));
    }

    #[test]
    fn variant_spellings_fields_and_styles_round_trip() {
        let record = json!({
            "id": "sample-7",
            "system": "You are terse.",
            "tools": [{"name": "f", "parameters": {"type": "object"}}],
            "conversations": [
                {"value": "hi", "from": "user", "lang": "en"},
                {"from": "assistant", "value": "hello", "reasoning_content": "greet back"},
                {"from": "function_call", "value": "{\"name\":\"f\",\"arguments\":\"{\\\"x\\\": 1}\",\"id\":\"call_real\"}"},
                {"from": "tool", "value": "done", "name": "f"},
                {"from": "observation", "value": "stray output with no call"},
                {"from": "chatgpt", "value": "bye"}
            ],
            "source": {"dataset": "demo", "weight": 0.5}
        });
        let conv = assert_round_trip(&record);
        assert_tool_pairing(&conv);
        assert_eq!(conv.system_prompt().as_deref(), Some("You are terse."));
        assert_eq!(
            conv.messages[2].reasoning["reasoning_content"],
            "greet back"
        );
        assert_eq!(conv.messages[3].calls()[0].id, "call_real");
        assert_eq!(conv.messages[3].calls()[0].function.arguments, "{\"x\": 1}");
        assert_eq!(conv.messages[4].name.as_deref(), Some("f"));
        assert_eq!(conv.messages[4].tool_call_id.as_deref(), Some("call_real"));
        assert_eq!(conv.messages[5].role, Role::User);
        assert_eq!(conv.extra["id"], "sample-7");
    }

    #[test]
    fn bare_turn_arrays_and_empty_tools_round_trip() {
        assert_round_trip(&json!([
            {"from": "system", "value": ""},
            {"from": "human", "value": "q"},
            {"from": "gpt", "value": "a"}
        ]));
        assert_round_trip(&json!({"conversations": [], "tools": ""}));
        assert_round_trip(
            &json!({"tools": "[]", "conversations": [{"from": "human", "value": "q"}]}),
        );
        assert_round_trip(
            &json!({"conversations": [], "tools": "[{\"type\": \"function\", \"function\": {\"name\": \"g\"}}]"}),
        );
        assert_round_trip(&json!({"conversations": [
            {"from": "function_call", "value": "{\"name\": \"n\", \"arguments\": 1e-07}"},
            {"from": "function_call", "value": "{\"arguments\": {}, \"name\": \"n\"}"},
            {"from": "function_call", "value": "[]"}
        ]}));
    }

    #[test]
    fn edited_calls_are_rendered_afresh() {
        let record = json!({"conversations": [
            {"from": "function_call", "value": "{\"name\":\"f\",\"arguments\":{\"a\":1}}"}
        ]});
        let mut conv = from_sharegpt(&record).unwrap();
        conv.messages[0].tool_calls.as_mut().unwrap()[0]
            .function
            .arguments = r#"{"a":2}"#.into();
        let out = to_sharegpt(&conv);
        assert_eq!(
            out["conversations"][0]["value"],
            "{\"name\": \"f\", \"arguments\": {\"a\": 2}}"
        );
    }

    #[test]
    fn openai_conversations_round_trip_through_sharegpt() {
        let mut conv = Conversation::new(openai(json!([
            {"role": "system", "content": "Use tools."},
            {"role": "user", "content": "天気は？"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_abc", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"東京\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_abc", "content": "晴れ"},
            {"role": "assistant", "content": "晴れです。"},
            {"role": "user", "content": "And two more?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "rain"},
            {"role": "tool", "tool_call_id": "c2", "content": "snow"},
            {"role": "assistant", "content": "Rain and snow."}
        ])));
        conv.tools = Some(vec![json!({"type": "function", "function": {
            "name": "weather", "description": "Weather", "parameters": {"type": "object"}}})]);
        conv.extra.insert("id".into(), json!(42));
        let record = to_sharegpt(&conv);
        assert_eq!(record["conversations"][0]["from"], "system");
        assert_eq!(
            record["conversations"][2]["value"],
            "{\"name\": \"weather\", \"arguments\": {\"city\": \"東京\"}, \"id\": \"call_abc\"}"
        );
        assert_eq!(
            record["tools"],
            "[{\"name\": \"weather\", \"description\": \"Weather\", \"parameters\": {\"type\": \"object\"}}]"
        );
        assert_eq!(from_sharegpt(&record).unwrap(), conv);
    }

    #[test]
    fn unrepresentable_canonical_shapes_degrade_to_text() {
        let conv = Conversation::new(openai(json!([
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}}
            ]},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "not json"}}
            ]},
            {"role": "tool", "tool_call_id": "c9", "content": "ok"}
        ])));
        let record = to_sharegpt(&conv);
        assert_eq!(
            record["conversations"],
            json!([
                {"from": "system", "value": "rules"},
                {"from": "human", "value": "look"},
                {"from": "gpt", "value": "Checking."},
                {"from": "function_call", "value": "{\"name\": \"f\", \"arguments\": \"not json\", \"id\": \"c9\"}"},
                {"from": "observation", "value": "ok"}
            ])
        );
        let again = from_sharegpt(&record).unwrap();
        assert_tool_pairing(&again);
        assert_eq!(again.messages.len(), 5);
    }

    #[test]
    fn bad_input_names_the_location() {
        let cases = [
            (json!(3), "$"),
            (json!({"tools": "[]"}), "conversations"),
            (json!({"conversations": {}}), "conversations"),
            (json!({"conversations": [], "system": 1}), "system"),
            (json!({"conversations": [], "tools": "{not json"}), "tools"),
            (json!({"conversations": [], "tools": "{}"}), "tools"),
            (json!({"conversations": [], "tools": 5}), "tools"),
            (json!({"conversations": [], "tools": [1]}), "tools[0]"),
            (json!({"conversations": ["hi"]}), "conversations[0]"),
            (
                json!({"conversations": [{"value": "x"}]}),
                "conversations[0].from",
            ),
            (
                json!({"conversations": [{"from": "human"}]}),
                "conversations[0].value",
            ),
            (
                json!({"conversations": [{"from": "human", "value": null}]}),
                "conversations[0].value",
            ),
            (
                json!({"conversations": [{"from": "robot", "value": "x"}]}),
                "conversations[0].from",
            ),
            (
                json!({"conversations": [{"from": "human", "value": "x"}, {"from": "function_call", "value": "get_weather(city)"}]}),
                "conversations[1].value",
            ),
            (
                json!({"conversations": [{"from": "function_call", "value": "{\"arguments\": {}}"}]}),
                "conversations[0].value.name",
            ),
            (
                json!({"conversations": [{"from": "function_call", "value": "[{\"name\": 1}]"}]}),
                "conversations[0].value[0].name",
            ),
            (
                json!({"conversations": [{"from": "function_call", "value": "[2]"}]}),
                "conversations[0].value[0]",
            ),
            (
                json!({"conversations": [{"from": "function_call", "value": "true"}]}),
                "conversations[0].value",
            ),
            (json!([{"from": "gpt", "value": 1}]), "[0].value"),
        ];
        for (input, at) in cases {
            let err = from_sharegpt(&input).unwrap_err();
            let text = err.to_string();
            let FormatError::Shape { at: got, .. } = err else {
                panic!("shape error expected for {input}")
            };
            assert_eq!(got, at, "for {input}");
            assert!(text.contains(at) && text.contains("expected"), "{text}");
        }
    }

    /// LLaMA-Factory's Glaive tool-calling demos (English and Chinese), record by record.
    #[test]
    fn real_glaive_files_round_trip() {
        let dir = std::path::Path::new("/work/shared/data/corpus/llamafactory-glaive-toolcall");
        if !dir.exists() {
            eprintln!("skipping: {} not present", dir.display());
            return;
        }
        let (mut records, mut calls, mut orphans) = (0, 0, 0);
        for name in [
            "glaive_toolcall_en_demo.json",
            "glaive_toolcall_zh_demo.json",
        ] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let data: Value = serde_json::from_str(&text).unwrap();
            for (i, record) in data.as_array().unwrap().iter().enumerate() {
                let conv = from_sharegpt(record).unwrap_or_else(|e| panic!("{name}[{i}]: {e}"));
                assert_tool_pairing(&conv);
                let back = to_sharegpt(&conv);
                assert!(identical(&back, record), "{name}[{i}] did not round-trip");
                records += 1;
                calls += conv.messages.iter().map(|m| m.calls().len()).sum::<usize>();
                orphans += conv
                    .messages
                    .iter()
                    .filter(|m| NOTES.of(&m.extra).is_some_and(|m| m.contains_key("from")))
                    .count();
            }
        }
        assert_eq!(records, 600);
        assert_eq!(calls, 427);
        assert_eq!(orphans, 2);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        const KEYS: [&str; 12] = [
            "conversations",
            "from",
            "value",
            "tools",
            "system",
            "name",
            "arguments",
            "id",
            "reasoning",
            "type",
            "function",
            "x",
        ];
        const STRINGS: [&str; 12] = [
            "human",
            "gpt",
            "system",
            "function_call",
            "observation",
            "tool",
            "user",
            "{\"name\": \"f\", \"arguments\": {}}",
            "[{\"name\": \"f\"}]",
            "[]",
            "",
            "{",
        ];

        fn arb_json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                prop::sample::select(STRINGS.to_vec()).prop_map(Value::from),
                ".{0,8}".prop_map(Value::String),
            ];
            leaf.prop_recursive(5, 64, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..6)
                        .prop_map(|kv| {
                            Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                        }),
                ]
            })
        }

        fn arb_turn() -> impl Strategy<Value = Value> {
            let call_values = vec![
                "{\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5]}}",
                "{\"name\":\"f\",\"arguments\":{}}",
                "[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": \"{}\", \"id\": \"x\"}]",
                "{\"arguments\": {\"q\": \"\\u00e9\"}, \"name\": \"h\", \"extra\": null}",
            ];
            let turn = prop_oneof![
                (
                    prop::sample::select(vec![
                        "human",
                        "gpt",
                        "system",
                        "observation",
                        "user",
                        "tool",
                        "bard"
                    ]),
                    ".{0,6}"
                )
                    .prop_map(|(from, value)| json!({"from": from, "value": value})),
                prop::sample::select(call_values)
                    .prop_map(|v| json!({"from": "function_call", "value": v})),
            ];
            (turn, any::<u64>(), 0u8..4).prop_map(|(turn, seed, extra)| decorate(turn, seed, extra))
        }

        /// Adds a `name`, a reasoning field or an unknown key (by `extra`), then permutes keys.
        fn decorate(value: Value, seed: u64, extra: u8) -> Value {
            let Value::Object(mut obj) = value else {
                return value;
            };
            match extra {
                1 => {
                    obj.insert("name".into(), json!("n"));
                }
                2 => {
                    obj.insert("reasoning".into(), json!("why"));
                }
                3 => {
                    obj.insert("weight".into(), json!(seed % 3));
                }
                _ => {}
            }
            let mut entries: Vec<(String, Value)> = obj.into_iter().collect();
            let mut s = seed;
            for i in (1..entries.len()).rev() {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                entries.swap(i, (s >> 33) as usize % (i + 1));
            }
            Value::Object(entries.into_iter().collect())
        }

        fn arb_record() -> impl Strategy<Value = Value> {
            let tools = prop_oneof![
                Just(None),
                Just(Some(json!("[{\"name\": \"f\", \"parameters\": {}}]"))),
                Just(Some(json!("[{\"name\":\"f\"}]"))),
                Just(Some(json!([{"name": "g", "description": "d"}]))),
            ];
            (
                prop::collection::vec(arb_turn(), 0..8),
                tools,
                any::<u64>(),
                any::<bool>(),
            )
                .prop_map(|(turns, tools, seed, system)| {
                    let mut record = json!({"conversations": turns, "id": seed % 100});
                    if let Some(tools) = tools {
                        record["tools"] = tools;
                    }
                    if system {
                        record["system"] = json!("top-level");
                    }
                    decorate(record, seed, 0)
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 512,
                failure_persistence: None,
                ..ProptestConfig::default()
            })]

            #[test]
            fn arbitrary_json_never_panics(value in arb_json()) {
                if let Ok(conv) = from_sharegpt(&value) {
                    prop_assert_eq!(to_sharegpt(&conv).to_string(), value.to_string());
                }
            }

            #[test]
            fn generated_records_round_trip_exactly(record in arb_record()) {
                let conv = from_sharegpt(&record);
                prop_assert!(conv.is_ok(), "{:?}", conv.err());
                let back = conv.map(|c| to_sharegpt(&c)).unwrap_or_default();
                prop_assert_eq!(back.to_string(), record.to_string());
            }
        }
    }
}
