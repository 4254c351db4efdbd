//! The extractive summarizer: deterministic, offline, the embedded default and the last rung of
//! the compressor's escalation ladder.
//!
//! It fills the same sections a model would, but only with what can be read off the
//! transcript mechanically: the user's own words for the task, goal and decisions, one line per
//! tool call for the actions, error first lines for blockers. Nothing is invented, so when it
//! says a file was modified, it was asked to be. Output depends only on the input (no clock, no
//! hash-map order), so the same span always produces byte-identical text.

use crate::message::{Message, Role};
use crate::split_work::in_ranges;
use crate::summary::ledger::{self, TaskLedger};
use crate::summary::sections::{self, section_body};
use crate::summary::span_calls::{SpanCall, SpanCalls};
use crate::summary::view;
use crate::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use crate::synthetic;
use crate::tool_action::{self, ActionTable, ToolAction};
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

mod blockers;
mod bullets;
mod cue_words;
mod first_equal;
mod label_key;
mod resolved;
mod section_items;
mod span;

use blockers::blockers;
use bullets::{Actions, Bullets, Distinct};
use section_items::*;
use span::Span;

/// Completed actions kept across merges: the first few (how the work started) and the rest
/// most recent.
const MAX_ACTIONS: usize = 60;
const HEAD_ACTIONS: usize = 10;
/// Extra Completed Actions kept because they are about the focus topic.
const MAX_FOCUS_ACTIONS: usize = 20;
/// Focus-topic sentences quoted under Critical Context.
const MAX_FOCUS_EXCERPTS: usize = 8;
const MAX_BLOCKERS: usize = 5;
const MAX_DECISIONS: usize = 30;
const MAX_CONSTRAINTS: usize = 20;
const MAX_RESOLVED: usize = 20;
const MAX_PENDING: usize = 10;
const GOAL_MAX_CHARS: usize = 600;
/// Modified files named in Active State; the full list is under Relevant Files.
const ACTIVE_STATE_FILES: usize = 5;
const EXCERPT_MAX_CHARS: usize = 600;
const TARGET_MAX_CHARS: usize = 120;
const LINE_MAX_CHARS: usize = 200;
/// Longer user messages are pasted material (logs, docs), not statements of intent.
const STATEMENT_SOURCE_MAX_CHARS: usize = 2_000;
const STATEMENT_CHARS: std::ops::RangeInclusive<usize> = 8..=300;

const NO_TASK: &str = "No user request was recorded in the compacted span.";
const NO_GOAL: &str = "Not stated in the compacted span.";
const REQUEST_PREFIX: &str = "User asked: ";

/// Summarizes a span without any model. Never fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveSummarizer;

impl Summarizer for ExtractiveSummarizer {
    fn name(&self) -> String {
        "extractive".into()
    }

    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(std::future::ready(Ok(summarize_extractively(&input))))
    }

    /// It reads the messages directly, so the compressor can skip building the prompt.
    fn needs_prompt(&self) -> bool {
        false
    }

    /// Calls and results are read from `SpanCalls` (built here from `turns` when the input has
    /// none), a result is quoted only through `SpanCall::quoted_result`, and a reply through
    /// `Span::quoted_reply`.
    fn redacts_what_it_quotes(&self) -> bool {
        true
    }
}

/// The summary body: every heading of [`sections::WRITTEN`] in order, then the ledger block.
/// Lists are trimmed (oldest first) until the body fits `budget_tokens` at ~4 characters per
/// token; the active task and the ledger are never trimmed.
pub fn summarize_extractively(input: &SummaryInput<'_>) -> String {
    let mut draft = Draft::build(input);
    let limit = input.budget_tokens.saturating_mul(4);
    // The size is counted, not rendered: rendering the whole draft after every trim made
    // this quadratic in the span (a sixth of compacting 10,000 messages, issue #17).
    // Trimming changes only the lists: the rest (the ledger, the task, the headings) is
    // counted once, not after every trim (it was 6% of compacting 10,000 messages).
    let fixed = draft.fixed_chars();
    while fixed + draft.trimmable_chars() > limit && draft.trim_one() {}
    draft.render()
}

struct Draft {
    active_task: String,
    goal: String,
    constraints: Bullets,
    actions: Actions,
    active_state: Vec<String>,
    in_progress: Vec<String>,
    blocked: Bullets,
    decisions: Bullets,
    resolved: Bullets,
    pending: Bullets,
    files: Bullets,
    remaining: Vec<String>,
    critical: Vec<String>,
    ledger: String,
}

