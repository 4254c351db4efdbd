//! The one error type of this crate: what failed on disk, and where.
//!
//! Refused writes (over capacity, ambiguous match, blocked content…) are not errors: they are
//! [`crate::Refusal`]s the agent is expected to act on. `MemoryError` is for the file system.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("cannot create memory directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read memory file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write memory file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("memory file {path} is not valid UTF-8 (byte {valid_up_to}); fix or move it aside")]
    NotUtf8 { path: PathBuf, valid_up_to: usize },
}
