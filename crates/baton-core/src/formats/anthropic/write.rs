//! Writing: a canonical conversation as an Anthropic Messages body, restoring what the reader
//! recorded so that an unchanged conversation comes back as it was read.

use super::exactness::{
    Slot, restore, strip_value_marker, without_call_marker, without_message_marker,
};
use super::read::{block_to_part, read_thinking, read_tool, read_tool_result, read_tool_use};
use super::{ASSISTANT, NOTES, Object, RAW_ARGUMENTS_KEY, USER};
use crate::conversation::Conversation;
use crate::formats::notes::{apply_key_order, merge_missing};
use crate::message::{Content, ContentPart, Message, Role, ToolCall};
use serde_json::Value;

/// Writes a conversation as an Anthropic Messages request body (or as a bare array of messages
/// when it was read from one and nothing else needs saying).
pub fn to_anthropic(conv: &Conversation) -> Value {
    let marker = NOTES.of(&conv.extra);
    let leading = conv
        .messages
        .iter()
        .take_while(|m| m.role.is_instruction())
        .count();
    let (instructions, rest) = conv.messages.split_at(leading);
    let system = write_system(instructions);
    let messages = Value::Array(write_messages(rest));
    let tools = conv
        .tools
        .as_ref()
        .map(|tools| Value::Array(tools.iter().map(write_tool).collect()));
    let fields = NOTES.without(&conv.extra);
    let bare = marker.is_some_and(|m| m.get("bare") == Some(&Value::Bool(true)));
    if bare && system.is_none() && tools.is_none() && fields.is_empty() {
        return messages;
    }
    let mut out = Object::new();
    if let Some(system) = system {
        out.insert("system".into(), system);
    }
    out.insert("messages".into(), messages);
    if let Some(tools) = tools {
        out.insert("tools".into(), tools);
    }
    merge_missing(&mut out, fields);
    Value::Object(apply_key_order(out, marker, "keys"))
}

/// The `system` value: a string for one text instruction message, otherwise text blocks.
fn write_system(instructions: &[Message]) -> Option<Value> {
    match instructions {
        [] => None,
        [only] => match &only.content {
            Some(Content::Text(s)) => Some(Value::String(s.clone())),
            Some(Content::Parts(parts)) => Some(Value::Array(parts_to_blocks(parts))),
            Some(Content::Null) | None => None,
        },
        many => Some(Value::Array(
            many.iter()
                .flat_map(|m| content_blocks(m.content.as_ref()))
                .collect(),
        )),
    }
}

fn write_messages(messages: &[Message]) -> Vec<Value> {
    group_into_turns(messages)
        .iter()
        .filter_map(|turn| write_turn(turn))
        .collect()
}

fn anthropic_role(msg: &Message) -> &'static str {
    if msg.role == Role::Assistant {
        ASSISTANT
    } else {
        USER
    }
}

/// Groups consecutive messages of the same Anthropic role into one turn, unless a message was
/// recorded as starting its own Anthropic message.
fn group_into_turns(messages: &[Message]) -> Vec<Vec<&Message>> {
    let mut turns: Vec<Vec<&Message>> = Vec::new();
    for msg in messages {
        let starts_new = NOTES.flag(&msg.extra, "split");
        match turns.last_mut() {
            Some(turn)
                if !starts_new
                    && turn
                        .first()
                        .is_some_and(|first| anthropic_role(first) == anthropic_role(msg)) =>
            {
                turn.push(msg);
            }
            _ => turns.push(vec![msg]),
        }
    }
    turns
}

fn write_turn(turn: &[&Message]) -> Option<Value> {
    let (first, _) = turn.split_first()?;
    let role = anthropic_role(first);
    let content = if role == ASSISTANT {
        assistant_turn_content(turn)
    } else {
        user_turn_content(turn)
    };
    let mut out = Object::new();
    out.insert("role".into(), role.into());
    out.insert("content".into(), content);
    merge_missing(&mut out, turn_fields(turn));
    Some(Value::Object(apply_key_order(
        out,
        NOTES.of(&first.extra),
        "message_keys",
    )))
}

/// The Anthropic message's own fields: the first message's (kept in the marker when it is a
/// tool message), then any other non-tool message's, first one winning.
fn turn_fields(turn: &[&Message]) -> Object {
    let mut fields = Object::new();
    for (i, msg) in turn.iter().enumerate() {
        if msg.role == Role::Tool {
            if i == 0
                && let Some(Value::Object(extra)) =
                    NOTES.of(&msg.extra).and_then(|m| m.get("extra"))
            {
                merge_missing(&mut fields, extra.clone());
            }
        } else {
            merge_missing(&mut fields, NOTES.without(&msg.extra));
        }
    }
    fields
}

fn user_turn_content(turn: &[&Message]) -> Value {
    if let [only] = turn
        && only.role != Role::Tool
        && let Some(Content::Text(s)) = &only.content
    {
        return Value::String(s.clone());
    }
    let blocks = turn.iter().flat_map(|msg| {
        if msg.role == Role::Tool {
            vec![Value::Object(write_tool_result(msg))]
        } else {
            content_blocks(msg.content.as_ref())
        }
    });
    Value::Array(blocks.collect())
}

