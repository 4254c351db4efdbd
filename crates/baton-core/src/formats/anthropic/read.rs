//! Reading: an Anthropic Messages body (or a bare message array) into a canonical
//! conversation, recording under `_anthropic` what the writer needs to give it back exactly.

use super::exactness::{Slot, default_order, exactness_marker, prepend_fields};
use super::write::{
    part_to_block_plain, thinking_block, tool_definition, tool_result_block, tool_use_block,
};
use super::{ASSISTANT, NOTES, Object, REASONING_FORMAT, USER};
use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::formats::notes::{key_order_note, merge_missing};
use crate::message::{
    Content, ContentPart, FUNCTION_KIND, Fields, FunctionCall, Message, Role, ToolCall,
};
use serde_json::Value;

/// Reads an Anthropic Messages request body (`{"system", "messages", "tools", …}`) or a bare
/// array of Anthropic messages.
pub fn from_anthropic(body: &Value) -> Result<Conversation, FormatError> {
    match body {
        Value::Array(items) => {
            let mut conv = Conversation::new(read_messages(items, "")?);
            let mut marker = Object::new();
            marker.insert("bare".into(), Value::Bool(true));
            NOTES.add(&mut conv.extra, marker);
            Ok(conv)
        }
        Value::Object(obj) => read_request(obj),
        other => Err(FormatError::shape(
            "$",
            "an Anthropic request object or an array of messages",
            other,
        )),
    }
}

fn read_request(obj: &Object) -> Result<Conversation, FormatError> {
    let mut conv = Conversation::default();
    let mut system = None;
    let mut messages = None;
    for (key, value) in obj {
        match key.as_str() {
            "system" => system = Some(read_system(value)?),
            "messages" => match value {
                Value::Array(items) => messages = Some(read_messages(items, "messages")?),
                other => {
                    return Err(FormatError::shape(
                        "messages",
                        "an array of messages",
                        other,
                    ));
                }
            },
            "tools" => conv.tools = Some(read_tools(value)?),
            _ => {
                conv.extra.insert(key.clone(), value.clone());
            }
        }
    }
    let Some(messages) = messages else {
        return Err(FormatError::missing("messages", "an array of messages"));
    };
    conv.messages = system.into_iter().chain(messages).collect();
    let keys: Vec<&String> = obj.keys().collect();
    let default_keys: Vec<&String> = ["system", "messages", "tools"]
        .iter()
        .filter_map(|k| obj.get_key_value(*k).map(|(k, _)| k))
        .chain(conv.extra.keys())
        .collect();
    if keys != default_keys {
        NOTES.add(&mut conv.extra, key_order_note("keys", obj));
    }
    Ok(conv)
}

fn read_system(value: &Value) -> Result<Message, FormatError> {
    let content = match value {
        Value::String(s) => Content::Text(s.clone()),
        Value::Array(blocks) => Content::Parts(read_parts(blocks, "system")?),
        other => {
            return Err(FormatError::shape(
                "system",
                "a string or an array of text blocks",
                other,
            ));
        }
    };
    Ok(Message::new(Role::System, Some(content)))
}

fn read_messages(items: &[Value], prefix: &str) -> Result<Vec<Message>, FormatError> {
    let mut out = Vec::with_capacity(items.len());
    let mut previous_role = None;
    for (i, item) in items.iter().enumerate() {
        let at = format!("{prefix}[{i}]");
        let Value::Object(obj) = item else {
            return Err(FormatError::shape(
                at,
                "a message object with `role` and `content`",
                item,
            ));
        };
        let role = read_role(obj, &at)?;
        let content_at = format!("{at}.content");
        let content = obj
            .get("content")
            .ok_or_else(|| FormatError::missing(&content_at, "a string or an array of blocks"))?;
        let mut group = if role == ASSISTANT {
            vec![read_assistant(content, &content_at)?]
        } else {
            read_user(content, &content_at)?
        };
        attach_message_fields(&mut group, obj, previous_role == Some(role));
        out.append(&mut group);
        previous_role = Some(role);
    }
    Ok(out)
}

fn read_role(obj: &Object, at: &str) -> Result<&'static str, FormatError> {
    const EXPECTED: &str = "\"user\" or \"assistant\"";
    match obj.get("role") {
        None => Err(FormatError::missing(format!("{at}.role"), EXPECTED)),
        Some(Value::String(s)) if s == USER => Ok(USER),
        Some(Value::String(s)) if s == ASSISTANT => Ok(ASSISTANT),
        Some(other) => Err(FormatError::shape(format!("{at}.role"), EXPECTED, other)),
    }
}

