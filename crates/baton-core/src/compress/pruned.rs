//! A pruned conversation held as the original plus the messages pruning changed.
//!
//! Pruning rewrites a few old tool results and arguments; copying the whole conversation to
//! change them made a pass hold every message twice (issue #17: `compress` of an 86 MB
//! conversation peaked at four times the file). Here the original is borrowed and only a
//! changed message is owned, so a pass copies what its output keeps, and nothing else.

use crate::message::{Content, Message};
use std::collections::BTreeMap;
use std::ops::Range;

/// The original messages, with the changed ones by index.
#[derive(Debug, Clone)]
pub struct Pruned<'a> {
    originals: &'a [Message],
    /// Boxed: a map node of unboxed messages holds eleven 256-byte slots, mostly empty.
    changed: BTreeMap<usize, Box<Message>>,
}

impl<'a> Pruned<'a> {
    /// Nothing changed yet.
    pub fn new(originals: &'a [Message]) -> Self {
        Pruned {
            originals,
            changed: BTreeMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.originals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.originals.is_empty()
    }

    /// The conversation before pruning.
    pub fn originals(&self) -> &'a [Message] {
        self.originals
    }

    /// Message `index` as pruned (`None` past the end).
    pub fn get(&self, index: usize) -> Option<&Message> {
        self.changed
            .get(&index)
            .map(|m| &**m)
            .or_else(|| self.originals.get(index))
    }

    /// Whether pruning changed message `index`.
    pub fn is_changed(&self, index: usize) -> bool {
        self.changed.contains_key(&index)
    }

    /// How many messages pruning changed.
    pub fn changed_count(&self) -> usize {
        self.changed.len()
    }

    /// The pruned messages in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.changed.get(&i).map_or(&self.originals[i], |m| &**m))
    }

    /// Replaces message `index`'s content. The message is copied without its old content
    /// (an old tool result is the large part, and it is being thrown away).
    pub(crate) fn set_content(&mut self, index: usize, content: Content) {
        if let Some(m) = self.changed.get_mut(&index) {
            m.content = Some(content);
            return;
        }
        let Some(o) = self.originals.get(index) else {
            return;
        };
        self.changed.insert(
            index,
            Box::new(Message {
                role: o.role,
                content: Some(content),
                tool_calls: o.tool_calls.clone(),
                tool_call_id: o.tool_call_id.clone(),
                name: o.name.clone(),
                reasoning: o.reasoning.clone(),
                extra: o.extra.clone(),
            }),
        );
    }

    /// Message `index` to change, copied on the first change (`None` past the end).
    pub(crate) fn make_mut(&mut self, index: usize) -> Option<&mut Message> {
        let original = self.originals.get(index)?;
        Some(
            self.changed
                .entry(index)
                .or_insert_with(|| Box::new(original.clone())),
        )
    }

    /// The pruned messages of `range`, copied (what an output keeps).
    pub fn to_vec(&self, range: Range<usize>) -> Vec<Message> {
        range
            .filter_map(|i| self.get(i).cloned())
            .collect::<Vec<_>>()
    }

    /// The whole pruned conversation, copied.
    pub fn into_vec(self) -> Vec<Message> {
        let mut changed = self.changed;
        self.originals
            .iter()
            .enumerate()
            .map(|(i, m)| changed.remove(&i).map_or_else(|| m.clone(), |c| *c))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_seen_in_place_and_the_original_is_left_alone() {
        let originals = vec![
            Message::user("a"),
            Message::tool("c", "long output"),
            Message::assistant("b"),
        ];
        let mut p = Pruned::new(&originals);
        p.set_content(1, Content::Text("stub".into()));
        assert_eq!(p.get(1).unwrap().text(), "stub");
        assert_eq!(p.get(1).unwrap().tool_call_id.as_deref(), Some("c"));
        assert_eq!(originals[1].text(), "long output");
        assert!(p.is_changed(1) && !p.is_changed(0));
        p.make_mut(2).unwrap().name = Some("n".into());
        let texts: Vec<String> = p.iter().map(Message::text).collect();
        assert_eq!(texts, ["a", "stub", "b"]);
        assert_eq!(p.to_vec(1..3)[0].text(), "stub");
        assert!(p.get(3).is_none() && p.make_mut(3).is_none());
        let all = p.into_vec();
        assert_eq!(all[2].name.as_deref(), Some("n"));
        assert_eq!(all[0], originals[0]);
    }
}
