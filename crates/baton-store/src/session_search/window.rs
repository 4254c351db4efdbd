//! Choosing which part of a long transcript a summarizer reads.
//!
//! A recalled session can be far longer than a summarizer's context, and the part the agent
//! asked about may sit anywhere in it. The window is placed on the strongest evidence first: the
//! query as a whole phrase, then the spot where most of its terms occur close together, then the
//! first place any term occurs; only with no match at all does it fall back to the start.
//!
//! Matching folds case one character at a time and only where the folded character has the same
//! UTF-8 length, so byte offsets found in the folded text are char boundaries of the original:
//! CJK, kana and any other script can never cause a slice inside a character.

use crate::query;
use serde::Serialize;
use std::ops::Range;

/// Terms this close (in chars) count as occurring together.
pub const PROXIMITY_CHARS: usize = 300;
/// How far (in bytes) a cut edge may move to land on a line break.
const SNAP_BYTES: usize = 400;
/// Opens a window that does not start at the beginning of the transcript.
pub const EARLIER_MARKER: &str = "...[earlier conversation omitted]...\n\n";
/// Closes a window that does not reach the end of the transcript.
pub const LATER_MARKER: &str = "\n\n...[later conversation omitted]...";

/// Which evidence placed a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorKind {
    /// The whole query occurs as written.
    Phrase,
    /// Several distinct query terms occur within [`PROXIMITY_CHARS`] of each other.
    Proximity,
    /// One term occurs (its first occurrence).
    Term,
    /// Nothing matched; the window starts at the beginning.
    Start,
}

/// Where a window is centred: a byte offset (a char boundary) into the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub byte: usize,
    pub kind: AnchorKind,
}

/// What to look for, case-folded: the query as a phrase (when it is one conjunction) and its
/// distinct positive terms. Negated terms are never looked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Needles {
    pub phrase: Option<String>,
    pub terms: Vec<String>,
}

impl Needles {
    /// Reads the query with the same sanitizer as the search, so quoting, prefixes (`deploy*`)
    /// and `OR` mean the same thing here as they did when the session was found.
    pub fn from_query(query: &str) -> Needles {
        let parsed = query::parse(query);
        let mut terms: Vec<String> = Vec::new();
        for term in parsed.groups.iter().flat_map(|g| &g.must) {
            let folded = fold(term.text.trim());
            if !folded.is_empty() && !terms.contains(&folded) {
                terms.push(folded);
            }
        }
        let phrase = match parsed.groups.as_slice() {
            [only] => {
                let words: Vec<&str> = only.must.iter().map(|t| t.text.trim()).collect();
                Some(fold(&words.join(" "))).filter(|p| !p.is_empty())
            }
            _ => None,
        };
        Needles { phrase, terms }
    }
}

/// A cut of the transcript no longer than the budget it was cut for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The excerpt, with [`EARLIER_MARKER`] / [`LATER_MARKER`] where it was cut.
    pub text: String,
    /// The bytes of the transcript the excerpt shows.
    pub range: Range<usize>,
    pub anchor: Anchor,
}

/// At most `max_chars` chars of `text` (markers included, when the budget holds them and a char),
/// placed around the best match: a quarter of the budget before it, the rest after, shifted
/// back inside the text at either end.
pub fn cut(text: &str, needles: &Needles, max_chars: usize) -> Window {
    let total = text.chars().count();
    if total <= max_chars {
        return Window {
            text: text.to_string(),
            range: 0..text.len(),
            anchor: find_anchor(text, needles, max_chars),
        };
    }
    let markers = EARLIER_MARKER.chars().count() + LATER_MARKER.chars().count();
    let content_chars = max_chars.saturating_sub(markers).max(1);
    let anchor = find_anchor(text, needles, content_chars);
    let range = snap_to_lines(
        text,
        window_range(text, anchor.byte, content_chars),
        anchor.byte,
    );
    let mut out = String::with_capacity(range.len() + markers);
    if range.start > 0 {
        out.push_str(EARLIER_MARKER);
    }
    out.push_str(&text[range.clone()]);
    if range.end < text.len() {
        out.push_str(LATER_MARKER);
    }
    Window {
        text: out,
        range,
        anchor,
    }
}

