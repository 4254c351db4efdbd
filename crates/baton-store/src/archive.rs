//! Reading a session's history back by position: what an agent's `history_expand` needs to
//! return the originals of a summarized span, and what `history_search` needs to turn a hit
//! into a reference. A message's position is its place in the session's append order, from 0
//! — the same index the agent's live view and the compressor's summarized range use.

use crate::error::{Result, StoreError};
use crate::sqlite::{SqliteStore, require_session};
use baton_core::Message;
use rusqlite::OptionalExtension;

impl SqliteStore {
    /// Messages `start..end` of a session (positions from 0; `end` is clamped to the session's
    /// length). Reads only those rows, in append order.
    pub fn messages_range(
        &self,
        session_id: &str,
        start: usize,
        end: usize,
    ) -> Result<Vec<Message>> {
        if end <= start {
            return Ok(Vec::new());
        }
        self.read(|c| {
            require_session(c, session_id)?;
            self.decode_messages(
                c,
                session_id,
                "ORDER BY id LIMIT ?2 OFFSET ?3",
                &[(end - start) as i64, start as i64],
            )
        })
    }

    /// How many messages a session has.
    pub fn message_count(&self, session_id: &str) -> Result<usize> {
        self.read(|c| {
            require_session(c, session_id)?;
            let n: i64 = c
                .prepare_cached("SELECT COUNT(*) FROM messages WHERE session_id = ?1")?
                .query_row([session_id], |r| r.get(0))?;
            Ok(n as usize)
        })
    }

    /// The session and position of the stored message `message_id` (a search hit's id).
    pub fn message_position(&self, message_id: i64) -> Result<(String, usize)> {
        self.read(|c| {
            let session: String = c
                .prepare_cached("SELECT session_id FROM messages WHERE id = ?1")?
                .query_row([message_id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| StoreError::NotFound {
                    id: format!("message {message_id}"),
                })?;
            let before: i64 = c
                .prepare_cached("SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND id < ?2")?
                .query_row(rusqlite::params![session, message_id], |r| r.get(0))?;
            Ok((session, before as usize))
        })
    }
}
