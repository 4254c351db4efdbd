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
use crate::summary::failure_report;
use crate::summary::ledger::{self, PairedCall, TaskLedger};
use crate::summary::sections::{self, section_body};
use crate::summary::view;
use crate::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use crate::synthetic;
use crate::tool_action::{self, ActionTable, ToolAction};
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

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

// ASCII word boundaries: with a Unicode `\b` the regex crate leaves its fast engines on any
// non-ASCII text, and these run on every user sentence (issue #17). The words are ASCII; only
// one glued to a non-ASCII letter (`usé`, `使用use`) reads differently.
static DECISION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(let'?s|let us|use|using|don'?t|do not|we will|we'll|should|switch to|instead of|go with|decided?)(?-u:\b)|不要|改用|决定|请|使って|しないで",
    )
    .ok()
});
static CONSTRAINT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(must|never|always|only|avoid|required?|prefer)(?-u:\b)|必须|禁止|不能|必ず",
    )
    .ok()
});

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
}

/// The summary body: every heading of [`sections::WRITTEN`] in order, then the ledger block.
/// Lists are trimmed (oldest first) until the body fits `budget_tokens` at ~4 characters per
/// token; the active task and the ledger are never trimmed.
pub fn summarize_extractively(input: &SummaryInput<'_>) -> String {
    let mut draft = Draft::build(input);
    let limit = input.budget_tokens.saturating_mul(4);
    // The size is counted, not rendered: rendering the whole draft after every trim made
    // this quadratic in the span (a sixth of compacting 10,000 messages, issue #17).
    while draft.rendered_chars() > limit && draft.trim_one() {}
    draft.render()
}

/// What the span says, gathered once.
struct Span<'a> {
    turns: &'a [&'a Message],
    /// Real user requests: position and text.
    requests: Vec<(usize, String)>,
    /// The sentences of each request (as `requests`): split once for the questions and the
    /// user's statements.
    request_sentences: Vec<Vec<String>>,
    /// Positions of assistant messages with text.
    replies: Vec<usize>,
    calls: Vec<Call<'a>>,
}

/// One tool call, classified once, with its result text (borrowed from the span).
struct Call<'a> {
    name: &'a str,
    action: Cow<'a, ToolAction>,
    /// Raw arguments, shown only for tools nothing else is known about.
    arguments: &'a str,
    result: Option<Cow<'a, str>>,
    /// [`Call::failed`], worked out on first use: the blockers and each described outcome ask.
    /// A `OnceLock` so a long span's calls can be judged on several threads.
    failed: std::sync::OnceLock<bool>,
    /// The result's exit status, read once: the failure check and the outcome both ask.
    exit_code: std::sync::OnceLock<Option<i32>>,
}

