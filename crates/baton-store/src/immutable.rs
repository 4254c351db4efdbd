//! Reading a database in a place the user cannot write. A WAL database needs its `-shm` and
//! `-wal` files even to be read, and SQLite cannot create them in a read-only directory
//! ("attempt to write a readonly database"). When a read-only open fails that way and there is
//! no committed data waiting in a `-wal` file, the file is opened again as `immutable=1`: SQLite
//! then reads the main file directly, without locks or side files. Not used when a non-empty
//! `-wal` exists (its transactions would be invisible), nor for any open that writes.

use crate::error::StoreError;
use std::path::{Path, PathBuf};

/// True when `err` (from a read-only open of `path`) is the "cannot create the WAL side files"
/// failure and the main file holds everything committed.
pub(crate) fn should_fall_back(err: &StoreError, path: &Path) -> bool {
    let read_only_failure = matches!(
        err,
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen
            )
    );
    read_only_failure && wal_is_empty(path)
}

/// No `-wal` beside `path`, or an empty one.
fn wal_is_empty(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::metadata(PathBuf::from(wal)) {
        Ok(meta) => meta.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// The `file:` URI opening `path` read-only and immutable. Every byte outside the unreserved
/// set is percent-encoded, so `?`, `#` and `%` in a file name stay part of the name.
pub(crate) fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for &b in path_bytes(path).iter() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(path.as_os_str().as_bytes())
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Owned(path.to_string_lossy().into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_keeps_special_characters_part_of_the_name() {
        assert_eq!(
            immutable_uri(Path::new("/a b/x?y#z%.db")),
            "file:/a%20b/x%3Fy%23z%25.db?mode=ro&immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new("rel/state.db")),
            "file:rel/state.db?mode=ro&immutable=1"
        );
    }
}
