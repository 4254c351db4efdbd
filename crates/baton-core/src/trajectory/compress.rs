//! Compressing one trajectory, in three steps the pipeline can place on different executors:
//! [`TrajectoryCompressor::prepare`] (parse, count, plan, build the summarizer's input: CPU),
//! the summarizer call (async, possibly a slow process), and [`TrajectoryCompressor::finish`]
//! (assemble, recount, serialize: CPU). [`TrajectoryCompressor::compress_line`] chains them
//! for callers that do not need the split.

use crate::compress::pass::build_ledger;
use crate::message::{Content, Message, Role};
use crate::summary::extractive::summarize_extractively;
use crate::summary::ledger::TaskLedger;
use crate::summary::prompt::{bound_input, serialize_turns};
use crate::summary::redact::{redact, redact_owned_message};
use crate::summary::span_calls::SpanCalls;
use crate::summary::view::{ViewLimits, message_view};
use crate::summary::{Summarizer, SummaryError, SummaryInput};
use crate::tokens::{MAX_TOKEN_BYTES, TokenCounter, Utf8Bound};
use crate::trajectory::metrics::{Action, OverLimitReason, TrajectoryMetrics, ratio};
use crate::trajectory::plan::{Cut, PlanConfig, cut};
use crate::trajectory::record::{Record, RecordError};
use std::sync::Arc;

/// Opening of every summary turn. The reference compressor's tag, so datasets compressed by
/// either tool look alike; Baton's own loaders recognise it as a summary.
pub const SUMMARY_TAG: &str = "[CONTEXT SUMMARY]:";

/// The default note appended to the system turn of a compressed trajectory, telling the model
/// that some of what it sees is a summary rather than the original turns.
pub const DEFAULT_SUMMARY_NOTICE: &str =
    "\n\nParts of the earlier conversation may appear as a summary rather than the original turns.";

/// A summary longer than this many times `summary_target_tokens` is cut: a summarizer that
/// echoes its input must not make the trajectory larger.
const SUMMARY_CAP_FACTOR: usize = 2;
/// The span shown to prompt-reading summarizers is bounded to this many characters.
const PROMPT_SPAN_MAX_CHARS: usize = 48_000;

const TEMPLATE: &str = include_str!("../../templates/trajectory_summary.txt");

/// Settings for one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrajectoryConfig {
    pub plan: PlanConfig,
    /// Appended to the first system turn of the head of every compressed trajectory; `None`
    /// leaves the system turn untouched.
    pub summary_notice: Option<String>,
    /// Count every turn of every record, so every metrics row and total is a count: no record
    /// is passed as under the target by its byte length, and no span's middle goes uncounted.
    pub exact_counts: bool,
}

impl Default for TrajectoryConfig {
    fn default() -> Self {
        TrajectoryConfig {
            plan: PlanConfig::default(),
            summary_notice: Some(DEFAULT_SUMMARY_NOTICE.to_string()),
            exact_counts: false,
        }
    }
}

/// What to write for one record.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// The output line without its newline; `None` when the record is left out.
    pub output: Option<Vec<u8>>,
    pub metrics: TrajectoryMetrics,
}

/// A line that is not a trajectory record, with its bytes for copying through.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub error: RecordError,
    pub bytes: Vec<u8>,
}

/// The result of [`TrajectoryCompressor::prepare`].
#[derive(Debug)]
pub enum Prepared {
    /// Nothing to summarize: the record is final.
    Done(Done),
    /// A span must be summarized first.
    Summarize(Box<SummaryJob>),
}

/// Everything needed to summarize one span and finish the record afterwards.
#[derive(Debug)]
pub struct SummaryJob {
    line: u64,
    original: Vec<u8>,
    record: Record,
    /// Each turn's tokens; `None` for turns inside the span the plan did not need.
    counts: Vec<Option<usize>>,
    start: usize,
    end: usize,
    /// Bounded, redacted copies of the span's turns: what summarizers read (owned: a job
    /// outlives the record it came from).
    views: Vec<Message>,
    ledger: TaskLedger,
    prompt: String,
    budget: usize,
}

impl SummaryJob {
    /// The views the summarizer reads, as [`Self::input`] takes them.
    pub fn view_refs(&self) -> Vec<&Message> {
        self.views.iter().collect()
    }

