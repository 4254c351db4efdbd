//! One compression pass: prune → cut → summarize (with escalation, `escalation.rs`; the
//! quality gate can reject a summary, which escalates too) → gate → assemble.
//!
//! The convergence guarantee lives here. The installed summary is never larger than its budget
//! (nor than the span it replaces): an oversized or failed summary escalates to a shorter
//! re-summary, then to the extractive summary, then to deterministic truncation of the summary
//! body. With the head and tail fixed by the boundaries, the compacted prompt is therefore at
//! most head + tail + summary budget, whatever the summarizer does.

use crate::compress::boundary;
use crate::compress::earlier_summaries::{previous_summaries, split_previous_summaries};
use crate::compress::escalation::{SummaryRequest, choose_summary, fit_to_budget};
use crate::compress::guard::FailureKind;
use crate::compress::lazy_prune::LazyPrune;
use crate::compress::output::Output;
use crate::compress::prune::PruneConfig;
use crate::compress::sanitize;
use crate::compress::threshold::{Budgets, summary_budget};
use crate::compress::{CompressionResult, Outcome, assemble};
use crate::message::{Content, ContentPart, Message, Role};
use crate::split_work::items_ahead;
use crate::summary::Summarizer;
use crate::summary::gate::{GateReport, check_and_repair};
use crate::summary::ledger::TaskLedger;
use crate::summary::redact::redact;
use crate::summary::redacted_views::SpanViews;
use crate::summary::sections;
use crate::summary::span_calls::SpanCalls;
use crate::tokens::{Encoding, TokenCounter};
use crate::tool_action::ActionTable;
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// Longest active task kept verbatim in the ledger.
const ACTIVE_TASK_MAX_CHARS: usize = 1_400;

/// Inputs of one pass that do not change during it.
pub(crate) struct PassContext<'a> {
    pub messages: &'a [Message],
    /// Rough tokens of each message of `messages`.
    pub counts: &'a [u64],
    pub budgets: Budgets,
    pub protect_first_n: usize,
    pub protect_last_n: usize,
    pub already_compacted: bool,
    /// Which of `messages` are compaction summaries ([`markers::is_summary_message`]), by
    /// index, ascending.
    pub summaries: &'a [usize],
    pub focus_topic: Option<&'a str>,
    pub tokens_before: u64,
    pub summarizer: &'a dyn Summarizer,
    /// False while the configured summarizer cools down after a failure.
    pub use_primary: bool,
    pub timeout: Duration,
}

/// A pass's result plus what the guard needs to learn from it.
pub(crate) struct PassReport<'a> {
    /// Its messages are left empty: they are `output`'s, settled by the caller.
    pub result: CompressionResult,
    pub output: Output<'a>,
    pub primary_failure: Option<FailureKind>,
    pub primary_succeeded: bool,
}

/// Budgets inside a pass use the reference's rough estimate, like the threshold.
pub(super) fn counter() -> &'static dyn TokenCounter {
    Encoding::Rough.counter()
}

fn tokens_of(messages: &[Cow<'_, Message>]) -> u64 {
    messages
        .iter()
        .map(|m| counter().count_message(m) as u64)
        .sum()
}

/// [`tokens_of`] the output, taking a message still borrowed from the input at the count
/// the pass started with: most of the output is the input's own messages, and recounting
/// them was 2% of a real session's pass. Only what the pass wrote (stubs, cut arguments, the
/// summary) is counted.
fn output_tokens(ctx: &PassContext<'_>, output: &[Cow<'_, Message>]) -> u64 {
    let input = ctx.messages.as_ptr_range();
    output
        .iter()
        .map(|m| {
            let counted = match m {
                Cow::Borrowed(b) if input.contains(&std::ptr::from_ref(*b)) => {
                    // In the input slice, so at a whole element's offset from its start.
                    let at = (std::ptr::from_ref(*b) as usize - input.start as usize)
                        / std::mem::size_of::<Message>();
                    ctx.counts.get(at).copied()
                }
                _ => None,
            };
            counted.unwrap_or_else(|| counter().count_message(m) as u64)
        })
        .sum()
}

pub(super) fn text_tokens(text: &str) -> u64 {
    counter().count_text(text) as u64
}

/// Whether any message is a tool result or calls tools (what pruning could change).
fn has_tool_activity(messages: &[Message]) -> bool {
    messages
        .iter()
        .any(|m| m.role == Role::Tool || m.has_tool_calls())
}

