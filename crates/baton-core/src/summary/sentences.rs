//! Prose split into sentences: a request's constraints, decisions and questions are read one
//! sentence at a time, by the ledger and by the extractive summary.

/// Splits prose into sentences: at newlines, at CJK full stops, and at `.`/`!`/`?` followed by
/// whitespace or the end (so `main.rs` and `?q=1` stay whole). Fenced code is skipped.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            split_line_into_sentences(line, &mut out);
        }
    }
    out
}

/// The sentences of one line, found by jumping between the bytes that can end one (`.`, `!`,
/// `?` and the lead byte of `。`, `！`, `？`) rather than decoding every character: every user
/// request of a long span is split, and the character walk was a twentieth of summarizing
/// `synth_10k` (`perf record`, issue #17).
fn split_line_into_sentences(line: &str, out: &mut Vec<String>) {
    let bytes = line.as_bytes();
    let (mut start, mut at) = (0, 0);
    while let Some(found) = bytes[at..].iter().position(|&b| may_end_sentence(b)) {
        // An ASCII byte or a lead byte: a character boundary either way.
        let i = at + found;
        match sentence_end_at(line, i) {
            Some(end) => {
                push_sentence(&line[start..end], out);
                (start, at) = (end, end);
            }
            None => at = i + 1,
        }
    }
    push_sentence(&line[start..], out);
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

fn push_sentence(sentence: &str, out: &mut Vec<String>) {
    let s = sentence.trim();
    if !s.is_empty() {
        out.push(s.to_string());
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

    /// The definition: every character looked at, with the one after it.
    fn split_by_characters(line: &str) -> Vec<String> {
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
        /// `ｆ` is EF).
        #[test]
        fn a_line_splits_where_reading_every_character_splits_it(
            line in "[a.!?。！？ \t\u{a0}\u{3000}・ｆé]{0,16}",
        ) {
            let mut fast = Vec::new();
            split_line_into_sentences(&line, &mut fast);
            prop_assert_eq!(fast, split_by_characters(&line));
        }
    }
}
