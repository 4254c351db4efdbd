//! Baton's context-management core.
//!
//! No network, no database, and no async runtime of its own: everything here is a pure function
//! of its input, touches only local files (`tool_output`), or runs a local process (the exec
//! summarizer, on the caller's tokio runtime), so builders can embed it anywhere.

mod byte_scan;
pub mod caching;
pub mod compress;
pub mod conversation;
pub mod engine;
pub mod feedback;
pub mod formats;
mod json_check;
pub mod message;
pub mod overflow;
pub mod pricing;
mod split_work;
pub mod summary;
pub mod synthetic;
pub mod terminal_text;
pub mod token_report;
pub mod tokens;
pub mod tool_action;
pub mod tool_output;
pub mod trajectory;
pub mod truncate;
#[cfg(any(test, not(target_arch = "x86_64")))]
mod two_bytes;
pub mod usage;

pub use conversation::Conversation;
pub use message::{Content, ContentPart, FunctionCall, Message, MessageError, Role, ToolCall};
pub use tokens::{Calibration, Encoding, RunningCount, TokenCounter};
