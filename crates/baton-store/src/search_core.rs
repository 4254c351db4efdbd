//! The part of search every backend shares: per-term hits normalised to (0, 1], the boolean
//! combination (AND = intersection, OR = union, NOT = difference) with ties to the newer
//! message, and snippets built as a window around the match. The SQLite search
//! ([`crate::search`]) and the PostgreSQL one (`baton-pg`) differ only in how they find each
//! term's candidates, so the same query ranks the same way on both.

use crate::query::{self, Route, Term};
use crate::snippet::{display_text_from, window_snippet};
use std::collections::{HashMap, HashSet};

/// Characters of context either side of a match in built snippets.
pub const SNIPPET_CONTEXT_CHARS: usize = 40;
/// At most this many bytes of one message are examined in Rust (snippet window, occurrence
/// counting, boundary checks). Work per message is then bounded whatever its size: a 50 MB
/// message of one repeated word costs the same as a 64 KiB one. A match beyond the window
/// still ranks the message (the index found it); its snippet is then the message's start.
pub const TEXT_SCAN_BYTES: usize = 64 * 1024;

/// How a term matched one message (drives the snippet).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Via {
    /// unicode61 match: use FTS5 `snippet()`.
    Fts,
    /// Substring match: build a char window around the needle.
    Window,
}

#[derive(Debug, Clone, Copy)]
pub struct TermHit {
    pub score: f64,
    pub via: Via,
}

pub type TermHits = HashMap<i64, TermHit>;

/// One group's terms: the positive terms with their hits, and the ids any negative term
/// matched.
pub struct GroupHits {
    pub must: Vec<(Term, TermHits)>,
    pub must_not: HashSet<i64>,
}

/// A ranked message: id, score, and the group that matched it best.
pub type Ranked = (i64, f64, usize);

