//! The one error type of this crate. Every variant names what it was working on (a path, a
//! session id, a title) so a message shown to a user can be acted on without a debugger.

use baton_core::MessageError;
use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file or its directory could not be read or created.
    #[error("cannot access session database {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file exists, is not empty, and does not start with the SQLite header. It is left
    /// exactly as it was: we never overwrite something we do not recognise.
    #[error("{path} is not an SQLite database; refusing to open or overwrite it")]
    NotSqlite { path: PathBuf },

    /// The file starts with the SQLite header but SQLite cannot read it: SQLITE_CORRUPT or
    /// SQLITE_NOTADB from any statement, or the integrity check an open for writing runs
    /// first. Nothing is written to it: recovering is the user's call.
    #[error(
        "session database {path} is corrupt ({detail}); it was left untouched. Restore it from \
         a backup, or move it aside (a new database is then created in its place) and try \
         `sqlite3 {path} .recover` to salvage what it holds"
    )]
    Corrupt { path: PathBuf, detail: String },

    /// The database was written by a newer build. It is left untouched.
    #[error(
        "session database {path} has schema version {found}, newer than version {supported} \
         supported by this build; upgrade baton to open it"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    /// Another writer held the database through every retry.
    #[error("session database {path} stayed locked after {attempts} write attempts")]
    Locked { path: String, attempts: u32 },

    /// A server-backed store (PostgreSQL) failed: `store` names it without credentials.
    #[error("session store {store}: {detail}")]
    Backend { store: String, detail: String },

    /// A copy found a different session under the same id in the target.
    #[error(
        "session {id} already exists in the target with different content; nothing of it was written (delete it there, or copy into an empty store)"
    )]
    CopyConflict { id: String },

    /// No session has this id.
    #[error("no session with id {id}")]
    NotFound { id: String },

    /// An id prefix or title names more than one session (or compression chain).
    #[error("`{input}` matches more than one session: {}; name one by its id", candidates.join(", "))]
    Ambiguous {
        input: String,
        candidates: Vec<String>,
    },

    /// A session already continued by compression cannot be compressed again; its tip can.
    #[error(
        "session {id} was already compressed into {}; compress the newest session of its chain instead",
        child.as_deref().unwrap_or("a continuation")
    )]
    AlreadyContinued { id: String, child: Option<String> },

    /// A compression chain's history is not a valid message sequence (damaged rows, or a
    /// continuation written by another program in a way we cannot line up).
    #[error("the compression chain of session {id} does not make one valid conversation: {detail}")]
    InvalidChain { id: String, detail: String },

    /// Titles are unique across sessions.
    #[error("title {title:?} is already used by session {other_id}")]
    TitleInUse { title: String, other_id: String },

    /// Titles are capped (in characters, not bytes).
    #[error("title too long ({chars} characters, max {max})")]
    TitleTooLong { chars: usize, max: usize },

    /// A stored row could not be turned back into a message.
    #[error("session {session_id}: stored message row {row_id} is not a valid message: {source}")]
    BadMessage {
        session_id: String,
        row_id: i64,
        #[source]
        source: MessageError,
    },

    /// A full-text search failed (the query is named in the message).
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),

    /// Writing an export failed.
    #[error("cannot write export of session {id}: {source}")]
    Export {
        id: String,
        #[source]
        source: std::io::Error,
    },

    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// True for the transient contention errors a write should retry (SQLITE_BUSY, SQLITE_LOCKED).
    pub fn is_busy(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            _ => false,
        }
    }
}

/// Shorthand used across the crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