pub(crate) async fn run_pass(ctx: PassContext<'_>) -> PassReport<'_> {
    let started = Instant::now();
    // Pruning only rewrites tool results and arguments (never a role, an id, a user message
    // or a summary), so the boundaries read the original; only token counts differ: the
    // original's, except for the messages pruning changes. The output keeps what it needs
    // borrowed until it is settled (`output.rs`).
    let messages = ctx.messages;
    let original = |i: usize| match ctx.counts.get(i) {
        Some(&c) => c,
        None => counter().count_message(&messages[i]) as u64,
    };

    let head_end = boundary::head_size(messages, ctx.protect_first_n, ctx.already_compacted);
    // The head never swallows the latest user message: it must come after the summary.
    let head_end = match boundary::last_actionable_user(messages, 0) {
        Some(u) if u < head_end => u,
        _ => head_end,
    };
    let start = boundary::align_forward(messages, head_end);
    // The span's views are built from its first message on while pruning and the tail walk
    // decide where it ends (on a long conversation, on other threads: `items_ahead`).
    let from_start = messages.get(start..).unwrap_or_default();
    let span_views = SpanViews::default();
    let ((mut prune, plan), ahead) = items_ahead(
        from_start.len(),
        |i| span_views.changed(&from_start[i]),
        || {
            let (prune, plan) = prune_and_plan_tail(&ctx, start, &original);
            let n = plan.cut.saturating_sub(start);
            ((prune, plan), n)
        },
    );
    // The latest user message must follow the summary verbatim: when the cut passes it (it
    // sits at the head boundary, or the tail was over its ceiling), it is carried.
    let (end, moved_user) = (plan.cut, plan.carried_user);
    if start >= end || end > messages.len() {
        let after_head = messages.len().saturating_sub(start);
        let mut report = nothing_to_summarize(&ctx, prune, started, None);
        if ctx.protect_last_n >= after_head
            && let Outcome::NoOp { reason } = &mut report.result.outcome
        {
            *reason = format!(
                "the last {} messages are protected (protect_last_n) and the {after_head} after the head are all of them",
                ctx.protect_last_n
            );
        }
        return report;
    }

    // The original's turns: the summary and the ledger read real outputs (exit codes,
    // errors), not the one-line stubs.
    let span = &messages[start..end];
    let (span_previous, turn_list, view_list) = split_previous_summaries(span, ahead, |k| {
        ctx.summaries.binary_search(&(start + k)).is_ok()
    });
    let turns = turn_list.refs();
    // Assembly drops every earlier summary, wherever it sits (head, span or kept tail), so
    // each one's body, and with it its task ledger, is carried into the new summary.
    let previous = previous_summaries(messages, ctx.summaries, span_previous, (start, end));
    if turns.is_empty() {
        return nothing_to_summarize(&ctx, prune, started, None);
    }
    // The original span's size; earlier summaries are part of what is replaced.
    let span_tokens: u64 = match ctx.counts.get(start..end) {
        Some(c) => c.iter().sum(),
        None => turns
            .iter()
            .map(|m| counter().count_message(m) as u64)
            .sum(),
    };
    let budget = summary_budget(span_tokens, ctx.budgets.max_summary_tokens);
    // Summarizers and the ledger read bounded, redacted views: the start and end of each long
    // result, with exact counts of what was cut (see `summary::view`).
    let views = view_list.refs();
    // The output keeps the head and the tail, pruned.
    prune.decide(0..start);
    prune.decide(end..messages.len());
    let actions = span_actions(prune.take_actions(), &views);
    // Paired and judged once: the ledger and the extractive summary read the same calls.
    let calls = SpanCalls::new(&views, Some(&actions));
    let ledger = build_ledger(previous.as_deref(), &views, messages, &calls);
    let previous_redacted = previous.as_deref().map(|p| redact(p).into_owned());
    let focus = ctx.focus_topic.map(|f| redact(f).into_owned());
    let first_request = first_user_request(messages);
    let request = SummaryRequest {
        first_request: first_request.as_deref(),
        turns: &turns,
        views: &views,
        previous: previous_redacted.as_deref(),
        focus: focus.as_deref(),
        ledger: &ledger,
        actions: &actions,
        calls: &calls,
        span_tokens,
    };
    let chosen = choose_summary(&ctx, &request, budget).await;
    if let Some(reason) = chosen.unavailable {
        // Not even the pruning is kept: the user decides what to do (fix the key, wait, or
        // choose another summarizer) with the conversation exactly as it was.
        return PassReport {
            result: CompressionResult::unchanged(
                &[],
                ctx.tokens_before,
                Outcome::Unavailable { reason },
            ),
            output: Output::Input,
            primary_failure: chosen.primary_failure,
            primary_succeeded: false,
        };
    }

    let redacted = redact(&chosen.body);
    let (body, gate) = if chosen.passes_gate {
        // Checked in every compaction the test suite runs; the check was 4% of a real
        // session's pass.
        debug_assert_eq!(
            check_and_repair(&redacted, &ledger),
            (redacted.to_string(), GateReport::default()),
            "the extractive summary fails the quality gate"
        );
        (redacted.into_owned(), GateReport::default())
    } else {
        check_and_repair(&redacted, &ledger)
    };
    let body = fit_to_budget(&body, budget);
    let gate_added = gate.missing_sections.len() + gate.missing_facts.len();

    // The table goes back to pruning: a span message demoted from here on (to settle the
    // checks below) finds its call already classified.
    let mut prune = prune.with_actions(actions);
    let pruned = prune.pruned();
    let head = pruned.kept(messages, 0..start);
    let tail = carried_tail(
        moved_user.and_then(|u| pruned.get(u)),
        pruned.kept(messages, end..messages.len()),
    );
    // The tail's size, for the report, before it moves into the output. The kept messages'
    // tokens are known (the walk counted them); only a carried request is counted, which has
    // taken in the first kept message when the tail is one shorter than both.
    let kept = messages.len() - end;
    let (carried_tokens, kept_from) = match (moved_user, tail.first()) {
        (Some(_), Some(first)) => (
            counter().count_message(first) as u64,
            end + (kept + 1).saturating_sub(tail.len()),
        ),
        _ => (0, end),
    };
    let kept_tokens = prune.tokens_in(kept_from..messages.len(), &original);
    let tail_size = (tail.len(), carried_tokens + kept_tokens);
    // Every compaction the test suite runs checks the sum against a recount.
    debug_assert_eq!(tail_size.1, tokens_of(&tail), "the tail's tokens");
    // Pruning never makes a summary (a stub or cut arguments do not read as one), so the
    // kept messages hold one only where the input did.
    let kept_summaries = ctx
        .summaries
        .iter()
        .any(|&i| i < start || i >= end || Some(i) == moved_user);
    let assembled = assemble::assemble_kept(head, &body, tail, kept_summaries);
    let (sanitized, _) = sanitize::sanitize_kept(assembled);
    let final_messages = sanitize::strip_media_kept(sanitized);
    let tokens_after = output_tokens(&ctx, &final_messages);
    // Every compaction the test suite runs checks the sum against a recount.
    debug_assert_eq!(
        tokens_after,
        tokens_of(&final_messages),
        "the output's tokens"
    );
    // Short spans: the summary (with its prefix and the ledger) costs more than the turns it
    // would replace, pruned. Installing it would grow the prompt, so it is refused. The
    // span's messages are demoted only until their pruned size settles the question.
    let whole = 0..messages.len();
    let refused = (!prune.reaches(whole.clone(), &original, tokens_after.saturating_add(1)))
        .then(|| prune.tokens_in(whole, &original));
    if let Some(pruned_tokens) = refused {
        let mut report = nothing_to_summarize(&ctx, prune, started, Some(pruned_tokens));
        let why = format!(
            "a summary would not be smaller than the {} messages it replaces (~{pruned_tokens} → ~{tokens_after} tokens), so it was not installed",
            end - start
        );
        match &mut report.result.outcome {
            Outcome::NoOp { reason } => *reason = why,
            _ => report.result.escalations.push(why),
        }
        report.primary_failure = chosen.primary_failure;
        report.primary_succeeded = chosen.primary_succeeded;
        report.result.gate_rejections = chosen.gate_rejections;
        return report;
    }
    // What the output holds that pruning changed (the span's messages are gone).
    let pruned_count = prune.changed_in(0..start) + prune.changed_in(end..messages.len());
    let floor_tokens = tail_floor_tokens(&ctx, &prune, &original, start);

    PassReport {
        primary_failure: chosen.primary_failure,
        primary_succeeded: chosen.primary_succeeded,
        output: Output::Kept(final_messages),
        result: CompressionResult {
            messages: Vec::new(),
            outcome: Outcome::Compressed,
            summarized_range: Some(start..end),
            pruned: pruned_count,
            tokens_before: ctx.tokens_before,
            tokens_after,
            summary: Some(body),
            summarizer: Some(chosen.by),
            fallback_used: chosen.fallback_used,
            escalations: chosen.escalations,
            gate_added,
            gate_rejections: chosen.gate_rejections,
            tail: Some(tail_stats(&ctx, messages, start, floor_tokens, tail_size)),
            elapsed: started.elapsed(),
        },
    }
}

/// The tokens the tail keeps at least: [`boundary::tail_token_floor`], or all there is after
/// the span's first message (with its call group) when that is less, counted on the pruned
/// conversation the boundaries saw. The span's messages are demoted only as far as needed.
fn tail_floor_tokens(
    ctx: &PassContext<'_>,
    prune: &LazyPrune<'_, '_>,
    original: &dyn Fn(usize) -> u64,
    start: usize,
) -> u64 {
    let floor = boundary::tail_token_floor(ctx.budgets.tail_tokens as usize) as u64;
    let after_first = boundary::align_forward(ctx.messages, start + 1)..ctx.messages.len();
    if prune.reaches(after_first.clone(), original, floor) {
        return floor;
    }
    prune.tokens_in(after_first, original)
}

/// The kept tail (`tail`, carried request included) against the budget and floors.
fn tail_stats(
    ctx: &PassContext<'_>,
    messages: &[Message],
    start: usize,
    floor_tokens: u64,
    (tail_messages, tail_tokens): (usize, u64),
) -> crate::compress::TailStats {
    crate::compress::TailStats {
        messages: tail_messages,
        tokens: tail_tokens,
        budget_tokens: ctx.budgets.tail_tokens,
        floor_messages: boundary::tail_floor(messages.len() - start, ctx.protect_last_n),
        floor_tokens,
    }
}

/// The tail, preceded by the carried latest user message when there is one. A tail that itself
/// starts with a (non-actionable, e.g. blank) user message is joined onto the carried one so
/// two user messages never follow each other.
fn carried_tail<'a>(
    carried: Option<&Message>,
    tail: Vec<Cow<'a, Message>>,
) -> Vec<Cow<'a, Message>> {
    let Some(carried) = carried else {
        return tail;
    };
    // A request carried inside an earlier summary's message travels as its own words.
    let mut first = boundary::own_words(carried).into_owned();
    let mut rest = tail.into_iter().peekable();
    if let Some(next) = rest.next_if(|m| m.role == Role::User) {
        first.content = Some(join_contents(
            first.content.take(),
            next.into_owned().content,
        ));
    }
    std::iter::once(Cow::Owned(first)).chain(rest).collect()
}

