//! `baton sessions list`.

use super::table::{Column, Table, count, width};
use super::{json_err, print_json, store_err};
use crate::commands::Failure;
use baton_store::{SessionFilter, SessionStore, SqliteStore};
use clap::Args;

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
            Column::right("messages"),
            Column::left("title"),
        ],
        3,
    );
    for row in rows {
        let s = row.session;
        table.push(vec![
            s.id,
            s.source,
            count(s.message_count),
            s.title.unwrap_or_else(|| "-".into()),
        ]);
    }
    for line in table.render(width()) {
        outln!("{line}");
    }
    Ok(())
}