/// Puts the Anthropic message's own fields (everything but `role` and `content`) on the first
/// canonical message made from it, and records what the writer needs to rebuild the message
/// exactly: its key order, and whether it started a new message despite having the same role
/// as the one before.
fn attach_message_fields(group: &mut [Message], obj: &Object, same_role_as_previous: bool) {
    let Some(first) = group.first_mut() else {
        return;
    };
    let fields: Object = obj
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "role" | "content"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let default_keys = ["role", "content"]
        .into_iter()
        .filter(|k| obj.contains_key(*k))
        .chain(fields.keys().map(String::as_str));
    let mut marker = Object::new();
    if same_role_as_previous {
        marker.insert("split".into(), Value::Bool(true));
    }
    if !obj.keys().map(String::as_str).eq(default_keys) {
        marker.extend(key_order_note("message_keys", obj));
    }
    if first.role == Role::Tool {
        // A tool message's `extra` holds its tool_result block's fields.
        if !fields.is_empty() {
            marker.insert("extra".into(), Value::Object(fields));
        }
    } else {
        prepend_fields(&mut first.extra, fields);
    }
    NOTES.add(&mut first.extra, marker);
}

fn read_user(content: &Value, at: &str) -> Result<Vec<Message>, FormatError> {
    match content {
        Value::String(s) => Ok(vec![Message::new(
            Role::User,
            Some(Content::Text(s.clone())),
        )]),
        Value::Array(blocks) => split_user_blocks(blocks, at),
        other => Err(FormatError::shape(
            at,
            "a string or an array of content blocks",
            other,
        )),
    }
}

/// Splits a user message's blocks into canonical messages in block order: each `tool_result`
/// becomes a `tool` message, each run of other blocks a `user` message.
fn split_user_blocks(blocks: &[Value], at: &str) -> Result<Vec<Message>, FormatError> {
    let has_results = blocks.iter().any(is_tool_result);
    let mut out = Vec::new();
    let mut run = Vec::new();
    for (j, block) in blocks.iter().enumerate() {
        let at = format!("{at}[{j}]");
        if is_tool_result(block) {
            flush_user_run(&mut run, has_results, &mut out);
            out.push(read_tool_result(block, &at)?);
        } else {
            run.push(block_to_part(block, &at)?);
        }
    }
    flush_user_run(&mut run, has_results, &mut out);
    if out.is_empty() {
        out.push(Message::new(Role::User, Some(Content::Parts(Vec::new()))));
    }
    Ok(out)
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

fn flush_user_run(run: &mut Vec<ContentPart>, beside_results: bool, out: &mut Vec<Message>) {
    if run.is_empty() {
        return;
    }
    let parts = std::mem::take(run);
    let content = user_run_content(parts, beside_results);
    out.push(Message::new(Role::User, Some(content)));
}

/// A lone plain text block next to tool results reads as a string, the way an OpenAI client
/// writes a user message after tool messages; the writer turns it back into a text block.
fn user_run_content(parts: Vec<ContentPart>, beside_results: bool) -> Content {
    match parts.as_slice() {
        [only] if beside_results && is_plain_text(only) => {
            Content::Text(only.text_value().unwrap_or_default().to_string())
        }
        _ => Content::Parts(parts),
    }
}

/// A text part with nothing but `type` and a non-empty `text`: one that a string says as well.
fn is_plain_text(part: &ContentPart) -> bool {
    part.fields()
        .keys()
        .map(String::as_str)
        .eq(["type", "text"])
        && part.type_name() == "text"
        && part.text_value().is_some_and(|t| !t.is_empty())
}

pub(super) fn read_tool_result(block: &Value, at: &str) -> Result<Message, FormatError> {
    let obj = block_object(block, at)?.0;
    let id = match obj.get("tool_use_id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(FormatError::shape(
                format!("{at}.tool_use_id"),
                "a string",
                other,
            ));
        }
        None => {
            return Err(FormatError::missing(
                format!("{at}.tool_use_id"),
                "the id of the tool_use block this result answers",
            ));
        }
    };
    let content = match obj.get("content") {
        None => None,
        Some(Value::Null) => Some(Content::Null),
        Some(Value::String(s)) => Some(Content::Text(s.clone())),
        Some(Value::Array(blocks)) => Some(Content::Parts(read_parts(
            blocks,
            &format!("{at}.content"),
        )?)),
        Some(other) => {
            return Err(FormatError::shape(
                format!("{at}.content"),
                "a string or an array of content blocks",
                other,
            ));
        }
    };
    let mut msg = Message::new(Role::Tool, content);
    msg.tool_call_id = Some(id);
    msg.extra = NOTES
        .fields_except(obj, &["type", "tool_use_id", "content"])
        .into();
    let rebuilt = tool_result_block(&msg);
    NOTES.add(&mut msg.extra, exactness_marker(obj, rebuilt));
    Ok(msg)
}

