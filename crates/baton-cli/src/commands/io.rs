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
    match path {
        Some(p) if p.as_os_str() != "-" => {
            formats::write_file(p, text).map_err(|e| Failure::Other(e.to_string()))
        }
        _ => {
            // A closed pipe ends quietly; other failures set the exit status (see `output`).
            crate::output::out_bytes(text.as_bytes());
            Ok(())
        }
    }
}
