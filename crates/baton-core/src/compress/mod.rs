//! The default context engine: prune, cut, summarize, assemble.
//!
//! One pass, in order: Phase 1 pruning of old tool output (no model call), head and tail
//! boundaries that never split a tool call from its results, a summary of the span between
//! them (escalating from the configured summarizer to the extractive one to deterministic
//! truncation, so a pass always converges), the quality gate against the task ledger, then
//! assembly and tool-pair sanitization.

mod argument_cut;
pub mod assemble;
pub mod boundary;
mod compressor;
mod demote;
mod earlier_summaries;
mod escalation;
pub mod guard;
mod lazy_prune;
pub mod markers;
mod output;
pub(crate) mod pass;
pub mod prune;
pub mod pruned;
pub mod sanitize;
pub mod stubs;
pub mod threshold;

#[cfg(test)]
mod classify_once_tests;

pub use compressor::Compressor;

use crate::summary::Summarizer;
use crate::summary::extractive::ExtractiveSummarizer;
use serde::Serialize;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// Default of [`CompressorConfig::protect_last_n`]: the reference's effective tail floor
/// (its 20, capped at 8).
pub const DEFAULT_PROTECT_LAST_N: usize = 8;

/// Configuration of the [`Compressor`], with the reference design's defaults and names.
#[derive(Clone)]
pub struct CompressorConfig {
    /// Fraction of the effective window that triggers compression (`[compression] threshold`).
    pub threshold: f64,
    /// Share of the threshold kept verbatim as the tail (`target_ratio`).
    pub target_ratio: f64,
    /// Non-system head messages kept verbatim before the first compaction.
    pub protect_first_n: usize,
    /// The last messages kept verbatim (never summarized, never pruned). A hard floor, not
    /// capped: the reference caps its default of 20 at 8, so Baton's default is 8 and a larger
    /// value is honoured as given.
    pub protect_last_n: usize,
    pub context_length: u64,
    /// Tokens reserved for the reply.
    pub max_output_tokens: Option<u64>,
    /// Automatic compaction passes allowed per user turn (`max_attempts`).
    pub max_passes_per_turn: u32,
    /// Wall-clock limit of one summarizer call; past it the pass escalates.
    pub pass_timeout: Duration,
    pub model: String,
    /// The configured summarizer. The extractive summarizer is the fallback whatever this is.
    pub summarizer: Arc<dyn Summarizer>,
}

impl Default for CompressorConfig {
    fn default() -> Self {
        CompressorConfig {
            threshold: 0.50,
            target_ratio: 0.20,
            protect_first_n: 3,
            protect_last_n: DEFAULT_PROTECT_LAST_N,
            context_length: 200_000,
            max_output_tokens: None,
            max_passes_per_turn: 3,
            pass_timeout: Duration::from_secs(60),
            model: String::new(),
            summarizer: Arc::new(ExtractiveSummarizer),
        }
    }
}

impl fmt::Debug for CompressorConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompressorConfig")
            .field("threshold", &self.threshold)
            .field("target_ratio", &self.target_ratio)
            .field("protect_first_n", &self.protect_first_n)
            .field("protect_last_n", &self.protect_last_n)
            .field("context_length", &self.context_length)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("max_passes_per_turn", &self.max_passes_per_turn)
            .field("pass_timeout", &self.pass_timeout)
            .field("model", &self.model)
            .field("summarizer", &self.summarizer.name())
            .finish()
    }
}

/// What a `compress` call did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// A span was summarized.
    Compressed,
    /// Only Phase 1 pruning changed something; nothing needed summarizing.
    PrunedOnly,
    /// Nothing to do (under the threshold, too few messages, everything fits the tail).
    NoOp { reason: String },
    /// Automatic compaction refused by the guard; `reason` is shown to the user.
    Blocked { reason: String },
    /// The summarizer could not be used (authentication, quota, network, no provider): the
    /// conversation is returned exactly as it was, not even pruned, and `reason` is shown to
    /// the user.
    Unavailable { reason: String },
}

/// The result of `compress`: the new messages plus what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressionResult {
    /// The compacted conversation (equal to the input for no-ops).
    pub messages: Vec<Message>,
    pub outcome: Outcome,
    /// Input indices that were summarized.
    pub summarized_range: Option<Range<usize>>,
    /// Messages of the result whose content Phase 1 pruning changed: the whole conversation's
    /// when only pruning ran; the kept head's and tail's when a span was summarized (the
    /// span's messages are not in the result, and are not pruned).
    pub pruned: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The installed summary body (redacted, without prefix and end marker).
    pub summary: Option<String>,
    /// Which summarizer produced the installed summary.
    pub summarizer: Option<String>,
    /// Whether the configured summarizer's output was replaced by a fallback.
    pub fallback_used: bool,
    /// Each escalation step taken, in order, in words.
    pub escalations: Vec<String>,
    /// Facts the quality gate had to add from the ledger.
    pub gate_added: usize,
    /// Summaries the quality gate rejected (an echoed prompt, no structure and no facts), as
    /// `summarizer: reason`, in order; each one escalated to the next rung.
    pub gate_rejections: Vec<String>,
    /// The verbatim tail of a compaction against its budget and floors.
    pub tail: Option<TailStats>,
    pub elapsed: Duration,
}

/// What a compaction kept verbatim after the summary (the carried request included), in the
/// rough tokens the boundaries use, against the tail budget and floors. Reported so tail sizes
/// can be measured across a corpus (`compress --report json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TailStats {
    pub messages: usize,
    pub tokens: u64,
    pub budget_tokens: u64,
    /// The message floor ([`boundary::tail_floor`]).
    pub floor_messages: usize,
    /// The token floor ([`boundary::tail_token_floor`]), lowered to what the conversation has
    /// after its head (less the first message and its call group, which the span needs).
    pub floor_tokens: u64,
}

impl TailStats {
    /// Whether the tail is under either floor (a bug: the boundaries guarantee both).
    pub fn below_floor(&self) -> bool {
        self.messages < self.floor_messages || self.tokens < self.floor_tokens
    }
}

use crate::message::Message;

impl CompressionResult {
    /// The result of a call that changed nothing: `messages` as given, `tokens` before and
    /// after, and why (`outcome`).
    pub fn unchanged(messages: &[Message], tokens: u64, outcome: Outcome) -> Self {
        CompressionResult {
            messages: messages.to_vec(),
            outcome,
            summarized_range: None,
            pruned: 0,
            tokens_before: tokens,
            tokens_after: tokens,
            summary: None,
            summarizer: None,
            fallback_used: false,
            escalations: Vec::new(),
            gate_added: 0,
            gate_rejections: Vec::new(),
            tail: None,
            elapsed: Duration::ZERO,
        }
    }

    /// Whether the conversation changed.
    pub fn changed(&self) -> bool {
        matches!(self.outcome, Outcome::Compressed | Outcome::PrunedOnly)
    }
}
