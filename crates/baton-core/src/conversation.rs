//! A conversation: the messages plus what travels with them (tool schemas, record fields).

use crate::message::Message;
use serde_json::{Map, Value};

/// One conversation as loaded from a file.
///
/// The system prompt, when there is one, is `messages[0]` with role `system` (the OpenAI
/// convention); formats that keep it apart (Anthropic's `system`) are converted into that shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    pub messages: Vec<Message>,
    /// Tool schemas in OpenAI form (`{"type":"function","function":{…}}`), when the source had them.
    pub tools: Option<Vec<Value>>,
    /// Every other top-level field of the source record (ids, metadata, sampling settings…),
    /// in arrival order, written back unchanged.
    pub extra: Map<String, Value>,
    /// Top-level keys in the order they arrived (including `messages` and `tools`), so writers
    /// reproduce the source record's layout. Empty means canonical order: extra fields first,
    /// then `messages`, then `tools`.
    pub field_order: Vec<String>,
}

impl Conversation {
    pub fn new(messages: Vec<Message>) -> Self {
        Conversation {
            messages,
            tools: None,
            extra: Map::new(),
            field_order: Vec::new(),
        }
    }

    /// The `meta` object of the record, if any: provenance and quirks of the source (the shared
    /// corpus's records carry one, and imported agent-CLI transcripts put the session id, cwd,
    /// models, compaction indices and repair counts there).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.extra.get("meta").and_then(Value::as_object)
    }

    /// The system prompt text, if the first message is a system message.
    pub fn system_prompt(&self) -> Option<String> {
        self.messages
            .first()
            .filter(|m| m.role == crate::message::Role::System)
            .map(Message::text)
    }
}
