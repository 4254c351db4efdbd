//! The advisory lock held across every read-modify-write of a memory file.
//!
//! The lock is taken on a sidecar file (`MEMORY.md.lock`), never on the data file: writes
//! replace the data file by renaming a new inode over it, and a lock on the old inode would
//! not exclude a writer that opened the new one. `flock`-style locks (std `File::lock`) are
//! per open file description, so they exclude other processes and other handles in this one.

use crate::error::MemoryError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// An exclusive lock, released when dropped (closing the handle releases it even if the
/// process dies, so a crash never leaves memory locked).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    path: PathBuf,
}

impl FileLock {
    /// Blocks until the lock on `<data_path>.lock` is ours.
    pub fn acquire(data_path: &Path) -> Result<FileLock, MemoryError> {
        let path = lock_path(data_path);
        let err = |source| MemoryError::Lock {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        file.lock().map_err(err)?;
        Ok(FileLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `MEMORY.md` → `MEMORY.md.lock`, next to it.
pub fn lock_path(data_path: &Path) -> PathBuf {
    let mut name = data_path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_second_handle_cannot_take_the_lock_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("MEMORY.md");
        let held = FileLock::acquire(&data).unwrap();
        let other = OpenOptions::new().append(true).open(held.path()).unwrap();
        assert!(other.try_lock().is_err());
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
