//! Supersession: a corrected fact replaces the wrong one instead of sitting next to it.
//!
//! Memory systems that only append end up holding both "timezone is PST" and "timezone is
//! EST", and the model has to guess which is current. Here `add` refuses a new entry that
//! duplicates or contradicts an existing one and shows that entry, so the agent uses
//! `replace`; and `replace` also retires near-copies of the entry it corrects.
//!
//! The comparison is lexical and deliberately cheap (it runs under the write lock on every
//! add): lower-cased word sets, Jaccard overlap, and a "subject" — the words before the first
//! copula or colon (`User's timezone` in `User's timezone is PST`).

use regex::Regex;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Word overlap at or above which two entries say the same thing.
pub const DUPLICATE_OVERLAP: f64 = 0.8;
/// Word overlap at or above which two entries with the same one-word subject conflict
/// ("User prefers tabs" / "User prefers spaces"). Subjects of two or more words, and keys
/// before a colon or `=`, conflict at any overlap ("User's timezone is PST" / "User's
/// timezone is EST", "editor: vim" / "editor: helix").
pub const SAME_SUBJECT_OVERLAP: f64 = 0.5;

/// How an existing entry relates to a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Nearly the same words: adding would store the fact twice.
    Duplicate,
    /// Same subject, different claim: one of them is out of date.
    Contradicts,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Duplicate => "duplicate",
            Relation::Contradicts => "same_subject",
        }
    }
}

/// An existing entry that a new one overlaps.
#[derive(Debug, Clone, PartialEq)]
pub struct Similar {
    pub index: usize,
    pub entry: String,
    pub relation: Relation,
    pub overlap: f64,
}

const STOPWORDS: &[&str] = &["the", "a", "an", "s", "my", "our", "their", "his", "her"];

static SUBJECT_END: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\s(is|are|was|were|uses|use|prefers|prefer|likes|lives|works|runs|has|have)\s|[:=]|\s(->|—|-)\s",
    )
    .ok()
});

/// Lower-cased words; each CJK character is its own word, since those scripts do not use
/// spaces.
pub fn words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut cur, &mut out);
            out.insert(c.to_string());
        } else if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn flush(cur: &mut String, out: &mut BTreeSet<String>) {
    if !cur.is_empty() {
        out.insert(std::mem::take(cur));
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Jaccard overlap of the two word sets (0 when both are empty).
pub fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The words before the first copula, colon or arrow, minus filler words, and whether they
/// name the subject unambiguously (two or more words, or a `key:` / `key =`); `None` when
/// the entry has no such split (then only the duplicate rule applies).
pub fn subject(text: &str) -> Option<(BTreeSet<String>, bool)> {
    let re = SUBJECT_END.as_ref()?;
    let m = re.find(text)?;
    let mut w = words(&text[..m.start()]);
    w.retain(|x| !STOPWORDS.contains(&x.as_str()));
    let keyed = matches!(m.as_str(), ":" | "=");
    let specific = keyed || w.len() >= 2;
    (!w.is_empty()).then_some((w, specific))
}

/// Whether two word sets say the same thing: high overlap and the same numbers. Numbers are
/// where near-identical entries differ in substance ("Postgres 16" / "Postgres 17",
/// "entry 0" / "entry 1"), and in short entries one number can be the only difference.
pub fn near_copy(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let numbers = |s: &BTreeSet<String>| -> Vec<String> {
        s.iter()
            .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
            .cloned()
            .collect()
    };
    overlap(a, b) >= DUPLICATE_OVERLAP && numbers(a) == numbers(b)
}

/// How `existing` relates to `new`, if at all.
pub fn relation(existing: &str, new: &str) -> Option<(Relation, f64)> {
    let (a, b) = (words(existing), words(new));
    let o = overlap(&a, &b);
    if near_copy(&a, &b) {
        return Some((Relation::Duplicate, o));
    }
    let (sa, sb) = (subject(existing)?, subject(new)?);
    let conflicts = sa.0 == sb.0 && ((sa.1 && sb.1) || o >= SAME_SUBJECT_OVERLAP);
    conflicts.then_some((Relation::Contradicts, o))
}

/// Entries that `new` would duplicate or contradict, in file order.
pub fn find_similar(entries: &[String], new: &str) -> Vec<Similar> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.as_str() != new)
        .filter_map(|(index, e)| {
            relation(e, new).map(|(relation, overlap)| Similar {
                index,
                entry: e.clone(),
                relation,
                overlap,
            })
        })
        .collect()
}

/// Indices (other than `skip`) of entries that are near-copies of `old`: when `old` is
/// corrected they are stale in the same way, and are retired with it.
pub fn near_copies(entries: &[String], old: &str, skip: usize) -> Vec<usize> {
    let old_words = words(old);
    entries
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != skip)
        .filter(|(_, e)| near_copy(&words(e), &old_words))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: &str, b: &str) -> Option<Relation> {
        relation(a, b).map(|(r, _)| r)
    }

    #[test]
    fn a_changed_value_for_the_same_subject_contradicts() {
        assert_eq!(
            rel("User's timezone is PST", "The user's timezone is EST"),
            Some(Relation::Contradicts)
        );
        assert_eq!(
            rel("User prefers tabs", "User prefers spaces"),
            Some(Relation::Contradicts)
        );
        assert_eq!(
            rel("editor: vim", "Editor: helix"),
            Some(Relation::Contradicts)
        );
    }

    #[test]
    fn rewording_is_a_duplicate() {
        assert_eq!(
            rel(
                "Project uses cargo nextest for tests",
                "project uses cargo-nextest for tests"
            ),
            Some(Relation::Duplicate)
        );
    }

    #[test]
    fn entries_that_differ_in_a_number_are_not_copies() {
        assert_eq!(rel("gen 0 entry 0 seed", "gen 0 entry 1 seed"), None);
        assert!(
            near_copies(
                &["gen 0 entry 0 seed".into(), "gen 0 entry 1 seed".into()],
                "gen 0 entry 0 seed",
                0
            )
            .is_empty()
        );
    }

    #[test]
    fn different_facts_are_unrelated() {
        assert_eq!(
            rel("User prefers tabs", "User prefers dark mode themes"),
            None
        );
        assert_eq!(rel("[p1-n3] checkpoint", "[p1-n4] checkpoint"), None);
        assert_eq!(rel("CI runs on Ubuntu", "Deploys go through Fly.io"), None);
    }

    #[test]
    fn cjk_text_is_compared_per_character() {
        assert_eq!(
            rel("用户的时区是北京时间", "用户的时区是北京时间。"),
            Some(Relation::Duplicate)
        );
    }
}