impl<'a> Span<'a> {
    fn new(turns: &'a [&'a Message], actions: Option<&'a ActionTable<'a>>) -> Self {
        let positions =
            |keep: fn(&Message) -> bool| turns.iter().enumerate().filter(move |(_, m)| keep(m));
        let pairs = ledger::pair_tool_calls(turns);
        let calls = in_ranges(pairs.len(), |range| {
            pairs[range]
                .iter()
                .map(|pair| Call::new(pair, actions))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        let requests: Vec<(usize, String)> = positions(ledger::is_real_request)
            .map(|(i, m)| (i, m.text()))
            .collect();
        Span {
            turns,
            request_sentences: requests
                .iter()
                .map(|(_, text)| ledger::sentences(text))
                .collect(),
            requests,
            replies: positions(ledger::is_reply).map(|(i, _)| i).collect(),
            calls,
        }
    }

    /// The first assistant text after position `i`.
    fn reply_after(&self, i: usize) -> Option<String> {
        // `replies` is in ascending order: binary search, not a scan per request.
        let j = *self
            .replies
            .get(self.replies.partition_point(|&j| j <= i))?;
        Some(self.turns[j].text())
    }
}

impl<'a> Call<'a> {
    fn new(pair: &PairedCall<'a>, actions: Option<&'a ActionTable<'a>>) -> Self {
        let f = &pair.call.function;
        Call {
            name: &f.name,
            action: match actions {
                Some(table) => table.action_of(&f.name, &f.arguments),
                None => Cow::Owned(tool_action::classify(&f.name, &f.arguments)),
            },
            arguments: &f.arguments,
            result: pair.result.map(ledger::message_text),
            failed: std::sync::OnceLock::new(),
            exit_code: std::sync::OnceLock::new(),
        }
    }

    /// Whether the call's name, arguments or target mention any of `terms` (lowercase).
    fn mentions_any(&self, terms: &[String]) -> bool {
        if terms.is_empty() {
            return false;
        }
        let hay = format!("{} {}", self.name, self.arguments).to_lowercase();
        terms.iter().any(|t| hay.contains(t.as_str()))
    }

    /// "ACTION target — outcome [tool: name]".
    fn describe(&self) -> String {
        format!(
            "{} {} — {} [tool: {}]",
            verb(&self.action),
            self.target(),
            self.outcome(),
            self.name
        )
    }

    fn target(&self) -> String {
        match &*self.action {
            ToolAction::Other => one_line(self.arguments, TARGET_MAX_CHARS),
            action => target(action),
        }
    }

    /// What identifies "the same call again": the command, or the tool and its target.
    fn label(&self) -> String {
        match &*self.action {
            ToolAction::Command { .. } => self.target(),
            _ => format!("{} {}", self.name, self.target()),
        }
    }

    /// File contents and search hits often mention "error", so only the first line of a
    /// non-command result is checked.
    fn failed(&self) -> bool {
        let Some(text) = &self.result else {
            return false;
        };
        *self.failed.get_or_init(|| match *self.action {
            ToolAction::Command { .. } => ledger::command_failed_with(self.exit_code(text), text),
            _ => failure_report::reads_as_failure(
                text.lines().find(|l| !l.trim().is_empty()).unwrap_or(""),
            ),
        })
    }

    /// The exit status `text` (this call's result) reports, read once per call.
    fn exit_code(&self, text: &str) -> Option<i32> {
        *self.exit_code.get_or_init(|| tool_action::exit_code(text))
    }

    /// Exit status for commands, the error's first line for failures, otherwise the result size.
    fn outcome(&self) -> String {
        let Some(text) = &self.result else {
            return "no result recorded".into();
        };
        let lines = plural(view::original_line_count(text), "line");
        match (&*self.action, self.exit_code(text)) {
            (ToolAction::Command { .. }, Some(0)) => format!("exit 0, {lines} of output"),
            (ToolAction::Command { .. }, Some(code)) => {
                format!("exit {code}: {}", error_line(text))
            }
            _ if self.failed() => format!("failed: {}", error_line(text)),
            (ToolAction::Command { .. }, None) => format!("{lines} of output"),
            (ToolAction::Read { .. }, _) => lines,
            (ToolAction::Write { .. } | ToolAction::Edit { .. } | ToolAction::Patch { .. }, _) => {
                "ok".into()
            }
            _ => format!(
                "{} of output",
                plural(view::original_char_count(text), "char")
            ),
        }
    }
}

/// A bullet list that can be trimmed for the size budget. Items before `head` are kept until
/// the rest are gone; every drop is counted in the rendered list.
struct Bullets {
    items: Vec<String>,
    /// Characters of each item, kept beside them so sizes are sums, not rescans.
    item_chars: Vec<usize>,
    head: usize,
    dropped: usize,
    noun: &'static str,
    empty: &'static str,
}

impl Bullets {
    fn new(items: Vec<String>, noun: &'static str, empty: &'static str) -> Self {
        Bullets {
            item_chars: items.iter().map(|i| i.chars().count()).collect(),
            items,
            head: 0,
            dropped: 0,
            noun,
            empty,
        }
    }

    /// Keeps the newest `max` items, counting the rest as dropped.
    fn capped(mut self, max: usize) -> Self {
        if self.items.len() > max {
            let excess = self.items.len() - max;
            self.items.drain(..excess);
            self.item_chars.drain(..excess);
            self.dropped += excess;
        }
        self
    }

    fn drop_oldest(&mut self) {
        let i = if self.items.len() > self.head {
            self.head
        } else {
            self.head = self.head.saturating_sub(1);
            0
        };
        self.items.remove(i);
        self.item_chars.remove(i);
        self.dropped += 1;
    }

    fn omission_line(&self) -> String {
        format!("… {} earlier {} omitted", self.dropped, self.noun)
    }

    /// `self.body().chars().count()`, without building the body.
    fn body_chars(&self) -> usize {
        let omission = (self.dropped > 0).then(|| self.omission_line().chars().count());
        let lines = self.items.len() + usize::from(omission.is_some());
        if lines == 0 {
            return self.empty.chars().count();
        }
        let items: usize = self.item_chars.iter().map(|c| c + 2).sum();
        omission.unwrap_or(0) + items + (lines - 1)
    }

    fn body(&self) -> String {
        let mut lines = Vec::new();
        if self.dropped > 0 {
            lines.push(self.omission_line());
        }
        lines.extend(self.items.iter().map(|i| format!("- {i}")));
        if lines.is_empty() {
            self.empty.to_string()
        } else {
            lines.join("\n")
        }
    }

    fn size(&self) -> usize {
        self.item_chars.iter().sum()
    }
}

/// The numbered Completed Actions list; numbers continue across compactions, and gaps in
/// them are rendered as omission lines.
struct Actions {
    items: Vec<(u64, String)>,
    /// Characters of each item's text.
    item_chars: Vec<usize>,
    /// The highest number ever given, so a fully trimmed list still says how much it held.
    last_number: u64,
}

impl Actions {
    fn drop_oldest(&mut self) {
        let i = if self.items.len() > HEAD_ACTIONS + 1 {
            HEAD_ACTIONS
        } else {
            0
        };
        self.items.remove(i);
        self.item_chars.remove(i);
    }

    fn body(&self) -> String {
        let mut lines = Vec::new();
        let mut previous = 0u64;
        for (n, text) in &self.items {
            if *n > previous + 1 {
                lines.push(actions_omitted(n - previous - 1));
            }
            lines.push(format!("{n}. {text}"));
            previous = previous.max(*n);
        }
        if lines.is_empty() && self.last_number > 0 {
            actions_omitted(self.last_number)
        } else if lines.is_empty() {
            "No tool calls in the compacted span.".into()
        } else {
            lines.join("\n")
        }
    }

    /// `self.body().chars().count()`, without building the body.
    fn body_chars(&self) -> usize {
        let omission = |n: u64| actions_omitted(n).chars().count();
        let (mut chars, mut lines, mut previous) = (0, 0, 0u64);
        for (i, (n, _)) in self.items.iter().enumerate() {
            if *n > previous + 1 {
                chars += omission(n - previous - 1);
                lines += 1;
            }
            chars += digits(*n) + 2 + self.item_chars[i];
            lines += 1;
            previous = previous.max(*n);
        }
        if lines == 0 {
            return self.body().chars().count();
        }
        chars + lines - 1
    }

    fn size(&self) -> usize {
        self.item_chars.iter().sum()
    }
}

/// The line standing for `n` actions trimmed or dropped.
fn actions_omitted(n: u64) -> String {
    format!("… {n} earlier actions omitted")
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
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
        let span = Span::new(input.turns, input.actions);
        let focus = focus_terms(input.focus_topic);
        let prev = input.previous_summary;
        let (constraints, decisions) = user_statements(&span, prev);
        let (resolved, pending) = questions(&span, prev, input.ledger);
        let blocked = blockers(&span, input.ledger);
        let remaining = remaining_work(&pending, &blocked);
        Draft {
            active_task: active_task(input.ledger, &span, prev),
            goal: goal(&span, prev, input.first_request),
            constraints,
            actions: actions(&span, prev, &focus),
            active_state: active_state(input.ledger, &span),
            in_progress: in_progress(&span),
            blocked,
            decisions,
            resolved,
            pending,
            files: relevant_files(input.ledger, &span),
            remaining,
            critical: critical_context(&span, input.focus_topic, &focus),
            ledger: input.ledger.render(),
        }
    }

    fn render(&self) -> String {
        let bodies = [
            self.active_task.clone(),
            self.goal.clone(),
            self.constraints.body(),
            self.actions.body(),
            self.active_state.join("\n"),
            self.in_progress.join("\n"),
            self.blocked.body(),
            self.decisions.body(),
            self.resolved.body(),
            self.pending.body(),
            self.files.body(),
            self.remaining.join("\n"),
            self.critical.join("\n"),
        ];
        let mut out: Vec<String> = sections::WRITTEN
            .iter()
            .zip(bodies)
            .map(|(heading, body)| format!("{heading}\n{body}"))
            .collect();
        out.push(self.ledger.clone());
        out.join("\n\n")
    }

    /// `self.render().chars().count()`, without rendering: the lists' bodies are counted
    /// from their items' cached sizes.
    fn rendered_chars(&self) -> usize {
        let joined = |lines: &[String]| {
            lines.iter().map(|l| l.chars().count()).sum::<usize>() + lines.len().saturating_sub(1)
        };
        let bodies = [
            self.active_task.chars().count(),
            self.goal.chars().count(),
            self.constraints.body_chars(),
            self.actions.body_chars(),
            joined(&self.active_state),
            joined(&self.in_progress),
            self.blocked.body_chars(),
            self.decisions.body_chars(),
            self.resolved.body_chars(),
            self.pending.body_chars(),
            self.files.body_chars(),
            joined(&self.remaining),
            joined(&self.critical),
        ];
        let sections: usize = sections::WRITTEN
            .iter()
            .zip(bodies)
            .map(|(heading, body)| heading.chars().count() + 1 + body)
            .sum();
        // Every section and the ledger, joined by blank lines.
        sections + self.ledger.chars().count() + 2 * sections::WRITTEN.len()
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

/// The ledger's task (the latest request of the whole conversation) wins; then the span's
/// latest request; then whatever the previous summary said.
fn active_task(ledger: &TaskLedger, span: &Span<'_>, prev: Option<&str>) -> String {
    let task = ledger
        .active_task
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            span.requests
                .last()
                .map(|(_, t)| ledger::clip(t, ledger::ACTIVE_TASK_MAX_CHARS))
        });
    match task {
        Some(task) => format!("{REQUEST_PREFIX}{task}"),
        None => prev
            .and_then(|p| section_body(p, sections::ACTIVE_TASK))
            .filter(|b| !b.is_empty())
            .unwrap_or(NO_TASK)
            .to_string(),
    }
}

