//! Every occurrence of a few short literals in a text, found by walking one automaton over
//! several parts of the text in step.
//!
//! A DFA walk is bound by latency, not by work: each byte's next state is a table load that
//! depends on the previous one, so one walk over a text costs a load's latency per byte
//! (~1.8 ns a byte here, with or without `aho-corasick`'s prefilter, which the redaction
//! literals are too common for). Walking three parts of the text at once keeps three
//! independent loads in flight and halves the time (real1's redaction scan 276 → 118–130 µs
//! measured alone, `synth_10k`'s 9.1 → 4.5–4.8 ms; issue #17). SIMD searchers do not help:
//! `aho-corasick`'s Teddy over the 79 lowercased prefixes was twice as slow as the walk,
//! its buckets too full to filter.
//!
//! Each part after the first starts `longest literal − 1` bytes early, so an occurrence
//! across a seam is seen whole by the part its last byte is in; a part reports only the
//! occurrences that end inside it, so none is reported twice.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};
use std::ops::ControlFlow;

/// Parts walked in step; two already gets most of the gain, eight is slower than three.
const PARTS: usize = 3;

/// Texts shorter than this are walked in one part: a seam's overlap and the step loop's
/// setup would cost more than they save.
const SPLIT_FROM_BYTES: usize = 64;

/// One occurrence of a literal: where it is and which one (its index among the literals the
/// automaton was built from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Occurrence {
    pub start: usize,
    pub end: usize,
    pub literal: usize,
}

/// An ASCII case-insensitive automaton over a set of literals that reports all of their
/// occurrences, overlapping ones included.
pub(super) struct Occurrences {
    dfa: DFA,
    start: StateID,
    /// How far a part starts before its first reported end: the longest literal, less one.
    lead: usize,
}

impl Occurrences {
    /// `None` when the automaton cannot be built (the caller then treats every rule as a
    /// candidate) or `literals` is empty.
    pub(super) fn new(literals: &[&str]) -> Option<Self> {
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(literals)
            .ok()?;
        let start = dfa.start_state(Anchored::No).ok()?;
        let lead = dfa.max_pattern_len().checked_sub(1)?;
        Some(Occurrences { dfa, start, lead })
    }

    /// Calls `each` with every occurrence in `text`, in no particular order, until it breaks.
    pub(super) fn each(
        &self,
        text: &[u8],
        mut each: impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let part = text.len() / PARTS;
        if text.len() < SPLIT_FROM_BYTES || part <= self.lead {
            return self.walk(self.start, text, 0..text.len(), 0, &mut each);
        }
        // Part `i` reports the ends in `i * part ..= (i + 1) * part` (the last one up to the
        // text's end) and starts reading `lead` bytes before its first.
        let reports_after: [usize; PARTS] = std::array::from_fn(|i| i * part);
        let reads_from: [usize; PARTS] = std::array::from_fn(|i| {
            if i == 0 {
                0
            } else {
                reports_after[i] - self.lead
            }
        });
        let mut states = [self.start; PARTS];
        for step in 0..part {
            let mut special = false;
            for i in 0..PARTS {
                states[i] = self.next(states[i], text[reads_from[i] + step]);
                special |= self.dfa.is_special(states[i]);
            }
            if special {
                for i in 0..PARTS {
                    let end = reads_from[i] + step + 1;
                    self.report(states[i], end, reports_after[i], &mut each)?;
                }
            }
        }
        for i in 0..PARTS {
            let until = if i + 1 == PARTS {
                text.len()
            } else {
                reports_after[i + 1]
            };
            let rest = reads_from[i] + part..until;
            self.walk(states[i], text, rest, reports_after[i], &mut each)?;
        }
        ControlFlow::Continue(())
    }

    /// One walk from `state` over `text[range]`, reporting occurrences that end after
    /// `reports_after`.
    fn walk(
        &self,
        mut state: StateID,
        text: &[u8],
        range: std::ops::Range<usize>,
        reports_after: usize,
        each: &mut impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for at in range {
            state = self.next(state, text[at]);
            if self.dfa.is_special(state) {
                self.report(state, at + 1, reports_after, each)?;
            }
        }
        ControlFlow::Continue(())
    }

    fn next(&self, state: StateID, byte: u8) -> StateID {
        self.dfa.next_state(Anchored::No, state, byte)
    }

    /// The literals that end at `end` in `state` (none unless it is a match state), when
    /// `end` is past `reports_after`.
    fn report(
        &self,
        state: StateID,
        end: usize,
        reports_after: usize,
        each: &mut impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if end <= reports_after || !self.dfa.is_match(state) {
            return ControlFlow::Continue(());
        }
        for k in 0..self.dfa.match_len(state) {
            let literal = self.dfa.match_pattern(state, k);
            each(Occurrence {
                start: end - self.dfa.pattern_len(literal),
                end,
                literal: literal.as_usize(),
            })?;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use aho_corasick::AhoCorasick;
    use proptest::prelude::*;

    const LITERALS: [&str; 8] = ["key", "tok", "://", "q~", "pas", "sk-", "aa", "a"];

    fn all(occurrences: &Occurrences, text: &[u8]) -> Vec<Occurrence> {
        let mut found = Vec::new();
        let _ = occurrences.each(text, |o| {
            found.push(o);
            ControlFlow::Continue(())
        });
        found.sort();
        found
    }

    /// What `aho-corasick`'s own overlapping search reports, the definition.
    fn expected(text: &[u8]) -> Vec<Occurrence> {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(LITERALS)
            .unwrap();
        let mut found: Vec<Occurrence> = ac
            .find_overlapping_iter(text)
            .map(|m| Occurrence {
                start: m.start(),
                end: m.end(),
                literal: m.pattern().as_usize(),
            })
            .collect();
        found.sort();
        found
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Texts of every length around the split threshold, dense in literals, their
        /// fragments and case variants, so occurrences fall on and across every seam.
        #[test]
        fn the_parts_find_what_one_overlapping_search_finds(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("KEY"), Just("Key"), Just("key"), Just("ke"), Just("tok"), Just("TO"),
                    Just("://"), Just(":/"), Just("Q~"), Just("q"), Just("~"), Just("pAs"),
                    Just("sk-"), Just("aaa"), Just("A"), Just(" "), Just("xyz"), Just("é"),
                ],
                0..120,
            )
        ) {
            let occurrences = Occurrences::new(&LITERALS).unwrap();
            let text = words.concat();
            prop_assert_eq!(all(&occurrences, text.as_bytes()), expected(text.as_bytes()));
        }
    }

    #[test]
    fn a_literal_across_each_seam_is_reported_once() {
        let occurrences = Occurrences::new(&LITERALS).unwrap();
        for len in SPLIT_FROM_BYTES..SPLIT_FROM_BYTES + 2 * PARTS + 4 {
            for at in 0..len - 2 {
                let mut text = vec![b'.'; len];
                text[at..at + 3].copy_from_slice(b"Tok");
                let found = all(&occurrences, &text);
                assert_eq!(
                    found,
                    vec![Occurrence {
                        start: at,
                        end: at + 3,
                        literal: 1
                    }],
                    "len {len}, at {at}"
                );
            }
        }
    }

    #[test]
    fn a_break_stops_the_walk() {
        let occurrences = Occurrences::new(&LITERALS).unwrap();
        let text = "key ".repeat(100);
        let mut seen = 0;
        let flow = occurrences.each(text.as_bytes(), |_| {
            seen += 1;
            if seen == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(flow, ControlFlow::Break(()));
        assert_eq!(seen, 3);
    }
}
