//! Which summary a pass installs: the escalation ladder from the configured summarizer down
//! to a truncated extractive summary, each rung's failure recorded in words.
//!
//! Every rung ends in a summary no larger than its budget (with [`BUDGET_SLACK`]): an oversized
//! or failed summary escalates to a shorter re-summary, then to the extractive summary, then
//! to deterministic truncation of the summary body ([`fit_to_budget`]). That bound is what
//! makes a pass converge (`pass.rs`).

use crate::compress::boundary;
use crate::compress::guard::FailureKind;
use crate::compress::pass::{PassContext, text_tokens};
use crate::message::Message;
use crate::summary::extractive::ExtractiveSummarizer;
use crate::summary::ledger::TaskLedger;
use crate::summary::message_list::MessageList;
use crate::summary::prompt::{PromptInput, build_prompt, serialize_turns};
use crate::summary::redacted_views::redacted_views;
use crate::summary::reject;
use crate::summary::sections;
use crate::summary::span_calls::SpanCalls;
use crate::summary::view::ViewLimits;
use crate::summary::{Summarizer, SummaryError, SummaryInput};
use crate::tool_action::ActionTable;
use crate::truncate::truncate_head_tail;
use std::time::Duration;

/// How much over budget a summary may run before it is rejected (summarizers estimate size
/// loosely; rejecting 1% over would waste a good summary).
const BUDGET_SLACK: f64 = 1.25;
/// Ceiling on the serialized span handed to a model summarizer (≈40K tokens).
pub(crate) const SUMMARY_INPUT_MAX_CHARS: usize = 160_000;

/// What a pass hands every summarizer it tries.
pub(super) struct SummaryRequest<'a> {
    pub(super) first_request: Option<&'a str>,
    /// The span as stored (never handed to a summarizer before bounding and redaction).
    pub(super) turns: &'a [&'a Message],
    /// Small redacted views, for the extractive summarizer.
    pub(super) views: &'a [&'a Message],
    pub(super) previous: Option<&'a str>,
    pub(super) focus: Option<&'a str>,
    pub(super) ledger: &'a TaskLedger,
    /// The actions of the views' tool calls.
    pub(super) actions: &'a ActionTable<'a>,
    /// The views' tool calls, paired and judged (the ledger read them).
    pub(super) calls: &'a SpanCalls<'a>,
    pub(super) span_tokens: u64,
}

/// The summary the ladder settled on, and how it got there.
pub(super) struct Chosen {
    pub(super) body: String,
    pub(super) by: String,
    pub(super) fallback_used: bool,
    pub(super) escalations: Vec<String>,
    /// Summaries the quality gate refused, as `summarizer: reason`.
    pub(super) gate_rejections: Vec<String>,
    pub(super) primary_failure: Option<FailureKind>,
    pub(super) primary_succeeded: bool,
    /// The summarizer could not be used at all ([`SummaryError::Unavailable`]).
    pub(super) unavailable: Option<String>,
    /// `body` is the extractive summary, which is written to pass the quality gate (every
    /// heading, the task in the prose, the ledger block as rendered): gating it repairs
    /// nothing.
    pub(super) passes_gate: bool,
}

/// The escalation ladder: configured summarizer → the same again (asked for half the size
/// when it ran over; for the same size when the quality gate rejected its output) →
/// extractive → truncated extractive. Every rung's failure is recorded in words.
pub(super) async fn choose_summary(
    ctx: &PassContext<'_>,
    req: &SummaryRequest<'_>,
    budget: u64,
) -> Chosen {
    let mut escalations = Vec::new();
    let mut gate_rejections = Vec::new();
    let mut primary_failure = None;
    let extractive = ExtractiveSummarizer;
    let primary_is_extractive = ctx.summarizer.name() == extractive.name();
    if ctx.use_primary && !primary_is_extractive {
        let mut target = budget;
        for attempt in 0..2 {
            let name = ctx.summarizer.name();
            let next = if attempt == 0 {
                "; asked again"
            } else {
                "; used the extractive summary"
            };
            match summarize_once(ctx.summarizer, req, target, ctx.timeout).await {
                Ok(body) => {
                    // A non-summary is refused before its size matters: patching it would
                    // install the echo or the chat reply with the ledger glued on.
                    if let Some(rejection) = reject::judge(&body, req.ledger) {
                        escalations.push(format!(
                            "the quality gate rejected {name}'s summary: {rejection}{next}"
                        ));
                        gate_rejections.push(format!("{name}: {rejection}"));
                        continue;
                    }
                    match oversize(&body, budget, req.span_tokens) {
                        None => {
                            return Chosen {
                                body,
                                by: name,
                                fallback_used: false,
                                escalations,
                                gate_rejections,
                                primary_failure: None,
                                primary_succeeded: true,
                                unavailable: None,
                                passes_gate: false,
                            };
                        }
                        Some(why) => {
                            escalations.push(format!(
                                "{name} returned {why}{}",
                                if attempt == 0 {
                                    "; asked again for half the size"
                                } else {
                                    ""
                                }
                            ));
                            target = (budget / 2).max(1);
                        }
                    }
                }
                Err(e @ SummaryError::Unavailable { .. }) => {
                    return Chosen {
                        body: String::new(),
                        by: name,
                        fallback_used: false,
                        escalations,
                        gate_rejections,
                        primary_failure: Some(FailureKind::Other),
                        primary_succeeded: false,
                        unavailable: Some(e.to_string()),
                        passes_gate: false,
                    };
                }
                Err(e) => {
                    primary_failure = Some(match e {
                        SummaryError::Timeout { .. } => FailureKind::Timeout,
                        _ => FailureKind::Other,
                    });
                    escalations.push(e.to_string());
                    break;
                }
            }
        }
    } else if !ctx.use_primary && !primary_is_extractive {
        escalations.push(format!(
            "{} is cooling down after a failure; used the extractive summary",
            ctx.summarizer.name()
        ));
    }
    let fallback_used = !primary_is_extractive;
    let (body, passes_gate) = match summarize_once(&extractive, req, budget, ctx.timeout).await {
        Ok(body) => (body, true),
        Err(e) => {
            escalations.push(e.to_string());
            (req.ledger.render(), false)
        }
    };
    let by = if let Some(why) = oversize(&body, budget, req.span_tokens) {
        escalations.push(format!("extractive summary {why}; truncated to the budget"));
        "extractive (truncated)".to_string()
    } else {
        extractive.name()
    };
    Chosen {
        body,
        by,
        fallback_used,
        escalations,
        gate_rejections,
        primary_failure,
        primary_succeeded: false,
        unavailable: None,
        passes_gate,
    }
}

