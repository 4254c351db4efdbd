//! What the user is told after asking for a compression by hand.
//!
//! A manual compression is a request the user is waiting on, so the reply has to say plainly
//! whether anything happened and what it bought: the message counts, the approximate request
//! size before and after, and, when the outcome looks wrong at first sight (fewer messages but a
//! larger request), why that can be right. Failures that removed nothing are reported as such,
//! never as a compression.

use crate::message::Message;
use crate::truncate::group_digits;
use std::fmt;

/// How the compression run ended, as reported by the compressor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CompressionOutcome {
    /// A summary replaced the middle of the conversation (or there was nothing to replace).
    #[default]
    Summarized,
    /// The summary could not be generated and a limited fallback replaced the dropped turns.
    Fallback {
        /// Messages the compressor says it dropped; when unknown, the drop in message count.
        dropped: Option<usize>,
        /// Why the summary failed. Shown to the user as is, so it must already be redacted:
        /// provider errors can echo keys and headers.
        reason: Option<String>,
    },
    /// The summary could not be generated and the conversation was left as it was.
    Aborted {
        /// As for [`CompressionOutcome::Fallback`]: already redacted.
        reason: Option<String>,
    },
    /// The summary came out larger than what it would replace, so it was thrown away.
    RefusedWouldGrow,
}

/// The figures of one manual compression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionReport {
    pub before_messages: usize,
    pub after_messages: usize,
    /// Estimated request size, in tokens, before and after.
    pub before_tokens: u64,
    pub after_tokens: u64,
    /// The transcript after is equal to the one before, field for field. Counted separately
    /// from the message counts because a rewrite can keep the count and change the content.
    pub unchanged: bool,
    pub outcome: CompressionOutcome,
}

/// The lines shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionFeedback {
    /// Nothing was changed: callers can skip persisting or announcing a new session state.
    pub noop: bool,
    pub headline: String,
    pub token_line: String,
    pub note: Option<String>,
}

impl CompressionReport {
    /// Builds the report from the transcripts themselves. Equality is deep, so a pass that only
    /// rewrote a field still counts as a change.
    pub fn from_transcripts(
        before: &[Message],
        after: &[Message],
        before_tokens: u64,
        after_tokens: u64,
    ) -> Self {
        Self::from_counts(
            (before.len(), before_tokens),
            (after.len(), after_tokens),
            before == after,
        )
    }

    /// The report from the sizes alone, for a caller that no longer holds the conversation
    /// before (it handed it over to the compaction): `unchanged` is whether the compaction
    /// changed nothing (`CompressionResult::changed`).
    pub fn from_counts(
        (before_messages, before_tokens): (usize, u64),
        (after_messages, after_tokens): (usize, u64),
        unchanged: bool,
    ) -> Self {
        CompressionReport {
            before_messages,
            after_messages,
            before_tokens,
            after_tokens,
            unchanged,
            outcome: CompressionOutcome::Summarized,
        }
    }

    pub fn with_outcome(mut self, outcome: CompressionOutcome) -> Self {
        self.outcome = outcome;
        self
    }

    /// The headline, token line and optional note for this run.
    pub fn feedback(&self) -> CompressionFeedback {
        CompressionFeedback {
            noop: self.unchanged,
            headline: self.headline(),
            token_line: self.token_line(),
            note: self.note(),
        }
    }

    fn headline(&self) -> String {
        let before = self.before_messages;
        let after = self.after_messages;
        match &self.outcome {
            CompressionOutcome::RefusedWouldGrow => format!(
                "Compression refused (the summary would have grown the conversation): {} kept",
                messages(before)
            ),
            CompressionOutcome::Aborted { .. } => {
                format!("Compression aborted: {} kept", messages(before))
            }
            CompressionOutcome::Fallback { .. } => format!(
                "Compressed with fallback context: {} → {}",
                group_digits(before),
                messages(after)
            ),
            CompressionOutcome::Summarized if self.unchanged => {
                format!("Nothing to compress: {} unchanged", messages(before))
            }
            CompressionOutcome::Summarized => {
                format!("Compressed: {} → {}", group_digits(before), messages(after))
            }
        }
    }

    /// A refused run leaves the request as it was, so only one figure is worth showing; so does
    /// a no-op whose estimate did not move. Any other run shows both figures, even when they are
    /// equal, so the user sees the estimate was recomputed.
    fn token_line(&self) -> String {
        let before = group_digits(self.before_tokens);
        let size_unchanged = self.unchanged && self.after_tokens == self.before_tokens;
        if size_unchanged || self.outcome == CompressionOutcome::RefusedWouldGrow {
            return format!("Request size: ~{before} tokens (unchanged)");
        }
        let after = group_digits(self.after_tokens);
        match size_change(self.before_tokens, self.after_tokens) {
            Some(change) => format!("Request size: ~{before} → ~{after} tokens ({change})"),
            None => format!("Request size: ~{before} → ~{after} tokens"),
        }
    }

