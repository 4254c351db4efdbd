//! The canonical message model: OpenAI chat format.
//!
//! Every loader converts into [`Message`] and every writer converts out of it. The model knows
//! the fields the engine reasons about (role, content, tool calls, tool call id, name, reasoning)
//! and keeps everything else in `extra` maps, in arrival order, so a provider-specific field
//! (Gemini thought signatures, OpenRouter annotations, a dataset's own keys) survives a round trip
//! untouched. Content parts are stored as their JSON objects for the same reason: an unknown part
//! type is kept exactly as it came.

use serde::{Serialize, Serializer};

mod de;
mod fields;
mod json_text;
mod ser;
pub use fields::Fields;
pub use json_text::{write_message, write_str};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Who wrote a message. Unknown roles are rejected at load time rather than guessed at, because a
/// wrong role silently changes what the model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// All roles, in the order they are usually reported.
    pub const ALL: [Role; 5] = [
        Role::System,
        Role::Developer,
        Role::User,
        Role::Assistant,
        Role::Tool,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// System and developer messages both carry instructions rather than conversation.
    pub fn is_instruction(self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One element of a list-valued `content`: a JSON object with a `type`.
///
/// Kept as its object (key order preserved) so unknown part types and unknown keys on known
/// types round-trip; typed accessors read the fields the engine needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentPart(Map<String, Value>);

/// The part types the engine understands; anything else is [`PartKind::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    Text,
    ImageUrl,
    InputAudio,
    File,
    Other,
}

impl ContentPart {
    /// A `{"type":"text","text":…}` part.
    pub fn text(text: impl Into<String>) -> Self {
        let mut m = Map::new();
        m.insert("type".into(), Value::String("text".into()));
        m.insert("text".into(), Value::String(text.into()));
        ContentPart(m)
    }

    /// A `{"type":"image_url","image_url":{"url":…}}` part.
    pub fn image_url(url: impl Into<String>) -> Self {
        let mut inner = Map::new();
        inner.insert("url".into(), Value::String(url.into()));
        let mut m = Map::new();
        m.insert("type".into(), Value::String("image_url".into()));
        m.insert("image_url".into(), Value::Object(inner));
        ContentPart(m)
    }

    /// Wraps an object; `validate_part` has already checked its shape when it came from a loader.
    pub fn from_object(map: Map<String, Value>) -> Self {
        ContentPart(map)
    }

    pub fn type_name(&self) -> &str {
        self.0.get("type").and_then(Value::as_str).unwrap_or("")
    }

    pub fn kind(&self) -> PartKind {
        match self.type_name() {
            "text" => PartKind::Text,
            "image_url" => PartKind::ImageUrl,
            "input_audio" => PartKind::InputAudio,
            "file" => PartKind::File,
            _ => PartKind::Other,
        }
    }

    /// The text of a text part (or any part carrying a string `text`, as some providers' custom
    /// parts do).
    pub fn text_value(&self) -> Option<&str> {
        self.0.get("text").and_then(Value::as_str)
    }

    /// True for parts that are billed as images rather than by their byte length.
    pub fn is_image(&self) -> bool {
        matches!(self.type_name(), "image_url" | "input_image" | "image")
    }

    pub fn fields(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn fields_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.0
    }

    pub fn into_object(self) -> Map<String, Value> {
        self.0
    }
}

/// The value of `content`.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `"content": null` (an assistant message that only calls tools).
    Null,
    Text(String),
    Parts(Vec<ContentPart>),
}

