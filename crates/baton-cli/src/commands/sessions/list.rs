//! `baton sessions list`: one row per session (or compression chain), with when it started
//! and was last active and a one-line preview of its first request.

use super::table::{Column, Table, count, fit, width};
use super::{json_err, print_json, store_err};
use crate::commands::Failure;
use baton_core::terminal_text::escape_controls;
use baton_store::session::format_utc_minutes;
use baton_store::{SessionFilter, SessionStore};
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

pub fn run(store: &dyn SessionStore, json: bool, args: &ListArgs) -> Result<(), Failure> {
    if json {
        let rows = store.list_sessions(&filter(args)).map_err(store_err)?;
        print_json(&serde_json::to_value(&rows).map_err(json_err)?);
        return Ok(());
    }
    for line in table_lines(store, args, width())? {
        outln!("{line}");
    }
    Ok(())
}

fn filter(args: &ListArgs) -> SessionFilter {
    SessionFilter {
        source: args.source.clone(),
        limit: args.limit,
        ..SessionFilter::default()
    }
}

/// The table `sessions list` prints, fitted to `width` columns (the interactive terminal's
/// `/sessions` shows the same).
pub fn table_lines(
    store: &dyn SessionStore,
    args: &ListArgs,
    width: usize,
) -> Result<Vec<String>, Failure> {
    let rows = store.list_sessions(&filter(args)).map_err(store_err)?;
    // Columns that would say the same on every row (the source asked for, no titles at all)
    // are left out, so the preview keeps its room on a normal terminal.
    let show_source = args.source.is_none();
    let show_title = rows.iter().any(|r| r.session.title.is_some());
    let mut columns = vec![Column::left("id")];
    if show_source {
        columns.push(Column::left("source"));
    }
    columns.extend([
        Column::left("started (UTC)"),
        Column::left("last active"),
        Column::right("messages"),
    ]);
    if show_title {
        columns.push(Column::left("title"));
    }
    columns.push(Column::left("preview"));
    let preview_column = columns.len() - 1;
    let mut table = Table::new(columns, preview_column);
    for row in rows {
        let s = row.session;
        let mut cells = vec![s.id];
        if show_source {
            cells.push(s.source);
        }
        cells.extend([
            format_utc_minutes(s.started_at),
            last_active(s.started_at, row.last_active),
            count(s.message_count),
        ]);
        if show_title {
            // Our writes clean titles, but another program may have stored control bytes.
            cells.push(
                s.title
                    .map_or_else(|| "-".into(), |t| fit(&escape_controls(&t), TITLE_WIDTH)),
            );
        }
        cells.push(if row.preview.is_empty() {
            "-".into()
        } else {
            escape_controls(&row.preview).into_owned()
        });
        table.push(cells);
    }
    Ok(table.render(width))
}

/// The last-active time, as only its clock time when it is the day the session started (the
/// usual case), so the preview keeps its room.
fn last_active(started: f64, last: f64) -> String {
    let (start, end) = (format_utc_minutes(started), format_utc_minutes(last));
    match (start.split_once(' '), end.split_once(' ')) {
        (Some((d1, _)), Some((d2, time))) if d1 == d2 => time.to_string(),
        _ => end,
    }
}