    fn note(&self) -> Option<String> {
        match &self.outcome {
            CompressionOutcome::RefusedWouldGrow => Some(
                "The summary came out larger than the messages it would replace, so nothing \
                 was removed."
                    .to_string(),
            ),
            CompressionOutcome::Aborted { reason } => Some(with_reason(
                "The summary could not be generated, so nothing was removed.".to_string(),
                reason.as_deref(),
            )),
            CompressionOutcome::Fallback { dropped, reason } => {
                let dropped =
                    dropped.unwrap_or(self.before_messages.saturating_sub(self.after_messages));
                let note = format!(
                    "The summary could not be generated; {} replaced by a short fallback \
                     context.",
                    removed(dropped)
                );
                Some(with_reason(note, reason.as_deref()))
            }
            CompressionOutcome::Summarized if self.fewer_messages_but_more_tokens() => Some(
                "Note: there are fewer messages but more tokens. A summary written densely can \
                 cost more than the short turns it replaced."
                    .to_string(),
            ),
            CompressionOutcome::Summarized => None,
        }
    }

    /// The one result that looks like a failure but is not: the count fell while the estimate
    /// rose, because the summary is denser than the turns it stands in for.
    fn fewer_messages_but_more_tokens(&self) -> bool {
        !self.unchanged
            && self.after_messages < self.before_messages
            && self.after_tokens > self.before_tokens
    }
}

impl fmt::Display for CompressionFeedback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.headline, self.token_line)?;
        if let Some(note) = &self.note {
            write!(f, "\n{note}")?;
        }
        Ok(())
    }
}

/// Appends the failure reason when there is a non-blank one.
fn with_reason(note: String, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("{note} Reason: {reason}"),
        None => note,
    }
}

fn messages(n: usize) -> String {
    if n == 1 {
        "1 message".to_string()
    } else {
        format!("{} messages", group_digits(n))
    }
}

fn removed(n: usize) -> String {
    if n == 1 {
        "1 message was removed and".to_string()
    } else {
        format!("{} messages were removed and", group_digits(n))
    }
}

/// The relative change of the estimate, or `None` when there is no baseline or no change to
/// express. A change that rounds to zero is shown as "<1%" so a real saving never reads as none.
fn size_change(before: u64, after: u64) -> Option<String> {
    if before == 0 || before == after {
        return None;
    }
    let percent = rounded_percent(before.abs_diff(after), before);
    let percent = if percent == 0 {
        "<1%".to_string()
    } else {
        format!("{percent}%")
    };
    Some(if after < before {
        format!("{percent} saved")
    } else {
        format!("{percent} larger")
    })
}