impl Content {
    /// Concatenated text of the content (text parts joined with newlines); images and other
    /// parts contribute nothing.
    pub fn text(&self) -> String {
        match self {
            Content::Null => String::new(),
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(ContentPart::text_value).collect();
                texts.join("\n")
            }
        }
    }

    /// Number of characters of text (not bytes), the unit the reference design budgets in.
    pub fn text_chars(&self) -> usize {
        match self {
            Content::Null => 0,
            Content::Text(s) => s.chars().count(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(ContentPart::text_value)
                .map(|t| t.chars().count())
                .sum(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Content::Null => true,
            Content::Text(s) => s.is_empty(),
            Content::Parts(p) => p.is_empty(),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Content::Null => Value::Null,
            Content::Text(s) => Value::String(s.clone()),
            Content::Parts(parts) => {
                Value::Array(parts.iter().map(|p| Value::Object(p.0.clone())).collect())
            }
        }
    }
}

/// The `function` of a tool call. `arguments` is a JSON *string*, as the API sends it; it may
/// be invalid JSON when a model produced broken output, and is kept as it came.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
    pub extra: Fields,
}

/// One entry of an assistant message's `tool_calls`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    /// `Some("function")` today; `None` when the call arrived without a `type` key (several
    /// servers omit it), so the writer does not invent one. A `Cow` so the usual `"function"`
    /// is no allocation: every copy of a call copied it (a pass copies the calls it keeps).
    pub kind: Option<Cow<'static, str>>,
    pub function: FunctionCall,
    pub extra: Fields,
}

/// The `type` of every tool call today.
pub const FUNCTION_KIND: &str = "function";

/// A call's `type` as read: the usual one shared, anything else kept as written.
pub fn call_kind(kind: String) -> Cow<'static, str> {
    if kind == FUNCTION_KIND {
        Cow::Borrowed(FUNCTION_KIND)
    } else {
        Cow::Owned(kind)
    }
}

impl ToolCall {
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: Some(Cow::Borrowed(FUNCTION_KIND)),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
                extra: Fields::new(),
            },
            extra: Fields::new(),
        }
    }

    pub fn to_value(&self) -> Value {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(self.function.name.clone()));
        f.insert(
            "arguments".into(),
            Value::String(self.function.arguments.clone()),
        );
        for (k, v) in &self.function.extra {
            f.insert(k.clone(), v.clone());
        }
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        if let Some(kind) = &self.kind {
            m.insert("type".into(), Value::String(kind.to_string()));
        }
        m.insert("function".into(), Value::Object(f));
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// The reasoning fields providers attach to assistant messages. Kept as JSON values because
/// their shapes differ (`reasoning` and `reasoning_content` are strings, `reasoning_details` is
/// a list of typed objects).
pub const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_details"];

/// One chat message in OpenAI format.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    /// `None` when the key is absent; `Some(Content::Null)` for an explicit `null`.
    pub content: Option<Content>,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
    /// Reasoning fields present on the message, by name (see [`REASONING_FIELDS`]), in arrival
    /// order.
    pub reasoning: Fields,
    /// Every other field, in arrival order.
    pub extra: Fields,
}

impl Message {
    /// A copy of this message with `content` and `tool_calls` in place of its own: how a long
    /// part is replaced without being cloned first (a view's cut text, a stub, cut arguments).
    pub fn copy_with(&self, content: Option<Content>, tool_calls: Option<Vec<ToolCall>>) -> Self {
        Message {
            role: self.role,
            content,
            tool_calls,
            tool_call_id: self.tool_call_id.clone(),
            name: self.name.clone(),
            reasoning: self.reasoning.clone(),
            extra: self.extra.clone(),
        }
    }

    /// A message with only a role and content (`None` = no `content` key); every other field
    /// empty. Converters build on this and add what their format carries.
    pub fn new(role: Role, content: Option<Content>) -> Self {
        Message {
            role,
            content,
            tool_calls: None,
            tool_call_id: None,
            name: None,
            reasoning: Fields::new(),
            extra: Fields::new(),
        }
    }