fn read_assistant(content: &Value, at: &str) -> Result<Message, FormatError> {
    match content {
        Value::String(s) => Ok(Message::new(
            Role::Assistant,
            Some(Content::Text(s.clone())),
        )),
        Value::Array(blocks) => assistant_from_blocks(blocks, at),
        other => Err(FormatError::shape(
            at,
            "a string or an array of content blocks",
            other,
        )),
    }
}

fn assistant_from_blocks(blocks: &[Value], at: &str) -> Result<Message, FormatError> {
    let mut reasoning = Vec::new();
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut order = Vec::with_capacity(blocks.len());
    for (j, block) in blocks.iter().enumerate() {
        let at = format!("{at}[{j}]");
        let (obj, ty) = block_object(block, &at)?;
        let slot = match ty {
            "thinking" | "redacted_thinking" => {
                reasoning.push(Value::Object(read_thinking(obj, ty, &at)?));
                Slot::Reasoning
            }
            "tool_use" => {
                calls.push(read_tool_use(obj, &at)?);
                Slot::ToolCall
            }
            _ => {
                parts.push(block_to_part(block, &at)?);
                Slot::Content
            }
        };
        order.push(slot);
    }
    let besides_text = !reasoning.is_empty() || !calls.is_empty();
    let mut msg = Message::new(
        Role::Assistant,
        Some(assistant_content(parts, besides_text)),
    );
    if !calls.is_empty() {
        msg.tool_calls = Some(calls);
    }
    if !reasoning.is_empty() {
        msg.reasoning
            .insert("reasoning_details".into(), Value::Array(reasoning));
    }
    if order != default_order(&order) {
        let names = order.iter().map(|s| Value::String(s.name().into()));
        let mut marker = Object::new();
        marker.insert("order".into(), Value::Array(names.collect()));
        NOTES.add(&mut msg.extra, marker);
    }
    Ok(msg)
}

/// The canonical `content` of an assistant message: `null` when it only thinks and calls
/// tools, a string when one plain text block sits beside them (the usual OpenAI shape).
fn assistant_content(parts: Vec<ContentPart>, besides_text: bool) -> Content {
    match parts.as_slice() {
        [] if besides_text => Content::Null,
        [only] if besides_text && is_plain_text(only) => {
            Content::Text(only.text_value().unwrap_or_default().to_string())
        }
        _ => Content::Parts(parts),
    }
}

pub(super) fn read_thinking(obj: &Object, ty: &str, at: &str) -> Result<Object, FormatError> {
    let mut entry = Object::new();
    if ty == "thinking" {
        let text = match obj.get("thinking") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(FormatError::shape(
                    format!("{at}.thinking"),
                    "a string",
                    other,
                ));
            }
            None => return Err(FormatError::missing(format!("{at}.thinking"), "a string")),
        };
        entry.insert("type".into(), "reasoning.text".into());
        entry.insert("text".into(), Value::String(text));
        if let Some(sig) = obj.get("signature") {
            entry.insert("signature".into(), sig.clone());
        }
    } else {
        let data = obj.get("data").ok_or_else(|| {
            FormatError::missing(format!("{at}.data"), "the encrypted thinking string")
        })?;
        entry.insert("type".into(), "reasoning.encrypted".into());
        entry.insert("data".into(), data.clone());
    }
    entry.insert("format".into(), REASONING_FORMAT.into());
    merge_missing(
        &mut entry,
        NOTES.fields_except(obj, &["type", "thinking", "signature", "data"]),
    );
    let rebuilt = thinking_block(&entry).unwrap_or_default();
    NOTES.add(&mut entry, exactness_marker(obj, rebuilt));
    Ok(entry)
}

pub(super) fn read_tool_use(obj: &Object, at: &str) -> Result<ToolCall, FormatError> {
    let id = required_string(obj, "id", at)?;
    let name = required_string(obj, "name", at)?;
    let arguments = obj.get("input").map(Value::to_string).unwrap_or_default();
    let mut call = ToolCall {
        id,
        kind: Some(FUNCTION_KIND.into()),
        function: FunctionCall {
            name,
            arguments,
            extra: Fields::new(),
        },
        extra: NOTES
            .fields_except(obj, &["type", "id", "name", "input"])
            .into(),
    };
    let rebuilt = tool_use_block(&call);
    NOTES.add(&mut call.extra, exactness_marker(obj, rebuilt));
    Ok(call)
}