/// The goal is where the work started: carried from the previous summary, else the
/// conversation's first real request, else the span's first request.
fn goal(span: &Span<'_>, prev: Option<&str>, first_request: Option<&str>) -> String {
    let carried = prev
        .and_then(|p| section_body(p, sections::GOAL))
        // A goal an older version took from an injected row is not carried.
        .filter(|b| !b.is_empty() && *b != NO_GOAL && synthetic::classify_text(b).is_none());
    let first = first_request
        .filter(|t| !t.trim().is_empty())
        .or(span.requests.first().map(|(_, t)| t.as_str()));
    match (carried, first) {
        (Some(goal), _) => goal.to_string(),
        (None, Some(first)) => one_line(first, GOAL_MAX_CHARS),
        (None, None) => NO_GOAL.into(),
    }
}

/// The previous summary's numbered actions, then one per tool call of the span, numbered on.
fn actions(span: &Span<'_>, prev: Option<&str>, focus: &[String]) -> Actions {
    let mut items = prev.map(carried_actions).unwrap_or_default();
    let first = items.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
    let next = first + span.calls.len() as u64;
    // Only the lines that survive the cap are described (describing reads each result): the
    // first ones overall, the latest ones, and, with a focus topic, the calls about it.
    let head_room = HEAD_ACTIONS.saturating_sub(items.len());
    let tail_room = MAX_ACTIONS - HEAD_ACTIONS;
    let mut focused = 0;
    let mut kept_focus: Vec<u64> = Vec::new();
    for (k, call) in span.calls.iter().enumerate() {
        let edge = k < head_room || k + tail_room >= span.calls.len();
        let on_topic = !edge && focused < MAX_FOCUS_ACTIONS && call.mentions_any(focus);
        if edge || on_topic {
            items.push((first + k as u64, call.describe()));
        }
        if on_topic {
            focused += 1;
            kept_focus.push(first + k as u64);
        }
    }
    let cap = MAX_ACTIONS + kept_focus.len();
    if items.len() > cap {
        // Drop from the middle, but never the focus-topic lines.
        let mut excess = items.len() - cap;
        let mut i = HEAD_ACTIONS;
        while excess > 0 && i < items.len() {
            if kept_focus.contains(&items[i].0) {
                i += 1;
            } else {
                items.remove(i);
                excess -= 1;
            }
        }
    }
    Actions {
        item_chars: items.iter().map(|(_, t)| t.chars().count()).collect(),
        items,
        last_number: next - 1,
    }
}

