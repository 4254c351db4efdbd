//! Round-trip notes and order-exact JSON helpers shared by the Anthropic and ShareGPT
//! converters.
//!
//! A converter records, under its own reserved key (`_anthropic`, `_sharegpt`), only what its
//! writer cannot rebuild from the canonical message (original key order, or the original
//! object when even that falls short), so a file converts to canonical and back to the
//! identical JSON.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The notes of one converter, kept under `key` in the objects it annotates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notes(pub &'static str);

impl Notes {
    /// The notes recorded on `map`, if any.
    pub(crate) fn of<'a>(&self, map: &'a Object) -> Option<&'a Object> {
        map.get(self.0).and_then(Value::as_object)
    }

    /// Whether the notes on `map` set `flag` to true.
    pub(crate) fn flag(&self, map: &Object, flag: &str) -> bool {
        self.of(map).and_then(|m| m.get(flag)) == Some(&Value::Bool(true))
    }

    /// Merges `entries` into the notes on `map`, creating them only when there is something to
    /// say.
    pub(crate) fn add(&self, map: &mut Object, entries: Object) {
        if entries.is_empty() {
            return;
        }
        let mut notes = self.of(map).cloned().unwrap_or_default();
        notes.extend(entries);
        map.insert(self.0.into(), Value::Object(notes));
    }

    /// `map` without the notes and without the `skip` keys.
    pub(crate) fn fields_except(&self, map: &Object, skip: &[&str]) -> Object {
        map.iter()
            .filter(|(k, _)| k.as_str() != self.0 && !skip.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// `map` without the notes.
    pub(crate) fn without(&self, map: &Object) -> Object {
        self.fields_except(map, &[])
    }
}

/// Adds the fields the object does not have yet: a known field is never overwritten by an
/// unknown one of the same name.
pub(crate) fn merge_missing(into: &mut Object, fields: Object) {
    for (k, v) in fields {
        into.entry(k).or_insert(v);
    }
}

/// A note recording `obj`'s key order under `name`.
pub(crate) fn key_order_note(name: &str, obj: &Object) -> Object {
    let keys = obj.keys().map(|k| Value::String(k.clone())).collect();
    let mut note = Object::new();
    note.insert(name.into(), Value::Array(keys));
    note
}

/// `obj` reordered as the `name` key-order note in `notes` says, when there is one.
pub(crate) fn apply_key_order(obj: Object, notes: Option<&Object>, name: &str) -> Object {
    match notes.and_then(|m| m.get(name)).and_then(Value::as_array) {
        Some(keys) => reorder(obj, keys.iter().filter_map(Value::as_str)),
        None => obj,
    }
}

/// The object with the listed keys first, in list order, then the rest in their own order.
pub(crate) fn reorder<'a>(mut obj: Object, keys: impl Iterator<Item = &'a str>) -> Object {
    let mut out = Object::new();
    for key in keys {
        if let Some((k, v)) = obj.shift_remove_entry(key) {
            out.insert(k, v);
        }
    }
    out.extend(obj);
    out
}

/// Equality that also requires the same key order, at every depth.
pub(crate) fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => identical_objects(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| identical(p, q))
        }
        _ => a == b,
    }
}

pub(crate) fn identical_objects(a: &Object, b: &Object) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
}
