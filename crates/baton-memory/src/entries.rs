//! The on-disk format: entries joined by a delimiter line holding a single `§`.
//!
//! The delimiter is the full `"\n§\n"`, not a bare `§`, so an entry may itself contain `§`
//! (and newlines) and still round-trip. Files have no trailing newline; readers tolerate one,
//! and surrounding whitespace of each entry is insignificant.

/// What separates two entries in `MEMORY.md` / `USER.md`.
pub const ENTRY_DELIMITER: &str = "\n§\n";

/// Splits a file's text into entries: each trimmed, empty ones dropped, order kept.
pub fn parse(raw: &str) -> Vec<String> {
    raw.split(ENTRY_DELIMITER)
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
pub fn round_trips(raw: &str) -> bool {
    join(&parse(raw)) == raw.trim()
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
