//! The resolved-questions list: `question → answered: answer` lines, built only where they are
//! shown or where two of them could be the same line.
//!
//! A long span asks hundreds of questions and the list shows its newest twenty, counting the
//! rest as omitted. Building every line meant redacting the first line of every answering
//! reply: a tenth of synth_10k's pass (issue #17). The list keeps the first of equal lines, so
//! counting what it omits needs to know which lines are equal, but a line that shares its
//! question with no other line (and with no carried one) equals none: it is counted unbuilt
//! and built only if it is among the newest.

use super::bullets::Bullets;
use super::first_equal::first_equal;
use crate::split_work::in_ranges;
use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::Hash;

/// Between a question and its answer in a resolved line.
pub(super) const ANSWERED: &str = " → answered: ";

/// The resolved-questions bullets: the lines `carried` from an earlier summary, then each of
/// `asked` (a question and the turn it was asked at) as `line` builds it, equal lines listed
/// once, the newest `max` kept and the rest counted as dropped. The same list as building
/// every line, pushing it to a [`super::Distinct`] and capping the bullets.
///
/// `answer_key(at)` tells what the answer at `at` is built from: equal keys must mean equal
/// answers, so that a question asked again with an equal key is the same line again, known
/// without building it.
pub(super) fn resolved_questions<K: Hash + Eq + Send>(
    carried: Vec<String>,
    asked: Vec<(&str, usize)>,
    max: usize,
    answer_key: impl Fn(usize) -> K + Sync,
    line: impl Fn(&str, usize) -> String + Sync,
) -> Bullets {
    let entries = distinct_entries(carried, asked, answer_key, &line);
    let excess = entries.len().saturating_sub(max);
    let kept = entries
        .into_iter()
        .skip(excess)
        .map(|entry| match entry {
            Entry::Built(text) => text,
            Entry::Unbuilt(q, at) => line(q, at),
        })
        .collect();
    let mut bullets = Bullets::new(kept, "questions", "None recorded.");
    bullets.dropped += excess;
    bullets
}

/// A line of the list: written out, or a question whose line equals no other one's, to be
/// written only if it is kept.
enum Entry<'q> {
    Built(String),
    Unbuilt(&'q str, usize),
}

/// What becomes of an asked question's line.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    /// It equals no other line: written only if it is kept.
    Alone,
    /// Written now, to be compared with the others.
    Built,
    /// An earlier question asked the same and was answered from an equal key: the same line
    /// again, which the list drops.
    Repeat,
}