/// The best place to centre a window of `window_chars`, by the priority in the module docs.
pub fn find_anchor(text: &str, needles: &Needles, window_chars: usize) -> Anchor {
    let folded = fold(text);
    if let Some(phrase) = &needles.phrase {
        let bytes = occurrences(&folded, phrase);
        if !bytes.is_empty() {
            let chars = char_offsets(text, &bytes);
            let best = densest(&chars, chars_in(text), window_chars);
            return Anchor {
                byte: bytes[best],
                kind: AnchorKind::Phrase,
            };
        }
    }
    let per_term: Vec<Vec<usize>> = needles
        .terms
        .iter()
        .map(|t| occurrences(&folded, t))
        .collect();
    if needles.terms.len() > 1
        && let Some(byte) = closest_cluster(text, &per_term)
    {
        return Anchor {
            byte,
            kind: AnchorKind::Proximity,
        };
    }
    match per_term.iter().filter_map(|b| b.first().copied()).min() {
        Some(byte) => Anchor {
            byte,
            kind: AnchorKind::Term,
        },
        None => Anchor {
            byte: 0,
            kind: AnchorKind::Start,
        },
    }
}

/// Byte range of at most `max_chars` chars around `anchor_byte`.
pub fn window_range(text: &str, anchor_byte: usize, max_chars: usize) -> Range<usize> {
    let anchor_byte = text.floor_char_boundary(anchor_byte);
    let total = chars_in(text);
    let anchor = text[..anchor_byte].chars().count();
    let (start, end) = place(anchor, total, max_chars);
    byte_of_char(text, start)..byte_of_char(text, end)
}

/// Moves cut edges that fall inside a line to the nearest line break inside the window, when
/// one is close and the anchor stays inside, so the excerpt opens on a `[ROLE]:` label rather
/// than mid-sentence. Only ever shrinks the range.
fn snap_to_lines(text: &str, range: Range<usize>, anchor: usize) -> Range<usize> {
    let mut start = range.start;
    if start > 0 && text.as_bytes().get(start - 1) != Some(&b'\n') {
        let limit = text.floor_char_boundary((start + SNAP_BYTES).min(anchor).min(range.end));
        if let Some(i) = text[start..limit].find('\n') {
            start += i + 1;
        }
    }
    let mut end = range.end;
    if end < text.len() && text.as_bytes().get(end) != Some(&b'\n') {
        let limit = end.saturating_sub(SNAP_BYTES).max(anchor).max(start);
        let limit = text.ceil_char_boundary(limit);
        if let Some(i) = text[limit..end].rfind('\n') {
            end = limit + i;
        }
    }
    start..end
}

/// Char span `[start, end)` of a window: 25 % before `anchor`, the rest after, kept inside
/// `[0, total)` by shifting rather than shrinking.
fn place(anchor: usize, total: usize, max_chars: usize) -> (usize, usize) {
    let start = anchor.saturating_sub(max_chars / 4);
    let end = (start + max_chars).min(total);
    (end.saturating_sub(max_chars), end)
}

/// Index into `positions` (sorted char offsets) whose window covers the most positions; the
/// earliest wins a tie, so the choice is deterministic.
fn densest(positions: &[usize], total: usize, window_chars: usize) -> usize {
    let mut best = (0, 0);
    for (i, &p) in positions.iter().enumerate() {
        let (start, end) = place(p, total, window_chars);
        let lo = positions.partition_point(|&q| q < start);
        let hi = positions.partition_point(|&q| q < end);
        if hi - lo > best.1 {
            best = (i, hi - lo);
        }
    }
    best.0
}