/// Lowercased words (3+ characters) of a focus topic, for matching; CJK topics are kept whole
/// (they have no spaces to split on).
fn focus_terms(focus: Option<&str>) -> Vec<String> {
    let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) else {
        return Vec::new();
    };
    let words: Vec<String> = focus
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 || !w.is_ascii())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        vec![focus.to_lowercase()]
    } else {
        words
    }
}

/// Sentences of user and assistant messages that mention the focus topic (newest last).
fn focus_excerpts(span: &Span<'_>, focus: &[String]) -> Vec<String> {
    if focus.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for m in span
        .turns
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
    {
        let text = ledger::message_text(m);
        for sentence in ledger::sentences(&text) {
            let lower = sentence.to_lowercase();
            if focus.iter().any(|t| lower.contains(t.as_str())) {
                push_unique(&mut out, one_line(&sentence, LINE_MAX_CHARS));
            }
        }
    }
    let skip = out.len().saturating_sub(MAX_FOCUS_EXCERPTS);
    out.into_iter().skip(skip).collect()
}

/// Numbered lines keep their numbers; bullets (a model's list) are numbered after them.
fn carried_actions(prev: &str) -> Vec<(u64, String)> {
    static NUMBERED: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^(\d{1,9})\.\s+(.+)$").ok());
    let Some(body) = section_body(prev, sections::COMPLETED_ACTIONS) else {
        return Vec::new();
    };
    let mut items: Vec<(u64, String)> = Vec::new();
    for line in body.lines().map(str::trim) {
        let numbered = NUMBERED.as_ref().and_then(|re| re.captures(line));
        if let Some(c) = numbered
            && let Ok(n) = c[1].parse::<u64>()
        {
            items.push((n, c[2].to_string()));
        } else if let Some(text) = line.strip_prefix("- ") {
            let n = items.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
            items.push((n, text.to_string()));
        }
    }
    items
}

fn verb(action: &ToolAction) -> &'static str {
    match action {
        ToolAction::Read { .. } => "READ",
        ToolAction::Write { .. } => "WROTE",
        ToolAction::Edit { .. } => "EDITED",
        ToolAction::Patch { .. } => "PATCHED",
        ToolAction::Command { .. } => "RAN",
        ToolAction::Search { .. } => "SEARCHED",
        ToolAction::Web { .. } => "FETCHED",
        ToolAction::Delegate { .. } => "DELEGATED",
        ToolAction::Other => "CALLED",
    }
}

fn target(action: &ToolAction) -> String {
    match action {
        ToolAction::Read {
            path,
            from_line: Some(from),
            lines: Some(n),
        } => format!("{path} (lines {from}–{})", from + n.saturating_sub(1)),
        ToolAction::Read { path, .. }
        | ToolAction::Write { path, .. }
        | ToolAction::Edit { path } => path.clone(),
        ToolAction::Patch { paths } => paths.join(", "),
        ToolAction::Command { command } => format!("`{}`", one_line(command, TARGET_MAX_CHARS)),
        ToolAction::Search {
            pattern,
            path: Some(path),
        } => format!("`{}` in {path}", one_line(pattern, TARGET_MAX_CHARS)),
        ToolAction::Search { pattern, .. } => format!("`{}`", one_line(pattern, TARGET_MAX_CHARS)),
        ToolAction::Web { target } => one_line(target, TARGET_MAX_CHARS),
        ToolAction::Delegate { goal } => one_line(goal, TARGET_MAX_CHARS),
        ToolAction::Other => String::new(),
    }
}

/// The most telling line of an error output: the first that is not an exit-status or
/// framing line.
fn error_line(text: &str) -> String {
    const FRAMING: [&str; 5] = [
        "Chunk ID:",
        "Wall time:",
        "Original token count:",
        "Output:",
        "<tool_use_error>",
    ];
    let telling = text.lines().map(str::trim).find(|l| {
        !l.is_empty()
            && tool_action::exit_code(l).is_none()
            && !FRAMING
                .iter()
                .any(|f| l.starts_with(f) && l.len() <= f.len() + 24)
    });
    let line = telling.or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()));
    let line = line.unwrap_or("(no output)");
    let line = line.trim_start_matches("<tool_use_error>");
    one_line(line.trim_end_matches("</tool_use_error>"), LINE_MAX_CHARS)
}

fn active_state(ledger: &TaskLedger, span: &Span<'_>) -> Vec<String> {
    let modified = modified_files(ledger, span);
    let latest = &modified[modified.len().saturating_sub(ACTIVE_STATE_FILES)..];
    let mut lines = vec![match modified.len() {
        0 => "- Files modified: none recorded".to_string(),
        n if n == latest.len() => format!("- Files modified: {}", latest.join(", ")),
        n => format!(
            "- Files modified: {n} (all under Relevant Files); latest: {}",
            latest.join(", ")
        ),
    }];
    let is_command = |c: &&Call| matches!(*c.action, ToolAction::Command { .. });
    if let Some(c) = span.calls.iter().rev().find(is_command) {
        lines.push(format!("- Last command: {} → {}", c.target(), c.outcome()));
    }
    lines
}

