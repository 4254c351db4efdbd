//! `baton sessions prune --older-than DAYS`.

use super::db::Db;
use super::{describe, print_json, store_err};
use crate::commands::Failure;
use clap::Args;
use serde_json::json;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Delete sessions that started more than this many days ago (and have ended).
    #[arg(long, value_name = "DAYS")]
    pub older_than: u32,
    /// Only sessions of this source (cli, api_server, cron, ...).
    #[arg(long)]
    pub source: Option<String>,
    /// List what would be deleted and change nothing.
    #[arg(long, conflicts_with = "yes")]
    pub dry_run: bool,
    /// Really delete.
    #[arg(long)]
    pub yes: bool,
    /// Allow migrating a database of an older schema (e.g. the reference design's) first.
    #[arg(long)]
    pub migrate: bool,
}

pub(crate) fn run(db: Db<'_>, json: bool, args: &PruneArgs) -> Result<(), Failure> {
    let age = Duration::from_secs(u64::from(args.older_than) * 86_400);
    let source = args.source.as_deref();
    if args.dry_run || !args.yes {
        let store = db.read()?;
        let ids = store.prune_candidates(age, source).map_err(store_err)?;
        if json {
            print_json(&json!({ "would_delete": ids }));
        } else {
            outln!(
                "would prune {} session(s) older than {} days:",
                super::table::count(ids.len()),
                args.older_than
            );
            if !ids.is_empty() {
                for line in describe(&*store, &ids)? {
                    outln!("  {line}");
                }
            }
        }
        if args.dry_run {
            return Ok(());
        }
        return Err(Failure::BadInput(
            "not pruning without --yes (nothing was changed; --dry-run only lists)".into(),
        ));
    }
    let store = db.write(args.migrate)?;
    let deleted = store.prune_sessions(age, source).map_err(store_err)?;
    if json {
        print_json(&json!({ "deleted": deleted }));
    } else {
        outln!(
            "pruned {} session(s) older than {} days",
            super::table::count(deleted.len()),
            args.older_than
        );
        for id in &deleted {
            outln!("  {id}");
        }
    }
    Ok(())
}
