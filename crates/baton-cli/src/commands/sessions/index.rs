//! `baton sessions index`: bring the search index up to date with messages stored without it
//! (an `import --index-later`, rows another program inserted).
//!
//! Safe to run at any time and from several processes: each step indexes the oldest waiting
//! messages in its own write transaction, so a killed indexer loses nothing (the rest stays
//! queued) and two indexers share the work.

use super::{open_for_write, print_json, store_err};
use crate::commands::Failure;
use baton_store::SessionStore;
use clap::Args;
use indicatif::ProgressBar;
use std::path::Path;

#[derive(Debug, Args)]
pub struct IndexArgs {}

/// Messages per catch-up transaction.
const CHUNK: usize = baton_store::deferred_index::CATCH_UP_CHUNK;

/// Indexes every waiting message of the SQLite file at `path`.
pub fn run(path: &Path, json: bool, _args: &IndexArgs) -> Result<(), Failure> {
    run_on(&open_for_write(path, false)?, json)
}

/// Indexes every waiting message of an open store, SQLite or PostgreSQL.
pub fn run_on(store: &dyn SessionStore, json: bool) -> Result<(), Failure> {
    let indexed = catch_up(store, json)?;
    if json {
        print_json(&serde_json::json!({ "indexed": indexed }));
    } else if indexed == 0 {
        outln!("the search index is up to date");
    } else {
        outln!(
            "indexed {} messages; the search index is up to date",
            super::table::count(indexed)
        );
    }
    Ok(())
}

/// Indexes the waiting messages in bounded transactions until none wait, showing "indexing
/// N messages" on a terminal. Returns how many were indexed.
pub(super) fn catch_up(store: &dyn SessionStore, json: bool) -> Result<usize, Failure> {
    let backlog = store.index_backlog().map_err(store_err)?;
    if backlog == 0 {
        return Ok(0);
    }
    let progress: ProgressBar = super::import::progress_bar(
        backlog as u64,
        json,
        "indexing {bar:30} {human_pos}/{human_len} messages for search · ETA {eta}",
    );
    let mut indexed = 0;
    loop {
        let n = store.catch_up_index(CHUNK).map_err(store_err)?;
        if n == 0 {
            break;
        }
        indexed += n;
        progress.inc(n as u64);
    }
    progress.finish_and_clear();
    Ok(indexed)
}
