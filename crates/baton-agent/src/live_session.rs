//! The session a running agent is in: its id and lineage, the messages the model sees (equal,
//! row for row, to the session's stored messages), and the system prompt fixed for it.

use baton_core::Message;
use std::sync::Arc;

/// What the model sees now. Invariant: `messages[i]` is the session's stored message `i`, so
/// a summarized range of `messages` names stored rows (what `history_expand` reads back).
#[derive(Debug, Clone)]
pub struct LiveSession {
    pub id: String,
    /// The compression chain, root first, ending with `id`.
    pub lineage: Vec<String>,
    /// Shared with the request in flight; appends copy only if a request still holds it.
    pub messages: Arc<Vec<Message>>,
    /// Byte-stable from the session's start until the next compaction (the cached prefix).
    pub system_prompt: String,
}

impl LiveSession {
    /// Compactions this lineage has had.
    pub fn lineage_compactions(&self) -> u32 {
        u32::try_from(self.lineage.len().saturating_sub(1)).unwrap_or(u32::MAX)
    }
}
