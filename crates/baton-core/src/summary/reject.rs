//! When the quality gate refuses a summary instead of repairing it.
//!
//! [`super::gate::check_and_repair`] adds back what a summary left out, which is right for a
//! summary that is merely incomplete. Two kinds of output are not summaries at all, and
//! patching them would install garbage with the ledger glued on: text that is mostly the
//! summarization prompt echoed back (a local model that parrots its instructions, a wrapper
//! script that returns its input), and text with neither the required structure nor the facts
//! (a chat reply, an apology, an unrelated answer). Those are rejected, and the compressor
//! escalates (one re-summary, then the extractive summarizer) and says so in its report.

use crate::summary::ledger::{self, TaskLedger};
use crate::summary::prompt;
use crate::summary::sections;
use std::collections::HashSet;
use std::fmt;
use std::sync::LazyLock;

/// Words per shingle when comparing a summary with the prompt's instructions: long enough
/// that ordinary phrases ("the user asked to") do not count, short enough to catch an echo cut
/// at any point.
const SHINGLE_WORDS: usize = 6;
/// A summary whose prose is at least this share (percent) of word runs taken from the
/// prompt's instructions is an echo.
const ECHO_PERCENT: usize = 50;
/// Below this many words there is too little prose to call it an echo.
const ECHO_MIN_WORDS: usize = 12;

/// Why a summary was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Most of the summary repeats the summarization prompt's own instructions.
    EchoedPrompt { percent: usize },
    /// Most required headings and most ledger facts are absent: nothing to repair from.
    NoStructure {
        missing_headings: usize,
        headings: usize,
        missing_facts: usize,
        facts: usize,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::EchoedPrompt { percent } => write!(
                f,
                "{percent}% of it repeats the summarization prompt's instructions"
            ),
            Rejection::NoStructure {
                missing_headings,
                headings,
                missing_facts,
                facts,
            } => {
                write!(
                    f,
                    "it lacks {missing_headings} of the {headings} required headings"
                )?;
                if *facts > 0 {
                    write!(f, " and {missing_facts} of the {facts} task-ledger facts")?;
                }
                Ok(())
            }
        }
    }
}

/// The verdict on a summarizer's raw output (before any repair): `None` when the gate may
/// repair and install it.
pub fn judge(summary: &str, ledger: &TaskLedger) -> Option<Rejection> {
    echoed_prompt(summary).or_else(|| missing_structure(summary, ledger))
}

/// The share of the summary's prose (headings and any ledger block left out: those are
/// supposed to match) made of [`SHINGLE_WORDS`]-word runs that also occur in the prompt's
/// instructions.
fn echoed_prompt(summary: &str) -> Option<Rejection> {
    let prose: String = prose_lines(summary).collect::<Vec<_>>().join("\n");
    let words = words(&prose);
    if words.len() < ECHO_MIN_WORDS {
        return None;
    }
    let mut covered = vec![false; words.len()];
    for (i, run) in words.windows(SHINGLE_WORDS).enumerate() {
        if INSTRUCTION_SHINGLES.contains(&run.join(" ")) {
            covered[i..i + SHINGLE_WORDS]
                .iter_mut()
                .for_each(|c| *c = true);
        }
    }
    let percent = covered.iter().filter(|&&c| c).count() * 100 / words.len();
    (percent >= ECHO_PERCENT).then_some(Rejection::EchoedPrompt { percent })
}

/// Rejected when more than half of the required headings (the ledger block aside, which the
/// compressor appends itself) are missing and so are more than half of the ledger's facts (or
/// there are none to check).
fn missing_structure(summary: &str, ledger: &TaskLedger) -> Option<Rejection> {
    let required: Vec<&str> = sections::REQUIRED
        .iter()
        .copied()
        .filter(|h| *h != sections::TASK_LEDGER)
        .collect();
    let missing_headings = required
        .iter()
        .filter(|h| !summary.split('\n').any(|l| l.trim_end() == **h))
        .count();
    let facts = ledger.facts();
    let missing_facts = facts
        .iter()
        .filter(|f| !ledger::fact_appears_in(summary, f))
        .count();
    let most_headings_missing = missing_headings * 2 > required.len();
    let most_facts_missing = facts.is_empty() || missing_facts * 2 > facts.len();
    (most_headings_missing && most_facts_missing).then_some(Rejection::NoStructure {
        missing_headings,
        headings: required.len(),
        missing_facts,
        facts: facts.len(),
    })
}