/// Combines per-term hits by the query's boolean structure and ranks the result: score
/// descending, ties to the newer message (ids grow in append order); `offset`/`limit` applied.
pub fn rank(groups: &[GroupHits], offset: usize, limit: usize) -> Vec<Ranked> {
    // id -> (score, group index)
    let mut best: HashMap<i64, (f64, usize)> = HashMap::new();
    for (gi, group) in groups.iter().enumerate() {
        let Some(smallest) = group.must.iter().map(|(_, h)| h).min_by_key(|h| h.len()) else {
            continue;
        };
        for id in smallest.keys() {
            if group.must_not.contains(id) {
                continue;
            }
            let mut score = 0.0;
            let mut all = true;
            for (_, h) in &group.must {
                match h.get(id) {
                    Some(hit) => score += hit.score,
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            if all {
                let e = best.entry(*id).or_insert((score, gi));
                if score > e.0 {
                    *e = (score, gi);
                }
            }
        }
    }
    let mut ranked: Vec<Ranked> = best.into_iter().map(|(id, (s, g))| (id, s, g)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    ranked.into_iter().skip(offset).take(limit).collect()
}

pub struct Row {
    pub content: String,
    pub tool_name: String,
    pub tool_calls: String,
}

impl Row {
    /// The indexed text (same concatenation as the FTS triggers).
    /// Only the first [`TEXT_SCAN_BYTES`] of it, so per-message work is bounded.
    pub fn haystack(&self) -> String {
        let full = self.content.len() + self.tool_name.len() + self.tool_calls.len() + 2;
        if full <= TEXT_SCAN_BYTES {
            return format!("{} {} {}", self.content, self.tool_name, self.tool_calls);
        }
        let mut s = String::with_capacity(TEXT_SCAN_BYTES);
        for part in [
            self.content.as_str(),
            self.tool_name.as_str(),
            self.tool_calls.as_str(),
        ] {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(bounded_prefix(
                part,
                TEXT_SCAN_BYTES.saturating_sub(s.len()),
            ));
            if s.len() >= TEXT_SCAN_BYTES {
                break;
            }
        }
        s
    }
}

/// A snippet built in Rust: for a message with tool calls, a window over its readable text;
/// otherwise a window around the first matched term (or the message's start).
pub fn window_hit_snippet(id: i64, row: &Row, terms: &[(Term, TermHits)]) -> String {
    if !row.tool_calls.is_empty() {
        return call_snippet(id, row, terms);
    }
    let hay = row.haystack();
    for (t, h) in terms {
        if h.contains_key(&id)
            && let Some(range) = find_match(&hay, &t.text, None)
        {
            return window_snippet(&hay, range, SNIPPET_CONTEXT_CHARS);
        }
    }
    window_snippet(&hay, (0, 0), 2 * SNIPPET_CONTEXT_CHARS)
}

/// The snippet of a message with tool calls: a window over its readable text (content,
/// then each call as `name(key: value, ...)`), since the indexed text holds the calls as
/// raw JSON with escaped quotes. A word is looked for at a word boundary first.
fn call_snippet(id: i64, row: &Row, terms: &[(Term, TermHits)]) -> String {
    let text = display_text_from(
        &row.content,
        &row.tool_name,
        &row.tool_calls,
        TEXT_SCAN_BYTES,
    );
    let text = bounded_prefix(&text, TEXT_SCAN_BYTES);
    let matched = terms.iter().filter(|(_, h)| h.contains_key(&id));
    let bounded = matched.clone().find_map(|(t, _)| {
        (t.route() == Route::Word)
            .then(|| find_match(text, &t.text, Some(t.prefix)))
            .flatten()
    });
    let range = bounded.or_else(|| {
        matched
            .clone()
            .find_map(|(t, _)| find_match(text, &t.text, None))
    });
    match range {
        Some(range) => window_snippet(text, range, SNIPPET_CONTEXT_CHARS),
        None => window_snippet(text, (0, 0), 2 * SNIPPET_CONTEXT_CHARS),
    }
}

/// Normalise raw scores by their maximum and merge (keeping the best).
pub fn normalise_into(hits: &mut TermHits, raw: Vec<(i64, f64)>, weight: f64, via: Via) {
    let max = raw.iter().map(|r| r.1).fold(f64::MIN_POSITIVE, f64::max);
    for (id, s) in raw {
        let score = weight * (s.max(0.0) / max).clamp(0.05, 1.0);
        let e = hits.entry(id).or_insert(TermHit { score, via });
        if score > e.score {
            *e = TermHit { score, via };
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn bounded_prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    c.to_lowercase().next().unwrap_or(c)
}

/// Latin-word boundary: start/end of text, a non-alphanumeric char or CJK.
fn is_boundary(c: Option<&char>) -> bool {
    c.is_none_or(|&c| !c.is_alphanumeric() || query::is_cjk(c))
}

/// Each place `needle` (folded to `n`) starts in `hay`, case-insensitively, as
/// `(char index, folded char before, folded char after the match)`, in order. Streams over
/// `hay`: a hit's text can be a 64 KiB tool output, and folding it into a `Vec<char>` first
/// (4 bytes a character, per call) was most of a `sessions search` process.
fn matches<'a>(
    hay: &'a str,
    n: &'a [char],
) -> impl Iterator<Item = (usize, Option<char>, Option<char>)> + 'a {
    let mut prev: Option<char> = None;
    hay.char_indices()
        .enumerate()
        .filter_map(move |(ci, (bi, c))| {
            let fc = fold(c);
            let before = prev.replace(fc);
            if Some(&fc) != n.first() {
                return None;
            }
            let mut rest = hay[bi..].chars().map(fold);
            n.iter()
                .all(|want| rest.next() == Some(*want))
                .then(|| (ci, before, rest.next()))
        })
}

/// Case-insensitive search for `needle` in `hay`; returns a char range.
/// `bounded = Some(prefix)` requires a Latin-word boundary before the match
/// and (unless `prefix`) after it.
pub fn find_match(hay: &str, needle: &str, bounded: Option<bool>) -> Option<(usize, usize)> {
    if needle.is_ascii() && !folds_to_ascii_from_beyond(hay) {
        return find_ascii_match(hay, needle, bounded);
    }
    if is_caseless(needle) {
        return find_caseless_match(hay, needle, bounded);
    }
    find_by_folding(hay, needle, bounded)
}

/// Whether every char of `needle` is CJK, kana or hangul ([`query::is_cjk`]): scripts without
/// case, which no other char [`fold`]s to (`nothing_folds_into_the_caseless_scripts` checks
/// every char), so a case-insensitive match of such a needle is its exact bytes.
fn is_caseless(needle: &str) -> bool {
    !needle.is_empty() && needle.chars().all(query::is_cjk)
}

/// [`find_match`] for a caseless needle: a byte search, resumed one char after each place
/// the boundary check refuses. Folding every char of a CJK query's hits to find where to cut
/// their snippets was a tenth of a `sessions search` process for `確認しました`.
fn find_caseless_match(hay: &str, needle: &str, bounded: Option<bool>) -> Option<(usize, usize)> {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let bytes = hay.as_bytes();
    let first_len = needle.chars().next().map_or(1, char::len_utf8);
    let mut from = 0;
    while let Some(found) = finder.find(&bytes[from..]) {
        let at = from + found;
        let before = hay[..at].chars().next_back().map(fold);
        let after = hay[at + needle.len()..].chars().next().map(fold);
        if accepts(bounded, before.as_ref(), after.as_ref()) {
            let start = char_count(&bytes[..at]);
            return Some((start, start + needle.chars().count()));
        }
        from = at + first_len;
    }
    None
}

/// [`find_match`] by folding every char of `hay`: what any needle in any text needs.
fn find_by_folding(hay: &str, needle: &str, bounded: Option<bool>) -> Option<(usize, usize)> {
    let n: Vec<char> = needle.chars().map(fold).collect();
    if n.is_empty() {
        return None;
    }
    matches(hay, &n)
        .find(|(_, before, after)| accepts(bounded, before.as_ref(), after.as_ref()))
        .map(|(i, _, _)| (i, i + n.len()))
}

/// Whether the chars either side of a match satisfy `bounded` (see [`find_match`]).
fn accepts(bounded: Option<bool>, before: Option<&char>, after: Option<&char>) -> bool {
    match bounded {
        None => true,
        Some(prefix) => is_boundary(before) && (prefix || is_boundary(after)),
    }
}

/// Whether `hay` holds a non-ASCII char that [`fold`]s to an ASCII one (the Kelvin sign to
/// `k`, `İ` to `i`): only then can an ASCII needle match anything but ASCII bytes.
fn folds_to_ascii_from_beyond(hay: &str) -> bool {
    ['\u{212a}', '\u{130}'].iter().any(|c| {
        let mut buf = [0; 4];
        memchr::memmem::find(hay.as_bytes(), c.encode_utf8(&mut buf).as_bytes()).is_some()
    })
}

/// [`find_match`] for an ASCII needle in text where only ASCII bytes can match it: a byte
/// search for the needle's first letter in either case, then a comparison of the rest. Folding
/// every char of a 64 KiB tool output was the largest part of verifying and snippeting hits.
fn find_ascii_match(hay: &str, needle: &str, bounded: Option<bool>) -> Option<(usize, usize)> {
    let n = needle.as_bytes();
    let first = *n.first()?;
    let bytes = hay.as_bytes();
    memchr::memchr2_iter(
        first.to_ascii_lowercase(),
        first.to_ascii_uppercase(),
        bytes,
    )
    .filter(|&at| {
        bytes
            .get(at..at + n.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(n))
    })
    .find(|&at| {
        let before = hay[..at].chars().next_back().map(fold);
        let after = hay[at + n.len()..].chars().next().map(fold);
        accepts(bounded, before.as_ref(), after.as_ref())
    })
    .map(|at| {
        let start = char_count(&bytes[..at]);
        (start, start + n.len())
    })
}

/// Chars in valid UTF-8 `bytes`: the bytes that do not continue a char.
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// Scores for messages found by reading their text rather than through an index (`(id,
/// haystack)` of each): BM25's saturated, length-normalised term frequency of `needle`, the
/// length relative to the scanned messages' average.
pub fn scan_scores(scanned: &[(i64, String)], needle: &str) -> Vec<(i64, f64)> {
    let counted: Vec<(i64, f64, f64)> = scanned
        .iter()
        .map(|(id, hay)| {
            let tf = count_occurrences(hay, needle).max(1) as f64;
            (*id, tf, hay.chars().count() as f64)
        })
        .collect();
    let avg = if counted.is_empty() {
        1.0
    } else {
        counted.iter().map(|c| c.2).sum::<f64>() / counted.len() as f64
    }
    .max(1.0);
    let (k1, b) = (1.2, 0.75);
    counted
        .into_iter()
        .map(|(id, tf, len)| (id, tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg))))
        .collect()
}

/// Non-overlapping case-insensitive occurrences of `needle` in `hay`.
pub fn count_occurrences(hay: &str, needle: &str) -> usize {
    if is_caseless(needle) {
        return memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes()).count();
    }
    let n: Vec<char> = needle.chars().map(fold).collect();
    if n.is_empty() {
        return 0;
    }
    let mut next_free = 0;
    let mut count = 0;
    for (i, _, _) in matches(hay, &n) {
        if i >= next_free {
            count += 1;
            next_free = i + n.len();
        }
    }
    count
}

