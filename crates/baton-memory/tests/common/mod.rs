//! Paths to test data shared by the memory tests: the team's shared corpus is present on the
//! team's machines and absent on a fresh clone, where tests using it print a note and skip.

#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/data` beside the repository, or `$BATON_SHARED_DATA` when set (for checkouts
/// that do not sit beside `shared/`, such as git worktrees elsewhere).
pub fn shared_data() -> PathBuf {
    match std::env::var_os("BATON_SHARED_DATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// `../shared/data/normalized`, if present.
pub fn shared_normalized() -> Option<PathBuf> {
    let dir = shared_data().join("normalized");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "note: ../shared/data/normalized is absent (set BATON_SHARED_DATA to point elsewhere); skipping the shared-corpus part of this test"
        );
        None
    }
}
