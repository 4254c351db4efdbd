//! The blockers section: the span's failures, newest last, minus those a later identical call
//! got past, judged on the threads that read the calls.

use super::label_key::key_of_label;
use super::span::error_line;
// The limits, wordings and patterns every part of the summarizer shares.
use super::*;
use crate::summary::span_calls::SpanCall;

/// Failures seen in the span (newest last), minus those a later identical call got past;
/// falls back to the ledger's last failure when the span saw none.
pub(super) fn blockers(span: &Span<'_>, ledger: &TaskLedger) -> Bullets {
    // One backward pass: labels of calls that later succeeded, so each failure is checked in
    // O(1) (a per-failure scan of the later calls was quadratic on long agent runs). Every
    // call is judged (reading its result), each on its own: a long span's calls are split
    // over threads, which also write each failed call's label and each answered call's key.
    // A failure is listed unless the same call (by label) succeeded later. Only labels equal
    // to a failed call's, or to the ledger's last failure's, can decide that, so a call's
    // label is built only when its key is one of theirs (`label_key.rs`); taking every
    // answered call's key on the calling thread was a fourteenth of a 10,000-message span's
    // single-threaded work (`perf record`, issue #17).
    let judged: Vec<Judged<'_>> = in_ranges(span.calls.len(), |range| {
        span.calls[range].iter().map(Judged::of).collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    let fallback = ledger
        .last_failure
        .as_ref()
        .map(|f| format!("`{}`", one_line(&f.command, TARGET_MAX_CHARS)));
    let asked: rustc_hash::FxHashSet<u64> = judged
        .iter()
        .filter_map(|j| match j {
            Judged::Failed { label } => Some(key_of_label(label)),
            _ => None,
        })
        .chain(fallback.as_deref().map(key_of_label))
        .collect();
    let mut succeeded_later = rustc_hash::FxHashSet::<Cow<'_, str>>::default();
    let mut items: Vec<String> = Vec::new();
    // The list keeps the newest failures: walking back from the newest, a failure past them
    // is counted, not written (writing one redacts its result).
    let mut older = 0;
    for (call, judged) in span.calls.iter().zip(judged).rev() {
        match judged {
            Judged::Failed { label } if !succeeded_later.contains(&label) => {
                if items.len() < MAX_BLOCKERS {
                    let error = error_line(call.quoted_result().unwrap_or_default());
                    items.push(format!("{label} → {error}"));
                } else {
                    older += 1;
                }
            }
            Judged::Answered { key } if asked.contains(&key) => {
                succeeded_later.insert(call.label());
            }
            _ => {}
        }
    }
    items.reverse();
    if items.is_empty()
        && let Some(f) = &ledger.last_failure
        && let Some(label) = fallback
        && !succeeded_later.contains(label.as_str())
    {
        items.push(format!(
            "Last recorded failure: {label} → {}",
            error_line(&f.error)
        ));
    }
    let mut bullets = Bullets::new(items, "errors", "None seen in the compacted span.");
    bullets.dropped += older;
    bullets
}

/// What the blockers section needs of a call, read on the thread that judges it.
enum Judged<'a> {
    /// The call failed: its label, which every failure's line and check needs.
    Failed { label: Cow<'a, str> },
    /// The call got a result and did not fail: its label's key, to tell whether it is a
    /// failed call's again.
    Answered { key: u64 },
    /// No result: it neither failed nor got past a failure.
    Unanswered,
}

impl<'a> Judged<'a> {
    fn of(call: &SpanCall<'a>) -> Self {
        if call.failed() {
            Judged::Failed {
                label: call.label(),
            }
        } else if call.result.is_some() {
            Judged::Answered {
                key: call.label_key(),
            }
        } else {
            Judged::Unanswered
        }
    }
}
