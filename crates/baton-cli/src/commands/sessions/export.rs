//! `baton sessions export ID_OR_TITLE`.

use super::{resolve, store_err};
use crate::commands::Failure;
use crate::commands::io::write_output;
use baton_store::{ExportScope, SqliteStore, export_jsonl};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A session id, a title, or a unique id prefix.
    pub id: String,
    /// Export the whole compression chain the session belongs to.
    #[arg(long)]
    pub chain: bool,
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(store: &SqliteStore, args: &ExportArgs) -> Result<(), Failure> {
    let id = resolve(store, &args.id)?;
    let scope = if args.chain {
        ExportScope::Chain
    } else {
        ExportScope::Session
    };
    let mut buf = Vec::new();
    export_jsonl(store, &id, scope, &mut buf).map_err(store_err)?;
    let text = String::from_utf8(buf).map_err(|e| Failure::Other(e.to_string()))?;
    write_output(args.output.as_deref(), &text)
}
