//! A list of messages that are almost all borrowed from a conversation.
//!
//! A pass hands summarizers the span's turns and their bounded, redacted views; nearly every
//! one is the conversation's own message, and only a cut, redacted or unwrapped one differs.
//! A `Vec<Cow<Message>>` spends a whole message's size (256 bytes) on each borrowed entry,
//! 25 MB per list for a 100,000-message span (issue #17); here a borrowed entry costs a
//! pointer, and summarizers read the list as `&[&Message]`.

use crate::message::Message;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Messages in order, each borrowed or (rarely) owned.
#[derive(Debug, Clone, Default)]
pub struct MessageList<'a> {
    /// `Some` for a borrowed entry; `None` where `owned` holds the entry.
    slots: Vec<Option<&'a Message>>,
    /// Boxed, as in `compress::pruned`: a map node of unboxed messages is mostly empty slots.
    owned: BTreeMap<usize, Box<Message>>,
}

impl<'a> MessageList<'a> {
    pub fn with_capacity(n: usize) -> Self {
        MessageList {
            slots: Vec::with_capacity(n),
            owned: BTreeMap::new(),
        }
    }

    pub fn push(&mut self, message: Cow<'a, Message>) {
        match message {
            Cow::Borrowed(m) => self.slots.push(Some(m)),
            Cow::Owned(m) => {
                self.owned.insert(self.slots.len(), Box::new(m));
                self.slots.push(None);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// One reference per entry, in order: what summarizers read.
    pub fn refs(&self) -> Vec<&Message> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| slot.or_else(|| self.owned.get(&i).map(|m| &**m)))
            .collect()
    }
}

impl<'a> FromIterator<Cow<'a, Message>> for MessageList<'a> {
    fn from_iter<I: IntoIterator<Item = Cow<'a, Message>>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut list = MessageList::with_capacity(iter.size_hint().0);
        for m in iter {
            list.push(m);
        }
        list
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_and_owned_entries_come_back_in_order() {
        let (a, c) = (Message::user("a"), Message::user("c"));
        let list: MessageList<'_> = [
            Cow::Borrowed(&a),
            Cow::Owned(Message::assistant("b")),
            Cow::Borrowed(&c),
        ]
        .into_iter()
        .collect();
        let texts: Vec<String> = list.refs().iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["a", "b", "c"]);
        assert_eq!(list.len(), 3);
        assert!(std::ptr::eq(list.refs()[0], &a));
    }
}
