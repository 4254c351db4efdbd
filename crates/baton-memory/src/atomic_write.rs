//! Crash-safe replacement of a file: readers and survivors of a crash see the old content or
//! the new one, never a mix.
//!
//! Temp file in the same directory (a rename is atomic only within one file system), write,
//! fsync the file, rename over the target, fsync the directory so the rename itself is
//! durable. A symlinked target is written through: the link stays and its destination is
//! replaced, so dotfile setups that link `MEMORY.md` elsewhere keep working.

use crate::error::MemoryError;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    let mut tmp = tempfile::Builder::new()
        .prefix(".mem_")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(content.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    // On failure the temp file is deleted when the returned error's `NamedTempFile` drops.
    tmp.persist(&target).map_err(|e| err(e.error))?;
    sync_dir(dir).map_err(err)?;
    Ok(())
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
