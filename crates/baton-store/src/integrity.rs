//! Writers refuse a damaged database. Before an open for writing changes anything (journal
//! mode, schema, rows), `PRAGMA quick_check` walks every page of the file; random bytes over a
//! page, a truncated file or a broken b-tree make the open fail with [`StoreError::Corrupt`]
//! naming the file and how to recover, and the file is left byte for byte as it was. A write
//! into a damaged b-tree would otherwise spread the damage (SQLite only notices corruption on
//! the pages a statement happens to touch). Cost: about 0.07 s per 50 MB of database, warm
//! cache (see docs/architecture.md), paid once per open for writing.

use crate::error::{Result, StoreError};
use crate::retry::{WRITE_MAX_ATTEMPTS, retry_delay};
use rusqlite::Connection;
use std::path::Path;

/// At most this many problems are named in the error (the first one is what matters).
const MAX_REPORTED: u32 = 3;

/// `Ok` when SQLite finds the file sound; [`StoreError::Corrupt`] otherwise. A database held
/// by another writer (rollback-journal mode) is retried like a write, not reported as damaged.
pub(crate) fn check_before_write(conn: &Connection, path: &Path) -> Result<()> {
    let mut attempt = 1;
    loop {
        match quick_check(conn) {
            Ok(problems) if problems.is_empty() => return Ok(()),
            Ok(problems) => {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!("integrity check: {}", problems.join("; ")),
                });
            }
            Err(e) => {
                let err = StoreError::from(e);
                if !err.is_busy() || attempt >= WRITE_MAX_ATTEMPTS {
                    return Err(err);
                }
                attempt += 1;
                std::thread::sleep(retry_delay());
            }
        }
    }
}

/// The problems `PRAGMA quick_check` reports; empty when it says "ok".
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA quick_check({MAX_REPORTED})"))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut problems = Vec::new();
    for row in rows {
        let line = row?;
        // SQLite prefixes the first problem with a "*** in database main ***" line.
        problems.extend(
            line.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && *l != "ok" && !l.starts_with("*** in database"))
                .map(str::to_string),
        );
    }
    Ok(problems)
}
