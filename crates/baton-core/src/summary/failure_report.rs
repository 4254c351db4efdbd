//! Whether a tool result reads as a failure: a tool error wrapper, a line that *starts* like
//! an error report, or one of a few phrases anywhere near the start.
//!
//! Stricter than `tool_action::looks_like_error` on purpose: "3 passed; 0 failed" and a grep
//! hit for "error" are successful outputs, and a false "last failure" would mislead the agent.
//! Read by hand over the first 2,000 characters: a regex for it cost 0.4 ms to compile in
//! every process and scanned every byte of every result's start (issue #17). Letters compare
//! ASCII case-insensitively and words end at an ASCII word boundary.

use crate::byte_scan::{is_ascii_space, skip_while, whole_word_at, word_at};
use memchr::memmem::Finder;
use std::sync::LazyLock;

/// How much of a result is read.
const HEAD_CHARS: usize = 2_000;

/// What [`reads_as_failure`] reads of `output`: its first `HEAD_CHARS` characters, found
/// without decoding them (`char_start`). Outputs with the same head read alike.
pub fn judged_head(output: &str) -> &str {
    crate::truncate::char_start(output, HEAD_CHARS).map_or(output, |i| &output[..i])
}

/// Words that report a failure when a line starts with them and they end there.
const LINE_WORDS: [&[u8]; 4] = [b"error", b"fatal", b"failed", b"fail"];
/// Python's traceback header, which needs no word end.
const TRACEBACK: &[u8] = b"traceback (most recent call last)";

/// Phrases that report a failure wherever they are; lower case.
const PHRASE_WORDS: [&str; 4] = [
    "panicked at",
    "command not found",
    "no such file or directory",
    "permission denied",
];

pub fn reads_as_failure(output: &str) -> bool {
    let head = judged_head(output);
    is_tool_error(head) || a_line_starts_like_an_error(head) || holds_a_phrase(head)
}

/// Whether a line of `text` (after its indent) opens with an error word. Line ends are found
/// with `memchr`, without `str::lines`'s per-line cost (issue #17); a line keeps a `\r` before
/// its `\n`, which ends a word as the line's end does, so the answer is the same.
fn a_line_starts_like_an_error(text: &str) -> bool {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in ends {
        if starts_like_an_error(after_indent(&text[start..end])) {
            return true;
        }
        start = end + 1;
    }
    false
}

/// `line.trim_start()`, its ASCII indent stepped over a byte at a time: only a line whose
/// indent holds a non-ASCII character is decoded.
fn after_indent(line: &str) -> &[u8] {
    let indent = skip_while(line.as_bytes(), 0, is_ascii_space);
    match line.as_bytes().get(indent) {
        Some(b) if !b.is_ascii() => line[indent..].trim_start().as_bytes(),
        _ => &line.as_bytes()[indent..],
    }
}

/// Whether `head` holds one of [`PHRASE_WORDS`], ASCII case-insensitively. The head is folded
/// to lower case once and each phrase is found with `memchr`'s vectorized substring search:
/// a case-insensitive Aho-Corasick automaton walked every byte and was a twentieth of a
/// compaction of a long span (issue #17).
fn holds_a_phrase(head: &str) -> bool {
    // Folded on the stack when the head fits (an ASCII head always does): a heap copy per
    // judged result was a tenth of the judgement.
    let mut buffer = [0u8; HEAD_CHARS];
    let mut heap = Vec::new();
    let folded: &[u8] = match buffer.get_mut(..head.len()) {
        Some(room) => {
            for (to, from) in room.iter_mut().zip(head.bytes()) {
                *to = from.to_ascii_lowercase();
            }
            room
        }
        None => {
            heap.extend(head.bytes().map(|b| b.to_ascii_lowercase()));
            &heap
        }
    };
    PHRASES.iter().any(|phrase| phrase.find(folded).is_some())
}

/// A prepared search for each phrase.
static PHRASES: LazyLock<[Finder<'static>; PHRASE_WORDS.len()]> =
    LazyLock::new(|| PHRASE_WORDS.map(Finder::new));

/// A line (after its indent) opens with an error word that ends there (`error:`,
/// `error[E0382]`, `FAILED`), not one that goes on (`errors`, `failure`).
fn starts_like_an_error(line: &[u8]) -> bool {
    let starts = |word: &[u8]| word_at(line, 0, word).is_some();
    if !matches!(line.first(), Some(b'e' | b'E' | b'f' | b'F' | b't' | b'T')) {
        return false;
    }
    starts(TRACEBACK)
        || LINE_WORDS
            .iter()
            .any(|word| whole_word_at(line, 0, word).is_some())
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
    fn phrases_match_in_any_ascii_case_and_only_whole() {
        assert!(holds_a_phrase("ls: PERMISSION DENIED"));
        assert!(holds_a_phrase("x: Command Not Found\n"));
        assert!(holds_a_phrase("日本語の出力 no such FILE or directory"));
        assert!(!holds_a_phrase("no such file"));
        assert!(!holds_a_phrase("permission  denied"));
        assert!(!holds_a_phrase(""));
    }

    proptest::proptest! {
        /// Line starts found with memchr, past indents stepped over a byte at a time, answer as
        /// `lines()` and `trim_start` do.
        #[test]
        fn line_starts_agree_with_lines(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "\n", "\r\n", " ", "\t", "\u{b}", "\u{a0}", "\u{3000}", "error", "Error:", "errors", "fail",
                    "FAILED", "fatal", "traceback (most recent call last)", "x", "é", "_",
                ]),
                0..24,
            ),
        ) {
            let text: String = pieces.concat();
            let by_lines = text
                .lines()
                .any(|line| starts_like_an_error(line.trim_start().as_bytes()));
            proptest::prop_assert_eq!(a_line_starts_like_an_error(&text), by_lines, "{:?}", text);
        }

        /// The folded search finds exactly what a lower-cased `contains` finds.
        #[test]
        fn the_folded_search_agrees_with_lowercase_contains(
            prefix in "[a-zA-Zé ]{0,40}",
            pick in 0..PHRASE_WORDS.len(),
            upper in proptest::collection::vec(proptest::bool::ANY, 32),
            cut in 0usize..30,
            suffix in "[a-z日 ]{0,20}",
        ) {
            let phrase: String = PHRASE_WORDS[pick]
                .chars()
                .zip(upper.iter().cycle())
                .map(|(c, &u)| if u { c.to_ascii_uppercase() } else { c })
                .collect();
            // Sometimes the whole phrase, sometimes only its start.
            let phrase = &phrase[..phrase.len().min(cut.max(1) + 10)];
            let text = format!("{prefix}{phrase}{suffix}");
            let lower = text.to_ascii_lowercase();
            let naive = PHRASE_WORDS.iter().any(|p| lower.contains(p));
            proptest::prop_assert_eq!(holds_a_phrase(&text), naive, "{}", text);
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
        let ascii_late = format!("{}\nerror: late", "x".repeat(HEAD_CHARS - 1));
        assert!(!reads_as_failure(&ascii_late));
        let ascii_in_time = format!("{}\nerror\n{}", "x".repeat(HEAD_CHARS - 7), "y".repeat(99));
        assert!(reads_as_failure(&ascii_in_time));
    }
}
