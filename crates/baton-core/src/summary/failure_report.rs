//! Whether a tool result reads as a failure: a tool error wrapper, a line that *starts* like
//! an error report, or one of a few phrases anywhere near the start.
//!
//! Stricter than `tool_action::looks_like_error` on purpose: "3 passed; 0 failed" and a grep
//! hit for "error" are successful outputs, and a false "last failure" would mislead the agent.
//! Read by hand over the first 2,000 characters: a regex for it cost 0.4 ms to compile in
//! every process and scanned every byte of every result's start (issue #17). Letters compare
//! ASCII case-insensitively and words end at an ASCII word boundary.

use crate::byte_scan::word_at;
use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// How much of a result is read.
const HEAD_CHARS: usize = 2_000;

/// Words that report a failure when a line starts with them and they end there.
const LINE_WORDS: [&[u8]; 4] = [b"error", b"fatal", b"failed", b"fail"];
/// Python's traceback header, which needs no word end.
const TRACEBACK: &[u8] = b"traceback (most recent call last)";

/// Phrases that report a failure wherever they are.
const PHRASE_WORDS: [&str; 4] = [
    "panicked at",
    "command not found",
    "no such file or directory",
    "permission denied",
];

pub fn reads_as_failure(output: &str) -> bool {
    // Characters never outnumber bytes: a short output is read whole without counting.
    let head = if output.len() > HEAD_CHARS {
        output
            .char_indices()
            .nth(HEAD_CHARS)
            .map_or(output, |(i, _)| &output[..i])
    } else {
        output
    };
    is_tool_error(head)
        || head
            .lines()
            .any(|line| starts_like_an_error(line.trim_start().as_bytes()))
        || PHRASES.as_ref().is_some_and(|p| p.is_match(head))
}

/// One case-insensitive scan for every phrase.
static PHRASES: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(PHRASE_WORDS)
        .ok()
});

/// A line (after its indent) opens with an error word that ends there (`error:`,
/// `error[E0382]`, `FAILED`), not one that goes on (`errors`, `failure`).
fn starts_like_an_error(line: &[u8]) -> bool {
    let starts = |word: &[u8]| word_at(line, 0, word).is_some();
    if !matches!(line.first(), Some(b'e' | b'E' | b'f' | b'F' | b't' | b'T')) {
        return false;
    }
    starts(TRACEBACK)
        || LINE_WORDS.iter().any(|word| {
            starts(word)
                && line
                    .get(word.len())
                    .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
        })
}

/// Claude Code wraps tool failures in `<tool_use_error>`, which word-boundary searches miss.
pub fn is_tool_error(result: &str) -> bool {
    result.trim_start().starts_with("<tool_use_error>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_start_like_errors_are_failures() {
        for text in [
            "error: could not compile `x`",
            "Compiling x\n   error[E0382]: borrow of moved value",
            "FAILED tests/test_a.py::test_b",
            "\n\n  fatal: not a git repository",
            "Traceback (most recent call last):\n  File \"a.py\"",
            "fail",
            "<tool_use_error>File has not been read yet</tool_use_error>",
        ] {
            assert!(reads_as_failure(text), "{text}");
        }
    }

    #[test]
    fn phrases_anywhere_in_the_start_are_failures() {
        for text in [
            "thread 'main' panicked at src/main.rs:3:5",
            "bash: foo: command not found",
            "cat: x: No such file or directory",
            "open /etc/shadow: permission denied",
        ] {
            assert!(reads_as_failure(text), "{text}");
        }
    }

    #[test]
    fn successful_outputs_that_mention_errors_are_not() {
        for text in [
            "test result: ok. 3 passed; 0 failed",
            "src/error.rs:12: pub enum Error",
            "errors: 0",
            "failure_count = 0",
            "Finished in 2s",
        ] {
            assert!(!reads_as_failure(text), "{text}");
        }
    }

    #[test]
    fn only_the_first_two_thousand_characters_are_read() {
        let late = format!("{}\nerror: late", "é".repeat(HEAD_CHARS));
        assert!(!reads_as_failure(&late));
        let early = format!("error: early\n{}", "é".repeat(HEAD_CHARS));
        assert!(reads_as_failure(&early));
    }
}
