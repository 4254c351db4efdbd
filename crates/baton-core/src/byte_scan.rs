//! Byte-level reading for the hand-written recognizers (exit reports, match counts, failure
//! lines, summary cue words, what surrounds a redaction literal): they read a few ASCII bytes
//! around a literal hit instead of compiling a regex for it. And skipping a JSON string in text held whole (cutting tool-call
//! arguments, minifying dataset records).

/// `char::is_whitespace` on an ASCII byte (`u8::is_ascii_whitespace` leaves out the vertical
/// tab): what the byte-run fast paths collapse as whitespace (`one_line`, a stub's values).
pub(crate) fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// The index of the first byte at or after `at` that `keep` rejects (`text.len()` if none).
pub(crate) fn skip_while(text: &[u8], mut at: usize, keep: impl Fn(u8) -> bool) -> usize {
    while at < text.len() && keep(text[at]) {
        at += 1;
    }
    at
}

/// The index after `word` when `text` continues with it at `at`, letters compared ASCII
/// case-insensitively (how every recognizer compares the words it looks for).
pub(crate) fn word_at(text: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    let end = at.checked_add(word.len())?;
    text.get(at..end)?.eq_ignore_ascii_case(word).then_some(end)
}

/// A byte of a word, as an ASCII word boundary (`(?-u:\b)`) sees it: letter, digit or `_`.
pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The index after `word` when `text` continues with it at `at` ([`word_at`]) and the word
/// ends there (no word byte follows).
pub(crate) fn whole_word_at(text: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    word_at(text, at, word).filter(|&end| text.get(end).is_none_or(|&b| !is_word_byte(b)))
}

/// The index of the quote that closes the JSON string whose text starts at `at` (escapes
/// skipped, found with `memchr`), or `json.len()` when none does.
pub(crate) fn closing_quote(json: &[u8], mut at: usize) -> usize {
    while let Some(i) = json
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        if json[at + i] == b'"' {
            return at + i;
        }
        at += i + 2;
    }
    json.len()
}

/// The first line of `text` (as `str::lines` splits it) that is not blank. Line ends are
/// found with `memchr`: `str::lines` searches a word at a time, and finding that a one-line
/// real session has no second line was 6% of loading it (callgrind, issue #17). Results other
/// than a command's are judged by this line too.
pub(crate) fn first_nonblank_line(text: &str) -> Option<&str> {
    let mut start = 0;
    loop {
        let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map(|i| start + i);
        let line = &text[start..end.unwrap_or(text.len())];
        // `str::lines` takes a `\r` before a `\n` as part of the line end.
        let line = match end {
            Some(_) => line.strip_suffix('\r').unwrap_or(line),
            None => line,
        };
        if !line.trim().is_empty() {
            return Some(line);
        }
        start = end? + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The first non-blank line is the one `str::lines` gives, across bare and paired
        /// carriage returns, blank lines, Unicode spaces and a missing final line end.
        #[test]
        fn the_first_nonblank_line_is_str_lines_own(text in "[a \r\n\t\u{a0}\u{3000}]{0,24}") {
            prop_assert_eq!(
                first_nonblank_line(&text),
                text.lines().find(|l| !l.trim().is_empty())
            );
        }
    }

    #[test]
    fn a_string_closes_at_its_first_unescaped_quote() {
        let json = br#""a\"b" x "\\" y "cut\"#;
        assert_eq!(closing_quote(json, 1), 5);
        assert_eq!(closing_quote(json, 10), 12);
        assert_eq!(closing_quote(json, 17), json.len());
        assert_eq!(closing_quote(b"\\", 0), 1);
        assert_eq!(closing_quote(b"x", 5), 1);
    }

    #[test]
    fn stops_at_the_first_rejected_byte_or_the_end() {
        assert_eq!(skip_while(b"  x", 0, |b| b == b' '), 2);
        assert_eq!(skip_while(b"   ", 1, |b| b == b' '), 3);
        assert_eq!(skip_while(b"ab", 5, |_| true), 5);
    }

    #[test]
    fn words_match_ascii_case_insensitively_and_within_the_text() {
        assert_eq!(word_at(b"an EXIT code", 3, b"exit"), Some(7));
        assert_eq!(word_at(b"exi", 0, b"exit"), None);
        assert_eq!(word_at(b"exit", 9, b"exit"), None);
        assert_eq!(word_at("É".as_bytes(), 0, "é".as_bytes()), None);
    }
}
