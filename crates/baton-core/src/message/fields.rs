//! [`Fields`]: a message's named JSON fields beyond the ones the model knows.

use serde_json::{Map, Value};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

/// JSON fields by name, in arrival order: reasoning fields, or the fields the model does not
/// know. Almost every message has none, so an empty set takes a pointer's room: held inline, a
/// `Map` took 72 bytes, twice per message, a quarter of a parsed conversation of short
/// messages (issue #17). Reads and writes go through the `Map` it dereferences to; the first
/// write allocates it.
#[derive(Clone, Default)]
pub struct Fields(Option<Box<Map<String, Value>>>);

/// What an empty set reads as.
static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

impl Fields {
    pub fn new() -> Self {
        Fields(None)
    }

    /// Whether the set is empty, told without reaching the shared empty map: the summary
    /// marker is looked up on every message of every pass (issue #17).
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }

    /// The field named `key`; an empty set answers without a map lookup.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.get(key)
    }

    /// The fields as a map of their own.
    pub fn into_map(self) -> Map<String, Value> {
        self.0.map(|m| *m).unwrap_or_default()
    }
}

impl Deref for Fields {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Fields {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Map<String, Value>> for Fields {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Fields(None)
        } else {
            Fields(Some(Box::new(map)))
        }
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl FromIterator<(String, Value)> for Fields {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Map::from_iter(iter).into()
    }
}

impl IntoIterator for Fields {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.into_map().into_iter()
    }
}

impl<'a> IntoIterator for &'a Fields {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        (**self).iter()
    }
}

impl<'a> IntoIterator for &'a mut Fields {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = serde_json::map::IterMut<'a>;

    fn into_iter(self) -> Self::IntoIter {
        (**self).iter_mut()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_set_allocates_nothing_and_equals_an_emptied_one() {
        assert_eq!(std::mem::size_of::<Fields>(), 8);
        let mut f = Fields::new();
        assert!(f.is_empty() && f.get("x").is_none());
        f.insert("x".into(), Value::from(1));
        assert_eq!(f.get("x"), Some(&Value::from(1)));
        f.shift_remove("x");
        assert_eq!(f, Fields::new());
        let g: Fields = [("a".to_string(), Value::Null)].into_iter().collect();
        assert_eq!(g.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(format!("{g:?}"), format!("{:?}", g.clone().into_map()));
    }
}
