//! What a turn tells its host, in order. The same stream feeds `baton chat -q` (text to
//! stdout, the rest to stderr, or every event as a JSON line with `--json`), the interactive
//! terminal and the gateway.

use baton_core::usage::CanonicalUsage;
use serde::Serialize;

/// One event of a running turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A turn began in `session_id`.
    TurnStarted { session_id: String },
    /// A piece of the assistant's answer.
    TextDelta { text: String },
    /// A piece of the model's reasoning, where the provider streams it.
    ReasoningDelta { text: String },
    /// The model asked for a tool; `arguments` is the JSON text it sent.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool finished. `preview` is the start of what the model will read; `spilled_to` is
    /// set when the full output went to a file under the tool-output budget.
    ToolResult {
        id: String,
        name: String,
        is_error: bool,
        chars: usize,
        preview: String,
        spilled_to: Option<String>,
        duration_ms: u64,
    },
    /// One model call's usage, normalized, with its cost when the model is priced.
    Usage {
        model: String,
        usage: CanonicalUsage,
        cost_usd: Option<f64>,
    },
    /// The context was compacted and the conversation continues in a new session.
    Compaction {
        from_session: String,
        to_session: String,
        tokens_before: u64,
        tokens_after: u64,
        /// `preflight`, `post_response`, `overflow`, `manual`, `cost`, `resume`.
        trigger: String,
        /// How many compactions this lineage has had, this one included.
        lineage_compactions: u32,
    },
    /// The runtime retries a call (output cap lowered, overflow recovered, …).
    Retry { reason: String, attempt: u32 },
    /// Something the user should know that is not an error (a dropped pin, detail loss).
    Notice { message: String },
    /// The turn failed; `message` says what to do.
    Error { message: String },
    /// The turn ended. `reason` is `final_answer`, `iteration_limit`, `interrupted` or `error`.
    TurnFinished { session_id: String, reason: String },
}
