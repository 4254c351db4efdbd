//! Rotating backups beside a memory file, so no write loses what it removed or replaced.
//!
//! Before any rewrite that drops or changes content (`remove`, `replace`, a hand-edited file
//! normalized), the previous text is copied to `<file>.bak.<unix-nanos>` next to it; the newest
//! [`KEEP`] per file are kept and older ones deleted. The name sorts by age and never collides
//! with an existing backup, and the copy is written atomically (0600, like the file itself).

use crate::atomic_write::write_atomic;
use crate::error::MemoryError;
use std::path::{Path, PathBuf};

/// How many backups of one file are kept.
pub const KEEP: usize = 5;

/// Copies `raw` (the file's previous bytes) to a new `<path>.bak.<nanos>` and prunes backups
/// beyond the newest [`KEEP`]. Returns the new backup's path.
pub fn back_up(path: &Path, raw: &str) -> Result<PathBuf, MemoryError> {
    let existing = backups(path);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    // Newer than every existing backup even if the clock stepped back.
    let stamp = existing
        .last()
        .map_or(now, |(n, _)| now.max(n.saturating_add(1)));
    let backup = with_suffix(path, &format!(".bak.{stamp}"));
    write_atomic(&backup, raw)?;
    let all = backups(path);
    for (_, old) in all.iter().take(all.len().saturating_sub(KEEP)) {
        // A backup another process pruned first is fine; one we cannot delete stays.
        let _ = std::fs::remove_file(old);
    }
    Ok(backup)
}

/// The backups of `path`, oldest first.
pub fn backups(path: &Path) -> Vec<(u128, PathBuf)> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.bak.", name.to_string_lossy());
    let mut found: Vec<(u128, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name();
            let stamp = n.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((stamp, e.path()))
        })
        .collect();
    found.sort();
    found
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keeps_the_newest_backups_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("MEMORY.md");
        let mut made = Vec::new();
        for i in 0..KEEP + 3 {
            made.push(back_up(&p, &format!("version {i}")).unwrap());
        }
        let kept = backups(&p);
        assert_eq!(kept.len(), KEEP);
        let kept_paths: Vec<_> = kept.into_iter().map(|(_, p)| p).collect();
        assert_eq!(kept_paths, made[3..]);
        let newest = std::fs::read_to_string(made.last().unwrap()).unwrap();
        assert_eq!(newest, format!("version {}", KEEP + 2));
    }
}