fn modified_files(ledger: &TaskLedger, span: &Span<'_>) -> Vec<String> {
    let mut out = ledger.files_modified.clone();
    for path in span.calls.iter().flat_map(|c| c.action.modified_paths()) {
        if !path.is_empty() && !out.iter().any(|o| o == path) {
            out.push(path.to_string());
        }
    }
    out
}

fn read_files(ledger: &TaskLedger, span: &Span<'_>) -> Vec<String> {
    let mut out = ledger.files_read.clone();
    for call in &span.calls {
        if let ToolAction::Read { path, .. } = &*call.action
            && !path.is_empty()
            && !out.contains(path)
        {
            out.push(path.clone());
        }
    }
    out
}

fn in_progress(span: &Span<'_>) -> Vec<String> {
    let waiting = span.calls.iter().filter(|c| c.result.is_none());
    let lines: Vec<String> = waiting
        .map(|c| format!("- Awaiting a result: {}", c.describe()))
        .collect();
    if lines.is_empty() {
        vec!["No tool call was awaiting a result when the span ended.".into()]
    } else {
        lines
    }
}

/// Failures seen in the span (newest last), minus those a later identical call got past;
/// falls back to the ledger's last failure when the span saw none.
fn blockers(span: &Span<'_>, ledger: &TaskLedger) -> Bullets {
    // One backward pass: labels of calls that later succeeded, so each failure is checked in
    // O(1) (a per-failure scan of the later calls was quadratic on long agent runs).
    // Every call is labelled and judged (reading its result), each on its own: a long span's
    // calls are split over threads.
    let judged: Vec<(String, bool)> = in_ranges(span.calls.len(), |range| {
        span.calls[range]
            .iter()
            .map(|call| (call.label(), call.failed()))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    let mut succeeded_later: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut items: Vec<String> = Vec::new();
    for (call, (label, failed)) in span.calls.iter().zip(&judged).rev() {
        if *failed {
            if !succeeded_later.contains(label.as_str()) {
                let error = error_line(call.result.as_deref().unwrap_or_default());
                items.push(format!("{label} → {error}"));
            }
        } else if call.result.is_some() {
            succeeded_later.insert(label.as_str());
        }
    }
    items.reverse();
    if items.is_empty()
        && let Some(f) = &ledger.last_failure
    {
        let label = format!("`{}`", one_line(&f.command, TARGET_MAX_CHARS));
        if !succeeded_later.contains(label.as_str()) {
            items.push(format!(
                "Last recorded failure: {label} → {}",
                error_line(&f.error)
            ));
        }
    }
    Bullets::new(items, "errors", "None seen in the compacted span.").capped(MAX_BLOCKERS)
}

/// Constraints and decisions the user stated, carried from the previous summary first.
fn user_statements(span: &Span<'_>, prev: Option<&str>) -> (Bullets, Bullets) {
    let mut constraints = carried_bullets(prev, sections::CONSTRAINTS);
    let mut decisions = carried_bullets(prev, sections::KEY_DECISIONS);
    let sources = span
        .requests
        .iter()
        .zip(&span.request_sentences)
        .filter(|((_, t), _)| t.chars().count() <= STATEMENT_SOURCE_MAX_CHARS);
    for (_, sentences) in sources {
        for sentence in sentences {
            let len = sentence.chars().count();
            if !STATEMENT_CHARS.contains(&len)
                || sentence.ends_with('?')
                || sentence.ends_with('？')
            {
                continue;
            }
            let target = if matches_re(&DECISION, sentence) {
                &mut decisions
            } else if matches_re(&CONSTRAINT, sentence) {
                &mut constraints
            } else {
                continue;
            };
            push_unique(target, one_line(sentence, LINE_MAX_CHARS));
        }
    }
    (
        Bullets::new(constraints, "constraints", "None stated.").capped(MAX_CONSTRAINTS),
        Bullets::new(decisions, "decisions", "None stated by the user.").capped(MAX_DECISIONS),
    )
}

/// User questions answered by a later assistant message (resolved, merged with the previous
/// summary's) and those not answered (pending, with the ledger's open asks).
fn questions(span: &Span<'_>, prev: Option<&str>, ledger: &TaskLedger) -> (Bullets, Bullets) {
    let mut resolved = carried_bullets(prev, sections::RESOLVED_QUESTIONS);
    let mut pending: Vec<String> = Vec::new();
    for ((i, _), sentences) in span.requests.iter().zip(&span.request_sentences) {
        for q in ledger::questions_among(sentences) {
            let q = one_line(&q, LINE_MAX_CHARS);
            match span.reply_after(*i) {
                Some(reply) => {
                    let first = reply.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    push_unique(
                        &mut resolved,
                        format!("{q} → answered: {}", one_line(first, LINE_MAX_CHARS)),
                    );
                }
                None => push_unique(&mut pending, q),
            }
        }
    }
    for ask in &ledger.open_asks {
        let ask = one_line(ask, LINE_MAX_CHARS * 2);
        if !pending
            .iter()
            .any(|p| ask.contains(p.as_str()) || p.contains(&ask))
        {
            pending.push(ask);
        }
    }
    (
        Bullets::new(resolved, "questions", "None recorded.").capped(MAX_RESOLVED),
        Bullets::new(pending, "asks", "None.").capped(MAX_PENDING),
    )
}

/// Modified files first (they are the work product), then files only read. `head` marks the
/// modified files so the budget trims read-only files (oldest first) before any of them.
fn relevant_files(ledger: &TaskLedger, span: &Span<'_>) -> Bullets {
    let modified = modified_files(ledger, span);
    let read = read_files(ledger, span);
    let mut items: Vec<String> = modified
        .iter()
        .map(|path| {
            let note = if read.contains(path) {
                "read, modified"
            } else {
                "modified"
            };
            format!("{path} ({note})")
        })
        .collect();
    items.extend(
        read.iter()
            .filter(|p| !modified.contains(p))
            .map(|path| format!("{path} (read)")),
    );
    let mut files = Bullets::new(items, "files", "None recorded.");
    files.head = modified.len();
    files
}

fn remaining_work(pending: &Bullets, blocked: &Bullets) -> Vec<String> {
    let mut lines = Vec::new();
    if !pending.items.is_empty() {
        lines.push("- Answer the pending user asks above.".to_string());
    }
    if let Some(last) = blocked.items.last() {
        lines.push(format!("- Resolve: {last}"));
    }
    lines.push("- Carry on with the active task.".to_string());
    lines
}

fn critical_context(span: &Span<'_>, focus: Option<&str>, terms: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        lines.push(format!(
            "- Focus requested for this compaction: {}",
            one_line(focus, LINE_MAX_CHARS)
        ));
        for excerpt in focus_excerpts(span, terms) {
            lines.push(format!("- On the focus topic: {excerpt}"));
        }
    }
    if let Some(&j) = span.replies.last() {
        let excerpt = one_line(&span.turns[j].text(), EXCERPT_MAX_CHARS);
        lines.push(format!("- Last assistant message: {excerpt}"));
    }
    let count = |r: Role| span.turns.iter().filter(|m| m.role == r).count();
    lines.push(format!(
        "- Extractive summary of {} messages ({} user, {} assistant, {} tool): tool outputs are described, not quoted.",
        span.turns.len(),
        count(Role::User),
        count(Role::Assistant),
        count(Role::Tool)
    ));
    lines
}

