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
    /// Only messages of this role (repeatable).
    #[arg(long)]
    pub role: Vec<String>,
    /// Only sessions from this source: cli, claude-code, … (repeatable).
    #[arg(long)]
    pub source: Vec<String>,
    /// Only this session (repeatable).
    #[arg(long)]
    pub session: Vec<String>,
    /// Only messages at or after this time (RFC 3339, e.g. 2026-05-01T00:00:00Z).
    #[arg(long, value_parser = parse_time)]
    pub since: Option<f64>,
    /// Only messages at or before this time (RFC 3339).
    #[arg(long, value_parser = parse_time)]
    pub until: Option<f64>,
}

fn parse_time(text: &str) -> Result<f64, String> {
    baton_store::session::parse_rfc3339(text)
        .ok_or_else(|| format!("`{text}` is not an RFC 3339 time such as 2026-05-01T00:00:00Z"))
}

pub fn run(store: &SqliteStore, json: bool, args: &SearchArgs) -> Result<(), Failure> {
    let mut q = SearchQuery::new(&args.query);
    q.limit = args.limit;
    q.roles = args.role.clone();
    q.sources = args.source.clone();
    q.session_ids = args.session.clone();
    q.since = args.since;
    q.until = args.until;
    let hits = store
        .read(|conn| Ok(search(conn, &q)?))
        .map_err(store_err)?;
    if json {
        print_json(&serde_json::to_value(&hits).map_err(json_err)?);
        return Ok(());
    }
    if hits.is_empty() {
        outln!("no messages match `{}`", args.query);
    }
    let snippet_width = width().saturating_sub(36).max(20);
    for h in hits {
        outln!(
            "{:<24} {:<10} {}",
            h.session_id,
            h.role,
            fit(&h.snippet, snippet_width)
        );
    }
    Ok(())
}
