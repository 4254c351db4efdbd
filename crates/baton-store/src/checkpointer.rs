//! Checkpointing a bulk write's WAL on a thread of its own.
//!
//! Why: in WAL mode every committed page is written twice, once to the WAL at commit and
//! once to the database file by a checkpoint. SQLite runs the checkpoint inside the commit
//! that crosses `wal_autocheckpoint` pages, on the writing thread, and a bulk import crosses
//! it with nearly every batch: the checkpoint was 21% of the import's writer thread
//! (`perf record`, `corpus_x16`), while the machine's other core mostly waited. A checkpoint
//! may run beside a writer (it copies committed frames while new ones are appended), so bulk
//! writes hand it to this thread: woken after each commit, it checkpoints what is committed
//! (`PASSIVE`: it never waits on, or holds up, the writer).
//!
//! The WAL cannot start over while frames are being appended behind a checkpoint, so the
//! writer restarts it itself when it has grown past [`WAL_RESTART_BYTES`] (by then the thread
//! has copied all but the last batch, so that wait is short), and `journal_size_limit`
//! truncates the file to that size when it does: the WAL stays bounded at any import size.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// WAL size past which the writer restarts the log after a commit.
pub(crate) const WAL_RESTART_BYTES: i64 = 64 << 20;

/// The checkpointing thread; stopped (and joined) when dropped.
pub(crate) struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Held by whoever checkpoints: SQLite refuses a second checkpointer at once (at once
    /// `SQLITE_BUSY`, no busy handler), so the writer's restart waits its turn here.
    turn: Arc<Mutex<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the database at `path` on a connection of its own; `None` when
    /// that connection cannot be opened (the writer then keeps checkpointing itself).
    pub(crate) fn start(path: &Path, busy_timeout: Duration) -> Option<Checkpointer> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).ok()?;
        conn.busy_timeout(busy_timeout).ok()?;
        // One pending wake is enough: a checkpoint copies everything committed before it.
        let (wake, woken) = sync_channel(1);
        let turn = Arc::new(Mutex::new(()));
        let thread_turn = Arc::clone(&turn);
        let thread = std::thread::Builder::new()
            .name("baton-checkpoint".into())
            .spawn(move || checkpoint_on_wake(&conn, &woken, &thread_turn))
            .ok()?;
        Some(Checkpointer {
            wake: Some(wake),
            thread: Some(thread),
            turn,
        })
    }

    /// Checkpoints everything on `conn` (the writer's, between transactions) and starts the WAL
    /// over, after the thread's checkpoint in progress, if any. Best effort: another process
    /// reading an old snapshot makes it a plain checkpoint, and a later call restarts.
    pub(crate) fn restart_wal(&self, conn: &Connection) {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let _ = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()));
    }

    /// Tells the thread a commit happened. Never blocks.
    pub(crate) fn wake(&self) {
        if let Some(wake) = &self.wake {
            // Full: a wake is pending, which covers this commit too. Disconnected: the thread
            // is gone, and the writer's own restarts still bound the WAL.
            let _ = wake.try_send(());
        }
    }
}

/// The thread: a passive checkpoint per wake, until the store hangs up. A checkpoint that
/// fails (busy, I/O) is simply tried again at the next wake; the writer's restart and the
/// last connection's close checkpoint whatever is left.
fn checkpoint_on_wake(conn: &Connection, woken: &Receiver<()>, turn: &Mutex<()>) {
    while woken.recv().is_ok() {
        let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.wake.take());
        if let Some(thread) = self.thread.take() {
            // A panic in the thread lost nothing: checkpoints only copy committed pages.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::{NewSession, SessionBatch, SqliteStore};
    use baton_core::Message;

    fn wal_len(path: &std::path::Path) -> u64 {
        std::fs::metadata(format!("{}-wal", path.display())).map_or(0, |m| m.len())
    }

    /// Bulk batches of ~200 KB each, 15 of them, with the restart point at 256 KB: the WAL
    /// stays within a few batches of it (it grew to the whole 3 MB before restarts), every
    /// row is stored, the database is sound, and closing the store removes the WAL.
    #[test]
    fn bulk_writes_keep_the_wal_bounded_and_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bulk.db");
        let mut store = SqliteStore::open(&path).unwrap();
        store.wal_restart_bytes = 256 << 10;
        let text = "lorem ipsum dolor sit amet ".repeat(40); // ~1 KB
        let messages: Vec<Message> = (0..20).map(|_| Message::user(text.clone())).collect();
        let mut largest_wal = 0;
        for b in 0..15 {
            let batch: Vec<SessionBatch<'_>> = (0..10)
                .map(|s| SessionBatch {
                    session: NewSession {
                        id: Some(format!("s{b}-{s}")),
                        ..NewSession::new("import")
                    },
                    messages: &messages,
                    end_reason: None,
                    ended_at: None,
                    usage: None,
                    title: None,
                })
                .collect();
            store.write_new_sessions_deferred(&batch).unwrap();
            largest_wal = largest_wal.max(wal_len(&path));
        }
        assert!(store.checkpointer.lock().unwrap().is_some());
        assert!(
            largest_wal < (256 << 10) + 4 * (200 << 10),
            "the WAL grew to {largest_wal} bytes"
        );
        let (count, check): (i64, String) = store
            .read(|c| {
                Ok((
                    c.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))?,
                    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?,
                ))
            })
            .unwrap();
        assert_eq!((count, check.as_str()), (15 * 10 * 20, "ok"));
        drop(store);
        assert!(!std::path::Path::new(&format!("{}-wal", path.display())).exists());
        let reopened = SqliteStore::open(&path).unwrap();
        assert_eq!(reopened.message_count("s14-9").unwrap(), 20);
    }
}
