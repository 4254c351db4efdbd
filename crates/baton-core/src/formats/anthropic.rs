//! Anthropic Messages API bodies ↔ canonical (OpenAI chat) conversations.
//!
//! # Mapping
//!
//! | Anthropic | canonical |
//! |---|---|
//! | `system` (string or text blocks) | leading `system` message (text or parts) |
//! | user `text` / `image` / other blocks | `user` message content parts (`image` → `image_url`, base64 as a data URL) |
//! | user `tool_result` block | one `tool` message each, `tool_use_id` → `tool_call_id`; its other keys (`is_error`, `cache_control`…) in `extra` |
//! | assistant `text` / other blocks | `content` |
//! | assistant `tool_use` | `tool_calls`, `arguments` = compact JSON of `input` |
//! | `thinking` / `redacted_thinking` | `reasoning.reasoning_details` entries (`reasoning.text` with `signature`, `reasoning.encrypted`), OpenRouter's shape |
//! | tool `{name, description, input_schema, …}` | `{"type":"function","function":{name, description, parameters, …}}` |
//! | any other field anywhere | `extra` of the matching canonical object |
//!
//! A user message whose blocks mix tool results and other blocks becomes several canonical
//! messages in block order (`[tool_result, tool_result, text]` → `tool, tool, user`); the writer
//! joins consecutive messages of the same Anthropic role back into one message.
//!
//! # Exact round trip
//!
//! Anthropic → canonical → Anthropic gives back the same JSON, key order included. Whatever the
//! generic rebuild would get wrong is recorded under [`MARKER`] (`"_anthropic"`) in the `extra`
//! map (or part object, tool call, reasoning entry) it concerns, and only then: the original key
//! order (`keys`), the original object when even that is not enough (`original`, used only while
//! the canonical side is unchanged), the block order of an assistant message (`order`), a message
//! boundary between two messages of the same role (`split`), and the message's own key order and
//! fields when its first canonical message cannot hold them (`message_keys`, `extra`). Keys
//! named `_anthropic` in the input are reserved. Other writers should drop `_anthropic` keys.
//!
//! # What Anthropic cannot represent (canonical → Anthropic is lossy here)
//!
//! - `developer` messages become system text; non-leading system/developer messages become user
//!   text; several leading instruction messages are joined into one `system` block list.
//! - Consecutive messages of the same Anthropic role are merged into one message (tool results
//!   and a following user message share one `user` message), so roles alternate.
//! - `name` on any message, `image_url.detail`, empty text, and `reasoning` /
//!   `reasoning_content` strings (unsigned reasoning cannot be replayed) are dropped;
//!   `reasoning_details` entries of non-Anthropic formats are dropped.
//! - Tool-call `arguments` come back as compact JSON; arguments that are not a JSON object are
//!   sent as `{"_raw_arguments": "<text>"}`.
//! - An assistant message with text and tool calls comes back with `content` as a string; a
//!   one-text-part user message following tool results comes back as a string.

use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::formats::notes::{
    Notes, apply_key_order, identical_objects, key_order_note, merge_missing, reorder,
};
use crate::message::{Content, ContentPart, Fields, FunctionCall, Message, Role, ToolCall};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Key under which round-trip bookkeeping is stored in canonical objects.
pub const MARKER: &str = "_anthropic";

/// This converter's round-trip notes.
const NOTES: Notes = Notes(MARKER);

/// `format` of the `reasoning_details` entries made from thinking blocks (OpenRouter's name).
pub const REASONING_FORMAT: &str = "anthropic-claude-v1";

/// Key wrapping tool-call arguments that are not a JSON object (Anthropic's `input` must be one).
pub const RAW_ARGUMENTS_KEY: &str = "_raw_arguments";

const ASSISTANT: &str = "assistant";
const USER: &str = "user";

// ------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------

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

fn read_tool_result(block: &Value, at: &str) -> Result<Message, FormatError> {
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

/// Which canonical list an assistant block went to, for restoring block order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Reasoning,
    Content,
    ToolCall,
}

