//! o200k_base counting of ASCII text without the regex: the pre-tokenizer (the pattern that
//! splits text into pieces before byte-pair merging) written out as a byte scan.
//!
//! Why: in tiktoken-rs the pattern runs on `fancy-regex` (it has a look-ahead), and on the
//! shared trajectory input that engine was ~40% of all the time spent counting (`perf
//! record` of `baton trajectories compress`). For ASCII text, where every class in the
//! pattern is a byte range, the pattern's leftmost-first semantics with backtracking reduce
//! to the few cases of [`piece_end`]. Anything else (non-ASCII text, a piece long enough
//! for tiktoken's heap-based merge) returns `None` and goes to tiktoken, so counts are
//! identical by construction where this declines, and identical by test where it answers
//! (`tokens.rs` tests compare both on generated text and on the shared corpus).
//!
//! The pattern, alternatives tried in order at each position:
//!
//! ```text
//! 1. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! 2. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! 3. \p{N}{1,3}
//! 4.  ?[^\s\p{L}\p{N}]+[\r\n/]*
//! 5. \s*[\r\n]+
//! 6. \s+(?!\S)
//! 7. \s+
//! ```

use rustc_hash::FxHashMap;
use std::sync::OnceLock;
use tiktoken_rs::Rank;

/// Pieces this long or longer go to tiktoken: `byte_pair_split` merges in quadratic time,
/// tiktoken's own encoder switches to a heap from 100 bytes.
const LONGEST_PIECE: usize = 100;

/// One past the highest o200k_base rank (special tokens included; gaps decode to errors).
const RANK_END: Rank = 200_019;

/// o200k_base's ranks by token bytes, read back from tiktoken's tables once per process
/// (~200,000 decodes of a `CoreBPE` built for the purpose and dropped, so its tables are not
/// kept beside the counting threads' own). Special tokens' texts are among the keys,
/// harmlessly: no piece the pattern yields holds `<|` and a letter together. `None` if the
/// tables failed to load (never for the built-in ones): tiktoken counts everything then.
fn ranks() -> Option<&'static FxHashMap<Vec<u8>, Rank>> {
    static RANKS: OnceLock<Option<FxHashMap<Vec<u8>, Rank>>> = OnceLock::new();
    RANKS
        .get_or_init(|| {
            let bpe = tiktoken_rs::o200k_base().ok()?;
            let mut ranks = FxHashMap::default();
            ranks.reserve(RANK_END as usize);
            for rank in 0..RANK_END {
                if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
                    ranks.insert(bytes, rank);
                }
            }
            Some(ranks)
        })
        .as_ref()
}

/// o200k_base's token count of `text` when it is ASCII and every piece is shorter than
/// [`LONGEST_PIECE`]; `None` for tiktoken to count.
pub(super) fn count(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !bytes.is_ascii() {
        return None;
    }
    let ranks = ranks()?;
    let mut total = 0;
    let mut at = 0;
    while at < bytes.len() {
        let end = piece_end(bytes, at);
        let piece = &bytes[at..end];
        total += match piece.len() {
            // Every byte is a token of its own.
            1 => 1,
            n if n >= LONGEST_PIECE => return None,
            _ if ranks.contains_key(piece) => 1,
            _ => tiktoken_rs::byte_pair_split(piece, ranks).len(),
        };
        at = end;
    }
    Some(total)
}

/// o200k_base's token count of any `text`: its ASCII lines by [`count`], the others (and any
/// line [`count`] declines) by `tiktoken`. One non-ASCII character (a dash, an accent) then
/// costs tiktoken its line, not the whole text.
pub(super) fn count_by_line(text: &str, mut tiktoken: impl FnMut(&str) -> usize) -> usize {
    if text.is_ascii() {
        return count(text).unwrap_or_else(|| tiktoken(text));
    }
    let mut total = 0;
    let mut start = 0;
    for cut in piece_safe_line_starts(text).chain(std::iter::once(text.len())) {
        let line = &text[start..cut];
        total += count(line).unwrap_or_else(|| tiktoken(line));
        start = cut;
    }
    total
}

/// Starts of lines where the pattern always starts a piece, so the text can be counted line
/// by line: after a newline, at a character that is neither whitespace (a whitespace run
/// would carry on to a later newline, alternative 5) nor `/` (which alternative 4 takes
/// after a symbol's newlines). No alternative looks behind, and no piece holding a newline
/// goes past the newline otherwise.
fn piece_safe_line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .filter(move |&next| {
            text[next..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && c != '/')
        })
}

fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

/// `\s`: Unicode White_Space, whose ASCII members are these six.
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

fn is_newline(b: u8) -> bool {
    matches!(b, b'\r' | b'\n')
}

