//! The match count a search tool printed itself: `"total_count": 47` (GitHub-style JSON) or
//! `Found 47 matches` / `found 1,203 files` / `Found 3 results`.
//!
//! Read by hand: both forms start at a fixed word, so a literal scan finds them and a few byte
//! comparisons read the rest (the regex this replaces cost 0.6 ms to compile in every process
//! that stubbed a search result, issue #17). Letters compare ASCII case-insensitively.

use crate::byte_scan::skip_while;

use std::sync::LazyLock;

/// The count of the first report in `content`; `None` when there is none or it does not fit.
pub(super) fn match_count(content: &str) -> Option<usize> {
    static WORDS: LazyLock<Option<aho_corasick::AhoCorasick>> = LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(["\"total_count\"", "found "])
            .ok()
    });
    let text = content.as_bytes();
    let digits = WORDS
        .as_ref()?
        .find_iter(content)
        .find_map(|m| match m.pattern().as_usize() {
            0 => total_count(text, m.end()),
            _ => found_count(content, m.start(), m.end()),
        })?;
    digits.replace(',', "").parse().ok()
}

/// `"total_count"`, blanks, `:`, blanks, digits.
fn total_count(text: &[u8], at: usize) -> Option<String> {
    let colon = skip_while(text, at, |b| b.is_ascii_whitespace());
    if text.get(colon) != Some(&b':') {
        return None;
    }
    let from = skip_while(text, colon + 1, |b| b.is_ascii_whitespace());
    let to = skip_while(text, from, |b| b.is_ascii_digit());
    (to > from).then(|| String::from_utf8_lossy(&text[from..to]).into_owned())
}

/// `found ` starting a word, a digit then digits and commas, one space, and a counted noun
/// ending a word.
fn found_count(content: &str, start: usize, at: usize) -> Option<String> {
    let text = content.as_bytes();
    let word_before = content[..start]
        .chars()
        .next_back()
        .is_some_and(is_word_char);
    if word_before || !text.get(at)?.is_ascii_digit() {
        return None;
    }
    let to = skip_while(text, at, |b| b.is_ascii_digit() || b == b',');
    if text.get(to) != Some(&b' ') {
        return None;
    }
    let noun_end = content[to + 1..]
        .char_indices()
        .find(|&(_, c)| !is_word_char(c))
        .map_or(content.len(), |(i, _)| to + 1 + i);
    const NOUNS: [&str; 8] = [
        "matches",
        "match",
        "files",
        "file",
        "results",
        "result",
        "occurrences",
        "occurrence",
    ];
    let noun = &content[to + 1..noun_end];
    NOUNS
        .iter()
        .any(|n| noun.eq_ignore_ascii_case(n))
        .then(|| content[at..to].to_string())
}

/// A character of a word for `\b`.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_read() {
        for (text, n) in [
            (r#"{"total_count": 47, "items": []}"#, 47),
            (r#"{"total_count":0}"#, 0),
            ("Found 47 matches", 47),
            ("found 1,203 files in 2s", 1203),
            ("Found 1 file", 1),
            ("FOUND 3 RESULTS.", 3),
            ("grep: Found 12 occurrences", 12),
        ] {
            assert_eq!(match_count(text), Some(n), "{text}");
        }
    }

    #[test]
    fn the_first_report_counts() {
        assert_eq!(match_count("Found 2 matches\nFound 5 files"), Some(2));
        // A phrase that is not a report does not stop the scan.
        assert_eq!(match_count("found 3 bugs; found 4 matches"), Some(4));
    }

    #[test]
    fn near_misses_are_not_counts() {
        for text in [
            "Found no matches",
            "found 3 bugs",
            "found 3  matches",
            "found 3 matchesx",
            "unfound 3 matches",
            "éfound 3 matches",
            r#""total_count": "47""#,
            "nothing here",
        ] {
            assert_eq!(match_count(text), None, "{text}");
        }
    }
}
