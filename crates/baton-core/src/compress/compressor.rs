//! [`Compressor`]: the default [`ContextEngine`].

use crate::compress::boundary;
use crate::compress::guard::{Guard, TurnKey};
use crate::compress::pass::{PassContext, run_pass};
use crate::compress::threshold::{Budgets, ThresholdConfig};
use crate::compress::{CompressionResult, CompressorConfig, Outcome, markers};
use crate::engine::{CompressRequest, ContextEngine, EngineStatus, TokenState};
use crate::message::{Content, ContentPart, Message};
use crate::split_work::in_ranges;
use crate::summary::BoxFuture;
use crate::tokens::{Encoding, RoughCounter, RunningCount, TokenCounter, tools_tokens};
use crate::usage::CanonicalUsage;
use serde_json::Value;
use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::time::Instant;

/// Messages a conversation needs beyond the head before compaction can do anything.
const MIN_MESSAGES_BEYOND_HEAD: usize = 4;

/// The default engine: threshold math, the anti-thrashing guard, and compression passes.
pub struct Compressor {
    config: CompressorConfig,
    budgets: Budgets,
    tokens: TokenState,
    guard: Guard,
    /// Per-message counts for preflight estimates: a turn costs its new messages only.
    running: RunningCount,
}

impl Compressor {
    pub fn new(config: CompressorConfig) -> Self {
        let budgets = budgets_for(&config);
        Compressor {
            tokens: TokenState {
                threshold_tokens: budgets.threshold_tokens,
                context_length: config.context_length,
                ..TokenState::default()
            },
            budgets,
            config,
            guard: Guard::default(),
            running: RunningCount::new(),
        }
    }

    pub fn config(&self) -> &CompressorConfig {
        &self.config
    }

    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// Whether anything has been compacted yet in this conversation (by this engine, or a
    /// summary is in it: `holds_summary`, from [`scan_messages`] in a compaction): then the
    /// head no longer protects early turns (they would otherwise fossilize across
    /// compactions).
    fn already_compacted(&self, holds_summary: impl FnOnce() -> bool) -> bool {
        self.tokens.compression_count > 0 || holds_summary()
    }

    async fn compress_now(&mut self, request: CompressRequest<'_>) -> CompressionResult {
        let started = Instant::now();
        let input = request.messages;
        let messages: &[Message] = &input;
        // Per-message estimates, computed once and shared with the pass.
        let Scanned { counts, summaries } = scan_messages(messages);
        let tokens_before = request
            .current_tokens
            .filter(|t| *t > 0)
            .unwrap_or_else(|| counts.iter().sum());
        if !request.force && tokens_before < self.budgets.threshold_tokens {
            return unchanged(
                input,
                tokens_before,
                Outcome::NoOp {
                    reason: format!(
                        "~{tokens_before} tokens is under the compression threshold of {}",
                        self.budgets.threshold_tokens
                    ),
                },
            );
        }
        let turn = turn_key(messages);
        if request.force {
            self.guard.clear_cooldown();
        } else if let Some(block) = self.guard.check(
            started,
            turn,
            self.budgets.threshold_tokens,
            self.config.max_passes_per_turn,
        ) {
            return unchanged(
                input,
                tokens_before,
                Outcome::Blocked {
                    reason: block.to_string(),
                },
            );
        }
        let already_compacted = self.already_compacted(|| !summaries.is_empty());
        let head = boundary::head_size(messages, self.config.protect_first_n, already_compacted);
        if messages.len() < head + MIN_MESSAGES_BEYOND_HEAD {
            let reason = format!(
                "only {} messages; compaction needs more than {} to have anything between the head and the tail",
                messages.len(),
                head + MIN_MESSAGES_BEYOND_HEAD - 1
            );
            return unchanged(input, tokens_before, Outcome::NoOp { reason });
        }
        let report = run_pass(PassContext {
            messages,
            counts: &counts,
            summaries: &summaries,
            budgets: self.budgets,
            protect_first_n: self.config.protect_first_n,
            protect_last_n: self.config.protect_last_n,
            already_compacted,
            focus_topic: request.focus_topic,
            tokens_before,
            summarizer: self.config.summarizer.as_ref(),
            use_primary: !self.guard.in_cooldown(started),
            timeout: self.config.pass_timeout,
        })
        .await;
        if let Some(kind) = report.primary_failure {
            self.guard.record_failure(kind, Instant::now());
        } else if report.primary_succeeded {
            self.guard.record_success();
        }
        let mut result = report.result;
        // The pass's borrows end here: what it kept is copied from a lent input or moved out
        // of a handed-over one.
        let settled = report.output.settle(messages);
        result.messages = settled.into_messages(input);
        if !request.force && !result.changed() && tokens_before >= self.budgets.threshold_tokens {
            // An automatic attempt that could not shrink the prompt: a second one this turn
            // would fail the same way.
            self.guard.record_compaction(turn, false, tokens_before);
        }
        if result.outcome == Outcome::Compressed {
            self.tokens.compression_count += 1;
            self.guard
                .record_compaction(turn, result.fallback_used, result.tokens_after);
            // Await the provider's real count before judging again (the reference's -1
            // sentinel): a rough estimate of the new prompt must not re-trigger compaction.
            self.tokens.last_prompt_tokens = 0;
            self.tokens.last_completion_tokens = 0;
        }
        result.elapsed = started.elapsed();
        result
    }
}

