//! Reading conversation input and writing output, shared by the commands.

use crate::commands::Failure;
use baton_core::formats::{self, Document, FormatName};
use std::io::Read;
use std::path::Path;

/// Reads and parses `file` (`None` or `-` = standard input). Returns a label for reports.
pub fn read_input(
    file: Option<&Path>,
    forced: Option<FormatName>,
) -> Result<(String, Document), Failure> {
    match file {
        Some(p) if p.as_os_str() != "-" => {
            let doc = formats::load_file(p, forced).map_err(|e| match e {
                formats::LoadError::Io { .. } => Failure::BadInput(e.to_string()),
                other => Failure::BadInput(other.to_string()),
            })?;
            Ok((p.display().to_string(), doc))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Failure::BadInput(format!("<stdin>: cannot read: {e}")))?;
            let doc = formats::parse_document(&text, forced)
                .map_err(|e| Failure::BadInput(e.to_string().replacen("<input>", "<stdin>", 1)))?;
            Ok(("<stdin>".to_string(), doc))
        }
    }
}

/// Writes `text` to `path` atomically, or to standard output.
pub fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    write_output_with(path, |out| out.write_all(text.as_bytes()))
}

/// [`write_output`] for content `write` produces piece by piece (a document's
/// `write_text`), so the whole text is never held in memory.
pub fn write_output_with(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    match path {
        Some(p) if p.as_os_str() != "-" => {
            formats::write_file_with(p, write).map_err(|e| Failure::Other(e.to_string()))
        }
        _ => {
            // A closed pipe ends quietly; other failures set the exit status (see `output`).
            crate::output::out_with(write);
            Ok(())
        }
    }
}

/// True when `output` already is the file `input` is: the same device and inode, so a hard
/// link, a symlink or another spelling of the path are all caught (comparing resolved paths
/// misses hard links, and writing one truncates the input). Only a regular input counts: a
/// device or pipe given as both (`/dev/null`) holds no data to lose.
pub fn same_file(output: &Path, input: &Path) -> bool {
    let (Ok(out), Ok(inp)) = (std::fs::metadata(output), std::fs::metadata(input)) else {
        return false;
    };
    if !inp.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        out.dev() == inp.dev() && out.ino() == inp.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = out;
        matches!((output.canonicalize(), input.canonicalize()), (Ok(a), Ok(b)) if a == b)
    }
}

/// Refuses (exit 2) to write `output` when it is the file `input` (see [`same_file`]), before
/// anything is opened for writing. `what` names the input in the message ("input file",
/// "session database").
pub fn refuse_same_file(output: &Path, input: &Path, what: &str) -> Result<(), Failure> {
    if output.as_os_str() != "-" && same_file(output, input) {
        return Err(Failure::BadInput(format!(
            "refusing to overwrite {}: that would write over the {what} {} (the same file); choose another path",
            output.display(),
            input.display()
        )));
    }
    Ok(())
}

/// [`refuse_same_file`] for an output written from the session database `db`: the database
/// and SQLite's files beside it (a replaced WAL or journal loses committed or rolled-back
/// pages) are all inputs.
pub fn refuse_database_output(output: &Path, db: &Path) -> Result<(), Failure> {
    refuse_same_file(output, db, "session database")?;
    for suffix in ["-wal", "-journal", "-shm"] {
        let mut side = db.as_os_str().to_os_string();
        side.push(suffix);
        refuse_same_file(output, Path::new(&side), "session database file")?;
    }
    Ok(())
}
