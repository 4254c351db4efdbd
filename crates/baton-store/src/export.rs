//! Exporting transcripts as JSONL: one message per line, in baton's message format (the same
//! format baton's loaders read), so an export can be fed straight back in.

use crate::SessionStore;
use crate::error::{Result, StoreError};
use std::io::Write;

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportScope {
    /// The messages of this one session.
    Session,
    /// Every session of the compression chain containing it, root first.
    Chain,
}

/// Writes the transcript of `id` to `out` as JSONL and returns the number of messages written.
pub fn export_jsonl(
    store: &dyn SessionStore,
    id: &str,
    scope: ExportScope,
    mut out: impl Write,
) -> Result<usize> {
    let ids = match scope {
        ExportScope::Session => vec![id.to_string()],
        ExportScope::Chain => store.compression_chain(id)?,
    };
    let io = |source| StoreError::Export {
        id: id.to_string(),
        source,
    };
    let mut n = 0;
    for sid in ids {
        for m in store.messages(&sid)? {
            out.write_all(m.to_json().as_bytes()).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
            n += 1;
        }
    }
    out.flush().map_err(io)?;
    Ok(n)
}