/// The input as the result of a call that changed nothing: moved back when it was handed
/// over, copied when it was lent.
fn unchanged(input: Cow<'_, [Message]>, tokens: u64, outcome: Outcome) -> CompressionResult {
    CompressionResult {
        messages: input.into_owned(),
        ..CompressionResult::unchanged(&[], tokens, outcome)
    }
}

fn budgets_for(config: &CompressorConfig) -> Budgets {
    ThresholdConfig {
        fraction: config.threshold,
        target_ratio: config.target_ratio,
        context_length: config.context_length,
        max_output_tokens: config.max_output_tokens,
    }
    .budgets()
}

/// Identifies the current user turn by its latest real user message and the message before
/// it. Both stay verbatim in the tail across the turn's compactions, and the neighbour tells two
/// turns with the same text ("continue") apart. Their fields are hashed where they lie:
/// writing the neighbour out as JSON first was 1% of a real session's compaction.
fn turn_key(messages: &[Message]) -> TurnKey {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Some(i) = boundary::last_actionable_user(messages, 0) {
        hash_texts(&messages[i], &mut h);
        if let Some(prev) = i.checked_sub(1).and_then(|p| messages.get(p)) {
            prev.role.as_str().hash(&mut h);
            hash_texts(prev, &mut h);
            prev.tool_call_id.hash(&mut h);
            prev.name.hash(&mut h);
            for call in prev.calls() {
                call.id.hash(&mut h);
                call.function.name.hash(&mut h);
                call.function.arguments.hash(&mut h);
            }
        }
    }
    TurnKey(h.finish())
}

/// Each text of `message`'s content, in order.
fn hash_texts(message: &Message, h: &mut impl Hasher) {
    match &message.content {
        Some(Content::Text(text)) => text.hash(h),
        Some(Content::Parts(parts)) => {
            for text in parts.iter().filter_map(ContentPart::text_value) {
                text.hash(h);
            }
        }
        Some(Content::Null) | None => {}
    }
}

impl ContextEngine for Compressor {
    fn name(&self) -> &str {
        "compressor"
    }

    fn tokens(&self) -> TokenState {
        self.tokens
    }

    fn update_from_response(&mut self, usage: &CanonicalUsage) {
        self.tokens.last_prompt_tokens = usage.prompt();
        self.tokens.last_completion_tokens = usage.output;
        self.tokens.last_total_tokens = usage.total();
        self.guard
            .record_real_prompt(usage.prompt(), self.budgets.threshold_tokens);
    }

    fn should_compress(&self, prompt_tokens: Option<u64>) -> bool {
        let tokens = prompt_tokens.unwrap_or(self.tokens.last_prompt_tokens);
        tokens >= self.budgets.threshold_tokens
    }

    fn should_compress_preflight(&mut self, messages: &[Message], tools: Option<&[Value]>) -> bool {
        let counted = self.running.sync(&RoughCounter, messages) as u64;
        let schemas = tools.map_or(0, |t| tools_tokens(&RoughCounter, t) as u64);
        counted + schemas >= self.budgets.threshold_tokens
    }

    fn has_content_to_compress(&self, messages: &[Message]) -> bool {
        boundary::has_content_to_compress(
            messages,
            self.config.protect_first_n,
            self.already_compacted(|| messages.iter().any(markers::is_summary_message)),
            self.budgets.tail_tokens as usize,
            self.config.protect_last_n,
            Encoding::Rough.counter(),
        )
    }

