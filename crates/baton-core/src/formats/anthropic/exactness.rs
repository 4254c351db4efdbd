//! The `_anthropic` marker's bookkeeping shared by the reader and the writer: what to record so
//! a rebuild gives back the original exactly, and how to undo it.

use super::{MARKER, NOTES, Object};
use crate::formats::notes::{
    apply_key_order, identical_objects, key_order_note, merge_missing, reorder,
};
use crate::message::{Message, ToolCall};
use serde_json::Value;

pub(super) fn without_message_marker(msg: &Message) -> Message {
    let mut m = msg.clone();
    m.extra.shift_remove(MARKER);
    m
}

pub(super) fn without_call_marker(call: &ToolCall) -> ToolCall {
    let mut c = call.clone();
    c.extra.shift_remove(MARKER);
    c
}

pub(super) fn strip_value_marker(value: &Value) -> Value {
    match value {
        Value::Object(obj) => Value::Object(NOTES.without(obj)),
        other => other.clone(),
    }
}

/// Puts `fields` before the object's existing entries.
pub(super) fn prepend_fields(into: &mut Object, fields: Object) {
    let rest = std::mem::replace(into, fields);
    merge_missing(into, rest);
}

/// What the writer needs beyond its generic rebuild to give back `original` exactly: nothing,
/// the key order, or (when even that falls short) the original itself.
pub(super) fn exactness_marker(original: &Object, rebuilt: Object) -> Object {
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
pub(super) fn restore(
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

/// Which canonical list an assistant block went to, for restoring block order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Reasoning,
    Content,
    ToolCall,
}

impl Slot {
    pub(super) fn name(self) -> &'static str {
        match self {
            Slot::Reasoning => "thinking",
            Slot::Content => "content",
            Slot::ToolCall => "tool_use",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Slot> {
        [Slot::Reasoning, Slot::Content, Slot::ToolCall]
            .into_iter()
            .find(|slot| slot.name() == s)
    }
}

/// The block order the writer produces unaided: reasoning, then content, then tool calls.
pub(super) fn default_order(order: &[Slot]) -> Vec<Slot> {
    [Slot::Reasoning, Slot::Content, Slot::ToolCall]
        .into_iter()
        .flat_map(|slot| order.iter().filter(move |s| **s == slot).copied())
        .collect()
}
