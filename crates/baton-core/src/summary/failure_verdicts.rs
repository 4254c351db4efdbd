//! Whether results read as failures, judged once per distinct text in a pass.
//!
//! A long session repeats its tool results (the same test run, the same file read), and
//! judging each of `synth_100k`'s 27,943 calls on its own was a twentieth of the pass's
//! instructions (callgrind, issue #17). [`FailureVerdicts`] keeps each verdict by the text
//! it read, shared by the threads that set a span's calls up.

use crate::summary::failure_report::{judged_head, reads_as_failure};
use crate::summary::text_memo::TextMemo;

/// [`reads_as_failure`] of the texts of one span, each distinct head read once.
#[derive(Default)]
pub(crate) struct FailureVerdicts<'a> {
    by_head: TextMemo<'a, bool>,
}

impl<'a> FailureVerdicts<'a> {
    /// `reads_as_failure(text)`, read unless a text with the same head was (the verdict reads
    /// the head only).
    pub(crate) fn reads_as_failure(&self, text: &'a str) -> bool {
        self.by_head
            .get_or_work(judged_head(text), reads_as_failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each verdict is the one reading the text gives, whether read for it or for an earlier
    /// text with the same head; texts that differ past the head share one verdict.
    #[test]
    fn a_verdict_is_read_once_per_head_and_is_the_texts_own() {
        let long_ok = format!("{}\nerror: past the head", "ok line\n".repeat(400));
        let long_ok_other_tail = format!("{}\nall good", "ok line\n".repeat(400));
        let texts = [
            "error: build failed",
            "3 passed; 0 failed",
            "Traceback (most recent call last):\n  x",
            "error: build failed",
            long_ok.as_str(),
            long_ok_other_tail.as_str(),
            "3 passed; 0 failed",
        ];
        let verdicts = FailureVerdicts::default();
        for text in texts {
            assert_eq!(
                verdicts.reads_as_failure(text),
                reads_as_failure(text),
                "{text:.40}"
            );
        }
        assert_eq!(verdicts.by_head.len(), 4);
    }
}