/// `[^\r\n\p{L}\p{N}]`: the optional byte before a word.
fn is_word_prefix(b: u8) -> bool {
    !is_letter(b) && !b.is_ascii_digit() && !is_newline(b)
}

/// `[^\s\p{L}\p{N}]`: punctuation, symbols and control bytes.
fn is_symbol(b: u8) -> bool {
    !is_space(b) && !is_letter(b) && !b.is_ascii_digit()
}

/// The first index at or after `from` where `keep` fails.
fn run_end(t: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    t[from..]
        .iter()
        .position(|&b| !keep(b))
        .map_or(t.len(), |n| from + n)
}

/// Where the piece starting at `at` (< `t.len()`) ends.
fn piece_end(t: &[u8], at: usize) -> usize {
    let c = t[at];
    // 1, 2: a word, with one non-letter, non-digit, non-newline byte before it. In ASCII the
    // upper and lower classes are disjoint, so both alternatives end where the capitals and
    // then the small letters end; either matches as soon as the word has a letter.
    let word = if is_letter(c) {
        Some(at)
    } else if is_word_prefix(c) && t.get(at + 1).is_some_and(|&b| is_letter(b)) {
        Some(at + 1)
    } else {
        None
    };
    if let Some(start) = word {
        let upper_end = run_end(t, start, |b| b.is_ascii_uppercase());
        let end = run_end(t, upper_end, |b| b.is_ascii_lowercase());
        return end + contraction_len(&t[end..]);
    }
    // 3: up to three digits.
    if c.is_ascii_digit() {
        return run_end(t, at, |b| b.is_ascii_digit()).min(at + 3);
    }
    // 4: symbols, after at most one space, and the newlines or slashes after them.
    let symbols = if is_symbol(c) {
        Some(at)
    } else if c == b' ' && t.get(at + 1).is_some_and(|&b| is_symbol(b)) {
        Some(at + 1)
    } else {
        None
    };
    if let Some(start) = symbols {
        let end = run_end(t, start, is_symbol);
        return run_end(t, end, |b| is_newline(b) || b == b'/');
    }
    // Whitespace from here on (every other byte was taken above).
    let spaces_end = run_end(t, at, is_space);
    // 5: whitespace through its last newline.
    if let Some(last) = t[at..spaces_end].iter().rposition(|&b| is_newline(b)) {
        return at + last + 1;
    }
    // 6: whitespace not followed by a non-space: all of it at the end of the text, else all
    // but the last byte (which goes with the word after it) when that leaves some.
    if spaces_end == t.len() || spaces_end - at >= 2 {
        return if spaces_end == t.len() {
            spaces_end
        } else {
            spaces_end - 1
        };
    }
    // 7: the whitespace.
    spaces_end
}

/// Length of the contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any case) at the
/// start of `rest`, 0 if none.
fn contraction_len(rest: &[u8]) -> usize {
    let lower = |i: usize| rest.get(i).map(u8::to_ascii_lowercase);
    if rest.first() != Some(&b'\'') {
        return 0;
    }
    match (lower(1), lower(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let t = text.as_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while at < t.len() {
            let end = piece_end(t, at);
            out.push(&text[at..end]);
            at = end;
        }
        out
    }

    #[test]
    fn text_splits_where_the_o200k_pattern_splits_it() {
        assert_eq!(pieces("Hello world"), ["Hello", " world"]);
        assert_eq!(pieces("don't WE'LL"), ["don't", " WE'LL"]);
        assert_eq!(pieces("HTTPServer"), ["HTTPServer"]);
        assert_eq!(pieces("12345"), ["123", "45"]);
        assert_eq!(pieces("a  b"), ["a", " ", " b"]);
        assert_eq!(pieces("x \n\n  y"), ["x", " \n\n", " ", " y"]);
        assert_eq!(pieces("f(x) // ok\n"), ["f", "(x", ")", " //", " ok", "\n"]);
        assert_eq!(pieces("end  "), ["end", "  "]);
        assert_eq!(pieces(" 42"), [" ", "42"]);
        assert_eq!(pieces("\tword"), ["\tword"]);
    }

    #[test]
    fn lines_are_cut_only_where_a_piece_must_start() {
        let starts: Vec<usize> = piece_safe_line_starts("a\nb\n c\n/d\n\ne\n\u{a0}f\n").collect();
        // After `a\n` (b), after `\n\n` (e); not before a space, `/`, another newline or NBSP.
        assert_eq!(starts, [2, 11]);
    }

    #[test]
    fn non_ascii_text_and_long_pieces_are_left_to_tiktoken() {
        assert_eq!(count("naïve"), None);
        assert_eq!(count(&" ".repeat(LONGEST_PIECE)), None);
        assert!(count("plain words").is_some());
    }
}