    pub fn system(text: impl Into<String>) -> Self {
        Self::new(Role::System, Some(Content::Text(text.into())))
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, Some(Content::Text(text.into())))
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, Some(Content::Text(text.into())))
    }

    /// An assistant message that only calls tools (`content: null`).
    pub fn assistant_tool_calls(calls: Vec<ToolCall>) -> Self {
        let mut m = Self::new(Role::Assistant, Some(Content::Null));
        m.tool_calls = Some(calls);
        m
    }

    pub fn tool(tool_call_id: impl Into<String>, text: impl Into<String>) -> Self {
        let mut m = Self::new(Role::Tool, Some(Content::Text(text.into())));
        m.tool_call_id = Some(tool_call_id.into());
        m
    }

    /// Plain text of the content ("" when there is none).
    pub fn text(&self) -> String {
        self.content.as_ref().map(Content::text).unwrap_or_default()
    }

    /// The first text of the content that is not blank, borrowed ("" when there is none): a
    /// prefix check (a summary's, an injected row's tag) must not copy a long message.
    pub fn leading_text(&self) -> &str {
        match &self.content {
            Some(Content::Text(s)) => s,
            Some(Content::Parts(parts)) => parts
                .iter()
                .find_map(|p| p.text_value().filter(|t| !t.trim().is_empty()))
                .unwrap_or(""),
            _ => "",
        }
    }

    /// Tool calls, or an empty slice.
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or(&[])
    }

    pub fn has_tool_calls(&self) -> bool {
        !self.calls().is_empty()
    }

    /// Reasoning text, joined from the string-valued reasoning fields and the `text` (or
    /// `summary`) of `reasoning_details` entries (where Anthropic thinking blocks land).
    pub fn reasoning_text(&self) -> String {
        let mut parts: Vec<&str> = ["reasoning", "reasoning_content"]
            .iter()
            .filter_map(|k| self.reasoning.get(k).and_then(Value::as_str))
            .collect();
        if let Some(details) = self
            .reasoning
            .get("reasoning_details")
            .and_then(Value::as_array)
        {
            parts.extend(details.iter().filter_map(|d| {
                d.get("text")
                    .or_else(|| d.get("summary"))
                    .and_then(Value::as_str)
            }));
        }
        parts.join("\n")
    }

    /// The message as a JSON object: known fields first in canonical order, then reasoning
    /// fields, then unknown fields in arrival order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), Value::String(self.role.as_str().into()));
        if let Some(c) = &self.content {
            m.insert("content".into(), c.to_value());
        }
        if let Some(calls) = &self.tool_calls {
            m.insert(
                "tool_calls".into(),
                Value::Array(calls.iter().map(ToolCall::to_value).collect()),
            );
        }
        if let Some(id) = &self.tool_call_id {
            m.insert("tool_call_id".into(), Value::String(id.clone()));
        }
        if let Some(n) = &self.name {
            m.insert("name".into(), Value::String(n.clone()));
        }
        for (k, v) in self.reasoning.iter().chain(self.extra.iter()) {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// Compact JSON of the message: the text of [`Message::to_value`], written without
    /// building it.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        match write_message(&mut out, self).map(|()| String::from_utf8(out)) {
            Ok(Ok(text)) => text,
            _ => self.to_value().to_string(),
        }
    }

    /// Parses and validates one message. `index` is the message's position, used in errors.
    pub fn from_value(value: Value, index: usize) -> Result<Message, MessageError> {
        parse_message(value, index)
    }
}

/// What was wrong with a message, and where inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError {
    /// Position of the message in its conversation.
    pub index: usize,
    /// Field path inside the message, e.g. `tool_calls[1].function.arguments`.
    pub field: String,
    /// What was expected there.
    pub expected: String,
    /// A short rendering of what was found.
    pub found: String,
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(
                f,
                "message {}: expected {}, found {}",
                self.index, self.expected, self.found
            )
        } else {
            write!(
                f,
                "message {}: `{}`: expected {}, found {}",
                self.index, self.field, self.expected, self.found
            )
        }
    }
}

impl std::error::Error for MessageError {}

