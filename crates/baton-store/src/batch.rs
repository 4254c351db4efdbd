//! Writing many sessions in one transaction: the bulk path for imports and benchmarks.
//!
//! Every write transaction ends in an fsync of the WAL. An agent appending a turn at a time
//! pays that once per turn, which is right: the turn must survive a crash. An import of a
//! thousand short conversations would pay it two thousand times (create, append) and spend
//! its time waiting on the disk, so imports group whole sessions into one transaction instead.

use crate::error::Result;
use crate::session::{self, NewSession};
use crate::sqlite::{SqliteStore, add_usage_in_tx, insert_session};
use baton_core::Message;
use baton_core::usage::CanonicalUsage;

/// One session of a batch: created unless it exists, then its messages appended.
#[derive(Debug, Clone)]
pub struct SessionBatch<'a> {
    pub session: NewSession,
    pub messages: &'a [Message],
    /// End the session with this reason after appending (imports of finished transcripts).
    pub end_reason: Option<&'a str>,
    /// When it ended (Unix seconds; `None` = now). Only used with `end_reason`.
    pub ended_at: Option<f64>,
    /// Token usage its API calls reported, and how many calls that was.
    pub usage: Option<(CanonicalUsage, u64)>,
    /// Title for the session, checked like [`crate::retitle::check_new_title`] inside the
    /// transaction: a title taken meanwhile fails the whole batch, so nothing is written.
    pub title: Option<String>,
}

impl SqliteStore {
    /// Creates and fills every session of `batch` in one transaction; all or nothing. Returns
    /// the session ids in batch order.
    pub fn write_batch(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<String>> {
        let ids: Vec<String> = batch
            .iter()
            .map(|b| b.session.id.clone().unwrap_or_else(session::new_session_id))
            .collect();
        self.write(|tx| {
            for (b, id) in batch.iter().zip(&ids) {
                insert_session(tx, id, &b.session)?;
                if !b.messages.is_empty() {
                    let at = b.session.started_at.unwrap_or_else(session::now);
                    self.append_in_tx(tx, id, b.messages, at)?;
                }
                if let Some((usage, calls)) = &b.usage {
                    add_usage_in_tx(tx, id, usage, None, *calls)?;
                }
                if let Some(raw) = &b.title {
                    let cleaned =
                        crate::retitle::check_new_title(tx, raw, std::slice::from_ref(id))?;
                    tx.prepare_cached("UPDATE sessions SET title = ?1 WHERE id = ?2")?
                        .execute(rusqlite::params![cleaned, id])?;
                }
                if let Some(reason) = b.end_reason {
                    tx.prepare_cached(
                        "UPDATE sessions SET ended_at = ?1, end_reason = ?2 \
                         WHERE id = ?3 AND ended_at IS NULL",
                    )?
                    .execute(rusqlite::params![
                        b.ended_at.unwrap_or_else(session::now),
                        reason,
                        id
                    ])?;
                }
            }
            Ok(())
        })?;
        Ok(ids)
    }
}
