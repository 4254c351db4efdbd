//! Whether a user's sentence states a decision ("let's use…", "switch to…") or a constraint
//! ("must", "never"): one of a few cue words or phrases in it, English ones as whole words.
//!
//! These were two case-insensitive regexes. Compiling them was ~6% of a `baton compress`
//! process on a real session whose span has statements to read (real4, `perf record` over 300
//! runs; ~0.5 ms warm for the pair, more in a cold process): the regex crate extracts every
//! case variant of every word as prefilter literals. The words are fixed and few, so they are
//! compared in place at each word start, with nothing to build (issue #17).
//!
//! Letters compare ASCII case-insensitively and word boundaries are ASCII, as the regexes'
//! `(?-u:\b)` were; their Unicode case folding also let `ſ` (long s) stand for `s`, which this
//! does not follow.

use crate::byte_scan::{is_word_byte as is_word, whole_word_at};

/// What a user's sentence states, by its cues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Statement {
    Decision,
    Constraint,
}

/// What `sentence` states: a decision when it holds a decision cue (whatever else it holds),
/// else a constraint when it holds a constraint cue, else nothing. One pass over the bytes
/// for both kinds: most sentences hold neither, and this runs on every user sentence.
pub(super) fn statement_in(sentence: &str) -> Option<Statement> {
    let text = sentence.as_bytes();
    let mut constraint = false;
    let mut at = 0;
    // From word start to word start: a word's other bytes are only skipped over.
    while at < text.len() {
        if !is_word(text[at]) {
            at += 1;
            continue;
        }
        if DECISION.starts_at(text, at) {
            return Some(Statement::Decision);
        }
        constraint = constraint || CONSTRAINT.starts_at(text, at);
        at += 1;
        while at < text.len() && is_word(text[at]) {
            at += 1;
        }
    }
    if !sentence.is_ascii() && DECISION.phrase_in(sentence) {
        Some(Statement::Decision)
    } else if constraint || (!sentence.is_ascii() && CONSTRAINT.phrase_in(sentence)) {
        Some(Statement::Constraint)
    } else {
        None
    }
}

/// The cues of one kind of statement.
struct Cues {
    /// Lowercase ASCII words and phrases (one space between words), matched as whole words.
    words: &'static [&'static str],
    /// The words' first two letters: bit `second` of `openings[first]` (`a` is 0). Most word
    /// starts are ruled out by this one test.
    openings: [u32; 26],
    /// CJK phrases, matched anywhere (the languages have no spaces to bound words by).
    phrases: &'static [&'static str],
}

/// A choice the user made or asked for.
const DECISION: Cues = Cues::new(
    &[
        "let's",
        "lets",
        "let us",
        "use",
        "using",
        "don't",
        "dont",
        "do not",
        "we will",
        "we'll",
        "should",
        "switch to",
        "instead of",
        "go with",
        "decide",
        "decided",
    ],
    &["不要", "改用", "决定", "请", "使って", "しないで"],
);

/// A rule the work must keep to.
const CONSTRAINT: Cues = Cues::new(
    &[
        "must", "never", "always", "only", "avoid", "require", "required", "prefer",
    ],
    &["必须", "禁止", "不能", "必ず"],
);

impl Cues {
    const fn new(words: &'static [&'static str], phrases: &'static [&'static str]) -> Self {
        let mut openings = [0; 26];
        let mut i = 0;
        while i < words.len() {
            // Every word starts with two lowercase letters (`every_cue_opens_with_two_letters`).
            let w = words[i].as_bytes();
            openings[(w[0] - b'a') as usize] |= 1 << (w[1] - b'a');
            i += 1;
        }
        Cues {
            words,
            openings,
            phrases,
        }
    }

    /// Whether one of the words starts at `at` (a word start) and ends a word there.
    fn starts_at(&self, text: &[u8], at: usize) -> bool {
        let letter = |i: usize| {
            text.get(i)
                .filter(|b| b.is_ascii_alphabetic())
                .map(|b| b.to_ascii_lowercase() - b'a')
        };
        let (Some(first), Some(second)) = (letter(at), letter(at + 1)) else {
            return false;
        };
        if self.openings[first as usize] & (1 << second) == 0 {
            return false;
        }
        self.words
            .iter()
            .any(|w| whole_word_at(text, at, w.as_bytes()).is_some())
    }

    fn phrase_in(&self, sentence: &str) -> bool {
        self.phrases.iter().any(|p| sentence.contains(p))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::Regex;
    use std::sync::LazyLock;

    /// The regexes the cues replaced, as they were.
    static DECISION_REGEX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?-u:\b)(let'?s|let us|use|using|don'?t|do not|we will|we'll|should|switch to|instead of|go with|decided?)(?-u:\b)|不要|改用|决定|请|使って|しないで",
        )
        .unwrap()
    });
    static CONSTRAINT_REGEX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?-u:\b)(must|never|always|only|avoid|required?|prefer)(?-u:\b)|必须|禁止|不能|必ず",
        )
        .unwrap()
    });

    /// Pieces that make the cues, their near misses, and what can bound a word.
    const PIECES: &[&str] = &[
        "let",
        "'",
        "s",
        "us",
        " ",
        "  ",
        "use",
        "Using",
        "do",
        "n't",
        "not",
        "DON",
        "t",
        "we",
        "will",
        "ll",
        "should",
        "switch",
        "to",
        "instead",
        "of",
        "go",
        "with",
        "decide",
        "d",
        "must",
        "Never",
        "always",
        "only",
        "avoid",
        "require",
        "prefer",
        "x",
        "_",
        "1",
        "é",
        ".",
        "-",
        "不要",
        "请",
        "使って",
        "して",
        "必ず",
        "不",
        "能",
        "lets",
        "dont",
        "decided",
        "required",
        "We'll",
        "let us",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The in-place comparison answers as the regexes did, on sentences of cue words,
        /// near misses, word glue and CJK.
        #[test]
        fn cues_are_found_where_the_regexes_found_them(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..8)
        ) {
            let sentence = pieces.concat();
            let expected = if DECISION_REGEX.is_match(&sentence) {
                Some(Statement::Decision)
            } else if CONSTRAINT_REGEX.is_match(&sentence) {
                Some(Statement::Constraint)
            } else {
                None
            };
            prop_assert_eq!(statement_in(&sentence), expected, "in {:?}", sentence);
        }
    }

    /// What `Cues::new` builds its table from.
    #[test]
    fn every_cue_opens_with_two_letters() {
        for w in DECISION.words.iter().chain(CONSTRAINT.words) {
            assert!(w.bytes().take(2).all(|b| b.is_ascii_lowercase()), "{w}");
        }
    }

    #[test]
    fn cues_are_whole_words() {
        use Statement::{Constraint, Decision};
        assert_eq!(statement_in("Let's use tokio here."), Some(Decision));
        assert_eq!(statement_in("we'll switch to sqlx"), Some(Decision));
        assert_eq!(statement_in("the user_id is reused; decidedly odd"), None);
        assert_eq!(statement_in("Tests MUST pass."), Some(Constraint));
        assert_eq!(
            statement_in("Tests must pass, so use nextest."),
            Some(Decision)
        );
        assert_eq!(statement_in("mustard is preferred"), None);
        assert_eq!(statement_in("测试必须通过"), Some(Constraint));
        assert_eq!(statement_in("必须改用 tokio"), Some(Decision));
    }
}