fn required_string(obj: &Object, key: &str, at: &str) -> Result<String, FormatError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(FormatError::shape(format!("{at}.{key}"), "a string", other)),
        None => Err(FormatError::missing(format!("{at}.{key}"), "a string")),
    }
}

fn read_parts(blocks: &[Value], at: &str) -> Result<Vec<ContentPart>, FormatError> {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| block_to_part(b, &format!("{at}[{i}]")))
        .collect()
}

/// Checks that a block is an object with a string `type`, and returns both.
fn block_object<'a>(block: &'a Value, at: &str) -> Result<(&'a Object, &'a str), FormatError> {
    let Value::Object(obj) = block else {
        return Err(FormatError::shape(
            at,
            "a content block object with a `type`",
            block,
        ));
    };
    match obj.get("type") {
        Some(Value::String(ty)) => Ok((obj, ty)),
        Some(other) => Err(FormatError::shape(format!("{at}.type"), "a string", other)),
        None => Err(FormatError::missing(
            format!("{at}.type"),
            "a block type such as \"text\"",
        )),
    }
}

/// A non-tool content block as a canonical part: text as it is, images as `image_url`, and any
/// other block kept whole (an unknown part type to the engine).
pub(super) fn block_to_part(block: &Value, at: &str) -> Result<ContentPart, FormatError> {
    let (obj, ty) = block_object(block, at)?;
    let mut part = match ty {
        "text" => {
            if !obj.get("text").is_some_and(Value::is_string) {
                let found = obj.get("text").unwrap_or(&Value::Null);
                return Err(FormatError::shape(format!("{at}.text"), "a string", found));
            }
            obj.clone()
        }
        "image" => image_to_part(obj).unwrap_or_else(|| obj.clone()),
        _ => obj.clone(),
    };
    let rebuilt = part_to_block_plain(&part);
    NOTES.add(&mut part, exactness_marker(obj, rebuilt));
    Ok(ContentPart::from_object(part))
}

/// `{"type":"image","source":{base64|url}}` → `{"type":"image_url","image_url":{"url":…}}`;
/// `None` for sources an image URL cannot say (file ids).
pub(crate) fn image_to_part(obj: &Object) -> Option<Object> {
    let source = obj.get("source")?.as_object()?;
    let url = match source.get("type")?.as_str()? {
        "base64" => {
            let media_type = source.get("media_type")?.as_str()?;
            let data = source.get("data")?.as_str()?;
            format!("data:{media_type};base64,{data}")
        }
        "url" => source.get("url")?.as_str()?.to_string(),
        _ => return None,
    };
    let mut image_url = Object::new();
    image_url.insert("url".into(), Value::String(url));
    let mut part = Object::new();
    part.insert("type".into(), "image_url".into());
    part.insert("image_url".into(), Value::Object(image_url));
    merge_missing(&mut part, NOTES.fields_except(obj, &["type", "source"]));
    Some(part)
}

fn read_tools(value: &Value) -> Result<Vec<Value>, FormatError> {
    let Value::Array(tools) = value else {
        return Err(FormatError::shape(
            "tools",
            "an array of tool definitions",
            value,
        ));
    };
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| read_tool(tool, &format!("tools[{i}]")))
        .collect()
}

/// A custom tool (one with an `input_schema`) in OpenAI function form; server tools
/// (`web_search_…`, `bash_…`) have no OpenAI equivalent and are kept as they are.
pub(super) fn read_tool(tool: &Value, at: &str) -> Result<Value, FormatError> {
    let Value::Object(obj) = tool else {
        return Err(FormatError::shape(at, "a tool definition object", tool));
    };
    let is_custom =
        obj.get("name").is_some_and(Value::is_string) && obj.contains_key("input_schema");
    if !is_custom {
        return Ok(tool.clone());
    }
    let mut function = Object::new();
    for key in ["name", "description"] {
        if let Some(v) = obj.get(key) {
            function.insert(key.into(), v.clone());
        }
    }
    if let Some(schema) = obj.get("input_schema") {
        function.insert("parameters".into(), schema.clone());
    }
    merge_missing(
        &mut function,
        NOTES.fields_except(obj, &["name", "description", "input_schema"]),
    );
    let mut out = Object::new();
    out.insert("type".into(), "function".into());
    out.insert("function".into(), Value::Object(function));
    let rebuilt = tool_definition(&out);
    NOTES.add(&mut out, exactness_marker(obj, rebuilt));
    Ok(Value::Object(out))
}