/// The list's distinct lines in order, those that cannot equal another left unbuilt.
fn distinct_entries<'q, K: Hash + Eq + Send>(
    carried: Vec<String>,
    asked: Vec<(&'q str, usize)>,
    answer_key: impl Fn(usize) -> K + Sync,
    line: &(impl Fn(&str, usize) -> String + Sync),
) -> Vec<Entry<'q>> {
    // Lines with different questions differ unless a question holds the separator (one
    // line's question then could be another's question, separator and answer): then every
    // line is built and compared, as the list always did.
    let separated = !asked.iter().any(|(q, _)| q.contains(ANSWERED));
    let mut askings: FxHashMap<&str, usize> = FxHashMap::default();
    if separated {
        for &(q, _) in &asked {
            *askings.entry(q).or_default() += 1;
        }
    }
    let alone = |q: &str| {
        separated
            && askings.get(q) == Some(&1)
            && !carried
                .iter()
                .any(|c| c.strip_prefix(q).is_some_and(|r| r.starts_with(ANSWERED)))
    };
    // A long session asks its questions again and again, answered alike (`synth_100k`: 13,607
    // questions); building each line to find it listed already was a tenth of the pass's
    // instructions (callgrind, issue #17). A question asked before and answered from an equal
    // key is that line again; its key taken and hashed on the threads ([`first_equal`]:
    // finding the answering reply's first line and hashing it was most of the list's time on
    // one thread).
    let firsts = first_equal(asked.len(), |k| {
        let (q, at) = asked[k];
        (!alone(q)).then(|| (q, answer_key(at)))
    });
    let fates: Vec<Fate> = firsts
        .iter()
        .enumerate()
        .map(|(k, first)| match first {
            None => Fate::Alone,
            Some(f) if *f == k => Fate::Built,
            Some(_) => Fate::Repeat,
        })
        .collect();
    drop((askings, firsts));
    // The lines to compare, a long list's on several threads: each reads (and redacts) the
    // reply that answered its question.
    let lines = in_ranges(asked.len(), |range| {
        range
            .map(|k| (fates[k] == Fate::Built).then(|| line(asked[k].0, asked[k].1)))
            .collect::<Vec<_>>()
    });
    let mut seen: FxHashSet<String> = carried.iter().cloned().collect();
    let mut entries: Vec<Entry> = carried.into_iter().map(Entry::Built).collect();
    for (((q, at), text), fate) in asked
        .into_iter()
        .zip(lines.into_iter().flatten())
        .zip(fates)
    {
        match (fate, text) {
            (Fate::Alone, _) => entries.push(Entry::Unbuilt(q, at)),
            (Fate::Built, Some(text)) if seen.insert(text.clone()) => {
                entries.push(Entry::Built(text));
            }
            _ => {}
        }
    }
    entries
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::bullets::Distinct;
    use super::*;
    use proptest::prelude::*;

    /// The list as it was built before: every line written, pushed to a `Distinct`, capped.
    fn built_whole(
        carried: Vec<String>,
        asked: &[(String, usize)],
        max: usize,
        line: impl Fn(&str, usize) -> String,
    ) -> Bullets {
        let mut list = Distinct::from_items(carried);
        for (q, at) in asked {
            list.push(line(q, *at));
        }
        Bullets::new(list.into_items(), "questions", "None recorded.").capped(max)
    }

    /// Answers drawn from a small set, so that different turns often give the same line, and
    /// one that writes the separator itself: `a?` answered by it is the line of the question
    /// `a? → answered: done?` answered `yes`.
    fn answer(at: usize) -> String {
        match at % 5 {
            0 => "yes".into(),
            1 => format!("done?{ANSWERED}yes"),
            n => format!("reply {n}"),
        }
    }

    fn line(q: &str, at: usize) -> String {
        format!("{q}{ANSWERED}{}", answer(at))
    }

    /// What [`answer`] is built from: turns of one key answer alike.
    fn key(at: usize) -> usize {
        at % 5
    }

    fn borrowed(asked: &[(String, usize)]) -> Vec<(&str, usize)> {
        asked.iter().map(|(q, at)| (q.as_str(), *at)).collect()
    }

    fn question() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ab]{1,2}\\?",
            Just(format!("a?{ANSWERED}done?")),
            Just("a?".to_string()),
        ]
    }

    proptest! {
        /// The items, their order, their sizes and the omitted count are those of building
        /// every line: with repeated questions, answers repeated across turns, carried lines
        /// that equal new ones, and questions holding the separator.
        #[test]
        fn the_list_is_the_one_every_line_built_gives(
            asked in prop::collection::vec((question(), 0usize..12), 0..24),
            carried_asked in prop::collection::vec((question(), 0usize..12), 0..4),
            max in 1usize..8,
        ) {
            let carried: Vec<String> = carried_asked.iter().map(|(q, at)| line(q, *at)).collect();
            let lazy = resolved_questions(carried.clone(), borrowed(&asked), max, key, line);
            let whole = built_whole(carried, &asked, max, line);
            prop_assert_eq!(&lazy.items, &whole.items);
            prop_assert_eq!(&lazy.item_chars, &whole.item_chars);
            prop_assert_eq!(lazy.dropped, whole.dropped);
        }
    }

    /// A list long enough to build its lines on several threads is still the one building
    /// every line in order gives: repeated questions, repeated answers, some asked once.
    #[test]
    fn a_long_list_built_on_threads_is_the_one_every_line_built_gives() {
        let n = 3 * crate::split_work::SPLIT_FROM_ITEMS;
        let asked: Vec<(String, usize)> = (0..n)
            .map(|i| match i % 4 {
                0 => (format!("once {i}?"), i),
                _ => (format!("again {}?", i % 97), i % 13),
            })
            .collect();
        let carried = vec![line("again 5?", 2)];
        let lazy = resolved_questions(carried.clone(), borrowed(&asked), 20, key, line);
        let whole = built_whole(carried, &asked, 20, line);
        assert_eq!(lazy.items, whole.items);
        assert_eq!(lazy.dropped, whole.dropped);
        assert!(lazy.dropped > 1_000, "{}", lazy.dropped);
    }

    #[test]
    fn a_question_asked_once_is_built_only_when_it_is_kept() {
        let built = std::sync::atomic::AtomicUsize::new(0);
        let asked: Vec<(String, usize)> = (0..50).map(|i| (format!("q{i}?"), i)).collect();
        let list = resolved_questions(Vec::new(), borrowed(&asked), 5, key, |q, at| {
            built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            line(q, at)
        });
        assert_eq!(built.into_inner(), 5);
        assert_eq!(list.dropped, 45);
        assert_eq!(list.items[0], line("q45?", 45));
    }

    #[test]
    fn a_question_asked_twice_is_built_to_tell_its_lines_apart() {
        // Turns 2 and 7 answer alike ("reply 2"): the second line is the first again.
        let asked = vec![
            ("a?".to_string(), 2),
            ("a?".to_string(), 7),
            ("b?".to_string(), 3),
        ];
        let list = resolved_questions(Vec::new(), borrowed(&asked), 10, key, line);
        assert_eq!(list.items, vec![line("a?", 2), line("b?", 3)]);
    }

    /// A question asked again and answered from an equal key is the same line again: built
    /// once, however often it is asked; one answered differently is built to be compared.
    #[test]
    fn a_question_asked_again_with_an_equal_answer_is_built_once() {
        let built = std::sync::atomic::AtomicUsize::new(0);
        // Turns 1, 6, 11, … share a key; turn 3 does not.
        let mut asked: Vec<(String, usize)> =
            (0..40).map(|i| ("a?".to_string(), 1 + 5 * i)).collect();
        asked.push(("a?".to_string(), 3));
        let list = resolved_questions(Vec::new(), borrowed(&asked), 10, key, |q, at| {
            built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            line(q, at)
        });
        assert_eq!(built.into_inner(), 2);
        assert_eq!(list.items, vec![line("a?", 1), line("a?", 3)]);
        assert_eq!(list.dropped, 0);
    }
}
