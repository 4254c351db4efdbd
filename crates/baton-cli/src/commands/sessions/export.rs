//! `baton sessions export ID_OR_TITLE`: a session, or its compression chain as one
//! conversation (`--chain`), or the chain's stored rows as they are (`--chain --raw`).

use super::db::Db;
use super::{resolve, store_err};
use crate::commands::Failure;
use crate::commands::io::{refuse_database_output, write_output};
use baton_store::{ExportScope, StoreError, export_jsonl};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A session id, a title, or a unique id prefix.
    pub id: String,
    /// Export the whole compression chain the session belongs to as one conversation: the
    /// full original history in order (no summaries, no repeated kept tails). Exporting the
    /// chain's newest session without `--chain` gives its latest compacted view instead.
    #[arg(long)]
    pub chain: bool,
    /// With `--chain`: every stored row of every session of the chain, as they are (compacted
    /// views and summaries included), rather than one conversation.
    #[arg(long)]
    pub raw: bool,
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub(crate) fn run(db: Db<'_>, args: &ExportArgs) -> Result<(), Failure> {
    if let (Some(out), Some(file)) = (&args.output, db.file()) {
        refuse_database_output(out, file)?;
    }
    let store = db.read()?;
    let id = resolve(&*store, &args.id)?;
    let scope = match (args.chain, args.raw) {
        (true, false) => ExportScope::Chain,
        (true, true) => ExportScope::ChainRaw,
        (false, _) => ExportScope::Session,
    };
    let mut buf = Vec::new();
    export_jsonl(&*store, &id, scope, &mut buf).map_err(|e| match e {
        StoreError::InvalidChain { .. } => Failure::Other(format!(
            "{e}; `--chain --raw` exports the stored rows as they are"
        )),
        other => store_err(other),
    })?;
    let text = String::from_utf8(buf).map_err(|e| Failure::Other(e.to_string()))?;
    write_output(args.output.as_deref(), &text)
}
