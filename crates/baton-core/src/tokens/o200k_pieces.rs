//! o200k_base counting without the regex: the pre-tokenizer (the pattern that splits text
//! into pieces before byte-pair merging) written out as a scan over character classes.
//!
//! Why: in tiktoken-rs the pattern runs on `fancy-regex` (it has a look-ahead), and that
//! engine was ~40% of all counting time (`perf record` of `baton trajectories compress`).
//! The pattern's leftmost-first alternation with backtracking reduces to the few cases of
//! [`piece_end`] once each character is put in one of seven classes ([`Class`]). The classes
//! come from the `regex` crate's own Unicode tables (the same `regex-syntax` tiktoken's engine
//! uses), so a character is classed exactly as the pattern classes it; ASCII is classed by
//! a `match`, other characters once per thread. The pieces are merged by [`super::byte_pair`]
//! with the embedded rank table ([`super::o200k_ranks`]). Counts are tested identical to
//! tiktoken's (`baton-core/tests/o200k_exact.rs`: generated text over every class, and all
//! strings of the shared corpus).
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

use super::byte_pair::{self, LONG_PIECE};
use super::o200k_ranks::Ranks;
use regex::Regex;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::OnceLock;

/// o200k_base's token count of `text`.
pub(super) fn count(text: &str) -> usize {
    let ranks = Ranks::get();
    // This thread's buffers, reused: a text's classes and offsets would otherwise be three
    // allocations per message counted.
    thread_local! {
        static BUFFERS: RefCell<Text> = const { RefCell::new(Text::empty()) };
    }
    BUFFERS
        .try_with(|buffers| match buffers.try_borrow_mut() {
            Ok(mut t) => {
                t.fill(text);
                count_pieces(&t, text, ranks)
            }
            Err(_) => count_pieces(&Text::new(text), text, ranks),
        })
        .unwrap_or_else(|_| count_pieces(&Text::new(text), text, ranks))
}

/// Tokens of the pieces of `text` (classed in `t`).
fn count_pieces(t: &Text, text: &str, ranks: &Ranks) -> usize {
    let mut total = 0;
    let mut at = 0;
    while at < t.len() {
        let end = piece_end(t, at);
        let bytes = &text.as_bytes()[t.offset(at)..t.offset(end)];
        total += match bytes.len() {
            // Every byte is a token of its own.
            1 => 1,
            n if n >= LONG_PIECE => byte_pair::token_count(bytes, ranks),
            _ if ranks.rank(bytes).is_some() => 1,
            _ => merged_count(bytes, ranks),
        };
        at = end;
    }
    total
}

/// Distinct merged pieces a thread remembers before starting over.
const MERGED_MEMORY: usize = 1 << 16;

/// Tokens of a piece that is not itself a token: the byte-pair merge, remembered per thread.
/// Words recur (an identifier, a misspelling, a path segment) and the merge costs a lookup
/// per pair per step, so a repeated piece is counted once.
fn merged_count(piece: &[u8], ranks: &Ranks) -> usize {
    thread_local! {
        static MERGED: RefCell<FxHashMap<Box<[u8]>, usize>> = RefCell::new(FxHashMap::default());
    }
    let merge = || byte_pair::token_count(piece, ranks);
    MERGED
        .try_with(|merged| {
            let Ok(mut merged) = merged.try_borrow_mut() else {
                return merge();
            };
            if let Some(&n) = merged.get(piece) {
                return n;
            }
            if merged.len() >= MERGED_MEMORY {
                merged.clear();
            }
            let n = merge();
            merged.insert(piece.into(), n);
            n
        })
        .unwrap_or_else(|_| merge())
}

/// What the pattern tells apart in a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `\p{Lu}`, `\p{Lt}`: capitals (of the first letter class only).
    Upper,
    /// `\p{Ll}`: small letters (of the second letter class only).
    Lower,
    /// `\p{Lm}`, `\p{Lo}`: letters of both letter classes.
    OtherLetter,
    /// `\p{M}`: marks, in both letter classes but not letters (`[^\p{L}\p{N}]` takes them).
    Mark,
    /// `\p{N}`.
    Number,
    /// `\s` (White_Space).
    Space,
    /// Anything else: punctuation, symbols, controls.
    Other,
}

impl Class {
    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
    fn in_upper_word(self) -> bool {
        matches!(self, Class::Upper | Class::OtherLetter | Class::Mark)
    }

    /// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
    fn in_lower_word(self) -> bool {
        matches!(self, Class::Lower | Class::OtherLetter | Class::Mark)
    }

    /// `[^\s\p{L}\p{N}]`
    fn is_symbol(self) -> bool {
        matches!(self, Class::Mark | Class::Other)
    }
}

/// The classes of every non-ASCII character, from the `regex` crate's Unicode tables.
struct Classifier([(Regex, Class); 6]);