fn join_contents(a: Option<Content>, b: Option<Content>) -> Content {
    let parts = |c: Option<Content>| match c {
        Some(Content::Parts(p)) => p,
        Some(Content::Text(t)) if !t.trim().is_empty() => vec![ContentPart::text(t)],
        _ => Vec::new(),
    };
    match (a, b) {
        (Some(Content::Text(x)), Some(Content::Text(y))) => Content::Text(if y.trim().is_empty() {
            x
        } else {
            format!("{x}\n\n{y}")
        }),
        (a, b) => Content::Parts(parts(a).into_iter().chain(parts(b)).collect()),
    }
}

/// The pass's result when nothing can be summarized: the pruned conversation (copied whole:
/// it is the output) when pruning changed something, else the input unchanged.
/// `pruned_tokens`: the pruned conversation's tokens when the caller summed them already
/// (every message decided); counting the output again was 2% of a real session's refused
/// pass.
fn nothing_to_summarize<'a>(
    ctx: &PassContext<'a>,
    prune: LazyPrune<'_, '_>,
    started: Instant,
    pruned_tokens: Option<u64>,
) -> PassReport<'a> {
    let pruned = prune.into_outcome().messages;
    let changed = pruned.changed_count();
    let (result, output) = if changed > 0 {
        let messages = pruned.into_kept(ctx.messages);
        // Every compaction the test suite runs checks the sum against a recount.
        debug_assert!(pruned_tokens.is_none_or(|t| t == tokens_of(&messages)));
        let tokens_after = pruned_tokens.unwrap_or_else(|| tokens_of(&messages));
        let result = CompressionResult {
            outcome: Outcome::PrunedOnly,
            pruned: changed,
            tokens_after,
            elapsed: started.elapsed(),
            ..CompressionResult::unchanged(&[], ctx.tokens_before, Outcome::PrunedOnly)
        };
        (result, Output::Kept(messages))
    } else {
        let result = CompressionResult::unchanged(
            &[],
            ctx.tokens_before,
            Outcome::NoOp {
                reason: "everything after the protected head fits in the protected tail".into(),
            },
        );
        (result, Output::Input)
    };
    PassReport {
        result,
        output,
        primary_failure: None,
        primary_succeeded: false,
    }
}