impl Draft {
    fn build(input: &SummaryInput<'_>) -> Self {
        let span = Span::new(input.turns, input.actions, input.calls);
        let focus = focus_terms(input.focus_topic);
        let prev = input.previous_summary;
        // On a long span each section reads the span in ranges on several threads
        // (`split_work::in_ranges`): the requests for the user's words, the calls for the
        // blockers.
        let (constraints, decisions) = user_statements(&span, prev);
        let (resolved, pending) = questions(&span, prev, input.ledger);
        let blocked = blockers(&span, input.ledger);
        let actions = actions(&span, prev, &focus);
        let files = relevant_files(input.ledger, &span);
        let remaining = remaining_work(&pending, &blocked);
        Draft {
            active_task: active_task(input.ledger, &span, prev),
            goal: goal(&span, prev, input.first_request),
            constraints,
            actions,
            active_state: active_state(input.ledger, &span),
            in_progress: in_progress(&span),
            blocked,
            decisions,
            resolved,
            pending,
            files,
            remaining,
            critical: critical_context(&span, input.focus_topic, &focus),
            ledger: input.ledger.render(),
        }
    }

    fn render(&self) -> String {
        let lines = |out: &mut String, lines: &[String]| {
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(line);
            }
        };
        // One string, written section by section (a copy per line, per section and for the
        // join was a few percent of a real session's pass).
        let bodies: [&dyn Fn(&mut String); 13] = [
            &|out| out.push_str(&self.active_task),
            &|out| out.push_str(&self.goal),
            &|out| self.constraints.write_body(out),
            &|out| self.actions.write_body(out),
            &|out| lines(out, &self.active_state),
            &|out| lines(out, &self.in_progress),
            &|out| self.blocked.write_body(out),
            &|out| self.decisions.write_body(out),
            &|out| self.resolved.write_body(out),
            &|out| self.pending.write_body(out),
            &|out| self.files.write_body(out),
            &|out| lines(out, &self.remaining),
            &|out| lines(out, &self.critical),
        ];
        let mut out = String::with_capacity(4 * self.rendered_chars() / 3 + self.ledger.len());
        for (heading, body) in sections::WRITTEN.iter().zip(bodies) {
            out.push_str(heading);
            out.push('\n');
            body(&mut out);
            out.push_str("\n\n");
        }
        out.push_str(&self.ledger);
        out
    }

    /// `self.render().chars().count()`, without rendering: the lists' bodies are counted
    /// from their items' cached sizes.
    fn rendered_chars(&self) -> usize {
        self.fixed_chars() + self.trimmable_chars()
    }

    /// The characters of what [`Self::trim_one`] never changes: the headings, the sections
    /// written whole, the ledger and the blank lines between them.
    fn fixed_chars(&self) -> usize {
        let joined = |lines: &[String]| {
            lines.iter().map(|l| l.chars().count()).sum::<usize>() + lines.len().saturating_sub(1)
        };
        let headings: usize = sections::WRITTEN
            .iter()
            .map(|heading| heading.chars().count() + 1)
            .sum();
        headings
            + self.active_task.chars().count()
            + self.goal.chars().count()
            + joined(&self.active_state)
            + joined(&self.in_progress)
            + joined(&self.remaining)
            + joined(&self.critical)
            + self.ledger.chars().count()
            + 2 * sections::WRITTEN.len()
    }

    /// The characters of the lists' bodies, which trimming shortens.
    fn trimmable_chars(&self) -> usize {
        self.constraints.body_chars()
            + self.actions.body_chars()
            + self.blocked.body_chars()
            + self.decisions.body_chars()
            + self.resolved.body_chars()
            + self.pending.body_chars()
            + self.files.body_chars()
    }

    /// Drops the oldest item of the largest trimmable list; false when nothing is left to trim.
    fn trim_one(&mut self) -> bool {
        let sizes = [
            self.actions.size(),
            self.resolved.size(),
            self.files.size(),
            self.decisions.size(),
            self.constraints.size(),
            self.blocked.size(),
            self.pending.size(),
        ];
        let Some((largest, _)) = sizes
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
        else {
            return false;
        };
        match largest {
            0 => self.actions.drop_oldest(),
            1 => self.resolved.drop_oldest(),
            2 => self.files.drop_oldest(),
            3 => self.decisions.drop_oldest(),
            4 => self.constraints.drop_oldest(),
            5 => self.blocked.drop_oldest(),
            _ => self.pending.drop_oldest(),
        }
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
