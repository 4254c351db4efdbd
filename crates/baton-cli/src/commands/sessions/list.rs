//! `baton sessions list`: one row per session (or compression chain), with when it started
//! and was last active and a one-line preview of its first request.

use super::table::{Column, Table, count, fit, width};
use super::{json_err, print_json, store_err};
use crate::commands::Failure;
use baton_store::session::format_utc_minutes;
use baton_store::{SessionFilter, SessionStore, SqliteStore};
use clap::Args;

/// Titles are cut to this many characters in the table, leaving room for the preview.
const TITLE_WIDTH: usize = 30;

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Only sessions from this source (cli, api_server, cron, ...).
    #[arg(long)]
    pub source: Option<String>,
}

pub fn run(store: &SqliteStore, json: bool, args: &ListArgs) -> Result<(), Failure> {
    let filter = SessionFilter {
        source: args.source.clone(),
        limit: args.limit,
        ..SessionFilter::default()
    };
    let rows = store.list_sessions(&filter).map_err(store_err)?;
    if json {
        print_json(&serde_json::to_value(&rows).map_err(json_err)?);
        return Ok(());
    }
    let mut table = Table::new(
        vec![
            Column::left("id"),
            Column::left("source"),
            Column::left("started (UTC)"),
            Column::left("last active"),
            Column::right("messages"),
            Column::left("title"),
            Column::left("preview"),
        ],
        6,
    );
    for row in rows {
        let s = row.session;
        table.push(vec![
            s.id,
            s.source,
            format_utc_minutes(s.started_at),
            format_utc_minutes(row.last_active),
            count(s.message_count),
            s.title.map_or_else(|| "-".into(), |t| fit(&t, TITLE_WIDTH)),
            if row.preview.is_empty() {
                "-".into()
            } else {
                row.preview
            },
        ]);
    }
    for line in table.render(width()) {
        println!("{line}");
    }
    Ok(())
}
