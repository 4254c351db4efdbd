//! Opening a database file: refuse what is not SQLite, refuse a newer schema before writing
//! anything, then set the pragmas and bring the schema up to date.

use crate::error::{Result, StoreError};
use crate::immutable;
use crate::integrity;
use crate::retry::with_write_tx;
use crate::schema;
use crate::search::SearchError;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// The first 16 bytes of every SQLite 3 database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Default SQLite busy timeout. Short on purpose: contention is handled by the jittered retries
/// of the write path, not by SQLite's deterministic busy handler.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(1);

/// Errors from `PRAGMA journal_mode=WAL` that mean the filesystem cannot do WAL (NFS, SMB,
/// FUSE); the database then runs in rollback-journal mode instead.
const WAL_INCOMPATIBLE_MARKERS: [&str; 3] =
    ["locking protocol", "not authorized", "disk i/o error"];

/// How to open a store.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Open without writing anything: no schema creation or migration, no pragma that writes.
    pub read_only: bool,
    pub busy_timeout: Duration,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            read_only: false,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }
}

/// The journal mode the connection ended up in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalMode {
    Wal,
    /// WAL could not be enabled on this filesystem.
    Delete,
    /// Anything else SQLite reported (e.g. `memory` for in-memory databases), or, for a
    /// read-only open, whatever mode the file is in.
    Other(String),
}

impl JournalMode {
    fn parse(s: &str) -> JournalMode {
        match s.to_ascii_lowercase().as_str() {
            "wal" => JournalMode::Wal,
            "delete" => JournalMode::Delete,
            other => JournalMode::Other(other.to_string()),
        }
    }
}

/// An open connection and what opening it found.
pub(crate) struct Opened {
    pub conn: Connection,
    pub journal_mode: JournalMode,
    /// The schema is the current version: every column and index it declares is there, so
    /// nothing needs to be looked up (each lookup is a statement to parse and plan).
    pub current: bool,
}

/// Opens (creating when allowed) the database at `path`.
pub(crate) fn open_path(path: &Path, opts: &OpenOptions) -> Result<Opened> {
    check_header(path, opts.read_only)?;
    match open_checked(path, opts, None) {
        Err(e) if opts.read_only && immutable::should_fall_back(&e, path) => {
            let uri = immutable::immutable_uri(path);
            open_checked(path, opts, Some(&uri)).map_err(|e| corrupt_or(e, path))
        }
        other => other.map_err(|e| corrupt_or(e, path)),
    }
}

/// Turns SQLITE_CORRUPT / SQLITE_NOTADB, from any statement (a search's too), into
/// [`StoreError::Corrupt`] naming the file, so a reader that meets a damaged page fails with
/// a message that says so instead of a bare SQLite error; other errors pass through.
pub(crate) fn corrupt_or(e: StoreError, path: &Path) -> StoreError {
    match e {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(ref f, ref msg))
        | StoreError::Search(SearchError::Sqlite {
            source: rusqlite::Error::SqliteFailure(ref f, ref msg),
            ..
        }) if matches!(
            f.code,
            rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
        ) =>
        {
            StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: msg.clone().unwrap_or_else(|| f.to_string()),
            }
        }
        // Our writers store only valid UTF-8 text: a text column that is not is a damaged
        // record whose bytes still parse.
        StoreError::Sqlite(ref e @ rusqlite::Error::Utf8Error(..))
        | StoreError::Search(SearchError::Sqlite {
            source: ref e @ rusqlite::Error::Utf8Error(..),
            ..
        }) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("a stored text is not valid UTF-8: {e}"),
        },
        other => other,
    }
}

/// [`open_path`] after the header check; `uri`, when given, is opened instead of `path` (the
/// immutable read-only fallback).
fn open_checked(path: &Path, opts: &OpenOptions, uri: Option<&str>) -> Result<Opened> {
    let flags = if opts.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let mut conn = match uri {
        Some(uri) => Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)?,
        None => Connection::open_with_flags(path, flags)?,
    };
    conn.busy_timeout(opts.busy_timeout)?;
    // Room for every statement a bulk write cycles through (six sizes of row insert among
    // them, `row_insert.rs`): rusqlite's default of 16 would evict and re-prepare them.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // A writer checks every b-tree page it reads more thoroughly (cell sizes and offsets), so
    // damage is refused before a write can spread it; a per-connection setting, nothing is
    // written. A reader does not pay it: it was ~6% of a search process (bm25 reads hundreds
    // of docsize pages, and each was checked whole). Over 598 damaged files
    // (`cli_sessions_damaged`'s damage, seeds 1-600 but the two known FTS5 gaps), every
    // search and list either gave the intact file's output or reported the damage, with the
    // check and without it; without it, 50 searches that had refused a page whose damaged
    // cells they never used gave the intact answer instead (issue #17 item 6).
    if !opts.read_only {
        conn.pragma_update(None, "cell_size_check", true)?;
    }
    plan_without_bound_values(&conn)?;
    // Before anything that could write: a newer database is left exactly as it is.
    let version = schema::check_not_newer(&conn, path)?;
    if opts.read_only {
        // Only an older schema can lack columns (migrations add every declared column), and
        // checking costs building the whole schema in memory: skipped for a current file.
        if version != Some(schema::SCHEMA_VERSION) {
            schema::shadow_missing_columns(&conn)?;
        }
        conn.pragma_update(None, "query_only", true)?;
        conn.pragma_update(None, "cache_size", READ_ONLY_CACHE_PAGES)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        return Ok(Opened {
            conn,
            journal_mode: JournalMode::parse(&mode),
            current: version == Some(schema::SCHEMA_VERSION),
        });
    }
    // Before anything that writes: a damaged database is refused as it is.
    integrity::check_before_write(&conn, path)?;
    let journal_mode = apply_wal_with_fallback(&conn)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Statement journals (what lets one statement of a transaction roll back alone) go to
    // memory instead of a temporary file: every insert into a table with triggers writes one,
    // and their `pwrite`s were a fifth of a large import (issue #17). They hold the pages one
    // statement changed, and nothing in them needs to survive a crash: the transaction's own
    // journal (the WAL) is what recovery reads.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    with_write_tx(&mut conn, |tx| schema::init(tx, path))?;
    Ok(Opened {
        conn,
        journal_mode,
        current: true,
    })
}