impl Classifier {
    fn get() -> Option<&'static Classifier> {
        static CLASSIFIER: OnceLock<Option<Classifier>> = OnceLock::new();
        CLASSIFIER
            .get_or_init(|| {
                let re = |p: &str| Regex::new(&format!("^[{p}]$")).ok();
                Some(Classifier([
                    (re(r"\p{Lu}\p{Lt}")?, Class::Upper),
                    (re(r"\p{Ll}")?, Class::Lower),
                    (re(r"\p{Lm}\p{Lo}")?, Class::OtherLetter),
                    (re(r"\p{M}")?, Class::Mark),
                    (re(r"\p{N}")?, Class::Number),
                    (re(r"\s")?, Class::Space),
                ]))
            })
            .as_ref()
    }

    fn class(&self, c: char) -> Class {
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        self.0
            .iter()
            .find(|(re, _)| re.is_match(s))
            .map_or(Class::Other, |&(_, class)| class)
    }
}

thread_local! {
    /// Non-ASCII characters already classed on this thread.
    static SEEN: RefCell<FxHashMap<char, Class>> = RefCell::new(FxHashMap::default());
}

/// The class of an ASCII character.
fn ascii_class(b: u8) -> Class {
    match b {
        b'A'..=b'Z' => Class::Upper,
        b'a'..=b'z' => Class::Lower,
        b'0'..=b'9' => Class::Number,
        b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => Class::Space,
        _ => Class::Other,
    }
}

fn class_of(c: char) -> Class {
    if c.is_ascii() {
        return ascii_class(c as u8);
    }
    let Some(classifier) = Classifier::get() else {
        // Never for the built-in tables; unreachable in practice, and still a valid split.
        return Class::Other;
    };
    SEEN.try_with(|seen| {
        *seen
            .borrow_mut()
            .entry(c)
            .or_insert_with(|| classifier.class(c))
    })
    .unwrap_or_else(|_| classifier.class(c))
}

/// A text as characters with their classes and byte offsets.
struct Text {
    chars: Vec<char>,
    classes: Vec<Class>,
    /// Byte offset of each character, and the text's length last.
    offsets: Vec<usize>,
}

impl Text {
    const fn empty() -> Text {
        Text {
            chars: Vec::new(),
            classes: Vec::new(),
            offsets: Vec::new(),
        }
    }

    fn new(text: &str) -> Text {
        let mut t = Text::empty();
        t.fill(text);
        t
    }

    /// Makes this the characters of `text`, reusing the buffers.
    fn fill(&mut self, text: &str) {
        self.chars.clear();
        self.classes.clear();
        self.offsets.clear();
        if text.is_ascii() {
            // Exact-size iterators: filled without a capacity check per character.
            let bytes = text.as_bytes();
            self.chars.extend(bytes.iter().map(|&b| char::from(b)));
            self.classes.extend(bytes.iter().map(|&b| ascii_class(b)));
            self.offsets.extend(0..=bytes.len());
            return;
        }
        for (i, c) in text.char_indices() {
            self.chars.push(c);
            self.classes.push(class_of(c));
            self.offsets.push(i);
        }
        self.offsets.push(text.len());
    }

    fn len(&self) -> usize {
        self.chars.len()
    }

    fn offset(&self, i: usize) -> usize {
        self.offsets[i]
    }

    fn class(&self, i: usize) -> Option<Class> {
        self.classes.get(i).copied()
    }

    fn is_newline(&self, i: usize) -> bool {
        matches!(self.chars.get(i), Some('\r' | '\n'))
    }

    /// The first index at or after `from` whose class fails `keep`.
    fn run_end(&self, from: usize, keep: impl Fn(Class) -> bool) -> usize {
        self.classes[from..]
            .iter()
            .position(|&c| !keep(c))
            .map_or(self.len(), |n| from + n)
    }

    /// `[^\r\n\p{L}\p{N}]`: the optional character before a word.
    fn is_word_prefix(&self, i: usize) -> bool {
        matches!(
            self.class(i),
            Some(Class::Mark | Class::Other | Class::Space)
        ) && !self.is_newline(i)
    }
}

/// Where alternative 1 (`...*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+`) ends a word starting at `q`, if
/// it matches there: the capitals-and-others run backs off until a small-letter-class
/// character can follow. After a full upper-class run only a `\p{Ll}` can; backing off, the
/// last run member that is itself in the small class (`Lm`, `Lo`, a mark) ends the word.
fn lower_word_end(t: &Text, q: usize) -> Option<usize> {
    let upper_end = t.run_end(q, Class::in_upper_word);
    if t.class(upper_end) == Some(Class::Lower) {
        return Some(t.run_end(upper_end, Class::in_lower_word));
    }
    (q..upper_end)
        .rev()
        .find(|&k| t.classes[k].in_lower_word())
        .map(|k| k + 1)
}

