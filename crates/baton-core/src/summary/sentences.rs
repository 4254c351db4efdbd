//! Prose split into sentences: a request's constraints, decisions and questions are read one
//! sentence at a time, by the ledger and by the extractive summary.

use std::ops::Range;

/// Splits prose into sentences: at newlines, at CJK full stops, and at `.`/`!`/`?` followed by
/// whitespace or the end (so `main.rs` and `?q=1` stay whole). Fenced code is skipped.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut ranges = Vec::new();
    sentence_ranges(text, &mut ranges);
    ranges.into_iter().map(|r| &text[r]).collect()
}

/// [`sentences`] as byte ranges of `text`, appended to `out`: a long span splits every user
/// request, and a string per sentence was an allocation and a copy each (`perf record` of
/// `synth_100k`, issue #17).
pub fn sentence_ranges(text: &str, out: &mut Vec<Range<usize>>) {
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            split_line_into_sentences(line, offset_in(text, line), out);
        }
    }
}

/// Where `part`, a slice of `text`, starts in it.
fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// The sentences of one line (at `base` in its text), found by jumping between the bytes that
/// can end one (`.`, `!`, `?` and the lead byte of `。`, `！`, `？`) rather than decoding every
/// character: every user request of a long span is split, and the character walk was a
/// twentieth of summarizing `synth_10k` (`perf record`, issue #17).
///
/// An ASCII line (most are) is searched for `.`, `!` and `?` with `memchr3`, a vectorized
/// search, instead of testing its bytes one by one.
fn split_line_into_sentences(line: &str, base: usize, out: &mut Vec<Range<usize>>) {
    let bytes = line.as_bytes();
    let ascii = bytes.is_ascii();
    let next_candidate = |from: &[u8]| {
        if ascii {
            memchr::memchr3(b'.', b'!', b'?', from)
        } else {
            from.iter().position(|&b| may_end_sentence(b))
        }
    };
    let (mut start, mut at) = (0, 0);
    while let Some(found) = next_candidate(&bytes[at..]) {
        // An ASCII byte or a lead byte: a character boundary either way.
        let i = at + found;
        match sentence_end_at(line, i) {
            Some(end) => {
                push_sentence(line, start..end, base, out);
                (start, at) = (end, end);
            }
            None => at = i + 1,
        }
    }
    push_sentence(line, start..line.len(), base, out);
}

/// `.`, `!`, `?`, or the lead byte shared by `。` (E3) and by `！`/`？` (EF).
fn may_end_sentence(byte: u8) -> bool {
    matches!(byte, b'.' | b'!' | b'?' | 0xE3 | 0xEF)
}

/// Where the sentence ends when the character at `i` ends it: a CJK stop always does, `.`,
/// `!` and `?` when whitespace or the line's end follows.
fn sentence_end_at(line: &str, i: usize) -> Option<usize> {
    let rest = &line[i..];
    let c = rest.chars().next()?;
    let ends = match c {
        '。' | '！' | '？' => true,
        '.' | '!' | '?' => rest[1..].chars().next().is_none_or(char::is_whitespace),
        _ => false,
    };
    ends.then(|| i + c.len_utf8())
}

/// The sentence at `range` of `line` (at `base` in its text), trimmed, unless it is blank.
fn push_sentence(line: &str, range: Range<usize>, base: usize, out: &mut Vec<Range<usize>>) {
    let s = line[range].trim();
    if !s.is_empty() {
        let start = base + offset_in(line, s);
        out.push(start..start + s.len());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sentences_do_not_split_paths_or_urls() {
        let got = sentences("Edit src/main.rs now. Is a?b=1 ok? 好的。还有吗？\n```\nwhy? x\n```");
        assert_eq!(
            got,
            vec![
                "Edit src/main.rs now.",
                "Is a?b=1 ok?",
                "好的。",
                "还有吗？"
            ]
        );
    }

    /// Each sentence is found at its place in the whole text, whatever ends the lines.
    #[test]
    fn sentences_are_the_texts_own_slices_across_lines() {
        let text = "  first. second\r\n\nthird? 好。\n```\nskip. this\n```\n last ";
        assert_eq!(
            sentences(text),
            vec!["first.", "second", "third?", "好。", "last"]
        );
        let already = 0..0;
        let mut ranges = Vec::new();
        ranges.push(already);
        sentence_ranges(text, &mut ranges);
        assert_eq!(ranges.len(), 6, "appended after what was there");
        assert_eq!(&text[ranges[3].clone()], "third?");
    }

    /// The definition: every character looked at, with the one after it.
    fn split_by_characters(line: &str) -> Vec<&str> {
        fn push_sentence<'l>(s: &'l str, out: &mut Vec<&'l str>) {
            let s = s.trim();
            if !s.is_empty() {
                out.push(s);
            }
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let at_break = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
            if matches!(c, '。' | '！' | '？') || (matches!(c, '.' | '!' | '?') && at_break) {
                let end = i + c.len_utf8();
                push_sentence(&line[start..end], &mut out);
                start = end;
            }
        }
        push_sentence(&line[start..], &mut out);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Jumping between candidate bytes splits a line where reading every character does:
        /// stops next to each other, before and after every kind of whitespace (ASCII, NBSP,
        /// the ideographic space), and characters sharing a stop's lead byte (`・` is E3,
        /// `ｆ` is EF); and ASCII lines, which are searched with `memchr3`.
        #[test]
        fn a_line_splits_where_reading_every_character_splits_it(
            line in prop_oneof![
                "[a.!?。！？ \t\u{a0}\u{3000}・ｆé]{0,16}",
                "[a.!?, \t\x0b\x0c]{0,24}",
            ],
        ) {
            let mut fast = Vec::new();
            split_line_into_sentences(&line, 0, &mut fast);
            let fast: Vec<&str> = fast.into_iter().map(|r| &line[r]).collect();
            prop_assert_eq!(fast, split_by_characters(&line));
        }
    }
}