async fn summarize_once(
    summarizer: &dyn Summarizer,
    req: &SummaryRequest<'_>,
    budget: u64,
    timeout: Duration,
) -> Result<String, SummaryError> {
    // Model-facing summarizers get larger views (what the prompt keeps of each message); the
    // extractive one reads the small views, whose tool calls, results and replies it redacts
    // where it quotes them; any other summarizer reading the turns gets small views redacted
    // whole.
    let reads_pass_views = !summarizer.needs_prompt() && summarizer.redacts_what_it_quotes();
    let own_views: MessageList<'_>;
    let own_refs: Vec<&Message>;
    let turns: &[&Message] = if reads_pass_views {
        req.views
    } else {
        let limits = if summarizer.needs_prompt() {
            ViewLimits::PROMPT
        } else {
            ViewLimits::EXTRACTIVE
        };
        own_views = redacted_views(req.turns, limits);
        own_refs = own_views.refs();
        &own_refs
    };
    let prompt = if summarizer.needs_prompt() {
        let serialized = serialize_turns(turns);
        let bounded = crate::summary::prompt::bound_input(&serialized, SUMMARY_INPUT_MAX_CHARS);
        let ledger_block = req.ledger.render();
        build_prompt(&PromptInput {
            serialized_turns: &bounded,
            previous_summary: req.previous,
            focus_topic: req.focus,
            budget_tokens: budget as usize,
            ledger_block: &ledger_block,
            has_user_turns: turns.iter().any(|m| boundary::is_actionable_user(m)),
        })
    } else {
        String::new()
    };
    let input = SummaryInput {
        turns,
        previous_summary: req.previous,
        focus_topic: req.focus,
        budget_tokens: budget as usize,
        ledger: req.ledger,
        first_request: req.first_request,
        prompt: &prompt,
        // The table's keys are the views' calls; the prompt views of a model summarizer are
        // cut differently but keep each call's text, so they find them there too.
        actions: Some(req.actions),
        // The calls were paired on the pass's views: only a summarizer reading those gets them.
        calls: reads_pass_views.then_some(req.calls),
    };
    let name = summarizer.name();
    match tokio::time::timeout(timeout, summarizer.summarize(input)).await {
        Ok(Ok(body)) if body.trim().is_empty() => Err(SummaryError::Empty { summarizer: name }),
        Ok(Ok(body)) => Ok(body.trim().to_string()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(SummaryError::Timeout {
            summarizer: name,
            seconds: timeout.as_secs(),
        }),
    }
}

/// Why `body` cannot be installed as is: over budget (with slack), or not smaller than the span.
fn oversize(body: &str, budget: u64, span_tokens: u64) -> Option<String> {
    let t = text_tokens(body);
    if t as f64 > budget as f64 * BUDGET_SLACK {
        Some(format!("~{t} tokens, over its budget of {budget}"))
    } else if t >= span_tokens {
        Some(format!(
            "~{t} tokens, not smaller than the {span_tokens} tokens it replaces"
        ))
    } else {
        None
    }
}

/// Deterministic last rung: cut the summary's prose (head and tail kept, cut stated) so the
/// whole body fits `budget`; the ledger block is kept whole because its facts must survive.
pub(super) fn fit_to_budget(body: &str, budget: u64) -> String {
    if text_tokens(body) as f64 <= budget as f64 * BUDGET_SLACK {
        return body.to_string();
    }
    let (prose, ledger) = match body.find(sections::TASK_LEDGER) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let room_tokens = (budget as f64 * BUDGET_SLACK) as u64;
    let room = room_tokens.saturating_sub(text_tokens(ledger)).max(64) as usize * 4;
    let cut = truncate_head_tail(prose, room);
    format!("{}\n\n{}", cut.text.trim_end(), ledger)
        .trim()
        .to_string()
}