/// Every tool call of the span's `views`, classified once: the calls pruning already
/// classified for their stubs (`actions`) are not classified again, and the ledger and the
/// summary read them all from the table.
fn span_actions<'v>(mut actions: ActionTable<'v>, views: &[&'v Message]) -> ActionTable<'v> {
    let count = views.iter().map(|m| m.calls().len()).sum();
    actions.classify_all(count, || {
        views.iter().flat_map(|m| m.calls()).map(|call| {
            (
                call.function.name.as_str(),
                call.function.arguments.as_str(),
            )
        })
    });
    actions
}

/// Pruning with every pass over the whole conversation run, and the tail walk's plan: where the
/// span ends (messages are demoted as the walk reaches them, and no others).
fn prune_and_plan_tail<'a, 'c>(
    ctx: &PassContext<'a>,
    start: usize,
    original: &dyn Fn(usize) -> u64,
) -> (LazyPrune<'a, 'c>, boundary::TailPlan) {
    // Pruning only touches tool results and tool-call arguments: a conversation without any
    // skips it, and pruning owns only the messages it changes (`compress/pruned.rs`), so a
    // pass never holds a second copy of a long conversation (issue #17 item 3). An old
    // message is demoted only once something needs it pruned (`compress/lazy_prune.rs`): the
    // span's messages are summarized from the originals, so their stubs would be thrown away.
    let prune = if has_tool_activity(ctx.messages) {
        LazyPrune::new(
            ctx.messages,
            &PruneConfig {
                protect_tail_count: ctx.protect_last_n,
                protect_tail_tokens: ctx.budgets.tail_tokens as usize,
                ..PruneConfig::default()
            },
            counter(),
            ctx.counts,
        )
    } else {
        LazyPrune::untouched(ctx.messages, counter())
    };
    let plan = boundary::plan_tail_with(
        ctx.messages,
        start,
        ctx.budgets.tail_tokens as usize,
        ctx.protect_last_n,
        &|i| prune.count_of(i, original(i)) as usize,
    );
    (prune, plan)
}

/// The ledger carried by the previous summary, updated with the span's tool calls; the active
/// task is the latest real user request of the whole conversation (it stays verbatim in the
/// tail, and the summary must not point anywhere else).
pub(crate) fn build_ledger(
    previous: Option<&str>,
    turns: &[&Message],
    all: &[Message],
    calls: &SpanCalls<'_>,
) -> TaskLedger {
    // Every earlier summary's ledger, oldest first (several are joined when one sat in the
    // kept tail or a transcript holds more than one), then the span's own facts.
    let mut ledger = TaskLedger::default();
    if let Some(p) = previous {
        for (i, _) in p.match_indices(sections::TASK_LEDGER) {
            if let Some(mut newer) = TaskLedger::parse(&p[i..]) {
                newer.merge(&ledger);
                ledger = newer;
            }
        }
    }
    ledger.observe_calls(turns, calls);
    if let Some(i) = boundary::last_actionable_user(all, 0) {
        let own = boundary::own_words(&all[i]).text();
        // Redacted before it is clipped: a secret cut at the limit would no longer be seen.
        let task: String = redact(&own).chars().take(ACTIVE_TASK_MAX_CHARS).collect();
        if !task.trim().is_empty() {
            ledger.active_task = Some(task);
        }
    }
    redact_ledger(&mut ledger);
    ledger
}

/// The ledger is rendered into the summary verbatim and the gate restores it exactly, so it
/// must be redacted itself: a command line or an error excerpt can carry a token.
fn redact_ledger(ledger: &mut TaskLedger) {
    let clean = |s: &mut String| {
        if let std::borrow::Cow::Owned(r) = redact(s) {
            *s = r;
        }
    };
    ledger.active_task.iter_mut().for_each(clean);
    ledger.files_read.iter_mut().for_each(clean);
    ledger.files_modified.iter_mut().for_each(clean);
    ledger.open_asks.iter_mut().for_each(clean);
    for c in &mut ledger.commands {
        clean(&mut c.command);
    }
    if let Some(f) = ledger.last_failure.as_mut() {
        clean(&mut f.command);
        clean(&mut f.error);
    }
}

/// The conversation's first real user request (not an injected row, not a summary), cut like
/// the active task: the summary's goal.
fn first_user_request(messages: &[Message]) -> Option<String> {
    let first = messages
        .iter()
        .find(|m| boundary::is_actionable_user(m))?
        .text();
    // Redacted before it is clipped, as the active task is.
    let text: String = redact(&first).chars().take(ACTIVE_TASK_MAX_CHARS).collect();
    (!text.trim().is_empty()).then_some(text)
}
