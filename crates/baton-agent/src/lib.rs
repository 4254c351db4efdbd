//! Baton's agent runtime: the conductor that drives every other crate inside a live
//! conversation.
//!
//! A turn is driven by events: the host hands a user message in, and the runtime streams
//! [`AgentEvent`]s out (text, tool calls and results, usage, compactions, notices, errors) to
//! whatever shows them — `baton chat -q` prints them, the interactive terminal draws them, the
//! HTTP gateway forwards them. Between the two the runtime assembles the system prompt once per
//! session, checks the budget before each call, lays out the prompt cache, calls the provider,
//! feeds usage back to the context engine, runs tools through the tool-output budget, and turns
//! each compaction into a session boundary in the store. Nothing is deleted: compaction changes
//! what the model sees, never what is stored.

pub mod agent;
pub mod approval;
pub mod compaction;
pub mod config;
pub mod context_files;
pub mod economics;
mod economics_hooks;
pub mod error;
pub mod estimate;
pub mod event;
pub mod interrupt;
pub mod live_session;
pub mod memory_tool;
pub mod pins;
pub mod prompt_source;
pub mod recall;
pub mod recovery;
pub mod session_search_tool;
pub mod system_prompt;
pub mod tool;
mod tool_exec;
pub mod tools;
pub mod totals;
pub mod turn;

pub use agent::{Agent, AgentBuilder};
pub use approval::{Approval, Approver};
pub use compaction::Trigger;
pub use config::AgentConfig;
pub use error::AgentError;
pub use event::AgentEvent;
pub use interrupt::Interrupt;
pub use prompt_source::{FixedPrompt, SystemPromptSource};
pub use system_prompt::SystemPromptBuilder;
pub use tool::{Tool, ToolContext, ToolError, ToolRegistry};
pub use totals::SessionTotals;
pub use turn::{StopReason, TurnOutcome};