/// Byte offset of the earliest span of at most [`PROXIMITY_CHARS`] holding the most distinct
/// terms, when that is at least two.
fn closest_cluster(text: &str, per_term: &[Vec<usize>]) -> Option<usize> {
    let mut all: Vec<(usize, usize)> = per_term
        .iter()
        .enumerate()
        .flat_map(|(term, bytes)| bytes.iter().map(move |&b| (b, term)))
        .collect();
    all.sort_unstable();
    let bytes: Vec<usize> = all.iter().map(|&(b, _)| b).collect();
    let chars = char_offsets(text, &bytes);
    let mut counts = vec![0usize; per_term.len()];
    let (mut distinct, mut left) = (0, 0);
    let mut best: Option<(usize, usize)> = None;
    for right in 0..all.len() {
        if counts[all[right].1] == 0 {
            distinct += 1;
        }
        counts[all[right].1] += 1;
        while chars[right] - chars[left] > PROXIMITY_CHARS {
            counts[all[left].1] -= 1;
            if counts[all[left].1] == 0 {
                distinct -= 1;
            }
            left += 1;
        }
        if distinct >= 2 && best.is_none_or(|(_, d)| distinct > d) {
            best = Some((bytes[left], distinct));
        }
    }
    best.map(|(byte, _)| byte)
}

/// Lower-cases `text` without changing any char's byte length, so offsets carry over.
pub fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) if l.len_utf8() == c.len_utf8() => l,
                _ => c,
            }
        })
        .collect()
}

/// Byte offsets of the non-overlapping occurrences of `needle` in `hay`.
fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    hay.match_indices(needle).map(|(i, _)| i).collect()
}

/// Char offsets of sorted byte offsets (each a char boundary), in one pass over the text.
fn char_offsets(text: &str, sorted_bytes: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(sorted_bytes.len());
    let mut chars = text.char_indices().map(|(b, _)| b).enumerate().peekable();
    for &target in sorted_bytes {
        while let Some(&(_, b)) = chars.peek() {
            if b >= target {
                break;
            }
            chars.next();
        }
        out.push(chars.peek().map_or_else(|| chars_in(text), |&(i, _)| i));
    }
    out
}

fn chars_in(text: &str) -> usize {
    text.chars().count()
}

