//! The exit status a tool result reports, in the forms agents print it:
//! `"exit_code": 1` (JSON), `Exit code: 1`, `Process exited with code 1`,
//! `[Command finished with exit code 1]`, `exit status 1`.
//!
//! Read by hand rather than by regex: every form starts at the word "exit", so a byte scan
//! finds where to look and a few byte comparisons read the rest. The regex this replaces was
//! compiled in every process that summarized a tool result, and compiling it alone took
//! 0.8 ms of a 12 ms `baton compress` (issue #17). Letters compare ASCII case-insensitively;
//! blanks and digits are ASCII (a non-ASCII digit never parsed as a status anyway).

use crate::byte_scan::{skip_while, word_at};

/// The exit status `result` reports: the last report in its last 4 KB, else in its first
/// 1 KB. Agents print the status at the start (Codex) or the end (everyone else) of the
/// output; reading only those windows keeps this O(1) for multi-megabyte results.
pub fn exit_code(result: &str) -> Option<i32> {
    let (head, tail) = edges(result, 1_024, 4_096);
    last_report(tail).or_else(|| last_report(head))
}

/// How far after its "exit" a report may end.
const REPORT_REACH: usize = 96;

/// The last report in `window` whose status parses. The word is found from the end by its
/// `x` (rare in text, so `memrchr` skips most of the window) and read outwards: reports sit
/// at the end of outputs, so the common case stops at the first hit.
fn last_report(window: &str) -> Option<i32> {
    let bytes = window.as_bytes();
    let mut end = bytes.len();
    while let Some(x) = memchr::memrchr2(b'x', b'X', &bytes[..end]) {
        end = x;
        let Some(at) = x.checked_sub(1) else { break };
        if word_at(bytes, at, b"exit").is_none() {
            continue;
        }
        let reach = bytes.len().min(at + REPORT_REACH);
        if let Some(code) = report_at(&bytes[..reach], at) {
            return Some(code);
        }
    }
    None
}

/// The status of the report whose "exit" starts at `at`, if one does.
fn report_at(text: &[u8], at: usize) -> Option<i32> {
    let after_exit = at + 4;
    // `"exit_code": 1`
    if at > 0
        && text[at - 1] == b'"'
        && let Some(rest) = word_at(text, after_exit, b"_code\"")
    {
        let colon = skip_blanks(text, rest);
        if text.get(colon) == Some(&b':') {
            return status(text, skip_blanks(text, colon + 1));
        }
    }
    // `exit code: 1`, `exit status 1`, `[command finished with exit code 1]`
    for word in [&b" code"[..], b" status"] {
        if let Some(rest) = word_at(text, after_exit, word) {
            let number = skip_while(text, rest, |b| b == b':' || b.is_ascii_whitespace());
            if number > rest {
                return status(text, number);
            }
        }
    }
    // `exited with code 1`
    if let Some(rest) = word_at(text, after_exit, b"ed with code") {
        let number = skip_blanks(text, rest);
        if number > rest {
            return status(text, number);
        }
    }
    None
}

fn skip_blanks(text: &[u8], at: usize) -> usize {
    skip_while(text, at, |b| b.is_ascii_whitespace())
}

/// `-?[0-9]+` at `at`, as a status; `None` when absent or out of range.
fn status(text: &[u8], at: usize) -> Option<i32> {
    let digits_from = at + usize::from(text.get(at) == Some(&b'-'));
    let end = skip_while(text, digits_from, |b| b.is_ascii_digit());
    if end == digits_from {
        return None;
    }
    std::str::from_utf8(&text[at..end]).ok()?.parse().ok()
}

/// The first `head` and last `tail` bytes of `text` (cut at char boundaries); a short text is
/// all tail.
fn edges(text: &str, head: usize, tail: usize) -> (&str, &str) {
    if text.len() <= head + tail {
        // Short text: the tail window is all of it, so the head is not scanned again.
        return ("", text);
    }
    let h = text.floor_char_boundary(head);
    let t = text.ceil_char_boundary(text.len() - tail);
    (&text[..h], &text[t..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agents_form_is_read() {
        for (text, code) in [
            (r#"{"output":"x","exit_code": 101}"#, 101),
            (r#"{"exit_code":0,"stdout":""}"#, 0),
            ("Process exited with code 2\nOutput:", 2),
            ("ok\n[Command finished with exit code 0]", 0),
            ("Exit code: 1", 1),
            ("EXIT STATUS 3", 3),
            ("exit code -1", -1),
            ("exit code:\n\t7", 7),
        ] {
            assert_eq!(exit_code(text), Some(code), "{text}");
        }
    }

    #[test]
    fn the_last_report_wins_and_broken_ones_are_skipped() {
        assert_eq!(exit_code("exit code: 1\nretrying\nexit code: 0"), Some(0));
        // An unparseable (out of range) status falls back to the report before it.
        assert_eq!(exit_code("exit code 4\nexit code 99999999999"), Some(4));
        // The start of a long output is read when its end reports nothing.
        let long = format!("exit code: 5\n{}", "x".repeat(10_000));
        assert_eq!(exit_code(&long), Some(5));
    }

    #[test]
    fn words_near_exit_are_not_reports() {
        for text in [
            "all good",
            "exit",
            "exit code",
            "exit code: none",
            "exited with code",
            "exitcode 1",
            "sys.exit(main())",
            "exit_code: 1",
            "exit code.1",
        ] {
            assert_eq!(exit_code(text), None, "{text}");
        }
    }

    #[test]
    fn a_status_beyond_the_reports_reach_is_not_read() {
        let far = format!("exit code:{}1", " ".repeat(REPORT_REACH));
        assert_eq!(exit_code(&far), None);
    }
}