    /// The summarizer's input for this span; `views` is [`Self::view_refs`].
    pub fn input<'a>(&'a self, views: &'a [&'a Message]) -> SummaryInput<'a> {
        SummaryInput {
            turns: views,
            previous_summary: None,
            focus_topic: None,
            budget_tokens: self.budget,
            ledger: &self.ledger,
            prompt: &self.prompt,
            first_request: None,
            actions: None,
            calls: None,
        }
    }
}

/// Compresses trajectories to a token budget. Cheap to share: the pipeline holds one in an
/// `Arc` and calls it from many threads.
pub struct TrajectoryCompressor {
    config: TrajectoryConfig,
    counter: &'static dyn TokenCounter,
    summarizer: Arc<dyn Summarizer>,
}

impl std::fmt::Debug for TrajectoryCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrajectoryCompressor")
            .field("config", &self.config)
            .field("counter", &self.counter.name())
            .field("summarizer", &self.summarizer.name())
            .finish()
    }
}

impl TrajectoryCompressor {
    pub fn new(
        config: TrajectoryConfig,
        counter: &'static dyn TokenCounter,
        summarizer: Arc<dyn Summarizer>,
    ) -> Self {
        TrajectoryCompressor {
            config,
            counter,
            summarizer,
        }
    }

    pub fn config(&self) -> &TrajectoryConfig {
        &self.config
    }

    pub fn summarizer(&self) -> &Arc<dyn Summarizer> {
        &self.summarizer
    }

    /// The record's token bound ([`Utf8Bound`]) when the counter is a BPE and the bound is
    /// within the target: such a record is copied through without running the tokenizer,
    /// which was most of a pass over a dataset of mostly short records. `None` when it must
    /// be counted (a rough counter is cheap, so it always counts).
    fn provably_under_target(&self, messages: &[Message]) -> Option<usize> {
        if !self.counter.is_exact() || self.config.exact_counts {
            return None;
        }
        let bound: usize = messages.iter().map(|m| Utf8Bound.count_message(m)).sum();
        (bound <= self.config.plan.target_max_tokens).then_some(bound)
    }

    /// Parses, counts and plans one line (`line` is its 1-based number, for metrics). A line
    /// that is not a record comes back with its bytes, so the caller can still copy it.
    pub fn prepare(&self, line: u64, bytes: Vec<u8>) -> Result<Prepared, Malformed> {
        let record = match Record::parse(&bytes) {
            Ok(r) => r,
            Err(error) => return Err(Malformed { error, bytes }),
        };
        let messages = &record.conversation.messages;
        if let Some(bound) = self.provably_under_target(messages) {
            return Ok(Prepared::Done(Done {
                output: Some(bytes),
                metrics: TrajectoryMetrics {
                    tokens_bound: true,
                    ..TrajectoryMetrics::unchanged(
                        line,
                        record.id(),
                        record.format,
                        messages.len(),
                        bound,
                    )
                },
            }));
        }
        // Counts are taken as the plan asks for them: with a BPE counter, the turns deep
        // inside a long span are never counted (issue #17). A rough count is cheap: all of it;
        // and all of it when the user asked for exact figures.
        let mut counts: Vec<Option<usize>> = vec![None; messages.len()];
        let mut count =
            |i: usize| *counts[i].get_or_insert_with(|| self.counter.count_message(&messages[i]));
        if !self.counter.is_exact() || self.config.exact_counts {
            (0..messages.len()).for_each(|i| {
                count(i);
            });
        }
        let decided = cut(messages, &mut count, &self.config.plan);
        let (start, end) = match decided {
            Cut::Summarize { start, end } => {
                // What the output keeps is counted: the head and the turns after the span.
                (0..start).chain(end..messages.len()).for_each(|i| {
                    count(i);
                });
                (start, end)
            }
            Cut::UnderTarget | Cut::Blocked(_) => {
                // Written back unchanged; its row reports the exact total.
                let total: usize = (0..messages.len()).map(count).sum();
                let blocked = match decided {
                    Cut::Blocked(why) => Some(why.into()),
                    _ => None,
                };
                let metrics = TrajectoryMetrics {
                    skipped_under_target: blocked.is_none(),
                    still_over_limit: blocked.is_some(),
                    over_limit_reason: blocked,
                    ..TrajectoryMetrics::unchanged(
                        line,
                        record.id(),
                        record.format,
                        messages.len(),
                        total,
                    )
                };
                return Ok(Prepared::Done(Done {
                    output: Some(bytes),
                    metrics,
                }));
            }
        };
        let views: Vec<Message> = messages[start..end]
            .iter()
            .map(|m| redact_owned_message(message_view(m, ViewLimits::EXTRACTIVE).into_owned()))
            .collect();
        // The active task as of the span's end: what the summarized turns were working on.
        let view_refs: Vec<&Message> = views.iter().collect();
        let ledger = build_ledger(
            None,
            &view_refs,
            &messages[..end],
            &SpanCalls::new(&view_refs, None),
        );
        let budget = self.config.plan.summary_target_tokens;
        let prompt = if self.summarizer.needs_prompt() {
            trajectory_prompt(&views, budget)
        } else {
            String::new()
        };
        Ok(Prepared::Summarize(Box::new(SummaryJob {
            line,
            original: bytes,
            record,
            counts,
            start,
            end,
            views,
            ledger,
            prompt,
            budget,
        })))
    }

