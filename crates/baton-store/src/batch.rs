//! Writing many sessions in one transaction: the bulk path for imports and benchmarks.
//!
//! Every write transaction ends in an fsync of the WAL. An agent appending a turn at a time
//! pays that once per turn, which is right: the turn must survive a crash. An import of a
//! thousand short conversations would pay it two thousand times (create, append) and spend
//! its time waiting on the disk, so imports group whole sessions into one transaction instead.
//! A bulk write also readies the connection for more of them: a larger page cache, and WAL
//! checkpoints on a thread of their own (`checkpointer.rs`).

use crate::checkpointer::Checkpointer;
use crate::codec::MessageRow;
use crate::encode_ahead::with_rows_encoded_ahead;
use crate::error::Result;
use crate::open::{DEFAULT_BUSY_TIMEOUT, JournalMode};
use crate::session::{self, NewSession};
use crate::sqlite::{SqliteStore, add_usage_in_tx, insert_session};
use baton_core::Message;
use baton_core::usage::CanonicalUsage;
use rusqlite::{Connection, Transaction};
use std::path::Path;

/// Page cache of a connection that has made a bulk write, in KiB.
const BULK_PAGE_CACHE_KIB: i64 = 16 * 1024;

/// One session of a batch: created unless it exists, then its messages appended
/// ([`SqliteStore::write_batch`]), or skipped whole if it exists
/// ([`SqliteStore::write_new_sessions`]).
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
    /// Creates and fills every session of `batch` in one transaction; all or nothing. A
    /// session that already exists gets the batch's messages appended. Returns the session
    /// ids in batch order.
    pub fn write_batch(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<String>> {
        let ids = batch_ids(batch);
        self.write(|tx| {
            for (b, id) in batch.iter().zip(&ids) {
                write_one(self, tx, b, id, None)?;
            }
            Ok(())
        })?;
        Ok(ids)
    }

    /// Like [`Self::write_batch`], but a session whose id already exists is left untouched
    /// (no messages, usage, title or end written) and reported as not stored. Returns, in
    /// batch order, each session's id and whether this call stored it.
    ///
    /// This is the idempotency decision of `sessions import`, and it is taken inside the
    /// write transaction (under `BEGIN IMMEDIATE`, so no other writer can slip in between the
    /// check and the insert): several processes importing the same file at once store each
    /// conversation exactly once, whichever wins. A check made before the transaction would
    /// let every racer see "not there yet" and append its own copy of the messages.
    pub fn write_new_sessions(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<(String, bool)>> {
        self.write_new_sessions_indexing(batch, Indexing::Inline)
    }

    /// [`Self::write_new_sessions`] for a bulk import: the rows only, queued for the search
    /// indexes, which [`SqliteStore::catch_up_index`] brings up to date afterwards (searches
    /// scan the queued rows meanwhile). About four times faster than indexing inline.
    pub fn write_new_sessions_deferred(
        &self,
        batch: &[SessionBatch<'_>],
    ) -> Result<Vec<(String, bool)>> {
        self.write_new_sessions_indexing(batch, Indexing::Deferred)
    }

    fn write_new_sessions_indexing(
        &self,
        batch: &[SessionBatch<'_>],
        indexing: Indexing,
    ) -> Result<Vec<(String, bool)>> {
        let ids = batch_ids(batch);
        let deferred = indexing == Indexing::Deferred && self.can_defer_indexing();
        self.prepare_bulk_write()?;
        let stored = with_rows_encoded_ahead(batch, |rows| {
            self.write(|tx| {
                if deferred {
                    crate::deferred_index::begin_deferral(tx)?;
                }
                let mut stored = Vec::with_capacity(batch.len());
                for (i, (b, id)) in batch.iter().zip(&ids).enumerate() {
                    // Also catches the same id twice in one batch: the first copy is stored.
                    let exists = tx
                        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
                        .exists([id])?;
                    if !exists {
                        write_one(self, tx, b, id, rows.of(i))?;
                    }
                    stored.push(!exists);
                }
                if deferred {
                    crate::deferred_index::end_deferral(tx)?;
                }
                Ok(stored)
            })
        })?;
        Ok(ids.into_iter().zip(stored).collect())
    }
}

/// When a batch's messages enter the search indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Indexing {
    /// In the write transaction (every write but bulk imports).
    Inline,
    /// After it, by the catch-up.
    Deferred,
}

/// The batch's session ids: the given ones, else fresh ones.
fn batch_ids(batch: &[SessionBatch<'_>]) -> Vec<String> {
    batch
        .iter()
        .map(|b| b.session.id.clone().unwrap_or_else(session::new_session_id))
        .collect()
}

/// Creates (unless it exists) and fills one session of a batch inside `tx`.
fn write_one(
    store: &SqliteStore,
    tx: &Transaction<'_>,
    b: &SessionBatch<'_>,
    id: &str,
    encoded: Option<&[MessageRow]>,
) -> Result<()> {
    insert_session(tx, id, &b.session)?;
    if !b.messages.is_empty() {
        let at = b.session.started_at.unwrap_or_else(session::now);
        store.append_in_tx(tx, id, b.messages, encoded, at)?;
    }
    if let Some((usage, calls)) = &b.usage {
        add_usage_in_tx(tx, id, usage, None, *calls)?;
    }
    if let Some(raw) = &b.title {
        let own = [id.to_string()];
        let cleaned = crate::retitle::check_new_title(tx, raw, &own)?;
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
    Ok(())
}

/// Readying the connection for bulk writes, and checkpointing beside them.
impl SqliteStore {
    /// Readies the connection for bulk writes (imports, the index catch-up).
    ///
    /// A page cache of [`BULK_PAGE_CACHE_KIB`]: with SQLite's default 2 MB, the pages of
    /// `messages`' session index, which an import's scattered session ids touch all over, fell
    /// out between batches and were read back from the file (207,000 `pread`s for
    /// `corpus_x16`, 100,000 with this). Bounded, so memory does not grow with the input.
    ///
    /// And, for a WAL database file, checkpoints on a thread of their own (`checkpointer.rs`)
    /// instead of inside this connection's commits.
    pub(crate) fn prepare_bulk_write(&self) -> Result<()> {
        self.read(|c| Ok(c.pragma_update(None, "cache_size", -BULK_PAGE_CACHE_KIB)?))?;
        let mut checkpointer = self.checkpointer.lock().unwrap_or_else(|e| e.into_inner());
        if checkpointer.is_none()
            && *self.journal_mode() == JournalMode::Wal
            && self.path() != Path::new(":memory:")
            && let Some(started) = Checkpointer::start(self.path(), DEFAULT_BUSY_TIMEOUT)
        {
            self.read(|c| {
                c.pragma_update(None, "wal_autocheckpoint", 0)?;
                c.pragma_update(None, "journal_size_limit", self.wal_restart_bytes as i64)?;
                Ok(())
            })?;
            *checkpointer = Some(started);
        }
        Ok(())
    }

    /// After a commit while the checkpointer runs: wakes it, and restarts the WAL once it has
    /// grown past `wal_restart_bytes` (the thread's checkpoints cannot: frames
    /// keep being appended behind them). Best effort: a busy restart happens after a later
    /// commit.
    pub(crate) fn after_commit(&self, conn: &Connection) {
        let checkpointer = self.checkpointer.lock().unwrap_or_else(|e| e.into_inner());
        let Some(checkpointer) = checkpointer.as_ref() else {
            return;
        };
        checkpointer.wake();
        let wal =
            std::fs::metadata(format!("{}-wal", self.path().display())).map_or(0, |m| m.len());
        if wal > self.wal_restart_bytes {
            checkpointer.restart_wal(conn);
        }
    }
}
