//! The `MemoryProvider` trait: what a memory backend implements to take part in a session.
//!
//! The built-in provider ([`crate::BuiltinProvider`]) serves MEMORY.md and USER.md; an
//! external one (a vector store, a hosted memory service) can add recall and its own tools.
//! Slow work is async and boxed (like `baton_core`'s `Summarizer`) so `dyn MemoryProvider`
//! works without a macro; hooks that must never hold up a turn are plain methods with no-op
//! defaults, so a provider implements only what it uses.

use crate::target::Target;
use baton_core::Message;
use serde_json::Value;
use std::path::PathBuf;

pub use baton_core::summary::BoxFuture;

/// What a provider learns when a session starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionContext {
    pub session_id: String,
    /// `$BATON_HOME`: where providers keep local state.
    pub home: PathBuf,
    /// `cli`, `serve`, …
    pub platform: String,
    /// `primary`, `subagent`, `cron` or `flush`: providers may skip writes for the latter.
    pub agent_context: String,
    pub parent_session_id: Option<String>,
    /// Anything else the host knows (user id, chat id, session title…).
    pub extra: serde_json::Map<String, Value>,
}

/// A move to another session: resume, branch, reset, or the child session of a compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSwitch {
    pub new_session_id: String,
    pub parent_session_id: Option<String>,
    /// True only for a genuinely new conversation (`/new`, `/reset`).
    pub reset: bool,
    /// `compression`, `resume`, `branch`, `reset`, …
    pub reason: String,
}

/// Which write the built-in memory tool made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAction {
    Add,
    Replace,
    Remove,
}

/// A built-in memory write, mirrored to the external provider so it can keep its own copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryWrite {
    pub action: WriteAction,
    pub target: Target,
    pub content: String,
    pub session_id: Option<String>,
}

/// Why a provider call failed. Failures are isolated: the manager logs them and carries on
/// with the other providers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("memory provider '{provider}' failed: {message}")]
    Failed { provider: String, message: String },
    #[error("memory provider '{provider}' does not handle tool '{tool}'")]
    UnknownTool { provider: String, tool: String },
}

/// A memory backend. Only `name`, `is_available`, `initialize` and `tool_schemas` are
/// required.
pub trait MemoryProvider: Send + Sync {
    /// Short stable name (`builtin`, `mem0`, …); `builtin` is reserved.
    fn name(&self) -> &str;

    /// Whether the provider can run here (configured, credentials present). Must not touch
    /// the network: it is asked while the agent starts.
    fn is_available(&self) -> bool;

    /// Called once per session start, before the system prompt is built.
    fn initialize<'a>(
        &'a self,
        ctx: &'a SessionContext,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;

    /// Static text for the system prompt, fixed for the session (it is part of the cached
    /// prefix).
    fn system_prompt_block(&self) -> String {
        String::new()
    }

    /// Recall for this turn's user message. Should return quickly, from results prepared by
    /// `queue_prefetch`; the manager fences it before it reaches the model.
    fn prefetch<'a>(
        &'a self,
        _query: &'a str,
        _session_id: &'a str,
    ) -> BoxFuture<'a, Result<String, ProviderError>> {
        Box::pin(async { Ok(String::new()) })
    }

    /// Starts preparing recall for the next turn in the background; must not block.
    fn queue_prefetch(&self, _query: &str, _session_id: &str) {}

    /// Records a completed turn.
    fn sync_turn<'a>(
        &'a self,
        _user: &'a str,
        _assistant: &'a str,
        _session_id: &'a str,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }

    /// Function schemas (name, description, parameters) of the tools this provider serves.
    fn tool_schemas(&self) -> Vec<Value>;

    /// Runs one of this provider's tools; the result is the tool message content (JSON).
    fn handle_tool_call<'a>(
        &'a self,
        tool: &'a str,
        _args: &'a Value,
    ) -> BoxFuture<'a, Result<String, ProviderError>> {
        let err = ProviderError::UnknownTool {
            provider: self.name().to_string(),
            tool: tool.to_string(),
        };
        Box::pin(async move { Err(err) })
    }

    /// Flushes and releases resources at exit.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// A user turn begins (`turn` counts from 1).
    fn on_turn_start(&self, _turn: u64, _message: &str) {}

    /// A session really ended (exit, reset, expiry, or rotation by compaction).
    fn on_session_end(&self, _messages: &[Message]) {}

    /// The agent moved to another session.
    fn on_session_switch(&self, _switch: &SessionSwitch) {}

    /// Messages about to be summarized away: anything worth keeping, as text for the
    /// summarizer.
    fn on_pre_compress(&self, _messages: &[Message]) -> String {
        String::new()
    }

    /// The built-in memory tool wrote an entry (external providers only).
    fn on_memory_write(&self, _write: &MemoryWrite) {}
}
