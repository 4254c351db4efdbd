//! The bounded, redacted views of a span: what summarizers and the ledger read.
//!
//! Cutting each long message to its head and tail ([`super::view`]) and scanning what is left
//! for secrets ([`super::redact`]) is a third of a compaction of a long span, and each
//! message's view depends on that message alone. So a long span is split across the cores;
//! a short one stays on the calling thread, where starting threads would cost more than they
//! save.

use super::message_list::MessageList;
use super::redact::redact_view;
use super::view::{ViewLimits, message_view};
use crate::message::Message;
use std::borrow::Cow;

/// Spans with fewer messages are viewed on the calling thread. Measured on the shared inputs
/// (issue #17): see `threads_for`.
const PARALLEL_FROM_MESSAGES: usize = 1_000;

/// At most this many threads view one span, so a service compacting many sessions at once
/// does not start a thread per core for each of them.
const MAX_THREADS: usize = 4;

/// Each message of `turns` cut to `limits` and redacted, in order; borrowed wherever the view
/// is the message itself.
pub fn redacted_views<'a>(turns: &[&'a Message], limits: ViewLimits) -> MessageList<'a> {
    let threads = threads_for(turns.len());
    if threads <= 1 {
        return turns
            .iter()
            .map(|m| redact_view(message_view(m, limits)))
            .collect();
    }
    // Scoped threads, not the rayon pool: on a 2-vCPU VM a parked pool worker often woke too
    // late to take any of the work (a 10,000-message span: 8–14 ms with the pool, 8.1–9.7 ms
    // with fresh threads, 13.6 ms on one). Only the rare changed view is carried back; a
    // borrowed one is `turns[i]` already.
    let chunk = turns.len().div_ceil(threads);
    let changed: Vec<Option<Box<Message>>> = std::thread::scope(|scope| {
        let mut parts = turns.chunks(chunk);
        let first = parts.next().unwrap_or_default();
        let others: Vec<_> = parts
            .map(|part| scope.spawn(move || changed_views(part, limits)))
            .collect();
        let mut changed = changed_views(first, limits);
        for other in others {
            match other.join() {
                Ok(part) => changed.extend(part),
                // A panic in a view is a bug; it is raised here as it would have been on
                // this thread.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        changed
    });
    turns
        .iter()
        .zip(changed)
        .map(|(m, changed)| match changed {
            None => Cow::Borrowed(*m),
            Some(owned) => Cow::Owned(*owned),
        })
        .collect()
}

/// The view of each message of `part` that differs from the message, `None` where it is the
/// message itself.
fn changed_views(part: &[&Message], limits: ViewLimits) -> Vec<Option<Box<Message>>> {
    part.iter()
        .map(|m| match redact_view(message_view(m, limits)) {
            Cow::Borrowed(_) => None,
            Cow::Owned(owned) => Some(Box::new(owned)),
        })
        .collect()
}

/// How many threads view a span of `messages`: one below [`PARALLEL_FROM_MESSAGES`], else
/// one per core up to [`MAX_THREADS`].
fn threads_for(messages: usize) -> usize {
    if messages < PARALLEL_FROM_MESSAGES {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A span long enough to be split, with long results to cut and secrets to redact
    /// scattered through it.
    fn span() -> Vec<Message> {
        (0..3 * PARALLEL_FROM_MESSAGES + 6)
            .map(|i| match i % 7 {
                0 => Message::tool(format!("c{i}"), "build log line\n".repeat(400)),
                3 => Message::user(format!(
                    "use OPENAI_API_KEY=sk-proj-{i:04}abcdefghijklmnopqrstuvwxyz0123 for call {i}"
                )),
                _ => Message::assistant(format!("step {i} done")),
            })
            .collect()
    }

    #[test]
    fn a_split_span_gives_the_one_thread_views_in_order() {
        let messages = span();
        let turns: Vec<&Message> = messages.iter().collect();
        let split = redacted_views(&turns, ViewLimits::EXTRACTIVE);
        let one_thread: MessageList<'_> = turns
            .iter()
            .map(|m| redact_view(message_view(m, ViewLimits::EXTRACTIVE)))
            .collect();
        let (s, o) = (split.refs(), one_thread.refs());
        assert_eq!(s.len(), messages.len());
        assert_eq!(s, o);
        // Untouched messages stay borrowed; cut and redacted ones are new.
        assert!(std::ptr::eq(s[1], &messages[1]));
        assert!(!std::ptr::eq(s[0], &messages[0]));
        // The last message (3,005 % 7 = 2) sits in the last part.
        let last = messages.len() - 1;
        assert!(std::ptr::eq(s[last], &messages[last]));
        assert!(s[3].text().contains("[REDACTED]"), "{}", s[3].text());
        assert!(!s.iter().any(|m| m.text().contains("sk-proj-")));
    }

    #[test]
    fn short_spans_stay_on_the_calling_thread_and_long_ones_are_capped() {
        assert_eq!(threads_for(PARALLEL_FROM_MESSAGES - 1), 1);
        assert!(threads_for(PARALLEL_FROM_MESSAGES) >= 1);
        assert!(threads_for(usize::MAX) <= MAX_THREADS);
    }
}