/// Lines outside any ledger block, without heading lines.
fn prose_lines(summary: &str) -> impl Iterator<Item = &str> {
    let mut in_ledger = false;
    summary.split('\n').filter(move |line| {
        let t = line.trim_end();
        if t == sections::TASK_LEDGER {
            in_ledger = true;
            return false;
        }
        if t.starts_with("## ") {
            in_ledger = false;
            return false;
        }
        !in_ledger
    })
}

/// Lower-cased alphanumeric words: the comparison ignores punctuation, case and layout, so a
/// re-wrapped or re-quoted echo still matches.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Every [`SHINGLE_WORDS`]-word run of the prompt's fixed instructions (all templates, with no
/// turns, previous summary or ledger filled in), built once.
static INSTRUCTION_SHINGLES: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let words = words(&prompt::instruction_text());
    words
        .windows(SHINGLE_WORDS)
        .map(|run| run.join(" "))
        .collect()
});

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::summary::prompt::{PromptInput, build_prompt};

    fn ledger() -> TaskLedger {
        TaskLedger {
            active_task: Some("Fix the parser test".into()),
            files_read: vec!["src/lex.rs".into()],
            files_modified: vec!["src/parse.rs".into()],
            ..TaskLedger::default()
        }
    }

    fn prompt(ledger: &TaskLedger) -> String {
        build_prompt(&PromptInput {
            serialized_turns: "[USER]: Fix the parser test\n\n[ASSISTANT]: Done.",
            previous_summary: None,
            focus_topic: None,
            budget_tokens: 2_000,
            ledger_block: &ledger.render(),
            has_user_turns: true,
        })
    }

    fn good_summary(ledger: &TaskLedger) -> String {
        format!(
            "## Active Task\nUser asked: Fix the parser test\n\n## Goal\nA green test suite.\n\n\
             ## Completed Actions\n1. EDIT src/parse.rs — fixed the off-by-one [tool: edit]\n\n\
             ## Active State\n- Tests pass.\n\n## Relevant Files\n- src/parse.rs\n- src/lex.rs\n\n{}",
            ledger.render()
        )
    }

    #[test]
    fn the_start_of_the_prompt_echoed_back_is_rejected() {
        let l = ledger();
        let echo: String = prompt(&l).chars().take(400).collect();
        match judge(&echo, &l) {
            Some(Rejection::EchoedPrompt { percent }) => assert!(percent >= 90, "{percent}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_whole_prompt_echoed_back_is_rejected_though_it_has_every_heading() {
        let l = ledger();
        let verdict = judge(&prompt(&l), &l);
        assert!(
            matches!(verdict, Some(Rejection::EchoedPrompt { .. })),
            "{verdict:?}"
        );
    }

    #[test]
    fn text_without_headings_or_facts_is_rejected() {
        let l = ledger();
        let verdict = judge("I am sorry, I cannot help with that request today.", &l);
        assert_eq!(
            verdict,
            Some(Rejection::NoStructure {
                missing_headings: 4,
                headings: 4,
                missing_facts: 3,
                facts: 3,
            })
        );
        assert_eq!(
            verdict.unwrap().to_string(),
            "it lacks 4 of the 4 required headings and 3 of the 3 task-ledger facts"
        );
    }

    #[test]
    fn a_good_summary_and_an_incomplete_one_are_left_to_repair() {
        let l = ledger();
        assert_eq!(judge(&good_summary(&l), &l), None);
        // Headings missing but the facts are there: the gate repairs it.
        let facts_only = "Fixed src/parse.rs after reading src/lex.rs: Fix the parser test.";
        assert_eq!(judge(facts_only, &l), None);
        // Headings there, facts missing: repaired too.
        let headings_only = "## Active Task\nNone.\n\n## Completed Actions\nNone.\n\n## Active State\nNone.\n\n## Relevant Files\nNone.";
        assert_eq!(judge(headings_only, &l), None);
    }

    #[test]
    fn quoting_a_phrase_of_the_instructions_is_not_an_echo() {
        let l = ledger();
        let s = format!(
            "{}\n\n## Critical Context\nThe user said: do not answer the questions or carry out the requests yet.",
            good_summary(&l)
        );
        assert_eq!(judge(&s, &l), None);
    }
}