fn assistant_turn_content(turn: &[&Message]) -> Value {
    if let [only] = turn {
        let (reasoning, calls) = (reasoning_blocks(only), tool_use_blocks(only));
        if reasoning.is_empty()
            && calls.is_empty()
            && let Some(Content::Text(s)) = &only.content
        {
            return Value::String(s.clone());
        }
        return Value::Array(assistant_blocks(only, reasoning, calls));
    }
    let blocks = turn
        .iter()
        .flat_map(|msg| assistant_blocks(msg, reasoning_blocks(msg), tool_use_blocks(msg)));
    Value::Array(blocks.collect())
}

/// An assistant message's blocks, in the recorded order when it still fits the message.
fn assistant_blocks(msg: &Message, reasoning: Vec<Value>, calls: Vec<Value>) -> Vec<Value> {
    let content = content_blocks(msg.content.as_ref());
    let order: Option<Vec<Slot>> = NOTES
        .of(&msg.extra)
        .and_then(|m| m.get("order"))
        .and_then(Value::as_array)
        .and_then(|names| {
            names
                .iter()
                .map(|n| n.as_str().and_then(Slot::parse))
                .collect()
        });
    let count = |slot| order.iter().flatten().filter(|s| **s == slot).count();
    let fits = order.is_some()
        && count(Slot::Reasoning) == reasoning.len()
        && count(Slot::Content) == content.len()
        && count(Slot::ToolCall) == calls.len();
    let (mut r, mut c, mut t) = (
        reasoning.into_iter(),
        content.into_iter(),
        calls.into_iter(),
    );
    match order {
        Some(order) if fits => order
            .iter()
            .filter_map(|slot| match slot {
                Slot::Reasoning => r.next(),
                Slot::Content => c.next(),
                Slot::ToolCall => t.next(),
            })
            .collect(),
        _ => r.chain(c).chain(t).collect(),
    }
}

fn reasoning_blocks(msg: &Message) -> Vec<Value> {
    let Some(Value::Array(entries)) = msg.reasoning.get("reasoning_details") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(Value::as_object)
        .filter_map(write_thinking)
        .map(Value::Object)
        .collect()
}

fn tool_use_blocks(msg: &Message) -> Vec<Value> {
    msg.calls()
        .iter()
        .map(|call| Value::Object(write_tool_use(call)))
        .collect()
}

/// Content as blocks: a non-empty string as one text block (Anthropic rejects empty text).
fn content_blocks(content: Option<&Content>) -> Vec<Value> {
    match content {
        Some(Content::Text(s)) if !s.is_empty() => vec![text_block(s)],
        Some(Content::Parts(parts)) => parts_to_blocks(parts),
        _ => Vec::new(),
    }
}

fn text_block(text: &str) -> Value {
    let mut b = Object::new();
    b.insert("type".into(), "text".into());
    b.insert("text".into(), Value::String(text.into()));
    Value::Object(b)
}

fn parts_to_blocks(parts: &[ContentPart]) -> Vec<Value> {
    parts.iter().map(|p| Value::Object(write_part(p))).collect()
}

fn write_part(part: &ContentPart) -> Object {
    let rebuilt = part_to_block_plain(part.fields());
    restore(rebuilt, part.fields(), |original| {
        block_to_part(&Value::Object(original.clone()), "")
            .is_ok_and(|p| NOTES.without(p.fields()) == NOTES.without(part.fields()))
    })
}

/// The generic inverse of [`block_to_part`], ignoring any marker.
pub(super) fn part_to_block_plain(part: &Object) -> Object {
    let ty = part.get("type").and_then(Value::as_str);
    if ty == Some("image_url")
        && let Some(block) = image_block(part)
    {
        return block;
    }
    NOTES.without(part)
}

fn image_block(part: &Object) -> Option<Object> {
    let url = match part.get("image_url")? {
        Value::String(url) => url,
        Value::Object(inner) => inner.get("url")?.as_str()?,
        _ => return None,
    };
    let mut source = Object::new();
    match url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        Some((media_type, data)) => {
            source.insert("type".into(), "base64".into());
            source.insert("media_type".into(), media_type.into());
            source.insert("data".into(), data.into());
        }
        None => {
            source.insert("type".into(), "url".into());
            source.insert("url".into(), Value::String(url.to_string()));
        }
    }
    let mut block = Object::new();
    block.insert("type".into(), "image".into());
    block.insert("source".into(), Value::Object(source));
    merge_missing(
        &mut block,
        NOTES.fields_except(part, &["type", "image_url"]),
    );
    Some(block)
}

fn write_tool_result(msg: &Message) -> Object {
    let rebuilt = tool_result_block(msg);
    restore(rebuilt, &msg.extra, |original| {
        read_tool_result(&Value::Object(original.clone()), "")
            .is_ok_and(|m| without_message_marker(&m) == without_message_marker(msg))
    })
}