/// `part / whole` as a percentage rounded half up. Computed in 128 bits so token counts near
/// `u64::MAX` cannot overflow.
fn rounded_percent(part: u64, whole: u64) -> u128 {
    let (part, whole) = (u128::from(part), u128::from(whole));
    (part * 200 + whole) / (whole * 2)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn report(b: usize, a: usize, bt: u64, at: u64) -> CompressionReport {
        CompressionReport {
            before_messages: b,
            after_messages: a,
            before_tokens: bt,
            after_tokens: at,
            unchanged: false,
            outcome: CompressionOutcome::Summarized,
        }
    }

    #[test]
    fn compressed_run_reports_counts_and_savings() {
        let fb = report(40, 12, 123_456, 23_456).feedback();
        assert!(!fb.noop);
        assert_eq!(fb.headline, "Compressed: 40 → 12 messages");
        assert_eq!(
            fb.token_line,
            "Request size: ~123,456 → ~23,456 tokens (81% saved)"
        );
        assert_eq!(fb.note, None);
    }

    #[test]
    fn fewer_messages_but_more_tokens_gets_a_note() {
        let fb = report(10, 6, 1_000, 1_200).feedback();
        assert_eq!(
            fb.token_line,
            "Request size: ~1,000 → ~1,200 tokens (20% larger)"
        );
        assert!(
            fb.note
                .unwrap()
                .starts_with("Note: there are fewer messages but more tokens")
        );
    }

    #[test]
    fn more_tokens_without_fewer_messages_gets_no_note() {
        assert_eq!(report(10, 10, 1_000, 1_200).feedback().note, None);
    }

    #[test]
    fn unchanged_transcript_is_a_noop() {
        let msgs = vec![Message::user("hi"), Message::assistant("hello")];
        let fb = CompressionReport::from_transcripts(&msgs, &msgs.clone(), 5_000, 5_000).feedback();
        assert!(fb.noop);
        assert_eq!(fb.headline, "Nothing to compress: 2 messages unchanged");
        assert_eq!(fb.token_line, "Request size: ~5,000 tokens (unchanged)");
        assert_eq!(fb.note, None);
    }

    #[test]
    fn noop_with_a_moved_estimate_shows_both_figures() {
        let msgs = vec![Message::user("hi")];
        let fb = CompressionReport::from_transcripts(&msgs, &msgs, 5_000, 4_990).feedback();
        assert!(fb.noop);
        assert_eq!(fb.headline, "Nothing to compress: 1 message unchanged");
        assert_eq!(
            fb.token_line,
            "Request size: ~5,000 → ~4,990 tokens (<1% saved)"
        );
    }

    #[test]
    fn same_count_with_rewritten_content_is_not_a_noop() {
        let before = vec![Message::user("a long question")];
        let after = vec![Message::user("short")];
        let fb = CompressionReport::from_transcripts(&before, &after, 900, 900).feedback();
        assert!(!fb.noop);
        assert_eq!(fb.headline, "Compressed: 1 → 1 message");
        assert_eq!(fb.token_line, "Request size: ~900 → ~900 tokens");
    }

    #[test]
    fn refused_run_keeps_everything() {
        let fb = report(30, 30, 50_000, 50_000)
            .with_outcome(CompressionOutcome::RefusedWouldGrow)
            .feedback();
        assert!(fb.headline.starts_with("Compression refused"));
        assert!(fb.headline.ends_with("30 messages kept"));
        assert_eq!(fb.token_line, "Request size: ~50,000 tokens (unchanged)");
        assert!(fb.note.unwrap().contains("nothing was removed"));
    }

    #[test]
    fn aborted_run_appends_the_reason() {
        let fb = report(30, 30, 50_000, 50_000)
            .with_outcome(CompressionOutcome::Aborted {
                reason: Some("  provider timed out ".into()),
            })
            .feedback();
        assert_eq!(fb.headline, "Compression aborted: 30 messages kept");
        assert_eq!(
            fb.note.as_deref(),
            Some(
                "The summary could not be generated, so nothing was removed. Reason: provider timed out"
            )
        );
    }

    #[test]
    fn blank_reason_is_not_appended() {
        let fb = report(3, 3, 10, 10)
            .with_outcome(CompressionOutcome::Aborted {
                reason: Some("   ".into()),
            })
            .feedback();
        assert!(!fb.note.unwrap().contains("Reason"));
    }

    #[test]
    fn fallback_reports_dropped_count_from_counts_when_unknown() {
        let fb = report(20, 8, 9_000, 3_000)
            .with_outcome(CompressionOutcome::Fallback {
                dropped: None,
                reason: None,
            })
            .feedback();
        assert_eq!(
            fb.headline,
            "Compressed with fallback context: 20 → 8 messages"
        );
        assert_eq!(
            fb.token_line,
            "Request size: ~9,000 → ~3,000 tokens (67% saved)"
        );
        assert_eq!(
            fb.note.as_deref(),
            Some(
                "The summary could not be generated; 12 messages were removed and replaced \
                 by a short fallback context."
            )
        );
    }

    #[test]
    fn fallback_prefers_the_compressors_dropped_count_and_reason() {
        let fb = report(20, 8, 9_000, 9_500)
            .with_outcome(CompressionOutcome::Fallback {
                dropped: Some(1),
                reason: Some("HTTP 529".into()),
            })
            .feedback();
        let note = fb.note.unwrap();
        assert!(note.contains("; 1 message was removed and replaced"));
        assert!(note.ends_with(" Reason: HTTP 529"));
        assert!(!note.contains("fewer messages"));
    }

    #[test]
    fn zero_baseline_has_no_percentage() {
        assert_eq!(
            report(2, 1, 0, 10).feedback().token_line,
            "Request size: ~0 → ~10 tokens"
        );
    }

    #[test]
    fn thousands_are_grouped_in_counts_and_tokens() {
        let f = report(12_345, 1_234, 1_234_567, 123_456).feedback();
        assert_eq!(f.headline, "Compressed: 12,345 → 1,234 messages");
        assert_eq!(
            f.token_line,
            "Request size: ~1,234,567 → ~123,456 tokens (90% saved)"
        );
    }

    #[test]
    fn percent_rounds_half_up_without_overflow() {
        assert_eq!(rounded_percent(1, 8), 13);
        assert_eq!(rounded_percent(u64::MAX, u64::MAX), 100);
    }

    #[test]
    fn display_joins_the_lines() {
        let text = report(10, 6, 1_000, 1_200).feedback().to_string();
        assert_eq!(text.lines().count(), 3);
        assert!(text.starts_with("Compressed: 10 → 6 messages\nRequest size:"));
    }
}
