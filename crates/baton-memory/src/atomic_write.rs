//! Crash-safe replacement of a file: readers and survivors of a crash see the old content or
//! the new one, never a mix.
//!
//! Temp file in the same directory (a rename is atomic only within one file system), write,
//! fsync the file, rename over the target, fsync the directory so the rename itself is
//! durable. A symlinked target is written through: the link stays and its destination is
//! replaced, so dotfile setups that link `MEMORY.md` elsewhere keep working.
//!
//! A writer killed between creating its temp file and the rename leaves a `.mem_*.tmp` behind;
//! the next write in that folder deletes those older than [`STALE_TEMP`] (a live write takes
//! milliseconds, and every write holds the file's lock, so a minute-old temp file is orphaned).

use crate::error::MemoryError;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const TEMP_PREFIX: &str = ".mem_";
const TEMP_SUFFIX: &str = ".tmp";

/// Age after which a leftover temp file is taken to be from a killed writer.
pub const STALE_TEMP: Duration = Duration::from_secs(60);

/// Replaces `path`'s content with `content` atomically and durably.
///
/// The result is readable by its owner only (0600, the temporary file's mode, kept by the
/// rename), unlike Baton's other outputs, which follow the umask: USER.md is a profile of the
/// user and MEMORY.md collects what the agent learned about their work.
pub fn write_atomic(path: &Path, content: &str) -> Result<(), MemoryError> {
    let target = resolve_symlink(path);
    let err = |source| MemoryError::Write {
        path: target.clone(),
        source,
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    remove_stale_temps(dir, STALE_TEMP);
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(content.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    // On failure the temp file is deleted when the returned error's `NamedTempFile` drops.
    tmp.persist(&target).map_err(|e| err(e.error))?;
    sync_dir(dir).map_err(err)?;
    Ok(())
}

/// Deletes `.mem_*.tmp` regular files in `dir` last modified more than `age` ago, returning
/// how many went. Best effort: a file that vanished or cannot be deleted is left alone, since
/// the write itself must not fail over litter.
pub fn remove_stale_temps(dir: &Path, age: Duration) -> usize {
    let Ok(list) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for entry in list.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|a| a > age);
        if meta.is_file() && old && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The file a write to `path` must replace: the link's destination when `path` is a symlink.
fn resolve_symlink(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    // Directories cannot be opened for fsync on Windows; NTFS journals the rename.
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("MEMORY.md");
        std::fs::write(&p, "old").unwrap();
        write_atomic(&p, "new §").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new §");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn old_temp_files_of_killed_writers_are_removed_and_fresh_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("MEMORY.md");
        let stale = dir.path().join(".mem_Ab12Cd.tmp");
        let fresh = dir.path().join(".mem_Zz99Yy.tmp");
        let other = dir.path().join("notes.tmp");
        for f in [&stale, &fresh, &other] {
            std::fs::write(f, "partial").unwrap();
        }
        let two_minutes_ago = std::time::SystemTime::now() - Duration::from_secs(120);
        for f in [&stale, &other] {
            std::fs::File::options()
                .write(true)
                .open(f)
                .unwrap()
                .set_modified(two_minutes_ago)
                .unwrap();
        }
        write_atomic(&p, "new").unwrap();
        assert!(!stale.exists(), "a minute-old temp file is cleaned up");
        assert!(fresh.exists(), "a temp file that may be a live write stays");
        assert!(other.exists(), "files that are not ours stay");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_keeps_its_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.md");
        let link = dir.path().join("MEMORY.md");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }
}