    fn compress<'a>(
        &'a mut self,
        request: CompressRequest<'a>,
    ) -> BoxFuture<'a, CompressionResult> {
        Box::pin(self.compress_now(request))
    }

    fn on_session_reset(&mut self) {
        self.tokens = TokenState {
            threshold_tokens: self.budgets.threshold_tokens,
            context_length: self.config.context_length,
            ..TokenState::default()
        };
        self.guard.reset();
        self.running = RunningCount::new();
    }

    fn status(&self) -> EngineStatus {
        let t = self.tokens;
        let usage_percent = if t.context_length > 0 {
            (t.last_prompt_tokens as f64 / t.context_length as f64 * 100.0).min(100.0)
        } else {
            0.0
        };
        let blocked = self
            .guard
            .check(
                Instant::now(),
                TurnKey(0),
                self.budgets.threshold_tokens,
                self.config.max_passes_per_turn,
            )
            .map(|b| b.to_string());
        EngineStatus {
            engine: self.name().to_string(),
            tokens: t,
            usage_percent,
            blocked,
        }
    }

    fn update_model(&mut self, model: &str, context_length: u64) {
        let changed = model != self.config.model;
        self.config.model = model.to_string();
        self.config.context_length = context_length;
        self.budgets = budgets_for(&self.config);
        self.tokens.threshold_tokens = self.budgets.threshold_tokens;
        self.tokens.context_length = context_length;
        self.tokens.last_prompt_tokens = 0;
        self.tokens.last_completion_tokens = 0;
        self.tokens.last_total_tokens = 0;
        if changed {
            // Strikes and cooldowns were judged against the old model's window and runtime.
            self.guard.reset();
        }
    }
}

/// What one read of every message gives a pass: each message's rough token estimate, in
/// order, and which messages are compaction summaries.
struct Scanned {
    counts: Vec<u64>,
    /// Indices, ascending.
    summaries: Vec<usize>,
}

/// [`Scanned`], split over threads when the conversation is long (on `synth_100k`, 86 MB, the
/// counting was a twentieth of a pass). Each message is checked for a summary right after it
/// is counted, while its text is in cache: the walks that asked again later (whether the
/// session was compacted before, which span messages are earlier summaries) found each
/// message's text cold, 8% of `synth_100k`'s pass (`perf record`).
fn scan_messages(messages: &[Message]) -> Scanned {
    let ranges = in_ranges(messages.len(), |range| {
        let mut summaries = Vec::new();
        let counts: Vec<u64> = range
            .map(|i| {
                let m = &messages[i];
                let count = RoughCounter.count_message(m) as u64;
                if markers::is_summary_message(m) {
                    summaries.push(i);
                }
                count
            })
            .collect();
        (counts, summaries)
    });
    let mut scanned = Scanned {
        counts: Vec::with_capacity(messages.len()),
        summaries: Vec::new(),
    };
    for (counts, summaries) in ranges {
        scanned.counts.extend(counts);
        scanned.summaries.extend(summaries);
    }
    scanned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split_work::SPLIT_FROM_ITEMS;

    #[test]
    fn a_long_conversations_counts_are_each_messages_own_in_order() {
        let messages: Vec<Message> = (0..3 * SPLIT_FROM_ITEMS + 7)
            .map(|i| Message::user("word ".repeat(i % 97 + 1)))
            .collect();
        let one_by_one: Vec<u64> = messages
            .iter()
            .map(|m| RoughCounter.count_message(m) as u64)
            .collect();
        assert_eq!(scan_messages(&messages).counts, one_by_one);
        assert_eq!(scan_messages(&messages[..5]).counts, one_by_one[..5]);
        assert!(scan_messages(&[]).counts.is_empty());
    }

    /// Summaries anywhere in a long conversation (in any thread's range) are all found, in
    /// order, and none where there is none.
    #[test]
    fn summaries_are_found_wherever_they_sit() {
        let len = 3 * SPLIT_FROM_ITEMS + 7;
        let mut messages: Vec<Message> = (0..len)
            .map(|i| Message::user(format!("step {i}")))
            .collect();
        assert!(scan_messages(&messages).summaries.is_empty());
        let at = [0, SPLIT_FROM_ITEMS + 3, 2 * SPLIT_FROM_ITEMS, len - 1];
        for &i in &at {
            let mut summary = Message::assistant("the summary");
            markers::mark_summary(&mut summary);
            messages[i] = summary;
        }
        assert_eq!(scan_messages(&messages).summaries, at);
        assert_eq!(scan_messages(&messages[..=at[1]]).summaries, at[..2]);
    }
}