/// A short description of a JSON value for error messages (never the whole value: it may be
/// huge, or hold a secret).
pub fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let short: String = s.chars().take(24).collect();
            if short.len() < s.len() {
                format!("string \"{short}…\"")
            } else {
                format!("string \"{short}\"")
            }
        }
        Value::Array(a) => format!("an array of {} elements", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

struct FieldCtx {
    index: usize,
}

impl FieldCtx {
    fn err(
        &self,
        field: impl Into<String>,
        expected: impl Into<String>,
        found: &Value,
    ) -> MessageError {
        MessageError {
            index: self.index,
            field: field.into(),
            expected: expected.into(),
            found: describe_value(found),
        }
    }

    fn missing(&self, field: impl Into<String>, expected: impl Into<String>) -> MessageError {
        MessageError {
            index: self.index,
            field: field.into(),
            expected: expected.into(),
            found: "nothing (field missing)".into(),
        }
    }

    fn string(&self, field: &str, v: Value) -> Result<String, MessageError> {
        self.string_at(|| field.to_string(), v)
    }

    /// [`FieldCtx::string`] with the field's name written only for an error: a conversation
    /// has thousands of tool calls, and naming each one's fields up front was an allocation
    /// per field read.
    fn string_at(&self, field: impl FnOnce() -> String, v: Value) -> Result<String, MessageError> {
        match v {
            Value::String(s) => Ok(s),
            other => Err(self.err(field(), "a string", &other)),
        }
    }
}

fn parse_message(value: Value, index: usize) -> Result<Message, MessageError> {
    let Value::Object(mut obj) = value else {
        return Err(FieldCtx { index }.err("", "a message object", &value));
    };
    let fields = MessageFields {
        role: obj.shift_remove("role"),
        content: obj.shift_remove("content"),
        tool_calls: obj.shift_remove("tool_calls"),
        tool_call_id: obj.shift_remove("tool_call_id"),
        name: obj.shift_remove("name"),
        rest: obj,
    };
    fields.build(index)
}

/// A message object's fields as they arrived, the known ones set apart: what both readers
/// (from a `Value`, and straight from JSON text in [`de`]) collect before the one set of
/// checks in [`MessageFields::build`] makes a [`Message`] of them.
#[derive(Default)]
pub(crate) struct MessageFields {
    pub role: Option<Value>,
    pub content: Option<Value>,
    pub tool_calls: Option<Value>,
    pub tool_call_id: Option<Value>,
    pub name: Option<Value>,
    /// Every other key, in arrival order.
    pub rest: Map<String, Value>,
}

impl MessageFields {
    /// Validates the fields and builds the message; `index` is its position, for errors.
    pub(crate) fn build(self, index: usize) -> Result<Message, MessageError> {
        let ctx = FieldCtx { index };
        let mut obj = self.rest;
        let role = match self.role {
            None => {
                return Err(ctx.missing("role", "one of system, developer, user, assistant, tool"));
            }
            Some(Value::String(s)) => Role::parse(&s).ok_or_else(|| {
                ctx.err(
                    "role",
                    "one of system, developer, user, assistant, tool",
                    &Value::String(s.clone()),
                )
            })?,
            Some(other) => return Err(ctx.err("role", "a role string", &other)),
        };
        let content = match self.content {
            None => None,
            Some(v) => Some(parse_content(&ctx, v)?),
        };
        let tool_calls = match self.tool_calls {
            None => None,
            Some(Value::Null) => {
                // `"tool_calls": null` is common from some servers; keep it as an unknown field
                // so the message re-serialises exactly as it arrived.
                obj.insert("tool_calls".into(), Value::Null);
                None
            }
            Some(Value::Array(items)) => {
                let mut calls = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    calls.push(parse_tool_call(&ctx, i, item)?);
                }
                Some(calls)
            }
            Some(other) => return Err(ctx.err("tool_calls", "an array of tool calls", &other)),
        };
        let tool_call_id = match self.tool_call_id {
            None if role != Role::Tool => None,
            Some(Value::Null) if role != Role::Tool => {
                obj.insert("tool_call_id".into(), Value::Null);
                None
            }
            None => {
                return Err(ctx.missing(
                    "tool_call_id",
                    "a string (every tool message answers a call)",
                ));
            }
            Some(v) => Some(ctx.string("tool_call_id", v)?),
        };
        let name = match self.name {
            None => None,
            Some(v) => Some(ctx.string("name", v)?),
        };
        let mut reasoning = Map::new();
        let mut extra = Map::new();
        for (k, v) in obj {
            if REASONING_FIELDS.contains(&k.as_str()) {
                reasoning.insert(k, v);
            } else {
                extra.insert(k, v);
            }
        }
        Ok(Message {
            role,
            content,
            tool_calls,
            tool_call_id,
            name,
            reasoning: reasoning.into(),
            extra: extra.into(),
        })
    }
}

