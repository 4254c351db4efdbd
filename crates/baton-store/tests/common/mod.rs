#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use baton_store::{NewSession, SessionStore, SqliteStore};
use std::path::PathBuf;
use tempfile::TempDir;

pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    (dir, path)
}

pub fn session(store: &SqliteStore, id: &str) -> String {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            ..NewSession::new("cli")
        })
        .unwrap()
}

/// Sets start/end times directly, for lineage and pruning tests.
pub fn set_times(
    path: &std::path::Path,
    id: &str,
    started: f64,
    ended: Option<f64>,
    reason: Option<&str>,
) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute(
        "UPDATE sessions SET started_at = ?1, ended_at = ?2, end_reason = ?3 WHERE id = ?4",
        rusqlite::params![started, ended, reason, id],
    )
    .unwrap();
}
