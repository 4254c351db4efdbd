//! Summarizers: what turns a span of conversation into a handoff summary.
//!
//! Every summarizer fills the same structured sections ([`sections`]), so the compressor, the
//! quality gate and the next compaction can rely on their headings whichever produced them. The
//! trait is async because real summarizers wait on a process or a network; the futures are boxed
//! so `dyn Summarizer` works without an async-trait macro.

pub mod exec;
pub mod extractive;
pub mod failure_report;
pub(crate) mod failure_verdicts;
pub mod gate;
pub mod ledger;
pub mod message_list;
pub mod prompt;
pub mod redact;
pub mod redacted_views;
pub mod reject;
pub mod sections;
pub mod sentences;
pub mod span_calls;
pub(crate) mod text_memo;
pub mod view;

use crate::message::Message;
use crate::tool_action::ActionTable;
use ledger::TaskLedger;
use span_calls::SpanCalls;
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what object-safe async methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Everything a summarizer may use. The compressor has already redacted `turns`,
/// `previous_summary` and `focus_topic`, and rendered `prompt` from them.
#[derive(Debug, Clone, Copy)]
pub struct SummaryInput<'a> {
    /// The span being compacted, in order: bounded, redacted views of its messages (borrowed
    /// where the view is the message itself). For a summarizer that
    /// [redacts what it quotes](Summarizer::redacts_what_it_quotes), tool results, call
    /// arguments and assistant text are cut but left as written.
    pub turns: &'a [&'a Message],
    /// The body (without prefix) of the summary this compaction replaces, if any: the new
    /// summary must carry its still-relevant content forward.
    pub previous_summary: Option<&'a str>,
    /// What the user asked this compaction to keep in full detail.
    pub focus_topic: Option<&'a str>,
    /// Target size of the summary body.
    pub budget_tokens: usize,
    /// Mechanically extracted task state; rendered into every summary verbatim.
    pub ledger: &'a TaskLedger,
    /// The conversation's first real user request (often in the protected head, outside
    /// `turns`): where the work started, so the summary's goal is what the user asked rather
    /// than whatever the span happens to start with. `None` when unknown.
    pub first_request: Option<&'a str>,
    /// The full prompt for model-backed summarizers (exec, LLM).
    pub prompt: &'a str,
    /// The actions of `turns`' tool calls, as the pass classified them for pruning and the
    /// ledger; `None` when the caller has none (a summarizer then classifies what it reads).
    pub actions: Option<&'a ActionTable<'a>>,
    /// `turns`' tool calls paired with their results and judged, as the pass did for the
    /// ledger; `None` when the caller has none (a summarizer then pairs what it reads). When
    /// given, they are the calls of exactly `turns`.
    pub calls: Option<&'a SpanCalls<'a>>,
}

/// Produces a summary body (no prefix, no end marker: the compressor adds those).
pub trait Summarizer: Send + Sync {
    /// Short name for reports and errors (`extractive`, `exec:ollama run …`).
    fn name(&self) -> String;

    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>>;

    /// Whether this summarizer reads `SummaryInput::prompt`. Building the prompt serializes
    /// the whole span; summarizers that work from the messages directly skip that cost.
    fn needs_prompt(&self) -> bool {
        true
    }

    /// Whether this summarizer (one that needs no prompt) redacts whatever it quotes of the
    /// span's tool calls, tool results and assistant replies: it reads calls and results only
    /// through `SummaryInput::calls` and quotes a result through
    /// [`SpanCall::quoted_result`](span_calls::SpanCall::quoted_result), and redacts a reply
    /// before it quotes a line of it. The compressor then hands it `turns` whose tool results,
    /// call arguments and assistant text are cut but not scanned for secrets (a summary quotes
    /// a few failed outputs and replies; scanning all of them was a third of a long
    /// compaction, issue #17). Any other summarizer gets `turns` redacted whole.
    fn redacts_what_it_quotes(&self) -> bool {
        false
    }
}

/// Why a summarizer produced nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    #[error("summarizer `{summarizer}` failed: {message}")]
    Failed { summarizer: String, message: String },
    #[error("summarizer `{summarizer}` timed out after {seconds} s")]
    Timeout { summarizer: String, seconds: u64 },
    #[error("summarizer `{summarizer}` returned an empty summary")]
    Empty { summarizer: String },
    /// The summarizer cannot be used at all right now: authentication or quota failed, the
    /// network is down, or no provider is configured. Nothing is wrong with the turns, so the
    /// compressor leaves the conversation unchanged and reports this rather than installing a
    /// weaker summary the user did not ask for.
    #[error("summarizer `{summarizer}` is unavailable ({reason}): {message}")]
    Unavailable {
        summarizer: String,
        /// What failed, e.g. `auth`, `quota`, `network`, `no provider`.
        reason: String,
        message: String,
    },
}