#[cfg(test)]
mod unit {
    use super::*;

    /// [`find_match`] (whichever path it takes) finds each needle where folding every char
    /// of the text does, with and without word boundaries.
    fn finds_what_folding_finds(hays: &[&str], needles: &[&str]) {
        for hay in hays {
            for needle in needles {
                for bounded in [None, Some(false), Some(true)] {
                    assert_eq!(
                        find_match(hay, needle, bounded),
                        find_by_folding(hay, needle, bounded),
                        "{needle:?} in {hay:?}, {bounded:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_ascii_path_finds_what_folding_every_char_finds() {
        let hays = [
            "Run cargo test, then CARGO TEST --all; cargotest is one word",
            "配置config_path文件 and Config then 数据cargo",
            "Ünïcödé before cargo: déjà vu, Cargo's test",
            "the \u{212a}elvin sign spells \u{212a}ey and İnput",
            "",
            "tests testing test",
            "a-b a_b ab",
        ];
        let needles = [
            "cargo", "test", "config", "key", "input", "a", "ab", "b a", "-", "é", "",
        ];
        finds_what_folding_finds(&hays, &needles);
        // The Kelvin sign folds to `k`: such text takes the folding path and still matches.
        assert_eq!(find_match("\u{212a}ey", "key", None), Some((0, 3)));
        assert_eq!(find_match("数据 Cargo", "cargo", Some(false)), Some((3, 8)));
    }

    /// What the caseless path rests on: the only char that folds to a CJK, kana or hangul
    /// char is that char itself.
    #[test]
    fn nothing_folds_into_the_caseless_scripts() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let f = fold(c);
            assert!(!query::is_cjk(f) || f == c, "{c:?} folds to {f:?}");
        }
    }

    #[test]
    fn the_caseless_path_finds_what_folding_every_char_finds() {
        let hays = [
            "確認しました。確認しましたか？確認",
            "abc確認def 確認 x確認",
            "ああああ あaあ",
            "用户配置 用户 USER用户user",
            "数据库数据 数 据",
            "",
            "Ünïcödé 確認 déjà",
            "한국어 한국 한",
        ];
        let needles = [
            "確認",
            "確認しました",
            "ああ",
            "あ",
            "用户",
            "数据",
            "한국",
            "数 据",
        ];
        finds_what_folding_finds(&hays, &needles);
        for hay in hays {
            for needle in needles {
                let n: Vec<char> = needle.chars().map(fold).collect();
                let mut next_free = 0;
                let folded_count = matches(hay, &n)
                    .filter(|(i, _, _)| {
                        let free = *i >= next_free;
                        if free {
                            next_free = i + n.len();
                        }
                        free
                    })
                    .count();
                assert_eq!(
                    count_occurrences(hay, needle),
                    folded_count,
                    "{needle:?} in {hay:?}"
                );
            }
        }
        // A refused place does not hide an overlapping later one.
        assert_eq!(find_match("aあああ", "ああ", Some(false)), Some((2, 4)));
        assert_eq!(
            find_by_folding("aあああ", "ああ", Some(false)),
            Some((2, 4))
        );
    }

    #[test]
    fn occurrences_are_counted_without_overlap_and_case_insensitively() {
        assert_eq!(count_occurrences("aaaa", "aa"), 2);
        assert_eq!(count_occurrences("Größe GRÖSSE größe", "größe"), 2);
        assert_eq!(count_occurrences("配置 配置文件", "配置"), 2);
        assert_eq!(count_occurrences("abc", ""), 0);
        assert_eq!(find_match("xx 用户配置", "用户", None), Some((3, 5)));
        assert_eq!(find_match("ab", "abc", None), None);
    }

    #[test]
    fn bounded_match_rejects_inner_latin_words() {
        assert!(find_match("配置config_path文件", "config_path", Some(false)).is_some());
        assert!(find_match("the deployment", "deploy", Some(false)).is_none());
        assert!(find_match("the deployment", "deploy", Some(true)).is_some());
        assert!(find_match("redeploy now", "deploy", Some(true)).is_none());
    }

    #[test]
    fn the_text_examined_per_message_is_bounded_and_char_safe() {
        let row = Row {
            content: "é".repeat(100_000),
            tool_name: "terminal".into(),
            tool_calls: "x".repeat(100_000),
        };
        let hay = row.haystack();
        assert!(hay.len() <= TEXT_SCAN_BYTES, "{}", hay.len());
        assert!(
            hay.len() > TEXT_SCAN_BYTES - 4,
            "the window is used, not dropped"
        );
        let small = Row {
            content: "a".into(),
            tool_name: "b".into(),
            tool_calls: "c".into(),
        };
        assert_eq!(small.haystack(), "a b c", "short rows are unchanged");
        assert_eq!(bounded_prefix("aé", 2), "a");
    }

    #[test]
    fn like_escape() {
        assert_eq!(crate::title::escape_like("a_b%c\\"), "a\\_b\\%c\\\\");
    }
}
