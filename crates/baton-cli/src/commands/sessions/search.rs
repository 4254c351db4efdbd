//! `baton sessions search QUERY`.

use super::table::{fit, width};
use super::{json_err, print_json, store_err};
use crate::commands::Failure;
use baton_store::{SearchQuery, SqliteStore, search};
use clap::Args;

#[derive(Debug, Args)]
pub struct SearchArgs {
    pub query: String,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only messages of this role.
    #[arg(long)]
    pub role: Option<String>,
}

pub fn run(store: &SqliteStore, json: bool, args: &SearchArgs) -> Result<(), Failure> {
    let mut q = SearchQuery::new(&args.query);
    q.limit = args.limit;
    q.roles = args.role.iter().cloned().collect();
    let hits = store
        .read(|conn| Ok(search(conn, &q)?))
        .map_err(store_err)?;
    if json {
        print_json(&serde_json::to_value(&hits).map_err(json_err)?);
        return Ok(());
    }
    if hits.is_empty() {
        println!("no messages match `{}`", args.query);
    }
    let snippet_width = width().saturating_sub(36).max(20);
    for h in hits {
        println!(
            "{:<24} {:<10} {}",
            h.session_id,
            h.role,
            fit(&h.snippet, snippet_width)
        );
    }
    Ok(())
}