impl Slot {
    fn name(self) -> &'static str {
        match self {
            Slot::Reasoning => "thinking",
            Slot::Content => "content",
            Slot::ToolCall => "tool_use",
        }
    }

    fn parse(s: &str) -> Option<Slot> {
        [Slot::Reasoning, Slot::Content, Slot::ToolCall]
            .into_iter()
            .find(|slot| slot.name() == s)
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

/// The block order the writer produces unaided: reasoning, then content, then tool calls.
fn default_order(order: &[Slot]) -> Vec<Slot> {
    [Slot::Reasoning, Slot::Content, Slot::ToolCall]
        .into_iter()
        .flat_map(|slot| order.iter().filter(move |s| **s == slot).copied())
        .collect()
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

fn read_thinking(obj: &Object, ty: &str, at: &str) -> Result<Object, FormatError> {
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

fn read_tool_use(obj: &Object, at: &str) -> Result<ToolCall, FormatError> {
    let id = required_string(obj, "id", at)?;
    let name = required_string(obj, "name", at)?;
    let arguments = obj.get("input").map(Value::to_string).unwrap_or_default();
    let mut call = ToolCall {
        id,
        kind: Some("function".into()),
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
fn block_to_part(block: &Value, at: &str) -> Result<ContentPart, FormatError> {
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
fn read_tool(tool: &Value, at: &str) -> Result<Value, FormatError> {
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

// ------------------------------------------------------------------------------------------
// Writing
// ------------------------------------------------------------------------------------------

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
fn part_to_block_plain(part: &Object) -> Object {
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

fn tool_result_block(msg: &Message) -> Object {
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

fn tool_use_block(call: &ToolCall) -> Object {
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
fn thinking_block(entry: &Object) -> Option<Object> {
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
fn tool_definition(tool: &Object) -> Object {
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

// ------------------------------------------------------------------------------------------
// Markers and exactness
// ------------------------------------------------------------------------------------------

fn without_message_marker(msg: &Message) -> Message {
    let mut m = msg.clone();
    m.extra.shift_remove(MARKER);
    m
}

fn without_call_marker(call: &ToolCall) -> ToolCall {
    let mut c = call.clone();
    c.extra.shift_remove(MARKER);
    c
}

fn strip_value_marker(value: &Value) -> Value {
    match value {
        Value::Object(obj) => Value::Object(NOTES.without(obj)),
        other => other.clone(),
    }
}

/// Puts `fields` before the object's existing entries.
fn prepend_fields(into: &mut Object, fields: Object) {
    let rest = std::mem::replace(into, fields);
    merge_missing(into, rest);
}

/// What the writer needs beyond its generic rebuild to give back `original` exactly: nothing,
/// the key order, or (when even that falls short) the original itself.
fn exactness_marker(original: &Object, rebuilt: Object) -> Object {
    if identical_objects(original, &rebuilt) {
        return Object::new();
    }
    let reordered = reorder(rebuilt, original.keys().map(String::as_str));
    if identical_objects(original, &reordered) {
        return key_order_note("keys", original);
    }
    let mut marker = Object::new();
    marker.insert("original".into(), Value::Object(original.clone()));
    marker
}

/// Undoes [`exactness_marker`]: the recorded original while `still_matches` says the canonical
/// side has not changed since, else the rebuild in the recorded key order.
fn restore(
    rebuilt: Object,
    holder: &Object,
    still_matches: impl FnOnce(&Object) -> bool,
) -> Object {
    let marker = NOTES.of(holder);
    if let Some(Value::Object(original)) = marker.and_then(|m| m.get("original"))
        && still_matches(original)
    {
        return original.clone();
    }
    apply_key_order(rebuilt, marker, "keys")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::formats::notes::identical;
    use serde_json::json;

    /// Anthropic → canonical → Anthropic, compared as values and as text (key order included).
    fn assert_round_trip(body: &Value) -> Conversation {
        let conv = from_anthropic(body).unwrap();
        let back = to_anthropic(&conv);
        assert_eq!(&back, body);
        assert_eq!(back.to_string(), body.to_string(), "key order differs");
        conv
    }

    /// Canonical → Anthropic → canonical for a conversation written as OpenAI JSON.
    fn assert_canonical_round_trip(messages: Value, tools: Option<Value>) -> Value {
        let conv = openai(messages, tools);
        let body = to_anthropic(&conv);
        assert_valid_anthropic(&body);
        let again = from_anthropic(&body).unwrap();
        assert_eq!(again, conv, "canonical round trip via {body:#}");
        body
    }

    fn openai(messages: Value, tools: Option<Value>) -> Conversation {
        let msgs = messages
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, m)| Message::from_value(m.clone(), i).unwrap())
            .collect();
        let mut conv = Conversation::new(msgs);
        conv.tools = tools.map(|t| t.as_array().unwrap().clone());
        conv
    }

    /// Roles alternate, and every tool_use is answered in the next (user) message.
    fn assert_valid_anthropic(body: &Value) {
        let messages = body["messages"].as_array().unwrap();
        for pair in messages.windows(2) {
            assert_ne!(pair[0]["role"], pair[1]["role"], "roles must alternate");
            let ids = |m: &Value, ty: &str, key: &str| -> Vec<Value> {
                m["content"]
                    .as_array()
                    .map(|bs| {
                        bs.iter()
                            .filter(|b| b["type"] == ty)
                            .map(|b| b[key].clone())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let uses = ids(&pair[0], "tool_use", "id");
            if !uses.is_empty() {
                assert_eq!(uses, ids(&pair[1], "tool_result", "tool_use_id"));
            }
        }
        let no_markers = !body.to_string().contains(MARKER);
        assert!(no_markers, "bookkeeping leaked into the request: {body}");
    }

    fn weather_tool() -> Value {
        json!({
            "name": "get_weather",
            "description": "Current weather for a city",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }
        })
    }

    #[test]
    fn multi_turn_tool_use_round_trips() {
        let body = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "You are a helpful assistant.",
            "messages": [
                {"role": "user", "content": "What's the weather in Paris?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C, cloudy"}
                ]},
                {"role": "assistant", "content": "It is 18°C and cloudy in Paris."},
                {"role": "user", "content": "Thanks!"}
            ],
            "tools": [weather_tool()],
            "temperature": 0.7,
            "metadata": {"user_id": "u-42"}
        });
        let conv = assert_round_trip(&body);
        let roles: Vec<Role> = conv.messages.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(roles, [System, User, Assistant, Tool, Assistant, User]);
        let call = &conv.messages[2].calls()[0];
        assert_eq!(call.function.arguments, r#"{"city":"Paris"}"#);
        assert_eq!(
            conv.messages[2].content,
            Some(Content::Text("Let me check.".into()))
        );
        assert_eq!(conv.messages[3].tool_call_id.as_deref(), Some("toolu_01"));
        assert_eq!(
            conv.system_prompt().as_deref(),
            Some("You are a helpful assistant.")
        );
        let tool = &conv.tools.as_ref().unwrap()[0];
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["function"]["parameters"]["required"], json!(["city"]));
        assert_eq!(conv.extra["max_tokens"], 1024);
    }

    #[test]
    fn parallel_calls_and_results_with_errors_and_list_content_round_trip() {
        let body = json!({
            "model": "claude-opus-4-1",
            "messages": [
                {"role": "user", "content": "Compare Paris and Oslo."},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Oslo", "units": {"temp": "C", "precision": 0.5}}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": [
                        {"type": "text", "text": "18°C"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
                    ]},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "service unavailable", "is_error": true},
                    {"type": "text", "text": "Also, keep it short."}
                ]},
                {"role": "assistant", "content": "Paris is 18°C; Oslo is unknown."}
            ],
            "max_tokens": 512
        });
        let conv = assert_round_trip(&body);
        use Role::*;
        let roles: Vec<Role> = conv.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [User, Assistant, Tool, Tool, User, Assistant]);
        assert_eq!(conv.messages[1].content, Some(Content::Null));
        assert_eq!(conv.messages[3].extra["is_error"], true);
        assert_eq!(
            conv.messages[4].content,
            Some(Content::Text("Also, keep it short.".into()))
        );
        let Some(Content::Parts(parts)) = &conv.messages[2].content else {
            panic!("list content expected")
        };
        assert_eq!(
            parts[1].fields()["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
    }

    #[test]
    fn images_base64_and_url_round_trip() {
        let body = json!({
            "messages": [{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQSkZJRg=="}, "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
                {"type": "image", "source": {"type": "file", "file_id": "file_011"}},
                {"type": "text", "text": "What differs between these?"}
            ]}]
        });
        let conv = assert_round_trip(&body);
        let Some(Content::Parts(parts)) = &conv.messages[0].content else {
            panic!("parts expected")
        };
        let kinds: Vec<&str> = parts.iter().map(ContentPart::type_name).collect();
        assert_eq!(kinds, ["image_url", "image_url", "image", "text"]);
        assert_eq!(parts[0].fields()["cache_control"]["type"], "ephemeral");
        assert_eq!(
            parts[1].fields()["image_url"]["url"],
            "https://example.com/cat.png"
        );
        assert!(parts.iter().all(|p| !p.fields().contains_key(MARKER)));
    }

    #[test]
    fn thinking_with_signature_and_redacted_thinking_round_trip() {
        let body = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 16000,
            "thinking": {"type": "enabled", "budget_tokens": 10000},
            "messages": [
                {"role": "user", "content": "Is 1009 prime?"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Check divisors up to 31.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                    {"type": "text", "text": "Let me verify with the calculator."},
                    {"type": "tool_use", "id": "toolu_c", "name": "calc", "input": {"expr": "1009 % 7"}},
                    {"type": "thinking", "thinking": "Interleaved second thought.", "signature": "sig2"},
                    {"type": "tool_use", "id": "toolu_d", "name": "calc", "input": {"expr": "1009 % 11"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_c", "content": "1"},
                    {"type": "tool_result", "tool_use_id": "toolu_d", "content": "8"}
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "No divisor found.", "signature": "sig3"},
                    {"type": "text", "text": "Yes, 1009 is prime."}
                ]}
            ]
        });
        let conv = assert_round_trip(&body);
        let details = &conv.messages[1].reasoning["reasoning_details"];
        assert_eq!(details[0]["type"], "reasoning.text");
        assert_eq!(details[0]["signature"], "EqQBCgIYAhIM1gbcDa9GJwZA2b3h");
        assert_eq!(details[0]["format"], REASONING_FORMAT);
        assert_eq!(details[1]["type"], "reasoning.encrypted");
        assert!(conv.messages[1].extra[MARKER]["order"].is_array());
        // Default block order needs no bookkeeping.
        assert!(!conv.messages[4].extra.contains_key(MARKER));
        assert_eq!(
            conv.messages[4].content,
            Some(Content::Text("Yes, 1009 is prime.".into()))
        );
    }

    #[test]
    fn system_block_list_with_cache_control_round_trips() {
        let body = json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 256,
            "system": [
                {"type": "text", "text": "You are a code reviewer."},
                {"type": "text", "text": "Style guide: …long…", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
            ],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Review this diff.", "cache_control": {"type": "ephemeral"}}
            ]}],
            "tools": [
                {"type": "custom", "name": "read_file", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}},
                {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
            ],
            "tool_choice": {"type": "auto"},
            "stream": true
        });
        let conv = assert_round_trip(&body);
        assert_eq!(conv.messages[0].role, Role::System);
        assert!(matches!(&conv.messages[0].content, Some(Content::Parts(p)) if p.len() == 2));
        let tools = conv.tools.as_ref().unwrap();
        assert_eq!(tools[0]["function"]["name"], "read_file");
        assert_eq!(tools[1]["type"], "web_search_20250305");
    }

    #[test]
    fn unknown_fields_blocks_and_key_orders_round_trip() {
        // Shapes seen in Claude Code logs: response objects as messages, `caller` on tool_use,
        // tool_result keys in another order, unknown block types.
        let body = json!([
            {"role": "user", "content": [{"type": "text", "text": "Find the bug."}]},
            {"model": "claude-opus-4-6", "id": "msg_01", "type": "message", "role": "assistant",
             "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "bug"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "text", "text": "Found it.", "citations": [{"type": "web_search_result_location", "url": "https://x"}]},
                {"type": "tool_use", "id": "toolu_e", "name": "Read", "input": {"path": "a.rs"}, "caller": {"type": "direct"}}
             ],
             "stop_reason": "tool_use", "stop_sequence": null,
             "usage": {"input_tokens": 10, "output_tokens": 5}},
            {"role": "user", "content": [
                {"tool_use_id": "toolu_e", "type": "tool_result", "content": "fn main() {}", "is_error": false},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}, "title": "Notes"}
            ], "uuid": "5f0c"},
            {"content": "ok", "role": "assistant"},
            {"role": "assistant", "content": "and a second assistant message"},
            {"role": "user", "content": []},
            {"role": "user", "content": [{"type": "tool_use", "id": "odd", "name": "n", "input": {}}]}
        ]);
        let conv = assert_round_trip(&body);
        assert_eq!(conv.messages[1].extra["usage"]["output_tokens"], 5);
        assert_eq!(
            conv.messages[1].calls()[0].extra["caller"]["type"],
            "direct"
        );
    }

    #[test]
    fn odd_but_accepted_shapes_round_trip() {
        let body = json!({
            "messages": [
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "noargs"},
                    {"type": "tool_use", "id": "t2", "name": "list", "input": [1, 2]},
                    {"type": "text", "text": ""},
                    {"type": "thinking", "thinking": "t", "signature": "s", "index": 0}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": null},
                    {"type": "image", "source": {"data": "AAAA", "media_type": "image/gif", "type": "base64"}},
                    {"type": "image", "image_url": "x", "source": {"type": "url", "url": "https://y"}},
                    {"type": "image_url", "image_url": {"url": "https://z", "detail": "low"}}
                ]},
                {"role": "user", "content": "two user messages in a row"}
            ],
            "system": "",
            "tools": [{"input_schema": {"type": "object"}, "name": "noargs", "description": "d"}]
        });
        assert_round_trip(&body);
    }

    #[test]
    fn bare_array_round_trips_and_gains_an_object_when_needed() {
        let body =
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
        let mut conv = assert_round_trip(&body);
        conv.messages.insert(0, Message::system("Be brief."));
        let out = to_anthropic(&conv);
        assert_eq!(out["system"], "Be brief.");
        assert_eq!(out["messages"], body);
    }

    #[test]
    fn edited_canonical_content_wins_over_recorded_original() {
        let body = json!({"messages": [
            {"role": "user", "content": [
                {"type": "image", "image_url": "x", "source": {"type": "url", "url": "https://y"}}
            ]}
        ]});
        let mut conv = from_anthropic(&body).unwrap();
        let Some(Content::Parts(parts)) = &mut conv.messages[0].content else {
            panic!("parts expected")
        };
        parts[0]
            .fields_mut()
            .insert("image_url".into(), json!({"url": "https://new"}));
        let out = to_anthropic(&conv);
        let block = &out["messages"][0]["content"][0];
        assert_eq!(
            block["source"],
            json!({"type": "url", "url": "https://new"})
        );
        assert!(!out.to_string().contains(MARKER));
    }

    #[test]
    fn openai_conversations_round_trip_through_anthropic() {
        let messages = json!([
            {"role": "system", "content": "You answer weather questions."},
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {"role": "assistant", "content": "Checking both.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\",\"days\":[1,2]}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "4°C"},
            {"role": "user", "content": "And this picture?"},
            {"role": "assistant", "content": "Both answered; send the picture."},
            {"role": "user", "content": [
                {"type": "text", "text": "Here:"},
                {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklGRg=="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/sky.jpg"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "describe", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_3", "content": "A clear sky."},
            {"role": "assistant", "content": "A clear sky."}
        ]);
        let tools = json!([{"type": "function", "function": {
            "name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}}]);
        let body = assert_canonical_round_trip(messages, Some(tools));
        assert_eq!(body["system"], "You answer weather questions.");
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][2]["type"], "text");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        let image = &body["messages"][4]["content"][1];
        assert_eq!(image["source"]["media_type"], "image/webp");
    }

    #[test]
    fn unrepresentable_canonical_shapes_still_give_valid_anthropic() {
        let conv = openai(
            json!([
                {"role": "developer", "content": "Dev rules."},
                {"role": "system", "content": "More rules."},
                {"role": "user", "content": "a", "name": "alice"},
                {"role": "user", "content": "b"},
                {"role": "system", "content": "mid-conversation note"},
                {"role": "assistant", "content": "", "reasoning_content": "unsigned", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "r", "name": "f"},
                {"role": "assistant", "content": "x"},
                {"role": "assistant", "content": "y"}
            ]),
            None,
        );
        let body = to_anthropic(&conv);
        assert_valid_anthropic(&body);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "Dev rules."}, {"type": "text", "text": "More rules."}])
        );
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[0]["content"][2]["text"], "mid-conversation note");
        assert_eq!(
            msgs[1]["content"],
            json!([{"type": "tool_use", "id": "c1", "name": "f", "input": {"_raw_arguments": "not json"}}])
        );
        assert_eq!(msgs[3]["content"].as_array().unwrap().len(), 2);
    }

    fn shape_at(err: FormatError) -> String {
        match err {
            FormatError::Shape { at, .. } => at,
            other => panic!("expected a shape error, got {other:?}"),
        }
    }

    #[test]
    fn bad_input_names_the_location() {
        let cases = [
            (json!("hello"), "$"),
            (json!({"system": "s"}), "messages"),
            (json!({"messages": {}}), "messages"),
            (json!({"messages": [], "system": 5}), "system"),
            (json!({"messages": [], "tools": {}}), "tools"),
            (json!({"messages": [], "tools": [1]}), "tools[0]"),
            (json!({"messages": [7]}), "messages[0]"),
            (
                json!({"messages": [{"role": "system", "content": "x"}]}),
                "messages[0].role",
            ),
            (
                json!({"messages": [{"role": "user"}]}),
                "messages[0].content",
            ),
            (
                json!({"messages": [{"role": "user", "content": 3}]}),
                "messages[0].content",
            ),
            (
                json!({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "tool_result"}]}]}),
                "messages[1].content[0].tool_use_id",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 1}]}]}),
                "messages[0].content[0].content",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"text": "no type"}]}]}),
                "messages[0].content[0].type",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}),
                "messages[0].content[0].text",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "i"}]}]}),
                "messages[0].content[0].name",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": [{"type": "thinking"}]}]}),
                "messages[0].content[0].thinking",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": [{"type": "redacted_thinking"}]}]}),
                "messages[0].content[0].data",
            ),
            (
                json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [1]}]}]),
                "[0].content[0].content[0]",
            ),
        ];
        for (input, at) in cases {
            let err = from_anthropic(&input).unwrap_err();
            let text = err.to_string();
            assert_eq!(shape_at(err), at, "for {input}");
            assert!(text.contains(at) && text.contains("expected"), "{text}");
        }
    }

    #[test]
    fn error_display_reads_well() {
        let err = from_anthropic(
            &json!({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "at `messages[0].content[0].tool_use_id`: expected the id of the tool_use block this \
             result answers, found nothing (field missing)"
        );
    }

    /// Every Claude Code / Agent SDK log in the shared corpus, as bare message arrays.
    #[test]
    fn real_claude_logs_round_trip() {
        let root = std::path::Path::new("/work/shared/data/corpus");
        if !root.exists() {
            eprintln!("skipping: {} not present", root.display());
            return;
        }
        let mut files = Vec::new();
        collect_files(root, &mut files);
        let mut total = 0;
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let messages: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|r| r.get("message").cloned())
                .filter(|m| {
                    matches!(m["role"].as_str(), Some("user" | "assistant"))
                        && m.get("content").is_some()
                })
                .collect();
            if messages.is_empty() {
                continue;
            }
            total += messages.len();
            let body = Value::Array(messages);
            let conv = from_anthropic(&body).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let back = to_anthropic(&conv);
            assert!(
                identical(&back, &body),
                "{} did not round-trip",
                file.display()
            );
        }
        assert!(total > 1000, "only {total} messages found");
    }

    fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                collect_files(&path, out);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("jsonl" | "txt")
            ) {
                out.push(path);
            }
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        const KEYS: [&str; 24] = [
            "role",
            "content",
            "type",
            "text",
            "messages",
            "system",
            "tools",
            "tool_use_id",
            "id",
            "name",
            "input",
            "source",
            "thinking",
            "signature",
            "data",
            "is_error",
            "media_type",
            "url",
            "input_schema",
            "image_url",
            "cache_control",
            "description",
            "format",
            "x",
        ];
        const STRINGS: [&str; 14] = [
            "user",
            "assistant",
            "system",
            "text",
            "tool_use",
            "tool_result",
            "image",
            "thinking",
            "redacted_thinking",
            "base64",
            "url",
            "function",
            "data:a;base64,b",
            "",
        ];

        pub(super) fn arb_json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                prop::sample::select(STRINGS.to_vec()).prop_map(Value::from),
                ".{0,8}".prop_map(Value::String),
            ];
            leaf.prop_recursive(6, 96, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..6)
                        .prop_map(|kv| {
                            Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                        }),
                ]
            })
        }

        /// A block from the vocabulary Anthropic uses, with extra fields and shuffled keys.
        fn arb_block(user: bool) -> impl Strategy<Value = Value> {
            let templates = if user {
                vec![
                    json!({"type": "text", "text": "hello"}),
                    json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}),
                    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}),
                    json!({"type": "image", "source": {"type": "url", "url": "https://e/x.png"}}),
                    json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
                    json!({"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "r"}], "is_error": true}),
                    json!({"type": "document", "source": {"type": "text", "data": "d"}}),
                ]
            } else {
                vec![
                    json!({"type": "text", "text": "answer"}),
                    json!({"type": "tool_use", "id": "t1", "name": "f", "input": {"a": [1, 2.5, null]}}),
                    json!({"type": "tool_use", "id": "t2", "name": "g", "input": {}}),
                    json!({"type": "thinking", "thinking": "hmm", "signature": "sig"}),
                    json!({"type": "redacted_thinking", "data": "enc"}),
                    json!({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}),
                ]
            };
            (prop::sample::select(templates), any::<u64>(), any::<bool>())
                .prop_map(|(block, seed, extra)| decorate(block, seed, extra))
        }

        /// Adds an unknown field (sometimes) and permutes the keys, deterministically from `seed`.
        fn decorate(value: Value, seed: u64, extra: bool) -> Value {
            let Value::Object(mut obj) = value else {
                return value;
            };
            if extra {
                obj.insert("x_extra".into(), json!({"seed": seed % 7}));
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

        fn arb_message() -> impl Strategy<Value = Value> {
            any::<bool>().prop_flat_map(|user| {
                let content = prop_oneof![
                    Just(json!("plain text")),
                    prop::collection::vec(arb_block(user), 0..5).prop_map(Value::Array),
                ];
                (content, any::<u64>(), any::<bool>()).prop_map(move |(content, seed, extra)| {
                    let role = if user { "user" } else { "assistant" };
                    decorate(json!({"role": role, "content": content}), seed, extra)
                })
            })
        }

        fn arb_body() -> impl Strategy<Value = Value> {
            let system = prop_oneof![
                Just(None),
                Just(Some(json!("sys"))),
                Just(Some(
                    json!([{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}])
                )),
            ];
            (
                prop::collection::vec(arb_message(), 0..6),
                system,
                any::<u64>(),
                any::<bool>(),
            )
                .prop_map(|(messages, system, seed, tools)| {
                    let mut body = json!({"model": "m", "messages": messages, "max_tokens": 10});
                    if let Some(system) = system {
                        body["system"] = system;
                    }
                    if tools {
                        body["tools"] = json!([weather_tool()]);
                    }
                    decorate(body, seed, false)
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
                if let Ok(conv) = from_anthropic(&value) {
                    // Whatever is accepted comes back exactly.
                    prop_assert_eq!(to_anthropic(&conv).to_string(), value.to_string());
                }
            }

            #[test]
            fn generated_bodies_round_trip_exactly(body in arb_body()) {
                let conv = from_anthropic(&body);
                prop_assert!(conv.is_ok(), "{:?}", conv.err());
                let back = conv.map(|c| to_anthropic(&c)).unwrap_or_default();
                prop_assert_eq!(back.to_string(), body.to_string());
            }
        }
    }
}
