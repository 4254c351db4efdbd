//! What a pass outputs, and how it becomes the result's messages.
//!
//! A pass keeps most of its input as it is (the head, and a tail that is often most of a real
//! session), and copying those messages into the output was a tenth of a real session's pass,
//! another twentieth freeing the copies (issue #17). So the pass keeps them borrowed from the
//! input until the output is settled (what the refusal check and the assembly decide), and
//! they are copied only then, or moved when the caller handed its conversation over
//! ([`CompressRequest::messages`](crate::engine::CompressRequest::messages) owned).

use crate::message::Message;
use std::borrow::Cow;

/// A pass's conversation before it is settled.
pub(crate) enum Output<'a> {
    /// The input, unchanged.
    Input,
    /// These messages: each borrowed from the input unless the pass changed or made it.
    Kept(Vec<Cow<'a, Message>>),
}

/// An output that no longer borrows the input: each message the input's, by index, or one
/// the pass made.
pub(crate) enum Settled {
    Input,
    Slots(Vec<Slot>),
}

pub(crate) enum Slot {
    Input(usize),
    Made(Message),
}

impl Output<'_> {
    /// `self` with each borrowed message turned into its index in `input`, the slice it
    /// borrows from.
    pub(crate) fn settle(self, input: &[Message]) -> Settled {
        let Output::Kept(kept) = self else {
            return Settled::Input;
        };
        let slots = kept
            .into_iter()
            .map(|m| match m {
                Cow::Borrowed(m) => match index_in(input, m) {
                    Some(i) => Slot::Input(i),
                    // Not the input's (never expected): kept as a copy.
                    None => Slot::Made(m.clone()),
                },
                Cow::Owned(m) => Slot::Made(m),
            })
            .collect();
        Settled::Slots(slots)
    }
}

impl Settled {
    /// The output's messages: the input's copied when the caller lent them, moved when it
    /// handed them over.
    pub(crate) fn into_messages(self, input: Cow<'_, [Message]>) -> Vec<Message> {
        let slots = match self {
            Settled::Input => return input.into_owned(),
            Settled::Slots(slots) => slots,
        };
        match input {
            Cow::Borrowed(input) => slots
                .into_iter()
                .map(|slot| match slot {
                    Slot::Input(i) => input[i].clone(),
                    Slot::Made(m) => m,
                })
                .collect(),
            Cow::Owned(mut input) => {
                // Each input message is moved out the first time the output holds it; one it
                // holds twice (never expected) is copied from where it went first.
                let mut placed = vec![usize::MAX; input.len()];
                let mut out = Vec::with_capacity(slots.len());
                for slot in slots {
                    match slot {
                        Slot::Made(m) => out.push(m),
                        Slot::Input(i) if placed[i] == usize::MAX => {
                            placed[i] = out.len();
                            out.push(std::mem::replace(&mut input[i], placeholder()));
                        }
                        Slot::Input(i) => {
                            let copy = out[placed[i]].clone();
                            out.push(copy);
                        }
                    }
                }
                out
            }
        }
    }
}

/// Where `message` sits in `slice`, when it is one of its elements (found by address: the
/// pass's borrowed messages are the input's own).
fn index_in(slice: &[Message], message: &Message) -> Option<usize> {
    let size = std::mem::size_of::<Message>();
    let offset = (message as *const Message as usize).checked_sub(slice.as_ptr() as usize)?;
    let i = offset / size;
    (offset % size == 0 && i < slice.len() && std::ptr::eq(&slice[i], message)).then_some(i)
}

/// What a moved-out input message leaves behind: empty, allocation-free.
fn placeholder() -> Message {
    Message::user(String::new())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn input() -> Vec<Message> {
        (0..5).map(|i| Message::user(format!("m{i}"))).collect()
    }

    /// The kept messages, in order, with the pass's own: copied from a lent input, moved from
    /// a handed-over one (and the same either way), a message held twice copied.
    #[test]
    fn an_output_is_the_kept_messages_copied_or_moved() {
        let lent = input();
        let kept = |input: &[Message]| {
            Output::Kept(vec![
                Cow::Borrowed(&input[0]),
                Cow::Owned(Message::assistant("summary")),
                Cow::Borrowed(&input[3]),
                Cow::Borrowed(&input[4]),
                Cow::Borrowed(&input[3]),
            ])
            .settle(input)
        };
        let expected: Vec<String> = ["m0", "summary", "m3", "m4", "m3"].map(String::from).into();
        let copied = kept(&lent).into_messages(Cow::Borrowed(&lent));
        assert_eq!(
            copied.iter().map(Message::text).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(lent, input(), "a lent input is left as it was");
        let owned = input();
        let settled = kept(&owned);
        let moved = settled.into_messages(Cow::Owned(owned));
        assert_eq!(moved, copied);
    }

    #[test]
    fn an_unchanged_output_is_the_input() {
        let lent = input();
        assert_eq!(
            Output::Input
                .settle(&lent)
                .into_messages(Cow::Borrowed(&lent)),
            input()
        );
        assert_eq!(
            Output::Input
                .settle(&lent)
                .into_messages(Cow::Owned(input())),
            input()
        );
    }

    #[test]
    fn a_message_is_found_in_its_slice_by_address_only() {
        let messages = input();
        assert_eq!(index_in(&messages, &messages[2]), Some(2));
        let twin = messages[2].clone();
        assert_eq!(index_in(&messages, &twin), None);
        assert_eq!(index_in(&messages[1..], &messages[0]), None);
    }
}
