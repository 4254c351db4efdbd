//! Every occurrence of a few short literals in a text, found by walking one automaton over
//! several parts of the text in step.
//!
//! A DFA walk is bound by latency, not by work: each byte's next state is a table load that
//! depends on the previous one, so one walk over a text costs a load's latency per byte
//! (~1.8 ns a byte here, with or without `aho-corasick`'s prefilter, which the redaction
//! literals are too common for). Walking several parts of the text at once keeps that many
//! independent loads in flight: three halved the time (real1's redaction scan 276 → 118–130 µs
//! measured alone, `synth_10k`'s 9.1 → 4.5–4.8 ms; issue #17), and four, with the loop
//! calling nothing until a part reaches a match ([`Occurrences::step_until_match`]), took
//! another third off redacting real1's views. SIMD searchers do not help:
//! `aho-corasick`'s Teddy over the 79 lowercased prefixes was twice as slow as the walk,
//! its buckets too full to filter.
//!
//! Each part after the first starts `longest literal − 1` bytes early, so an occurrence
//! across a seam is seen whole by the part its last byte is in; a part reports only the
//! occurrences that end inside it, so none is reported twice.
//!
//! The automaton is `aho-corasick`'s DFA copied into plain tables (`dfa_table.rs`): for the
//! redaction scan the build script does that once, and the walk reads static memory.

use super::dfa_table::DfaTable;
use std::ops::ControlFlow;

/// Parts walked in step: four took 12–14% off redacting real1's and synth_10k's views
/// against three, five and six were no better, eight was slower.
const PARTS: usize = 4;

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
    table: DfaTable,
    /// `table.classes` as an array, so a byte indexes it without a bounds check.
    classes: [u8; 256],
    /// How far a part starts before its first reported end: the longest literal, less one.
    lead: usize,
}

/// A state of the automaton (see [`DfaTable`]).
type State = u16;

impl Occurrences {
    /// Builds the automaton of `literals` now. `None` when it cannot be built (the caller then
    /// treats every rule as a candidate) or `literals` is empty.
    pub(super) fn new(literals: &[&str]) -> Option<Self> {
        DfaTable::for_literals(literals).and_then(Occurrences::from_table)
    }

    /// The automaton of tables built earlier (by the build script, for the redaction scan).
    pub(super) fn from_table(table: DfaTable) -> Option<Self> {
        let lead = usize::from(*table.literal_lens.iter().max()?).checked_sub(1)?;
        let classes = <[u8; 256]>::try_from(&*table.classes).ok()?;
        Some(Occurrences {
            table,
            classes,
            lead,
        })
    }

