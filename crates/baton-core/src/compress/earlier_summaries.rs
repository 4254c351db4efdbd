//! The summaries a pass replaces: every earlier summary of the conversation is dropped by
//! assembly, wherever it sits, so its body (and with it its task ledger) is carried into the
//! new summary, and a summary inside the span is not summarized as a turn.

use crate::compress::assemble;
use crate::compress::markers;
use crate::message::Message;
use crate::summary::message_list::MessageList;
use crate::summary::redacted_views::changed_span_view;
use std::borrow::Cow;

/// Bodies of the earlier summaries of the whole conversation, oldest first: those in the head,
/// the span's (already joined), and those in the kept tail. `summaries` are the indices of
/// `messages` that are summaries ([`markers::is_summary_message`], ascending, known from the
/// pass's first read of every message); the span is `start..end`.
pub(super) fn previous_summaries(
    messages: &[Message],
    summaries: &[usize],
    span: Option<String>,
    (start, end): (usize, usize),
) -> Option<String> {
    let body = |&i: &usize| markers::strip_summary_prefix(&messages[i].text());
    let bodies: Vec<String> = summaries
        .iter()
        .filter(|&&i| i < start)
        .map(body)
        .chain(span)
        .chain(summaries.iter().filter(|&&i| i >= end).map(body))
        .filter(|b| !b.trim().is_empty())
        .collect();
    (!bodies.is_empty()).then(|| bodies.join("\n\n"))
}

/// Separates earlier summaries in the span (their bodies joined, newest last) from the real
/// turns, and gives each turn its bounded, redacted view: a real message's from `ahead` (the
/// span's changed views by position, `None` where the view is the message itself), the own
/// words of a summary merged into a real message viewed here. Iterative compaction updates the
/// previous summary instead of summarizing a summary. Turns are borrowed: the span can be tens
/// of megabytes.
///
/// `is_summary(k)`: whether the span's `k`-th message is one ([`markers::is_summary_message`],
/// known from the pass's first read of every message).
pub(super) fn split_previous_summaries(
    span: &[Message],
    ahead: Vec<Option<Box<Message>>>,
    is_summary: impl Fn(usize) -> bool,
) -> (Option<String>, MessageList<'_>, MessageList<'_>) {
    debug_assert_eq!(
        ahead.len(),
        span.len(),
        "a view for each of the span's messages"
    );
    let mut bodies = Vec::new();
    let mut turns = MessageList::with_capacity(span.len());
    let mut views = MessageList::with_capacity(span.len());
    for (k, (m, view)) in span.iter().zip(ahead).enumerate() {
        debug_assert_eq!(is_summary(k), markers::is_summary_message(m));
        if is_summary(k) {
            bodies.push(markers::strip_summary_prefix(&m.text()));
            // A summary merged into a real message: that message's own words are a turn.
            if let Some(own) = assemble::unwrap_summary(m) {
                let view = changed_span_view(&own);
                views.push(Cow::Owned(view.map_or_else(|| own.clone(), |v| *v)));
                turns.push(Cow::Owned(own));
            }
        } else {
            turns.push(Cow::Borrowed(m));
            views.push(view.map_or(Cow::Borrowed(m), |v| Cow::Owned(*v)));
        }
    }
    let previous = (!bodies.is_empty()).then(|| bodies.join("\n\n"));
    (previous, turns, views)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::compress::markers::{
        PRIOR_CONTEXT_CLOSE, PRIOR_CONTEXT_OPEN, SUMMARY_PREFIX, mark_summary,
    };
    use crate::message::ToolCall;

    /// Each turn's view, taken from the span's views by position, is the one
    /// `changed_span_view` makes of the turn: a redacted secret, a cut result, a call's
    /// arguments as written, an earlier summary left out of the turns and a summary merged into
    /// a user message viewed as that message's own words.
    #[test]
    fn each_turn_gets_the_view_changed_span_view_makes_of_it() {
        let mut merged = Message::user(format!(
            "{PRIOR_CONTEXT_OPEN}\nplease also fix the tests\n\n{PRIOR_CONTEXT_CLOSE}\n\n{SUMMARY_PREFIX}\nmerged body"
        ));
        mark_summary(&mut merged);
        let key = "sk-proj-0001abcdefghijklmnopqrstuvwxyz0123";
        let span = vec![
            Message::user(format!("use OPENAI_API_KEY={key} now")),
            Message::tool("c1", "build log line\n".repeat(400)),
            Message::assistant(format!("{SUMMARY_PREFIX}\nold summary body")),
            merged,
            Message::assistant("done"),
            Message::assistant_tool_calls(vec![ToolCall::function(
                "c2",
                "Bash",
                format!(r#"{{"command":"OPENAI_API_KEY={key} make"}}"#),
            )]),
        ];
        let ahead = span.iter().map(changed_span_view).collect();
        let (previous, turns, views) =
            split_previous_summaries(&span, ahead, |k| markers::is_summary_message(&span[k]));
        let expected: Vec<Message> = turns
            .refs()
            .iter()
            .map(|t| changed_span_view(t).map_or_else(|| (*t).clone(), |v| *v))
            .collect();
        let expected: Vec<&Message> = expected.iter().collect();
        assert_eq!(views.refs(), expected);
        let (turns, views) = (turns.refs(), views.refs());
        assert_eq!(turns.len(), 5);
        let previous = previous.unwrap();
        assert!(previous.contains("old summary body") && previous.contains("merged body"));
        assert!(
            views[0].text().contains("[REDACTED]"),
            "{}",
            views[0].text()
        );
        assert!(views[1].text().contains("view omitted"));
        assert_eq!(turns[2].text(), "please also fix the tests");
        assert!(std::ptr::eq(views[3], &span[4]));
        // The call is left as written: what a summary shows of it is redacted by `SpanCalls`.
        assert!(std::ptr::eq(views[4], &span[5]));
    }
}