    /// Installs the summary (or, when the summarizer failed, the extractive one) and writes the
    /// record. A result that would not be smaller than the input is discarded and the input
    /// written unchanged.
    pub fn finish(&self, job: SummaryJob, summary: Result<String, SummaryError>) -> Done {
        let (body, failure) = match summary {
            Ok(text) if !text.trim().is_empty() => (text, None),
            Ok(_) => (
                summarize_extractively(&job.input(&job.view_refs())),
                Some(format!(
                    "summarizer `{}` returned nothing",
                    self.summarizer.name()
                )),
            ),
            Err(e) => (
                summarize_extractively(&job.input(&job.view_refs())),
                Some(e.to_string()),
            ),
        };
        let text = self.summary_text(&body);
        let SummaryJob {
            line,
            original,
            mut record,
            counts,
            start,
            end,
            ..
        } = job;
        let original_turns = counts.len();
        let known =
            |range: std::ops::Range<usize>| -> usize { counts[range].iter().flatten().sum() };
        let mut head: Vec<Message> = record.conversation.messages[..start].to_vec();
        let original_head = known(0..start);
        let mut head_tokens = original_head;
        if let Some(notice) = &self.config.summary_notice
            && let Some(system) = head.iter_mut().find(|m| m.role.is_instruction())
        {
            head_tokens -= self.counter.count_message(system);
            append_text(system, notice);
            head_tokens += self.counter.count_message(system);
        }
        let summary = Message::new(Role::User, Some(Content::Text(text)));
        let summary_tokens = self.counter.count_message(&summary);
        let tail_tokens = known(end..counts.len());
        let span_tokens = self.span_tokens(
            &counts[start..end],
            &record.conversation.messages[start..end],
            (head_tokens + summary_tokens).saturating_sub(original_head),
        );
        let tail = record.conversation.messages.split_off(end);
        let original_tokens = original_head + span_tokens.tokens + tail_tokens;
        let compressed_tokens = head_tokens + summary_tokens + tail_tokens;
        let target = self.config.plan.target_max_tokens;
        let base = TrajectoryMetrics {
            line,
            id: record.id(),
            action: Action::Compressed,
            format: Some(record.format),
            original_tokens,
            compressed_tokens,
            original_turns,
            compressed_turns: head.len() + 1 + tail.len(),
            turns_summarized: end - start,
            summarized_range: Some([start, end]),
            compression_ratio: ratio(original_tokens, compressed_tokens),
            skipped_under_target: false,
            still_over_limit: compressed_tokens > target,
            over_limit_reason: (compressed_tokens > target)
                .then_some(OverLimitReason::ProtectedTurnsTooLarge),
            summarizer_failed: failure.is_some(),
            summarizer_error: failure,
            error: None,
            tokens_bound: false,
            span_not_counted: !span_tokens.exact,
        };
        if compressed_tokens >= original_tokens {
            return Done {
                output: Some(original),
                metrics: TrajectoryMetrics {
                    action: Action::Unchanged,
                    compressed_tokens: original_tokens,
                    compressed_turns: original_turns,
                    turns_summarized: 0,
                    summarized_range: None,
                    compression_ratio: 1.0,
                    still_over_limit: original_tokens > target,
                    over_limit_reason: Some(OverLimitReason::SummaryNotSmaller),
                    ..base
                },
            };
        }
        head.push(summary);
        head.extend(tail);
        record.conversation.messages = head;
        Done {
            output: Some(record.to_line().into_bytes()),
            metrics: base,
        }
    }

