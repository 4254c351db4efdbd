//! The write path: every write runs in `BEGIN IMMEDIATE` (the write lock is taken up front, so a
//! transaction never fails at COMMIT after doing its work) and is retried with a jittered sleep
//! when another connection holds the lock. The jitter breaks the convoy that SQLite's own
//! deterministic busy handler forms when several processes share one file.

use crate::error::{Result, StoreError};
use crate::rng;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::time::Duration;

/// Attempts before giving up with [`StoreError::Locked`].
pub const WRITE_MAX_ATTEMPTS: u32 = 15;
/// Bounds of the sleep between attempts, in milliseconds.
pub const WRITE_RETRY_MIN_MS: u64 = 20;
pub const WRITE_RETRY_MAX_MS: u64 = 150;

/// A random pause in `[WRITE_RETRY_MIN_MS, WRITE_RETRY_MAX_MS]`.
pub fn retry_delay() -> Duration {
    Duration::from_millis(rng::in_range(WRITE_RETRY_MIN_MS, WRITE_RETRY_MAX_MS))
}

/// Runs `f` inside an immediate transaction and commits. Busy/locked errors (from BEGIN, from
/// `f`, or from COMMIT) roll back and retry up to [`WRITE_MAX_ATTEMPTS`] times; any other error
/// from `f` rolls back and is returned at once. `f` may therefore run more than once and must
/// not have effects outside the transaction.
pub fn with_write_tx<T, F>(conn: &mut Connection, mut f: F) -> Result<T>
where
    F: FnMut(&Transaction<'_>) -> Result<T>,
{
    for attempt in 1..=WRITE_MAX_ATTEMPTS {
        match attempt_once(conn, &mut f) {
            Ok(value) => return Ok(value),
            Err(e) if e.is_busy() => {
                if attempt < WRITE_MAX_ATTEMPTS {
                    std::thread::sleep(retry_delay());
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Locked {
        path: conn.path().unwrap_or(":memory:").to_string(),
        attempts: WRITE_MAX_ATTEMPTS,
    })
}

fn attempt_once<T, F>(conn: &mut Connection, f: &mut F) -> Result<T>
where
    F: FnMut(&Transaction<'_>) -> Result<T>,
{
    // Dropping an uncommitted `Transaction` rolls it back, so every early return is clean.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let value = f(&tx)?;
    tx.commit()?;
    Ok(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn closure_error_rolls_back_and_is_not_retried() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        let mut calls = 0;
        let err = with_write_tx(&mut conn, |tx| {
            calls += 1;
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            Err::<(), _>(StoreError::NotFound { id: "x".into() })
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }));
        assert_eq!(calls, 1);
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn held_lock_gives_locked_error_after_bounded_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let holder = Connection::open(&path).unwrap();
        holder
            .execute_batch("CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE;")
            .unwrap();
        let mut other = Connection::open(&path).unwrap();
        other.busy_timeout(Duration::from_millis(0)).unwrap();
        let start = std::time::Instant::now();
        let err = with_write_tx(&mut other, |tx| {
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            Ok(())
        })
        .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Locked {
                    attempts: WRITE_MAX_ATTEMPTS,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("db"));
        // 14 sleeps of at least 20 ms each.
        assert!(start.elapsed() >= Duration::from_millis(14 * WRITE_RETRY_MIN_MS));
    }
}
