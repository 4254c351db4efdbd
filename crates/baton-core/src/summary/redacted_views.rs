//! The bounded, redacted views of a span: what summarizers and the ledger read.
//!
//! Cutting each long message to its head and tail ([`super::view`]) and scanning what is left
//! for secrets ([`super::redact`]) is a third of a compaction of a long span, and each
//! message's view depends on that message alone, so a long span's views are built on several
//! threads (`crate::split_work`).

use super::message_list::MessageList;
use super::redact::{redact, redact_view, redact_view_text};
use super::text_memo::TextMemo;
use super::view::{ViewLimits, message_view};
use crate::message::{Content, Message, Role};
use crate::split_work::in_ranges;
use std::borrow::Cow;

/// Each message of `turns` cut to `limits` and redacted, in order; borrowed wherever the view
/// is the message itself.
pub fn redacted_views<'a>(turns: &[&'a Message], limits: ViewLimits) -> MessageList<'a> {
    // Only the rare changed view comes back from a range: a borrowed one is `turns[i]`.
    let changed = in_ranges(turns.len(), |range| changed_views(&turns[range], limits));
    turns
        .iter()
        .zip(changed.into_iter().flatten())
        .map(|(m, changed)| match changed {
            None => Cow::Borrowed(*m),
            Some(owned) => Cow::Owned(*owned),
        })
        .collect()
}

/// The view of each message of `part` that differs from the message, `None` where it is the
/// message itself.
fn changed_views(part: &[&Message], limits: ViewLimits) -> Vec<Option<Box<Message>>> {
    part.iter().map(|m| changed_view(m, limits)).collect()
}

/// The view of `message` cut to `limits` and redacted when it differs from the message, `None`
/// where it is the message itself.
pub(crate) fn changed_view(message: &Message, limits: ViewLimits) -> Option<Box<Message>> {
    changed(redact_view(message_view(message, limits)))
}

/// The view a compaction pass's extractive readers (the summary, the ledger) take of a span
/// message, when it differs from the message: cut to [`ViewLimits::EXTRACTIVE`]; the user's
/// text redacted; tool calls, tool results and the assistant's text as written. Those readers
/// redact what they quote of the others: calls and results through `summary::span_calls`
/// (its action's texts, the arguments of an unknown tool, the output of a failed call), an
/// assistant reply before a line of it is quoted (the extractive summary's `Span`). So neither
/// is scanned whole here: a result is measured and judged, and quoted only when its call
/// failed; a reply is quoted only after a question or as the span's last.
pub(crate) fn changed_span_view(message: &Message) -> Option<Box<Message>> {
    span_view(message, None)
}

/// [`changed_span_view`] for the messages of one pass, which tells whether a user's text
/// holds a secret once per distinct text. A long session repeats its requests (`synth_100k`:
/// 24,780 user messages, 2,681 distinct texts), and scanning each for secrets was a tenth of
/// the pass's instructions (callgrind, issue #17). The verdicts are shared by the threads
/// that build the views.
#[derive(Default)]
pub(crate) struct SpanViews<'a> {
    holds_secret: TextMemo<'a, bool>,
}

impl<'a> SpanViews<'a> {
    /// The view [`changed_span_view`] gives of `message`.
    pub(crate) fn changed(&self, message: &'a Message) -> Option<Box<Message>> {
        span_view(message, Some(&self.holds_secret))
    }
}

/// [`changed_span_view`], a whole user text alone (no reasoning beside it) judged through
/// `verdicts` when given: redacted only if it holds a secret.
fn span_view<'m>(
    message: &'m Message,
    verdicts: Option<&TextMemo<'m, bool>>,
) -> Option<Box<Message>> {
    let view = message_view(message, ViewLimits::EXTRACTIVE);
    if matches!(message.role, Role::Tool | Role::Assistant) {
        return changed(view);
    }
    if let Some(verdicts) = verdicts
        && let Cow::Borrowed(m) = view
        && m.reasoning.is_empty()
        && let Some(Content::Text(text)) = &m.content
        && !verdicts.get_or_work(text, |t| matches!(redact(t), Cow::Owned(_)))
    {
        return None;
    }
    changed(redact_view_text(view))
}

fn changed(view: Cow<'_, Message>) -> Option<Box<Message>> {
    match view {
        Cow::Borrowed(_) => None,
        Cow::Owned(owned) => Some(Box::new(owned)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::split_work::SPLIT_FROM_ITEMS;

    /// A span long enough to be split, with long results to cut and secrets to redact
    /// scattered through it.
    fn span() -> Vec<Message> {
        (0..3 * SPLIT_FROM_ITEMS + 6)
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

    /// A pass's views of repeated user texts, some holding a secret, built on several threads
    /// as the pass builds them, are those `changed_span_view` gives each message; each
    /// distinct text is judged once.
    #[test]
    fn repeated_user_texts_get_their_own_views_and_one_verdict_per_text() {
        let texts = [
            "run the tests again".to_string(),
            "use OPENAI_API_KEY=sk-proj-0001abcdefghijklmnopqrstuvwxyz0123 here".to_string(),
            "我们修复解析器。".to_string(),
        ];
        let messages: Vec<Message> = (0..3 * SPLIT_FROM_ITEMS + 5)
            .map(|i| match i % 4 {
                0 => Message::assistant(format!("step {i}")),
                k => Message::user(texts[k - 1].as_str()),
            })
            .collect();
        let views = SpanViews::default();
        let ((), built) = crate::split_work::items_ahead(
            messages.len(),
            |i| views.changed(&messages[i]),
            || ((), messages.len()),
        );
        for (i, (view, m)) in built.iter().zip(&messages).enumerate() {
            assert_eq!(view, &changed_span_view(m), "message {i}");
        }
        assert!(
            built[2]
                .as_ref()
                .is_some_and(|v| v.text().contains("[REDACTED]"))
        );
        assert!(built[1].is_none() && built[3].is_none());
        let verdicts = &views.holds_secret;
        assert_eq!(verdicts.len(), texts.len());
        assert_eq!(verdicts.get(&texts[1]), Some(true));
        assert_eq!(verdicts.get(&texts[0]), Some(false));
    }
}