/// Bullet items of a section of the previous summary (placeholders are not bullets, so they
/// are not carried).
fn carried_bullets(prev: Option<&str>, heading: &str) -> Vec<String> {
    prev.and_then(|p| section_body(p, heading))
        .map(|body| {
            body.lines()
                .filter_map(|l| l.trim().strip_prefix("- "))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn matches_re(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(text))
}

/// `s` on one line (whitespace runs collapsed), at most `max` characters with an ellipsis.
fn one_line(s: &str, max: usize) -> String {
    // Built word by word and abandoned once past `max`: a long reply or output is read only
    // as far as the line it gives.
    let mut flat = String::new();
    let mut chars = 0;
    for word in s.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
            chars += 1;
        }
        flat.push_str(word);
        chars += word.chars().count();
        if chars > max {
            return format!("{}…", ledger::clip(&flat, max.saturating_sub(1)));
        }
    }
    flat
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::summary::gate::check_and_repair;
    use crate::summary::ledger::tests::{calls, longest_real_conversation};

    fn transcript() -> Vec<Message> {
        let mut look = calls(&[
            ("t1", "Read", r#"{"file_path":"src/parser.rs"}"#),
            ("t2", "Bash", r#"{"command":"cargo test"}"#),
        ]);
        look.content = Some(crate::message::Content::Text("I'll look first.".into()));
        let patch =
            r#"{"input":"*** Begin Patch\n*** Add File: tests/parser.rs\n+x\n*** End Patch"}"#;
        vec![
            Message::user(
                "Fix the failing parser test. Let's keep the public API unchanged. You must not add dependencies.",
            ),
            look,
            Message::tool("t1", "fn parse() {}\nfn lex() {}"),
            Message::tool("t2", "Exit code 101\nerror[E0308]: mismatched types"),
            calls(&[(
                "t3",
                "Edit",
                r#"{"file_path":"src/parser.rs","old_string":"a","new_string":"b"}"#,
            )]),
            Message::tool("t3", "The file src/parser.rs has been updated."),
            calls(&[("t4", "apply_patch", patch)]),
            Message::tool("t4", "Success."),
            Message::user("Why did it fail?"),
            Message::assistant("The types did not match; fixed."),
            Message::user("Does the CLI still work?"),
        ]
    }

    fn observed(turns: &[Message]) -> TaskLedger {
        let mut ledger = TaskLedger::default();
        ledger.observe(turns);
        ledger
    }

    fn summarize(
        turns: &[Message],
        ledger: &TaskLedger,
        prev: Option<&str>,
        budget: usize,
    ) -> String {
        let turns: Vec<&Message> = turns.iter().collect();
        let input = SummaryInput {
            turns: &turns,
            previous_summary: prev,
            focus_topic: None,
            budget_tokens: budget,
            ledger,
            prompt: "",
            first_request: None,
            actions: None,
        };
        summarize_extractively(&input)
    }

    fn body<'a>(summary: &'a str, heading: &str) -> &'a str {
        section_body(summary, heading).unwrap()
    }

    #[test]
    fn output_has_every_heading_in_order_then_the_ledger() {
        let turns = transcript();
        let ledger = observed(&turns);
        let out = summarize(&turns, &ledger, None, 10_000);
        let mut at = 0;
        for heading in sections::WRITTEN {
            at += out[at..].find(&format!("{heading}\n")).unwrap() + heading.len();
        }
        assert!(out.ends_with(&ledger.render()));
        assert!(out.starts_with("## Active Task\nUser asked: Does the CLI still work?"));
    }

    #[test]
    fn sections_are_filled_from_the_transcript() {
        let turns = transcript();
        let out = summarize(&turns, &observed(&turns), None, 10_000);
        assert!(body(&out, sections::GOAL).starts_with("Fix the failing parser test."));
        let actions = body(&out, sections::COMPLETED_ACTIONS);
        assert!(actions.contains(
            "2. RAN `cargo test` — exit 101: error[E0308]: mismatched types [tool: Bash]"
        ));
        assert!(actions.contains("4. PATCHED tests/parser.rs — ok [tool: apply_patch]"));
        assert!(
            body(&out, sections::BLOCKED).contains("`cargo test` → error[E0308]: mismatched types")
        );
        assert_eq!(
            body(&out, sections::KEY_DECISIONS),
            "- Let's keep the public API unchanged."
        );
        assert_eq!(
            body(&out, sections::CONSTRAINTS),
            "- You must not add dependencies."
        );
        assert!(
            body(&out, sections::RESOLVED_QUESTIONS)
                .starts_with("- Why did it fail? → answered: The types")
        );
        assert_eq!(
            body(&out, sections::PENDING_USER_ASKS),
            "- Does the CLI still work?"
        );
        let files = body(&out, sections::RELEVANT_FILES);
        assert!(
            files.starts_with("- src/parser.rs (read, modified)\n- tests/parser.rs (modified)")
        );
    }

    #[test]
    fn output_is_deterministic_and_passes_the_gate_unchanged() {
        let turns = transcript();
        let ledger = observed(&turns);
        let out = summarize(&turns, &ledger, None, 10_000);
        assert_eq!(out, summarize(&turns, &ledger, None, 10_000));
        let (gated, report) = check_and_repair(&out, &ledger);
        assert_eq!((gated.as_str(), report.repaired), (out.as_str(), false));
    }

    #[test]
    fn every_modified_path_is_present_even_without_a_ledger() {
        let out = summarize(&transcript(), &TaskLedger::default(), None, 10_000);
        for path in ["src/parser.rs", "tests/parser.rs"] {
            assert!(body(&out, sections::ACTIVE_STATE).contains(path));
            assert!(body(&out, sections::RELEVANT_FILES).contains(path));
        }
    }

    #[test]
    fn merging_continues_numbering_and_carries_previous_facts() {
        let turns = transcript();
        let first = summarize(&turns[..8], &observed(&turns[..8]), None, 10_000);
        let mut ledger = TaskLedger::parse(&first).unwrap();
        ledger.observe(&turns[8..]);
        let more = vec![
            Message::user("Run the CLI smoke test please"),
            calls(&[("t9", "Bash", r#"{"command":"./smoke.sh"}"#)]),
            Message::tool("t9", "exit code: 0"),
        ];
        ledger.observe(&more);
        let second = summarize(&more, &ledger, Some(&first), 10_000);
        let actions = body(&second, sections::COMPLETED_ACTIONS);
        assert!(actions.starts_with("1. READ src/parser.rs"));
        assert!(actions.contains("\n5. RAN `./smoke.sh` — exit 0"));
        assert_eq!(
            body(&second, sections::KEY_DECISIONS),
            "- Let's keep the public API unchanged."
        );
        assert!(body(&second, sections::GOAL).starts_with("Fix the failing parser test."));
        assert!(second.starts_with("## Active Task\nUser asked: Run the CLI smoke test please"));
        assert_eq!(summarize(&more, &ledger, Some(&first), 10_000), second);
    }

    #[test]
    fn long_histories_keep_the_first_and_latest_actions() {
        let mut turns = vec![Message::user("loop")];
        for i in 0..(MAX_ACTIONS + 15) {
            let args = format!(r#"{{"command":"step {i}"}}"#);
            turns.push(calls(&[(&format!("c{i}"), "Bash", &args)]));
            turns.push(Message::tool(format!("c{i}"), "exit code: 0"));
        }
        let out = summarize(&turns, &observed(&turns), None, 100_000);
        let actions = body(&out, sections::COMPLETED_ACTIONS);
        assert!(actions.contains("10. RAN `step 9`"));
        assert!(actions.contains("\n… 15 earlier actions omitted\n26. RAN `step 25`"));
        assert!(actions.contains("\n75. RAN `step 74`"));
    }

    #[test]
    fn focus_topic_keeps_on_topic_actions_from_the_middle_and_quotes_them() {
        let mut turns = vec![Message::user("loop")];
        for i in 0..(MAX_ACTIONS + 40) {
            let cmd = if i == 30 {
                "psql -c 'select 1' --dbname billing".to_string()
            } else {
                format!("step {i}")
            };
            let args = serde_json::json!({ "command": cmd }).to_string();
            turns.push(calls(&[(&format!("c{i}"), "Bash", &args)]));
            turns.push(Message::tool(format!("c{i}"), "exit code: 0"));
        }
        turns.push(Message::assistant(
            "The billing database answered; the schema looks fine.",
        ));
        let ledger = observed(&turns);
        let views: Vec<&Message> = turns.iter().collect();
        let input = SummaryInput {
            turns: &views,
            previous_summary: None,
            focus_topic: Some("the Billing database"),
            budget_tokens: 100_000,
            ledger: &ledger,
            prompt: "",
            first_request: None,
            actions: None,
        };
        let out = summarize_extractively(&input);
        let actions = body(&out, sections::COMPLETED_ACTIONS);
        assert!(
            actions.contains("31. RAN `psql -c 'select 1' --dbname billing`"),
            "{actions}"
        );
        let critical = body(&out, sections::CRITICAL_CONTEXT);
        assert!(
            critical.contains("On the focus topic: The billing database answered"),
            "{critical}"
        );
        // Without the focus, that middle action is omitted.
        let plain = summarize(&turns, &ledger, None, 100_000);
        assert!(!body(&plain, sections::COMPLETED_ACTIONS).contains("--dbname billing"));
    }

    /// The trimming loop counts instead of rendering; the count must be the rendered size at
    /// every step, or the summary would stop trimming too early or too late.
    #[test]
    fn the_counted_size_is_the_rendered_size_at_every_trim() {
        let mut turns = transcript();
        for i in 0..40 {
            turns.extend(transcript().into_iter().map(|mut m| {
                if let Some(crate::message::Content::Text(t)) = &mut m.content {
                    t.push_str(&format!(" (round {i}, é漢)"));
                }
                m
            }));
        }
        let ledger = observed(&turns);
        let refs: Vec<&Message> = turns.iter().collect();
        let prev = "## Completed Actions\n1. RAN `ls`\n7. READ a.rs\n## Key Decisions\n- keep it";
        let input = SummaryInput {
            turns: &refs,
            previous_summary: Some(prev),
            focus_topic: None,
            budget_tokens: 10,
            ledger: &ledger,
            prompt: "",
            first_request: None,
            actions: None,
        };
        let mut draft = Draft::build(&input);
        let mut steps = 0;
        loop {
            assert_eq!(
                draft.rendered_chars(),
                draft.render().chars().count(),
                "step {steps}"
            );
            if !draft.trim_one() {
                break;
            }
            steps += 1;
        }
        assert!(steps > 20, "only {steps} trims");
    }

    #[test]
    fn a_small_budget_trims_lists_but_keeps_task_and_ledger() {
        let mut turns = transcript();
        for i in 0..40 {
            let args = format!(r#"{{"file_path":"src/module_{i}.rs"}}"#);
            turns.push(calls(&[(&format!("r{i}"), "Read", &args)]));
            turns.push(Message::tool(format!("r{i}"), "x\n".repeat(20)));
        }
        let ledger = observed(&turns);
        let big = summarize(&turns, &ledger, None, 100_000);
        let small = summarize(&turns, &ledger, None, 900);
        assert!(small.len() < big.len());
        assert!(small.starts_with("## Active Task\nUser asked: Does the CLI still work?"));
        assert!(small.ends_with(&ledger.render()));
        // Read-only files go before modified ones.
        assert!(body(&small, sections::RELEVANT_FILES).contains("src/parser.rs (read, modified)"));
        assert!(body(&small, sections::RELEVANT_FILES).contains("earlier files omitted"));
    }

    #[test]
    fn the_future_is_ready_at_once() {
        let turns = transcript();
        let ledger = observed(&turns);
        let turns: Vec<&Message> = turns.iter().collect();
        let input = SummaryInput {
            turns: &turns,
            previous_summary: None,
            focus_topic: Some("the parser"),
            budget_tokens: 10_000,
            ledger: &ledger,
            prompt: "",
            first_request: None,
            actions: None,
        };
        let mut fut = ExtractiveSummarizer.summarize(input);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(Ok(out)) = fut.as_mut().poll(&mut cx) else {
            panic!("the extractive summary was not ready at once");
        };
        assert!(out.contains("Focus requested for this compaction: the parser"));
        assert_eq!(ExtractiveSummarizer.name(), "extractive");
        assert!(!ExtractiveSummarizer.needs_prompt());
    }

    #[test]
    fn real_transcript_summary_names_every_modified_file() {
        let Some(turns) = longest_real_conversation() else {
            return;
        };
        let ledger = observed(&turns);
        let out = summarize(&turns, &ledger, None, 10_000);
        let files = body(&out, sections::RELEVANT_FILES);
        for path in &ledger.files_modified {
            assert!(files.contains(path.as_str()), "{path}");
        }
        assert_eq!(out, summarize(&turns, &ledger, None, 10_000));
        assert!(!check_and_repair(&out, &ledger).1.repaired);
    }

    /// Four chained compactions of the real transcript at a small budget: every modified file
    /// of the whole conversation is still named at the end, and the gate has nothing to add.
    #[test]
    fn ledger_facts_survive_chained_compactions_of_a_real_transcript() {
        let Some(turns) = longest_real_conversation() else {
            return;
        };
        let mut previous: Option<String> = None;
        let mut last_ledger = TaskLedger::default();
        for chunk in turns.chunks(turns.len().div_ceil(4)) {
            let prev_block = previous.as_deref().and_then(TaskLedger::parse);
            let mut ledger = prev_block.unwrap_or_default();
            ledger.observe(chunk);
            let body = summarize(chunk, &ledger, previous.as_deref(), 2_000);
            let (body, report) = check_and_repair(&body, &ledger);
            assert!(!report.repaired);
            previous = Some(body);
            last_ledger = ledger;
        }
        let last = previous.unwrap();
        assert_eq!(last_ledger.files_modified, observed(&turns).files_modified);
        for path in &observed(&turns).files_modified {
            assert!(last.contains(path.as_str()), "{path}");
        }
    }
}