/// Pages a read-only connection caches. Read-only opens are short commands (`sessions
/// search`, `show`, `list`) that read most pages once: with SQLite's default (2 MB) every page
/// read lands in fresh heap memory, and its page fault cost more than the read (a third of a
/// search's faults). 32 pages keep a statement's B-tree interior pages hot and recycle the
/// rest: a search process took ~9% less time with 64 than with the default, and 2-3% less
/// again with 32 (16 was no better); `list`, `show` and `stats` did not get slower (issue #17).
const READ_ONLY_CACHE_PAGES: i64 = 32;

/// Sets the query planner stability guarantee on `conn` (every connection a store opens):
/// plans never depend on bound values. Without it, SQLite marks a statement whose plan could
/// use a parameter's value to be compiled again whenever a new value is bound (its row
/// estimate for a comparison with a bound integer reads the value): a search compiled its hit
/// lookup (`search/hits.rs`, `m.id = ?`) once per hit and FTS5's segment lookup (`segid = ?`)
/// once per term, ~4% of a search process (issue #17 item 6). None of our plans gains from a
/// bound value: our LIKE patterns start with `%`, FTS limits are written into the statement,
/// and no database carries `sqlite_stat4` samples.
fn plan_without_bound_values(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Prepared statements a connection keeps.
const STATEMENT_CACHE: usize = 64;

/// An in-memory database with the current schema (tests, ephemeral sessions).
pub(crate) fn open_memory() -> Result<Opened> {
    let mut conn = Connection::open_in_memory()?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    plan_without_bound_values(&conn)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    with_write_tx(&mut conn, |tx| schema::init(tx, Path::new(":memory:")))?;
    Ok(Opened {
        conn,
        journal_mode: JournalMode::Other("memory".into()),
        current: true,
    })
}

/// A non-empty file must start with the SQLite header. A missing file is created (with its
/// directory) unless opening read-only.
fn check_header(path: &Path, read_only: bool) -> Result<()> {
    let io_err = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(StoreError::NotSqlite {
            path: path.to_path_buf(),
        }),
        Ok(meta) if meta.len() == 0 => Ok(()),
        Ok(_) => {
            let mut header = [0u8; 16];
            let mut file = std::fs::File::open(path).map_err(io_err)?;
            match file.read_exact(&mut header) {
                Ok(()) if &header == SQLITE_HEADER => Ok(()),
                Ok(()) => Err(StoreError::NotSqlite {
                    path: path.to_path_buf(),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    Err(StoreError::NotSqlite {
                        path: path.to_path_buf(),
                    })
                }
                Err(e) => Err(io_err(e)),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !read_only => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(io_err)?;
            }
            Ok(())
        }
        Err(e) => Err(io_err(e)),
    }
}

/// Switches to WAL; on a filesystem that cannot do WAL, falls back to the rollback journal.
fn apply_wal_with_fallback(conn: &Connection) -> Result<JournalMode> {
    match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
        Ok(mode) => Ok(JournalMode::parse(&mode)),
        Err(e) if is_wal_incompatible(&e) => {
            conn.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))?;
            Ok(JournalMode::Delete)
        }
        Err(e) => Err(e.into()),
    }
}

/// True for the errors that mean "this filesystem cannot do WAL".
pub(crate) fn is_wal_incompatible(e: &rusqlite::Error) -> bool {
    let text = e.to_string().to_lowercase();
    WAL_INCOMPATIBLE_MARKERS.iter().any(|m| text.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32, msg: &str) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(msg.into()))
    }

    #[test]
    fn wal_incompatibility_is_recognised_only_for_filesystem_errors() {
        assert!(is_wal_incompatible(&failure(15, "locking protocol")));
        assert!(is_wal_incompatible(&failure(10, "disk I/O error")));
        assert!(is_wal_incompatible(&failure(23, "not authorized")));
        assert!(!is_wal_incompatible(&failure(5, "database is locked")));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod current_schema_tests {
    use super::*;

    /// A current database is not asked which columns and indexes it has (`Opened::current`):
    /// the schema must really declare all of them.
    #[test]
    fn a_current_schema_has_every_column_and_index_a_store_assumes_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        drop(open_path(&path, &OpenOptions::default()).unwrap());
        let opened = open_path(
            &path,
            &OpenOptions {
                read_only: true,
                ..OpenOptions::default()
            },
        )
        .unwrap();
        assert!(opened.current);
        let columns = schema::column_names(&opened.conn, "messages").unwrap();
        for column in crate::sqlite::MESSAGE_COLUMNS {
            assert!(columns.iter().any(|c| c == column), "no messages.{column}");
        }
        assert!(crate::cjk_index::is_present(&opened.conn).unwrap());
        assert!(crate::deferred_index::is_present(&opened.conn).unwrap());
    }
}