fn parse_content(ctx: &FieldCtx, v: Value) -> Result<Content, MessageError> {
    match v {
        Value::Null => Ok(Content::Null),
        Value::String(s) => Ok(Content::Text(s)),
        Value::Array(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                parts.push(parse_part(ctx, i, item)?);
            }
            Ok(Content::Parts(parts))
        }
        other => Err(ctx.err("content", "a string, an array of parts, or null", &other)),
    }
}

fn parse_part(ctx: &FieldCtx, i: usize, v: Value) -> Result<ContentPart, MessageError> {
    let field = format!("content[{i}]");
    let Value::Object(obj) = v else {
        return Err(ctx.err(field, "a content part object with a `type`", &v));
    };
    let Some(ty) = obj.get("type") else {
        return Err(ctx.missing(format!("{field}.type"), "a part type such as \"text\""));
    };
    let Some(ty) = ty.as_str() else {
        return Err(ctx.err(format!("{field}.type"), "a string", ty));
    };
    let required: Option<(&str, &str)> = match ty {
        "text" => Some(("text", "a string")),
        "image_url" => Some(("image_url", "an object with a `url`")),
        "input_audio" => Some(("input_audio", "an object with `data` and `format`")),
        "file" => Some(("file", "an object")),
        _ => None,
    };
    if let Some((key, expected)) = required {
        match obj.get(key) {
            None => return Err(ctx.missing(format!("{field}.{key}"), expected)),
            Some(val) => {
                let ok = match key {
                    "text" => val.is_string(),
                    // Some clients send `image_url` as a bare string; accept it as-is.
                    "image_url" => val.is_object() || val.is_string(),
                    _ => val.is_object(),
                };
                if !ok {
                    return Err(ctx.err(format!("{field}.{key}"), expected, val));
                }
            }
        }
    }
    Ok(ContentPart(obj))
}

fn parse_tool_call(ctx: &FieldCtx, i: usize, v: Value) -> Result<ToolCall, MessageError> {
    let at = |path: &str| format!("tool_calls[{i}]{path}");
    let Value::Object(mut obj) = v else {
        return Err(ctx.err(at(""), "a tool call object", &v));
    };
    let id = match obj.shift_remove("id") {
        None => return Err(ctx.missing(at(".id"), "a string")),
        Some(v) => ctx.string_at(|| at(".id"), v)?,
    };
    let kind = match obj.shift_remove("type") {
        None => None,
        Some(v) => Some(call_kind(ctx.string_at(|| at(".type"), v)?)),
    };
    let function = match obj.shift_remove("function") {
        None => {
            return Err(ctx.missing(at(".function"), "an object with `name` and `arguments`"));
        }
        Some(Value::Object(mut f)) => {
            let name = match f.shift_remove("name") {
                None => return Err(ctx.missing(at(".function.name"), "a string")),
                Some(v) => ctx.string_at(|| at(".function.name"), v)?,
            };
            let arguments = match f.shift_remove("arguments") {
                None => String::new(),
                Some(Value::String(s)) => s,
                Some(other) => {
                    return Err(ctx.err(
                        at(".function.arguments"),
                        "a JSON-encoded string",
                        &other,
                    ));
                }
            };
            FunctionCall {
                name,
                arguments,
                extra: f.into(),
            }
        }
        Some(other) => {
            return Err(ctx.err(at(".function"), "an object", &other));
        }
    };
    Ok(ToolCall {
        id,
        kind,
        function,
        // An emptied map (the usual case) becomes no allocation at all.
        extra: obj.into(),
    })
}