fn byte_of_char(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(b, _)| b)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn filler(n: usize) -> String {
        "lorem ipsum dolor sit amet. ".repeat(n / 28 + 1)[..n].to_string()
    }

    #[test]
    fn short_text_is_kept_whole() {
        let w = cut("hello world", &Needles::from_query("world"), 100);
        assert_eq!(w.text, "hello world");
        assert_eq!(w.range, 0..11);
        assert_eq!(w.anchor.kind, AnchorKind::Phrase);
    }

    #[test]
    fn phrase_match_deep_in_text_is_inside_the_window() {
        let text = format!(
            "{}The Docker Networking bridge broke.{}",
            filler(50_000),
            filler(50_000)
        );
        let w = cut(&text, &Needles::from_query("docker networking"), 5_000);
        assert_eq!(w.anchor.kind, AnchorKind::Phrase);
        assert!(w.text.contains("The Docker Networking bridge broke."));
        assert!(w.text.chars().count() <= 5_000);
        assert!(w.text.starts_with(EARLIER_MARKER));
        assert!(w.text.ends_with(LATER_MARKER));
    }

    #[test]
    fn cut_edges_land_on_line_breaks_when_one_is_close() {
        let lines: Vec<String> = (0..2_000)
            .map(|i| format!("[USER]: line {i:04} of the log"))
            .collect();
        let mut text = lines.join("\n");
        text.push_str("\n[ASSISTANT]: the needle is here\n");
        text.push_str(&lines.join("\n"));
        let w = cut(&text, &Needles::from_query("needle"), 3_000);
        let body = w.text.strip_prefix(EARLIER_MARKER).unwrap();
        let body = body.strip_suffix(LATER_MARKER).unwrap();
        assert!(body.starts_with("[USER]: line "), "{}", &body[..40]);
        assert!(
            body.ends_with(" of the log"),
            "{}",
            &body[body.len() - 40..]
        );
        assert!(body.contains("the needle is here"));
        assert!(w.text.chars().count() <= 3_000);
    }

    #[test]
    fn the_densest_phrase_cluster_wins() {
        let text = format!(
            "alpha beta {} alpha beta alpha beta alpha beta {}",
            filler(20_000),
            filler(20_000)
        );
        let w = cut(&text, &Needles::from_query("alpha beta"), 2_000);
        assert_eq!(w.anchor.kind, AnchorKind::Phrase);
        assert_eq!(w.text.matches("alpha beta").count(), 3);
    }

    #[test]
    fn proximity_beats_a_lone_early_term() {
        let text = format!(
            "{} nginx alone here {} nginx proxy timeout together {}",
            filler(1_000),
            filler(30_000),
            filler(30_000)
        );
        let needles = Needles::from_query("nginx timeout");
        let w = cut(&text, &needles, 3_000);
        assert_eq!(w.anchor.kind, AnchorKind::Proximity);
        assert!(w.text.contains("nginx proxy timeout together"));
        assert!(!w.text.contains("nginx alone here"));
    }

    #[test]
    fn terms_far_apart_fall_back_to_the_first_term() {
        let text = format!(
            "{} redis first {} postgres later {}",
            filler(10_000),
            filler(10_000),
            filler(10_000)
        );
        let w = cut(&text, &Needles::from_query("redis postgres"), 2_000);
        assert_eq!(w.anchor.kind, AnchorKind::Term);
        assert!(w.text.contains("redis first"));
    }

    #[test]
    fn no_match_starts_at_the_beginning() {
        let text = filler(10_000);
        let w = cut(&text, &Needles::from_query("kubernetes"), 1_000);
        assert_eq!(w.anchor.kind, AnchorKind::Start);
        assert_eq!(w.range.start, 0);
        assert!(!w.text.starts_with(EARLIER_MARKER));
        assert!(w.text.ends_with(LATER_MARKER));
        assert!(w.text.chars().count() <= 1_000);
    }

    #[test]
    fn matching_ignores_case() {
        let text = format!("{}ERROR: Disk Full{}", filler(5_000), filler(5_000));
        let w = cut(&text, &Needles::from_query("disk full"), 500);
        assert_eq!(w.anchor.kind, AnchorKind::Phrase);
        assert!(w.text.contains("ERROR: Disk Full"));
    }

    #[test]
    fn cjk_windows_cut_on_char_boundaries() {
        let before = "这是一个很长的对话内容。".repeat(2_000);
        let after = "後で続く日本語のテキストです。".repeat(2_000);
        let text = format!("{before}我们修改了用户配置文件{after}");
        for (q, expect) in [
            ("用户配置", AnchorKind::Phrase),
            ("配置 用户", AnchorKind::Proximity),
            ("日本語のテキスト", AnchorKind::Phrase),
        ] {
            for budget in [97, 500, 1_001] {
                let w = cut(&text, &Needles::from_query(q), budget);
                assert_eq!(w.anchor.kind, expect, "{q}");
                assert!(w.text.chars().count() <= budget, "{q} {budget}");
                assert!(text.is_char_boundary(w.range.start));
                assert!(text.is_char_boundary(w.range.end));
            }
        }
        let w = cut(&text, &Needles::from_query("用户配置"), 500);
        assert!(w.text.contains("我们修改了用户配置文件"));
    }

    #[test]
    fn folding_keeps_byte_offsets() {
        for s in ["İstanbul ΣΊΣΥΦΟΣ", "Kelvin \u{212A} ẞ", "ÄÖÜ 配置 ＡＢＣ"] {
            assert_eq!(fold(s).len(), s.len(), "{s}");
        }
    }

    #[test]
    fn every_budget_and_offset_is_safe() {
        let text = "a配b置c用d户ｅ".repeat(50);
        for budget in 0..60 {
            let w = cut(&text, &Needles::from_query("用d户"), budget);
            assert!(text.is_char_boundary(w.range.start));
        }
        let mixed = "[USER]: 配置\n😀 Ünïcode ＡＢＣ\n[TOOL:grep]: 用户 配置 x\n".repeat(300);
        let markers = EARLIER_MARKER.chars().count() + LATER_MARKER.chars().count();
        for query in ["配置", "用户 配置", "ünïcode", "abc", "x 😀", "absent"] {
            for budget in (markers + 1..markers + 400).step_by(7) {
                let w = cut(&mixed, &Needles::from_query(query), budget);
                assert!(mixed.is_char_boundary(w.range.start), "{query} {budget}");
                assert!(mixed.is_char_boundary(w.range.end), "{query} {budget}");
                assert!(w.text.chars().count() <= budget, "{query} {budget}");
            }
        }
        for byte in 0..text.len() {
            let r = window_range(&text, byte, 7);
            assert!(text[r].chars().count() <= 7);
        }
    }
}