    /// Calls `each` with every occurrence in `text`, in no particular order, until it breaks.
    pub(super) fn each(
        &self,
        text: &[u8],
        mut each: impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let part = text.len() / PARTS;
        if text.len() < SPLIT_FROM_BYTES || part <= self.lead {
            return self.walk(self.table.start, text, 0..text.len(), 0, &mut each);
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
        let parts: [&[u8]; PARTS] =
            std::array::from_fn(|i| &text[reads_from[i]..reads_from[i] + part]);
        let mut states = [self.table.start; PARTS];
        let mut step = 0;
        while let Some(done) = self.step_until_match(parts, &mut states, step) {
            for i in 0..PARTS {
                self.report(states[i], reads_from[i] + done, reports_after[i], &mut each)?;
            }
            step = done;
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

    /// Walks the parts in step from byte `from` of each (all are as long as the first) until a
    /// state is a match state; `states` are the states reached, and the result is how many
    /// bytes of each part were read then, `None` at the parts' end.
    ///
    /// The loop calls nothing and keeps each part and state in its own variable: with the
    /// reporting inside it, the states and the parts' addresses lived on the stack and every
    /// byte paid for the round trips (`perf annotate`, issue #17).
    fn step_until_match(
        &self,
        [a, b, c, d]: [&[u8]; PARTS],
        states: &mut [State; PARTS],
        from: usize,
    ) -> Option<usize> {
        let len = a.len();
        let (b, c, d) = (&b[..len], &c[..len], &d[..len]);
        let trans: &[u16] = &self.table.trans;
        let classes = &self.classes;
        let below = self.table.match_below;
        let next = |state: State, byte: u8| next_state(trans, classes, state, byte);
        let [mut sa, mut sb, mut sc, mut sd] = *states;
        let mut step = from;
        let found = loop {
            if step >= len {
                break None;
            }
            sa = next(sa, a[step]);
            sb = next(sb, b[step]);
            sc = next(sc, c[step]);
            sd = next(sd, d[step]);
            step += 1;
            if (sa < below) | (sb < below) | (sc < below) | (sd < below) {
                break Some(step);
            }
        };
        *states = [sa, sb, sc, sd];
        found
    }

    /// One walk from `state` over `text[range]`, reporting occurrences that end after
    /// `reports_after`.
    fn walk(
        &self,
        mut state: State,
        text: &[u8],
        range: std::ops::Range<usize>,
        reports_after: usize,
        each: &mut impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for at in range {
            state = self.next(state, text[at]);
            if self.is_match(state) {
                self.report(state, at + 1, reports_after, each)?;
            }
        }
        ControlFlow::Continue(())
    }

    fn next(&self, state: State, byte: u8) -> State {
        next_state(&self.table.trans, &self.classes, state, byte)
    }

    fn is_match(&self, state: State) -> bool {
        state < self.table.match_below
    }

    /// The literals that end at `end` in `state` (none unless it is a match state), when
    /// `end` is past `reports_after`.
    fn report(
        &self,
        state: State,
        end: usize,
        reports_after: usize,
        each: &mut impl FnMut(Occurrence) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if end <= reports_after || !self.is_match(state) {
            return ControlFlow::Continue(());
        }
        let row = usize::from(state) / self.table.stride;
        let (Some(&from), Some(&to)) = (
            self.table.match_starts.get(row),
            self.table.match_starts.get(row + 1),
        ) else {
            return ControlFlow::Continue(());
        };
        let literals = self
            .table
            .match_literals
            .get(usize::from(from)..usize::from(to))
            .unwrap_or_default();
        for &literal in literals {
            let len = self.table.literal_lens[usize::from(literal)];
            each(Occurrence {
                start: end - usize::from(len),
                end,
                literal: usize::from(literal),
            })?;
        }
        ControlFlow::Continue(())
    }
}

/// The state after `byte` from `state` (see [`DfaTable`]).
fn next_state(trans: &[u16], classes: &[u8; 256], state: State, byte: u8) -> State {
    trans[usize::from(state) + usize::from(classes[usize::from(byte)])]
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

    /// What `aho-corasick`'s own overlapping search for `literals` reports, the definition.
    fn expected(literals: &[&str], text: &[u8]) -> Vec<Occurrence> {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(literals)
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
            prop_assert_eq!(
                all(&occurrences, text.as_bytes()),
                expected(&LITERALS, text.as_bytes())
            );
        }
    }

    /// What the redaction scan's built-in automaton finds in `text`, and what
    /// `aho-corasick`'s overlapping search over the same prefixes finds.
    fn scan_finds(text: &str) -> (Vec<Occurrence>, Vec<Occurrence>) {
        use super::super::scan_prefixes::SCAN_PREFIXES;
        use super::super::scan_table::scan_table;
        let occurrences = Occurrences::from_table(scan_table()).unwrap();
        (
            all(&occurrences, text.as_bytes()),
            expected(&SCAN_PREFIXES, text.as_bytes()),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]

        /// On text made of the prefixes, their halves and case variants.
        #[test]
        fn the_built_in_scan_finds_what_an_overlapping_search_finds(
            pieces in proptest::collection::vec((0..80usize, 0..4u8), 0..60)
        ) {
            use super::super::scan_prefixes::SCAN_PREFIXES;
            let text: String = pieces
                .iter()
                .map(|&(p, how)| {
                    let prefix = SCAN_PREFIXES[p];
                    match how {
                        0 => prefix.to_string(),
                        1 => prefix.to_ascii_uppercase(),
                        2 => prefix[..prefix.len() / 2].to_string(),
                        _ => format!("{prefix} é"),
                    }
                })
                .collect();
            let (found, want) = scan_finds(&text);
            prop_assert!(!want.is_empty() || pieces.iter().all(|&(_, how)| how == 2));
            prop_assert_eq!(found, want);
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
