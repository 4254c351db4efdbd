//! Whether a tool result reads as a failure: a tool error wrapper, a line that *starts* like
//! an error report, or one of a few phrases anywhere near the start.
//!
//! Stricter than `tool_action::looks_like_error` on purpose: "3 passed; 0 failed" and a grep
//! hit for "error" are successful outputs, and a false "last failure" would mislead the agent.
//! Read by hand over the first 2,000 characters: a regex for it cost 0.4 ms to compile in
//! every process and scanned every byte of every result's start (issue #17). Letters compare
//! ASCII case-insensitively and words end at an ASCII word boundary.

/// How much of a result is read.
const HEAD_CHARS: usize = 2_000;

/// Words that report a failure when a line starts with them and they end there.
const LINE_WORDS: [&[u8]; 4] = [b"error", b"fatal", b"failed", b"fail"];
/// Python's traceback header, which needs no word end.
const TRACEBACK: &[u8] = b"traceback (most recent call last)";

/// Phrases that report a failure wherever they are.
const PHRASES: [&[u8]; 4] = [
    b"panicked at",
    b"command not found",
    b"no such file or directory",
    b"permission denied",
];

pub fn reads_as_failure(output: &str) -> bool {
    let head = match output.char_indices().nth(HEAD_CHARS) {
        Some((i, _)) => &output[..i],
        None => output,
    };
    if is_tool_error(head) {
        return true;
    }
    let lower = head.as_bytes().to_ascii_lowercase();
    head.lines()
        .map(|line| {
            // Byte offsets of `line` in `head` (and so in `lower`).
            let start = line.as_ptr() as usize - head.as_ptr() as usize;
            let indent = line.len() - line.trim_start().len();
            &lower[start + indent..start + line.len()]
        })
        .any(starts_like_an_error)
        || PHRASES
            .iter()
            .any(|p| memchr::memmem::find(&lower, p).is_some())
}

/// A lowercased line (after its indent) opens with an error word that ends there (`error:`,
/// `error[E0382]`, `FAILED`), not one that goes on (`errors`, `failure`).
fn starts_like_an_error(line: &[u8]) -> bool {
    line.starts_with(TRACEBACK)
        || LINE_WORDS.iter().any(|word| {
            line.starts_with(word)
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
