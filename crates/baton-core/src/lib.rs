//! Baton's context-management core.
//!
//! No network, no database, no async runtime: everything here is a pure function of its input
//! or touches only local files (`tool_output`), so builders can embed it anywhere.

pub mod conversation;
pub mod message;

pub use conversation::Conversation;
pub use message::{Content, ContentPart, FunctionCall, Message, MessageError, Role, ToolCall};
pub mod tokens;