    /// All three steps on the current task; for tests and single-record callers.
    pub async fn compress_line(&self, line: u64, bytes: Vec<u8>) -> Result<Done, Malformed> {
        match self.prepare(line, bytes)? {
            Prepared::Done(done) => Ok(done),
            Prepared::Summarize(job) => {
                let views = job.view_refs();
                let summary = self.summarizer.summarize(job.input(&views)).await;
                Ok(self.finish(*job, summary))
            }
        }
    }

    /// The span's tokens for the record's row. Turns the plan did not count are bounded by
    /// their UTF-8 length; they are counted after all only when that cannot settle whether the
    /// summary (with the head's notice, `replacement` tokens more than the head had) is smaller
    /// than the span, which decides what is written.
    fn span_tokens(
        &self,
        counts: &[Option<usize>],
        span: &[Message],
        replacement: usize,
    ) -> SpanTokens {
        // Uncounted turns: at most their UTF-8 length, at least that over the longest token.
        let (mut lower, mut upper, mut exact) = (0, 0, true);
        for (count, m) in counts.iter().zip(span) {
            match count {
                Some(n) => {
                    lower += n;
                    upper += n;
                }
                None => {
                    let bound = Utf8Bound.count_message(m);
                    lower += bound / MAX_TOKEN_BYTES;
                    upper += bound;
                    exact = false;
                }
            }
        }
        if exact || lower > replacement {
            return SpanTokens {
                tokens: upper,
                exact,
            };
        }
        SpanTokens {
            tokens: counts
                .iter()
                .zip(span)
                .map(|(c, m)| c.unwrap_or_else(|| self.counter.count_message(m)))
                .sum(),
            exact: true,
        }
    }

    /// The summary turn's text: tag, redacted body, cut to the cap.
    fn summary_text(&self, body: &str) -> String {
        let body = redact(body.trim());
        let body = body.strip_prefix(SUMMARY_TAG).unwrap_or(&body).trim();
        let cap = self.config.plan.summary_target_tokens.max(1) * SUMMARY_CAP_FACTOR;
        let body = clip_to_tokens(body, cap, self.counter);
        format!("{SUMMARY_TAG} {body}")
    }
}

/// A span's tokens: counted, or (not `exact`) an upper bound.
struct SpanTokens {
    tokens: usize,
    exact: bool,
}

/// The prompt for summarizers that read one (exec, LLM).
fn trajectory_prompt(views: &[Message], budget: usize) -> String {
    let turns = bound_input(&serialize_turns(views), PROMPT_SPAN_MAX_CHARS);
    TEMPLATE
        .replace("{budget_tokens}", &budget.to_string())
        .replace("{turns}", turns.trim_end())
}

/// `text` cut at a char boundary so that it counts at most `cap` tokens (plus a short marker).
fn clip_to_tokens(text: &str, cap: usize, counter: &dyn TokenCounter) -> String {
    let mut tokens = counter.count_text(text);
    if tokens <= cap {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    // Shrink proportionally; a few rounds converge because token density is roughly uniform.
    for _ in 0..8 {
        let keep = (chars.len() as f64 * cap as f64 / tokens as f64 * 0.95) as usize;
        chars.truncate(keep.min(chars.len().saturating_sub(1)));
        tokens = counter.count_text(&chars.iter().collect::<String>());
        if tokens <= cap {
            break;
        }
    }
    let mut out: String = chars.into_iter().collect();
    out.push_str(" […]");
    out
}

fn append_text(message: &mut Message, suffix: &str) {
    let text = message
        .content
        .as_ref()
        .map(Content::text)
        .unwrap_or_default();
    message.content = Some(Content::Text(text + suffix));
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn clipping_respects_the_cap() {
        let text = "word ".repeat(1_000);
        let clipped = clip_to_tokens(&text, 100, Encoding::O200k.counter());
        assert!(Encoding::O200k.counter().count_text(&clipped) <= 104);
        assert!(clipped.ends_with("[…]"));
    }
}
