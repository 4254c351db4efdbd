//! A pruned conversation held as the original plus the messages pruning changed.
//!
//! Pruning rewrites a few old tool results and arguments; copying the whole conversation to
//! change them made a pass hold every message twice (issue #17: `compress` of an 86 MB
//! conversation peaked at four times the file). Here the original is borrowed and only a
//! changed message is owned, so a pass copies what its output keeps, and nothing else.

use crate::message::{Content, FunctionCall, Message, ToolCall};
use std::borrow::Cow;
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

    /// How many messages of `range` pruning changed.
    pub fn changed_in(&self, range: Range<usize>) -> usize {
        self.changed.range(range).count()
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
            Box::new(o.copy_with(Some(content), o.tool_calls.clone())),
        );
    }

    /// Replaces the arguments of message `index`'s calls at the given positions. The message
    /// is copied without the arguments being replaced: those are the long ones, being cut.
    /// False (and nothing changed) when there is no such message or it has no calls.
    pub(crate) fn set_arguments(&mut self, index: usize, cuts: Vec<(usize, String)>) -> bool {
        if !self.changed.contains_key(&index) {
            let Some(o) = self.originals.get(index).filter(|o| o.tool_calls.is_some()) else {
                return false;
            };
            let is_cut = |position: usize| cuts.iter().any(|(p, _)| *p == position);
            let tool_calls = o.tool_calls.as_ref().map(|calls| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(position, call)| ToolCall {
                        id: call.id.clone(),
                        kind: call.kind.clone(),
                        function: FunctionCall {
                            name: call.function.name.clone(),
                            arguments: if is_cut(position) {
                                String::new()
                            } else {
                                call.function.arguments.clone()
                            },
                            extra: call.function.extra.clone(),
                        },
                        extra: call.extra.clone(),
                    })
                    .collect()
            });
            let copy = o.copy_with(o.content.clone(), tool_calls);
            self.changed.insert(index, Box::new(copy));
        }
        let Some(calls) = self
            .changed
            .get_mut(&index)
            .and_then(|m| m.tool_calls.as_mut())
        else {
            return false;
        };
        for (position, cut) in cuts {
            if let Some(call) = calls.get_mut(position) {
                call.function.arguments = cut;
            }
        }
        true
    }

    /// The pruned messages of `range`, copied (what an output keeps).
    pub fn to_vec(&self, range: Range<usize>) -> Vec<Message> {
        range
            .filter_map(|i| self.get(i).cloned())
            .collect::<Vec<_>>()
    }

    /// The pruned messages of `range` as an output keeps them before it is settled: the
    /// originals borrowed, the changed ones copied (a pass goes on reading its pruning).
    /// `originals` is the conversation this pruning was made of, at its own lifetime (a pass
    /// hands its pruning shorter-lived tables, `LazyPrune::with_actions`).
    pub(crate) fn kept<'o>(
        &self,
        originals: &'o [Message],
        range: Range<usize>,
    ) -> Vec<Cow<'o, Message>> {
        debug_assert!(std::ptr::eq(originals, self.originals));
        range
            .filter_map(|i| match self.changed.get(&i) {
                Some(m) => Some(Cow::Owned((**m).clone())),
                None => originals.get(i).map(Cow::Borrowed),
            })
            .collect()
    }

    /// The whole pruned conversation: the originals borrowed, the changed ones moved out
    /// (`originals` as for [`Self::kept`]).
    pub(crate) fn into_kept(self, originals: &[Message]) -> Vec<Cow<'_, Message>> {
        debug_assert!(std::ptr::eq(originals, self.originals));
        let mut changed = self.changed;
        originals
            .iter()
            .enumerate()
            .map(|(i, m)| {
                changed
                    .remove(&i)
                    .map_or(Cow::Borrowed(m), |c| Cow::Owned(*c))
            })
            .collect()
    }

    /// The whole pruned conversation, copied.
    pub fn into_vec(self) -> Vec<Message> {
        let originals = self.originals;
        self.into_kept(originals)
            .into_iter()
            .map(Cow::into_owned)
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
        let texts: Vec<String> = p.iter().map(Message::text).collect();
        assert_eq!(texts, ["a", "stub", "b"]);
        assert_eq!(p.to_vec(1..3)[0].text(), "stub");
        assert!(p.get(3).is_none());
        assert!(!p.set_arguments(3, vec![(0, "x".into())]));
        assert!(!p.set_arguments(0, vec![(0, "x".into())]));
        assert!(!p.is_changed(0) && !p.is_changed(3));
        let all = p.into_vec();
        assert_eq!(all[0], originals[0]);
    }

    /// A cut call gets its new arguments and every other field of the message, and of its
    /// calls, is kept; a second cut of the same message changes the copy.
    #[test]
    fn cut_arguments_replace_only_the_cut_calls() {
        let mut call = ToolCall::function("t1", "Write", r#"{"content":"long"}"#);
        call.function
            .extra
            .insert("strict".into(), serde_json::Value::Bool(true));
        call.extra
            .insert("index".into(), serde_json::Value::from(0));
        let other = ToolCall::function("t2", "Read", r#"{"path":"a"}"#);
        let mut message = Message::assistant("writing");
        message.tool_calls = Some(vec![call, other.clone()]);
        message.name = Some("agent".into());
        message
            .extra
            .insert("id".into(), serde_json::Value::from("m1"));
        let originals = vec![Message::user("go"), message.clone()];
        let mut p = Pruned::new(&originals);
        assert!(p.set_arguments(1, vec![(0, r#"{"content":"lo…"}"#.into())]));
        let mut expected = message.clone();
        expected.tool_calls.as_mut().unwrap()[0].function.arguments = r#"{"content":"lo…"}"#.into();
        assert_eq!(p.get(1), Some(&expected));
        assert_eq!(originals[1], message);
        assert!(p.set_arguments(1, vec![(1, "{}".into())]));
        expected.tool_calls.as_mut().unwrap()[1].function.arguments = "{}".into();
        assert_eq!(p.get(1), Some(&expected));
        assert_eq!(p.changed_count(), 1);
    }
}
