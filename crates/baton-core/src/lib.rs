//! Baton's context-management core.
//!
//! No network, no database, no async runtime: everything here is a pure function of its input
//! or touches only local files (`tool_output`), so builders can embed it anywhere.

pub mod caching;
pub mod conversation;
pub mod feedback;
pub mod formats;
pub mod message;
pub mod overflow;
pub mod token_report;
pub mod tokens;
pub mod tool_action;
pub mod tool_output;
pub mod truncate;
pub mod usage;

pub use conversation::Conversation;
pub use message::{Content, ContentPart, FunctionCall, Message, MessageError, Role, ToolCall};
pub use tokens::{Calibration, Encoding, RunningCount, TokenCounter};
