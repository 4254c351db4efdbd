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

pub mod approval;
pub mod event;
pub mod interrupt;
pub mod tool;
pub mod tools;

pub use approval::{Approval, Approver};
pub use event::AgentEvent;
pub use interrupt::Interrupt;
pub use tool::{Tool, ToolContext, ToolError, ToolRegistry};
