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

use crate::byte_scan::word_at;

/// The cues of one kind of statement.
pub(super) struct Cues {
    /// Lowercase ASCII words and phrases (one space between words), matched as whole words.
    words: &'static [&'static str],
    /// CJK phrases, matched anywhere (the languages have no spaces to bound words by).
    phrases: &'static [&'static str],
}

/// A choice the user made or asked for.
pub(super) const DECISION: Cues = Cues {
    words: &[
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
    phrases: &["不要", "改用", "决定", "请", "使って", "しないで"],
};

/// A rule the work must keep to.
pub(super) const CONSTRAINT: Cues = Cues {
    words: &[
        "must", "never", "always", "only", "avoid", "require", "required", "prefer",
    ],
    phrases: &["必须", "禁止", "不能", "必ず"],
};

impl Cues {
    /// Whether `sentence` holds one of the cues.
    pub(super) fn in_sentence(&self, sentence: &str) -> bool {
        let text = sentence.as_bytes();
        let word_starts =
            (0..text.len()).filter(|&i| is_word(text[i]) && (i == 0 || !is_word(text[i - 1])));
        for start in word_starts {
            let first = text[start].to_ascii_lowercase();
            let ends_a_word = |end: usize| text.get(end).is_none_or(|&b| !is_word(b));
            let found = self
                .words
                .iter()
                .filter(|w| w.as_bytes().first() == Some(&first))
                .filter_map(|w| word_at(text, start, w.as_bytes()))
                .any(ends_a_word);
            if found {
                return true;
            }
        }
        !sentence.is_ascii() && self.phrases.iter().any(|p| sentence.contains(p))
    }
}

/// A byte of a word for an ASCII word boundary (`(?-u:\b)`).
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
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
            prop_assert_eq!(
                DECISION.in_sentence(&sentence),
                DECISION_REGEX.is_match(&sentence),
                "decision in {:?}", sentence
            );
            prop_assert_eq!(
                CONSTRAINT.in_sentence(&sentence),
                CONSTRAINT_REGEX.is_match(&sentence),
                "constraint in {:?}", sentence
            );
        }
    }

    #[test]
    fn cues_are_whole_words() {
        assert!(DECISION.in_sentence("Let's use tokio here."));
        assert!(DECISION.in_sentence("we'll switch to sqlx"));
        assert!(!DECISION.in_sentence("the user_id is reused; decidedly odd"));
        assert!(CONSTRAINT.in_sentence("Tests MUST pass."));
        assert!(!CONSTRAINT.in_sentence("mustard is preferred"));
        assert!(CONSTRAINT.in_sentence("测试必须通过"));
        assert!(DECISION.in_sentence("改用 tokio"));
    }
}
