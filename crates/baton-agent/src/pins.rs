//! What the user pinned stays verbatim through every compaction. A pin is a copy of a user or
//! assistant message; after a compaction, each pin the compacted view no longer holds word
//! for word is written back into the summary message under a heading of its own, within a
//! token budget (a share of the window). When the pins do not fit, the oldest are dropped
//! first and the user is told which. Pins are kept per lineage in the store, so a resumed
//! session keeps them. Tool results cannot be pinned: a result without its call is not a
//! valid message, and a pinned summary of it would not be the original.

use baton_core::compress::markers::is_summary_message;
use baton_core::message::{Content, ContentPart};
use baton_core::tokens::rough_text_tokens;
use baton_core::{Message, Role};

/// Heading of the pinned block in a summary message.
pub const PINNED_HEADING: &str = "## Pinned by the user (verbatim, kept through compaction)";
/// Heading of the session's first request, when the compacted view lost it.
pub const FIRST_REQUEST_HEADING: &str =
    "## The user's first request in this conversation (verbatim)";

/// Why a message cannot be pinned.
pub fn refuse_pin(message: &Message) -> Option<String> {
    match message.role {
        Role::User | Role::Assistant if !message.text().trim().is_empty() => None,
        Role::User | Role::Assistant => Some("an empty message cannot be pinned".into()),
        other => Some(format!(
            "{} messages cannot be pinned; pin the user or assistant message that matters",
            other.as_str()
        )),
    }
}

/// What applying the pins did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinReport {
    /// Pins written into the summary.
    pub restored: usize,
    /// One sentence per pin dropped for the budget.
    pub dropped: Vec<String>,
}

/// Writes what `messages` lost of the first request and the pins into its summary message:
/// the first request always, the pins newest first while they fit `budget_tokens`.
pub fn restore_pins(
    messages: &mut [Message],
    first_request: Option<&Message>,
    pins: &[Message],
    budget_tokens: usize,
) -> PinReport {
    let mut report = PinReport::default();
    let in_view = |messages: &[Message], wanted: &Message| {
        messages
            .iter()
            .any(|m| m.role == wanted.role && m.text() == wanted.text())
    };
    let first = first_request
        .filter(|f| !in_view(messages, f))
        .map(Message::text);
    let missing: Vec<&Message> = pins.iter().filter(|pin| !in_view(messages, pin)).collect();
    if missing.is_empty() && first.is_none() {
        return report;
    }
    let Some(summary) = messages.iter_mut().find(|m| is_summary_message(m)) else {
        return report;
    };
    if let Some(first) = first {
        append_text(summary, &format!("\n\n{FIRST_REQUEST_HEADING}\n{first}"));
    }
    // Keep the newest pins that fit.
    let mut kept: Vec<&Message> = Vec::new();
    let mut used = rough_text_tokens(PINNED_HEADING);
    for pin in missing.iter().rev() {
        let tokens = rough_text_tokens(&pin.text()) + 4;
        if used + tokens <= budget_tokens {
            used += tokens;
            kept.push(pin);
        } else {
            let text = pin.text();
            let start: String = text.chars().take(60).collect();
            report.dropped.push(format!(
                "a pinned {} message (\"{start}…\", ~{tokens} tokens) no longer fits the pin \
                 budget of {budget_tokens} tokens and was not restored; it is still stored \
                 (history_search finds it)",
                pin.role.as_str()
            ));
        }
    }
    kept.reverse();
    if kept.is_empty() {
        return report;
    }
    let mut block = format!("\n\n{PINNED_HEADING}");
    for pin in &kept {
        block.push_str(&format!("\n--- {} ---\n{}", pin.role.as_str(), pin.text()));
    }
    append_text(summary, &block);
    report.restored = kept.len();
    report
}

fn append_text(message: &mut Message, block: &str) {
    message.content = Some(match message.content.take() {
        Some(Content::Text(text)) => Content::Text(format!("{text}{block}")),
        Some(Content::Parts(mut parts)) => {
            parts.push(ContentPart::text(block.to_string()));
            Content::Parts(parts)
        }
        Some(Content::Null) | None => Content::Text(block.to_string()),
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn summary() -> Message {
        let mut m = Message::user(baton_core::compress::markers::with_summary_prefix(
            "the summary",
        ));
        baton_core::compress::markers::mark_summary(&mut m);
        m
    }

    #[test]
    fn lost_pins_are_written_into_the_summary_verbatim() {
        let pin = Message::user("Never touch the prod database.");
        let mut view = vec![summary(), Message::user("latest")];
        let report = restore_pins(&mut view, None, std::slice::from_ref(&pin), 1_000);
        assert_eq!(report.restored, 1);
        assert!(view[0].text().contains("Never touch the prod database."));
        assert!(view[0].text().contains(PINNED_HEADING));
        // A pin still in view is not duplicated.
        let mut view = vec![summary(), pin.clone()];
        assert_eq!(restore_pins(&mut view, None, &[pin], 1_000).restored, 0);
    }

    #[test]
    fn over_budget_the_oldest_pins_are_dropped_with_a_note() {
        let old = Message::user(format!("old pin {}", "x".repeat(400)));
        let new = Message::assistant(format!("new pin {}", "y".repeat(400)));
        let mut view = vec![summary()];
        let report = restore_pins(&mut view, None, &[old, new], 150);
        assert_eq!(report.restored, 1);
        assert!(view[0].text().contains("new pin"));
        assert!(!view[0].text().contains("old pin"));
        assert_eq!(report.dropped.len(), 1);
        assert!(
            report.dropped[0].contains("old pin"),
            "{:?}",
            report.dropped
        );
    }

    #[test]
    fn a_lost_first_request_is_restored_whatever_the_pin_budget() {
        let first = Message::user("Port the exporter without changing its output.");
        let mut view = vec![summary(), Message::user("latest")];
        restore_pins(&mut view, Some(&first), &[], 0);
        assert!(view[0].text().contains(FIRST_REQUEST_HEADING));
        assert!(
            view[0]
                .text()
                .contains("Port the exporter without changing its output.")
        );
    }

    #[test]
    fn tool_results_cannot_be_pinned() {
        assert!(refuse_pin(&Message::tool("c1", "output")).is_some());
        assert!(refuse_pin(&Message::user("keep this")).is_none());
    }
}