/// Where alternative 2 (`[...]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*`) ends a word starting at `q`.
fn upper_word_end(t: &Text, q: usize) -> Option<usize> {
    let upper_end = t.run_end(q, Class::in_upper_word);
    (upper_end > q).then(|| t.run_end(upper_end, Class::in_lower_word))
}

/// Where the piece starting at `at` (< `t.len()`) ends.
fn piece_end(t: &Text, at: usize) -> usize {
    // 1, 2: a word, optionally after one character that is neither letter, digit nor newline;
    // each alternative tries with that character first, then without.
    let prefixed = t.is_word_prefix(at) && at + 1 < t.len();
    let word = (prefixed.then(|| lower_word_end(t, at + 1)).flatten())
        .or_else(|| lower_word_end(t, at))
        .or_else(|| prefixed.then(|| upper_word_end(t, at + 1)).flatten())
        .or_else(|| upper_word_end(t, at));
    if let Some(end) = word {
        return end + contraction_len(t, end);
    }
    // 3: up to three digits.
    if t.class(at) == Some(Class::Number) {
        return t.run_end(at, |c| c == Class::Number).min(at + 3);
    }
    // 4: symbols, after at most one space, and the newlines or slashes after them.
    let is_symbol = |i: usize| t.class(i).is_some_and(Class::is_symbol);
    let symbols = if is_symbol(at) {
        Some(at)
    } else if t.chars[at] == ' ' && is_symbol(at + 1) {
        Some(at + 1)
    } else {
        None
    };
    if let Some(start) = symbols {
        let end = t.run_end(start, Class::is_symbol);
        let mut after = end;
        while after < t.len() && (t.is_newline(after) || t.chars[after] == '/') {
            after += 1;
        }
        return after;
    }
    // Whitespace from here on (every other character was taken above).
    let spaces_end = t.run_end(at, |c| c == Class::Space);
    // 5: whitespace through its last newline.
    if let Some(last) = (at..spaces_end).rev().find(|&i| t.is_newline(i)) {
        return last + 1;
    }
    // 6: whitespace not followed by a non-space: all of it at the end of the text, else all
    // but its last character (which goes with what follows) when that leaves some.
    if spaces_end == t.len() {
        return spaces_end;
    }
    if spaces_end - at >= 2 {
        return spaces_end - 1;
    }
    // 7: the whitespace.
    spaces_end
}

/// Characters of the contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any case
/// under Unicode's simple case folding, where `ſ` is an `s`) at `at`, 0 if none.
fn contraction_len(t: &Text, at: usize) -> usize {
    let folded = |i: usize| match t.chars.get(i) {
        Some('ſ') => Some('s'),
        Some(c) => Some(c.to_ascii_lowercase()),
        None => None,
    };
    if t.chars.get(at) != Some(&'\'') {
        return 0;
    }
    match (folded(at + 1), folded(at + 2)) {
        (Some('s' | 't' | 'm' | 'd'), _) => 2,
        (Some('r' | 'v'), Some('e')) | (Some('l'), Some('l')) => 3,
        _ => 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let t = Text::new(text);
        let mut out = Vec::new();
        let mut at = 0;
        while at < t.len() {
            let end = piece_end(&t, at);
            out.push(&text[t.offset(at)..t.offset(end)]);
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
        assert_eq!(pieces("用户配置 ok"), ["用户配置", " ok"]);
    }

    /// The pieces tiktoken's own engine cuts `text` into.
    fn pattern_pieces(text: &str) -> Vec<&str> {
        thread_local! {
            static PATTERN: fancy_regex::Regex =
                fancy_regex::Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).unwrap();
        }
        PATTERN.with(|re| re.find_iter(text).map(|m| m.unwrap().as_str()).collect())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]

        #[test]
        fn pieces_are_the_patterns_pieces(
            text in proptest::string::string_regex(
                "[aZ0 '\t\n\r!/sSLlé—用ǅßʰ\u{a0}\u{85}\u{2028}\u{301}\u{94d}٣Ⅻ½ſ€😀\u{1f}]{0,80}"
            ).unwrap()
        ) {
            proptest::prop_assert_eq!(pieces(&text), pattern_pieces(&text));
        }
    }

    #[test]
    fn characters_are_classed_as_the_pattern_classes_them() {
        assert_eq!(class_of('ǅ'), Class::Upper); // Lt
        assert_eq!(class_of('ß'), Class::Lower);
        assert_eq!(class_of('用'), Class::OtherLetter);
        assert_eq!(class_of('\u{301}'), Class::Mark);
        assert_eq!(class_of('½'), Class::Number);
        assert_eq!(class_of('\u{a0}'), Class::Space);
        assert_eq!(class_of('—'), Class::Other);
    }
}
