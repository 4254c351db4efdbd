//! Anthropic Messages API bodies ↔ canonical (OpenAI chat) conversations.
//!
//! # Mapping
//!
//! | Anthropic | canonical |
//! |---|---|
//! | `system` (string or text blocks) | leading `system` message (text or parts) |
//! | user `text` / `image` / other blocks | `user` message content parts (`image` → `image_url`, base64 as a data URL) |
//! | user `tool_result` block | one `tool` message each, `tool_use_id` → `tool_call_id`; its other keys (`is_error`, `cache_control`…) in `extra` |
//! | assistant `text` / other blocks | `content` |
//! | assistant `tool_use` | `tool_calls`, `arguments` = compact JSON of `input` |
//! | `thinking` / `redacted_thinking` | `reasoning.reasoning_details` entries (`reasoning.text` with `signature`, `reasoning.encrypted`), OpenRouter's shape |
//! | tool `{name, description, input_schema, …}` | `{"type":"function","function":{name, description, parameters, …}}` |
//! | any other field anywhere | `extra` of the matching canonical object |
//!
//! A user message whose blocks mix tool results and other blocks becomes several canonical
//! messages in block order (`[tool_result, tool_result, text]` → `tool, tool, user`); the writer
//! joins consecutive messages of the same Anthropic role back into one message.
//!
//! # Exact round trip
//!
//! Anthropic → canonical → Anthropic gives back the same JSON, key order included. Whatever the
//! generic rebuild would get wrong is recorded under [`MARKER`] (`"_anthropic"`) in the `extra`
//! map (or part object, tool call, reasoning entry) it concerns, and only then: the original key
//! order (`keys`), the original object when even that is not enough (`original`, used only while
//! the canonical side is unchanged), the block order of an assistant message (`order`), a message
//! boundary between two messages of the same role (`split`), and the message's own key order and
//! fields when its first canonical message cannot hold them (`message_keys`, `extra`). Keys
//! named `_anthropic` in the input are reserved. Other writers should drop `_anthropic` keys.
//!
//! The reader (`read.rs`) checks what it records against the writer's generic rebuild
//! (`write.rs`), and the writer checks a recorded original against the reader before trusting
//! it, so each calls the other's block functions; the notes themselves are `exactness.rs`.
//!
//! # What Anthropic cannot represent (canonical → Anthropic is lossy here)
//!
//! - `developer` messages become system text; non-leading system/developer messages become user
//!   text; several leading instruction messages are joined into one `system` block list.
//! - Consecutive messages of the same Anthropic role are merged into one message (tool results
//!   and a following user message share one `user` message), so roles alternate.
//! - `name` on any message, `image_url.detail`, empty text, and `reasoning` /
//!   `reasoning_content` strings (unsigned reasoning cannot be replayed) are dropped;
//!   `reasoning_details` entries of non-Anthropic formats are dropped.
//! - Tool-call `arguments` come back as compact JSON; arguments that are not a JSON object are
//!   sent as `{"_raw_arguments": "<text>"}`.
//! - An assistant message with text and tool calls comes back with `content` as a string; a
//!   one-text-part user message following tool results comes back as a string.

use crate::formats::notes::Notes;
use serde_json::{Map, Value};

mod exactness;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use read::from_anthropic;
pub(crate) use read::image_to_part;
pub use write::to_anthropic;

type Object = Map<String, Value>;

/// Key under which round-trip bookkeeping is stored in canonical objects.
pub const MARKER: &str = "_anthropic";

/// This converter's round-trip notes.
const NOTES: Notes = Notes(MARKER);

/// `format` of the `reasoning_details` entries made from thinking blocks (OpenRouter's name).
pub const REASONING_FORMAT: &str = "anthropic-claude-v1";

/// Key wrapping tool-call arguments that are not a JSON object (Anthropic's `input` must be one).
pub const RAW_ARGUMENTS_KEY: &str = "_raw_arguments";

const ASSISTANT: &str = "assistant";
const USER: &str = "user";
