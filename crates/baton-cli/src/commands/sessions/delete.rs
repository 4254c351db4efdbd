//! `baton sessions delete ID_OR_TITLE --yes`.

use super::db::Db;
use super::{describe, print_json, resolve, store_err};
use crate::commands::Failure;
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// A session id, a title (a compressed conversation's title names its newest session), or
    /// a unique id prefix.
    pub id: String,
    /// Delete the whole compression chain the session belongs to, not just the session.
    #[arg(long)]
    pub chain: bool,
    /// Really delete. Without it, the sessions that would go are listed and nothing changes.
    #[arg(long)]
    pub yes: bool,
    /// Allow migrating a database of an older schema (e.g. the reference design's) first.
    #[arg(long)]
    pub migrate: bool,
}

pub(crate) fn run(db: Db<'_>, json: bool, args: &DeleteArgs) -> Result<(), Failure> {
    let (id, targets) = {
        let store = db.read()?;
        let id = resolve(&*store, &args.id)?;
        let targets = if args.chain {
            store.compression_chain(&id).map_err(store_err)?
        } else {
            vec![id.clone()]
        };
        if !args.yes {
            if json {
                print_json(&json!({ "would_delete": targets }));
            } else {
                outln!(
                    "would delete {} session(s):",
                    super::table::count(targets.len())
                );
                for line in describe(&*store, &targets)? {
                    outln!("  {line}");
                }
            }
            return Err(Failure::BadInput(format!(
                "not deleting `{}` without --yes (nothing was changed)",
                args.id
            )));
        }
        (id, targets)
    };
    let store = db.write(args.migrate)?;
    let deleted = if args.chain {
        store.delete_chain(&id).map_err(store_err)?
    } else {
        let mut deleted = Vec::new();
        for id in &targets {
            if store.delete_session(id).map_err(store_err)? {
                deleted.push(id.clone());
            }
        }
        deleted
    };
    if json {
        print_json(&json!({ "deleted": deleted }));
    } else {
        outln!(
            "deleted {} session(s): {}",
            super::table::count(deleted.len()),
            deleted.join(", ")
        );
    }
    Ok(())
}
