//! The text of a stub: values flattened onto one line and cut to a length, `...` marking a
//! cut. A stub is written for every old result a pass keeps, and most of what it quotes (a
//! command, a path) is ASCII: those are flattened and cut byte by byte, the rest char by char
//! (issue #17).

use crate::byte_scan::is_ascii_space;
use crate::truncate::char_start;

/// Whitespace runs (newlines included) collapsed to one space, so a value cannot break the stub
/// over several lines.
pub(super) fn flatten(text: &str) -> String {
    flatten_past(text, usize::MAX)
}

/// `cut_end(&flatten(text), max)`, flattening only as far as the cut needs: a command or an
/// argument can be a whole file, of which a stub shows a line.
pub(super) fn cut_flat_end(text: &str, max: usize) -> String {
    let mut flat = flatten_past(text, max);
    cut_end_in_place(&mut flat, max);
    flat
}

/// `cut_start(&flatten(text), max)`, cut in the flattened copy: a path is usually short
/// enough to be kept whole, and copying it a second time was one of a stub's allocations.
pub(super) fn cut_flat_start(text: &str, max: usize) -> String {
    let flat = flatten(text);
    if !crate::truncate::has_more_chars_than(&flat, max) {
        return flat;
    }
    cut_start(&flat, max)
}

/// [`flatten`], stopped at the first word that starts past `max` characters: what is kept
/// is the whole flattened text or more than `max` characters of it.
pub(super) fn flatten_past(text: &str, max: usize) -> String {
    flatten_ascii_past(text, max).unwrap_or_else(|| flatten_words_past(text, max))
}

/// [`flatten_past`] of a text that is ASCII as far as it is read, a run of bytes at a time;
/// `None` at the first other byte (Unicode has spaces of its own, which `flatten_words_past`
/// knows).
fn flatten_ascii_past(text: &str, max: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len().min(max.saturating_add(1)));
    let mut at = 0;
    loop {
        while bytes.get(at).copied().is_some_and(is_ascii_space) {
            at += 1;
        }
        // An ASCII text's characters are its bytes.
        if at == bytes.len() || out.len() > max {
            return Some(out);
        }
        let word = at;
        while let Some(&b) = bytes.get(at).filter(|&&b| !is_ascii_space(b)) {
            if !b.is_ascii() {
                return None;
            }
            at += 1;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&text[word..at]);
    }
}

/// [`flatten_past`] for any text, word by Unicode word.
fn flatten_words_past(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max.saturating_add(1)));
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars > max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        out.push_str(word);
        chars += word.chars().count();
    }
    out
}

/// A stub is one line even if a name or value smuggled in another control character; almost
/// none holds one, and a stub without one is kept as it is.
pub(super) fn make_one_line(text: &mut String) {
    // A control character's UTF-8 starts with a byte below 0x20, 0x7f, or 0xc2 (U+0080 to
    // U+009F): a text with none of those holds none, told without decoding it.
    let may_hold_control = text.bytes().any(|b| b < 0x20 || b == 0x7f || b == 0xc2);
    if may_hold_control && text.chars().any(char::is_control) {
        *text = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
    }
}

/// [`cut_end`] of a string the caller owns: cut where it lies.
pub(super) fn cut_end_in_place(text: &mut String, max: usize) {
    if let Some(end) = end_cut(text, max) {
        text.truncate(end);
        text.push_str("...");
    }
}

/// Where [`cut_end`] cuts `text` (a byte index, before the `...` it adds), or `None` when the
/// text has at most `max` characters and is kept whole.
pub(super) fn end_cut(text: &str, max: usize) -> Option<usize> {
    // `char_start` answers an ASCII start from its length, without decoding it.
    char_start(text, max)?;
    let keep = max.saturating_sub(3);
    Some(char_start(text, keep).unwrap_or(text.len()))
}

/// Keeps the first `max` characters, marking the cut with `...`.
pub(super) fn cut_end(text: &str, max: usize) -> String {
    match end_cut(text, max) {
        Some(end) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// Keeps the last `max` characters (where a path's file name is), marking the cut with `...`.
pub(super) fn cut_start(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let tail: String = text.chars().skip(total - max.saturating_sub(3)).collect();
    format!("...{tail}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `end_cut` as characters count it, for any text.
    fn end_cut_by_chars(text: &str, max: usize) -> Option<usize> {
        text.char_indices().nth(max)?;
        let keep = max.saturating_sub(3);
        Some(text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i))
    }

    proptest! {
        /// The byte-run flattening of an ASCII text is the word-by-word one; a text it does
        /// not read through is flattened word by word.
        #[test]
        fn ascii_flattening_is_word_flattening(
            text in "([a-z]{1,6}|[ \t\n\r]{1,3}|\u{b}|\u{c}|\u{1f}|\u{85}|\u{a0}|\u{3000}|é){0,40}",
            max in 0usize..40,
        ) {
            prop_assert_eq!(flatten_past(&text, max), flatten_words_past(&text, max));
            if text.is_ascii() {
                prop_assert!(flatten_ascii_past(&text, max).is_some());
            }
        }

        /// The cut found from ASCII bytes is the one counted in characters.
        #[test]
        fn an_ascii_cut_is_the_cut_counted_in_characters(
            text in "([a-z]{1,6}| |é|確認){0,30}",
            max in 0usize..40,
        ) {
            prop_assert_eq!(end_cut(&text, max), end_cut_by_chars(&text, max));
        }

        /// Flattening only up to the cut gives what flattening everything and cutting gives.
        #[test]
        fn cutting_while_flattening_is_cutting_the_flattened_text(
            text in "([a-z]{1,6}|[ \t\n]{1,3}|\u{3000}|確認|é){0,40}",
            max in 0usize..40,
        ) {
            prop_assert_eq!(cut_flat_end(&text, max), cut_end(&flatten(&text), max));
            prop_assert_eq!(cut_flat_start(&text, max), cut_start(&flatten(&text), max));
        }

        /// A stub made one line and cut in place is the one built anew each step.
        #[test]
        fn a_stub_changed_in_place_is_the_stub_built_anew(
            text in "([a-z]{1,6}| |\n|\r|\t|\u{0}|\u{85}|\u{7f}|確認|é|\u{1F600}){0,40}",
            max in 0usize..40,
        ) {
            let anew: String = text
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            let mut in_place = text.clone();
            make_one_line(&mut in_place);
            prop_assert_eq!(&in_place, &anew);
            cut_end_in_place(&mut in_place, max);
            prop_assert_eq!(in_place, cut_end(&anew, max));
        }
    }
}
