//! The on-disk format: entries joined by a delimiter line holding a single `§`.
//!
//! The delimiter is the full `"\n§\n"`, not a bare `§`, so an entry may itself contain `§`
//! (and newlines) and still round-trip. Files have no trailing newline; readers tolerate one,
//! and surrounding whitespace of each entry is insignificant.
//!
//! Files edited by hand on Windows arrive with CRLF line ends and often a UTF-8 BOM. Both are
//! taken off before splitting ([`normalize`]), so such a file holds the same entries as its LF
//! twin (without this a CRLF file is one entry, and `remove` deletes every fact in it), and
//! [`LineStyle`] puts them back when the store rewrites the file.

use std::borrow::Cow;

/// What separates two entries in `MEMORY.md` / `USER.md`.
pub const ENTRY_DELIMITER: &str = "\n§\n";

const BOM: char = '\u{feff}';

/// `raw` without a leading BOM and with CRLF line ends turned into LF.
pub fn normalize(raw: &str) -> Cow<'_, str> {
    let text = raw.strip_prefix(BOM).unwrap_or(raw);
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// How a file spelled its line ends and whether it began with a BOM, so a rewrite keeps the
/// editor's conventions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineStyle {
    pub bom: bool,
    pub crlf: bool,
}

impl LineStyle {
    /// The style of `raw`: CRLF when any line ends in CRLF.
    pub fn of(raw: &str) -> LineStyle {
        LineStyle {
            bom: raw.starts_with(BOM),
            crlf: raw.contains("\r\n"),
        }
    }

    /// LF text (as [`join`] makes it) in this style.
    pub fn apply(self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 3);
        if self.bom {
            out.push(BOM);
        }
        if self.crlf {
            out.push_str(&text.replace('\n', "\r\n"));
        } else {
            out.push_str(text);
        }
        out
    }
}

/// Splits a file's text into entries: each trimmed, empty ones dropped, order kept. A BOM and
/// CRLF line ends are ignored.
pub fn parse(raw: &str) -> Vec<String> {
    normalize(raw)
        .split(ENTRY_DELIMITER)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// The file text for `entries` (empty for none).
pub fn join<S: AsRef<str>>(entries: &[S]) -> String {
    let mut out = String::new();
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(ENTRY_DELIMITER);
        }
        out.push_str(e.as_ref());
    }
    out
}

/// Drops exact repeats, keeping the first occurrence: duplicate adds are idempotent, and a
/// file edited by hand may repeat an entry.
pub fn dedupe(entries: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    entries
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect()
}

/// Whether writing `parse(raw)` back would reproduce `raw` up to insignificant whitespace.
/// When it would not (a hand edit left an empty entry, odd spacing around a delimiter…), the
/// store keeps a backup of the raw file before its first rewrite, so nothing is lost.
/// Line-end style and BOM are not content: the store writes them back as they were.
pub fn round_trips(raw: &str) -> bool {
    join(&parse(raw)) == normalize(raw).trim()
}

/// The first `max` characters of an entry, with `...` when cut: how candidates are shown.
pub fn preview(entry: &str, max: usize) -> String {
    let mut chars = entry.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_entry_may_contain_the_section_sign_and_newlines() {
        let entries = vec!["a § b".to_string(), "line 1\nline 2".to_string()];
        assert_eq!(parse(&join(&entries)), entries);
    }

    #[test]
    fn whitespace_and_empty_pieces_are_ignored_but_do_not_round_trip() {
        let raw = "  one \n§\n\n§\ntwo\n";
        assert_eq!(parse(raw), vec!["one", "two"]);
        assert!(!round_trips(raw));
        assert!(round_trips("one\n§\ntwo\n"));
    }

    #[test]
    fn crlf_and_bom_files_hold_the_same_entries_as_lf() {
        let lf = "one\n§\ntwo\nlines\n§\nthree";
        let crlf = lf.replace('\n', "\r\n");
        let bom = format!("\u{feff}{crlf}\r\n");
        assert_eq!(parse(&crlf), parse(lf));
        assert_eq!(parse(&bom), parse(lf));
        assert_eq!(parse(lf).len(), 3);
        assert!(round_trips(&crlf) && round_trips(&bom));
        let style = LineStyle::of(&bom);
        assert_eq!(
            style,
            LineStyle {
                bom: true,
                crlf: true
            }
        );
        assert_eq!(style.apply(&join(&parse(&bom))), bom.trim_end());
        assert_eq!(LineStyle::of(lf).apply(lf), lf);
    }

    #[test]
    fn dedupe_keeps_first_occurrence_in_order() {
        let v = vec!["b".into(), "a".into(), "b".into()];
        assert_eq!(dedupe(v), vec!["b", "a"]);
    }

    #[test]
    fn preview_counts_characters_not_bytes() {
        assert_eq!(preview("ééé", 2), "éé...");
        assert_eq!(preview("éé", 2), "éé");
    }

    proptest! {
        #[test]
        fn join_then_parse_is_identity_for_trimmed_entries(
            v in proptest::collection::vec("[a-z§ \n]{0,12}", 0..6)
        ) {
            let clean: Vec<String> = v.iter().map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && !s.contains(ENTRY_DELIMITER.trim())).collect();
            prop_assert_eq!(parse(&join(&clean)), clean);
        }
    }
}