pub(super) fn tool_result_block(msg: &Message) -> Object {
    let mut b = Object::new();
    b.insert("type".into(), "tool_result".into());
    let id = msg.tool_call_id.clone().unwrap_or_default();
    b.insert("tool_use_id".into(), Value::String(id));
    match &msg.content {
        None => {}
        Some(Content::Null) => {
            b.insert("content".into(), Value::Null);
        }
        Some(Content::Text(s)) => {
            b.insert("content".into(), Value::String(s.clone()));
        }
        Some(Content::Parts(parts)) => {
            b.insert("content".into(), Value::Array(parts_to_blocks(parts)));
        }
    }
    merge_missing(&mut b, NOTES.without(&msg.extra));
    b
}

fn write_tool_use(call: &ToolCall) -> Object {
    let rebuilt = tool_use_block(call);
    restore(rebuilt, &call.extra, |original| {
        read_tool_use(original, "")
            .is_ok_and(|c| without_call_marker(&c) == without_call_marker(call))
    })
}

pub(super) fn tool_use_block(call: &ToolCall) -> Object {
    let mut b = Object::new();
    b.insert("type".into(), "tool_use".into());
    b.insert("id".into(), Value::String(call.id.clone()));
    b.insert("name".into(), Value::String(call.function.name.clone()));
    b.insert(
        "input".into(),
        input_from_arguments(&call.function.arguments),
    );
    merge_missing(&mut b, call.function.extra.clone().into_map());
    merge_missing(&mut b, NOTES.without(&call.extra));
    b
}

/// Anthropic wants `input` to be an object: empty arguments are `{}`, and arguments that are
/// not a JSON object are passed through as text under [`RAW_ARGUMENTS_KEY`].
fn input_from_arguments(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Object::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(input)) => Value::Object(input),
        _ => {
            let mut wrapped = Object::new();
            wrapped.insert(RAW_ARGUMENTS_KEY.into(), Value::String(arguments.into()));
            Value::Object(wrapped)
        }
    }
}

fn write_thinking(entry: &Object) -> Option<Object> {
    let rebuilt = thinking_block(entry)?;
    Some(restore(rebuilt, entry, |original| {
        let ty = original.get("type").and_then(Value::as_str).unwrap_or("");
        read_thinking(original, ty, "").is_ok_and(|e| NOTES.without(&e) == NOTES.without(entry))
    }))
}

/// A `reasoning_details` entry as a thinking block; `None` for entries Anthropic cannot take
/// back (summaries, other providers' formats).
pub(super) fn thinking_block(entry: &Object) -> Option<Object> {
    let format = entry.get("format").and_then(Value::as_str);
    if entry.contains_key("format") && !format.is_some_and(|f| f.starts_with("anthropic")) {
        return None;
    }
    let mut b = Object::new();
    match entry.get("type").and_then(Value::as_str)? {
        "reasoning.text" => {
            b.insert("type".into(), "thinking".into());
            let text = entry.get("text").cloned().unwrap_or_else(|| "".into());
            b.insert("thinking".into(), text);
            if let Some(sig) = entry.get("signature").filter(|s| !s.is_null()) {
                b.insert("signature".into(), sig.clone());
            }
        }
        "reasoning.encrypted" => {
            b.insert("type".into(), "redacted_thinking".into());
            b.insert("data".into(), entry.get("data")?.clone());
        }
        _ => return None,
    }
    // OpenRouter bookkeeping that Anthropic would reject.
    let skip = ["type", "text", "signature", "data", "format", "index", "id"];
    merge_missing(&mut b, NOTES.fields_except(entry, &skip));
    Some(b)
}

fn write_tool(tool: &Value) -> Value {
    let Value::Object(obj) = tool else {
        return tool.clone();
    };
    let rebuilt = tool_definition(obj);
    Value::Object(restore(rebuilt, obj, |original| {
        read_tool(&Value::Object(original.clone()), "")
            .is_ok_and(|t| strip_value_marker(&t) == strip_value_marker(tool))
    }))
}

/// An OpenAI function tool as an Anthropic custom tool; anything else unchanged.
pub(super) fn tool_definition(tool: &Object) -> Object {
    let function = match (tool.get("type"), tool.get("function")) {
        (Some(Value::String(ty)), Some(Value::Object(f))) if ty == "function" => f,
        _ => return NOTES.without(tool),
    };
    let mut out = Object::new();
    for key in ["name", "description"] {
        if let Some(v) = function.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let schema = function
        .get("parameters")
        .cloned()
        .unwrap_or_else(empty_schema);
    out.insert("input_schema".into(), schema);
    merge_missing(
        &mut out,
        NOTES.fields_except(function, &["name", "description", "parameters"]),
    );
    merge_missing(&mut out, NOTES.fields_except(tool, &["type", "function"]));
    out
}

fn empty_schema() -> Value {
    let mut s = Object::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), Value::Object(Object::new()));
    Value::Object(s)
}
