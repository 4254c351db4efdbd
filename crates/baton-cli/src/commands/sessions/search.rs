//! `baton sessions search QUERY`.

use super::table::{fit, width};
use super::{json_err, print_json, store_err};
use crate::commands::Failure;
use baton_core::terminal_text::escape_controls;
use baton_store::{SearchQuery, SessionStore};
use clap::Args;

#[derive(Debug, Args)]
pub struct SearchArgs {
    pub query: String,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only messages of this role (repeatable).
    #[arg(long, value_parser = ["system", "developer", "user", "assistant", "tool"])]
    pub role: Vec<String>,
    /// Only sessions from this source: cli, claude-code, … (repeatable).
    #[arg(long)]
    pub source: Vec<String>,
    /// Only this session (repeatable).
    #[arg(long)]
    pub session: Vec<String>,
    /// Only messages at or after this time: a date (2026-05-01, from its start, UTC) or an
    /// RFC 3339 time (2026-05-01T09:30:00Z).
    #[arg(long, value_parser = parse_since)]
    pub since: Option<f64>,
    /// Only messages at or before this time: a date (2026-05-31, through its end, UTC) or an
    /// RFC 3339 time.
    #[arg(long, value_parser = parse_until)]
    pub until: Option<f64>,
    /// Print stored text exactly as stored, terminal control sequences included. Without it,
    /// control characters (escape sequences, BEL, …) are shown escaped, e.g. `\x1b`.
    #[arg(long)]
    pub raw: bool,
}

/// Seconds in a day, less the smallest step a stored timestamp takes (a microsecond), so
/// `--until DATE` takes in the whole of that day and nothing of the next.
const REST_OF_DAY: f64 = 86_400.0 - 1e-6;

fn parse_since(text: &str) -> Result<f64, String> {
    parse_time(text, 0.0)
}

fn parse_until(text: &str) -> Result<f64, String> {
    parse_time(text, REST_OF_DAY)
}

/// An RFC 3339 time, or a `YYYY-MM-DD` date (UTC) plus `into_day` seconds.
fn parse_time(text: &str, into_day: f64) -> Result<f64, String> {
    let t = text.trim();
    let date = (t.len() == 10)
        .then(|| baton_store::session::parse_rfc3339(&format!("{t}T00:00:00Z")))
        .flatten();
    date.map(|d| d + into_day)
        .or_else(|| baton_store::session::parse_rfc3339(t))
        .ok_or_else(|| {
            format!(
                "`{text}` is neither a date such as 2026-05-01 nor an RFC 3339 time such as \
                 2026-05-01T09:30:00Z"
            )
        })
}

pub fn run(store: &dyn SessionStore, json: bool, args: &SearchArgs) -> Result<(), Failure> {
    // An over-long query is the user's input being wrong (exit 2), not a store failure.
    let chars = args.query.chars().count();
    if chars > baton_store::MAX_QUERY_CHARS {
        return Err(Failure::BadInput(
            baton_store::SearchError::QueryTooLong {
                chars,
                max: baton_store::MAX_QUERY_CHARS,
            }
            .to_string(),
        ));
    }
    let mut q = SearchQuery::new(&args.query);
    q.limit = args.limit;
    q.roles = args.role.clone();
    q.sources = args.source.clone();
    q.session_ids = args.session.clone();
    q.since = args.since;
    q.until = args.until;
    let hits = store.search(&q).map_err(store_err)?;
    let waiting = store.index_backlog().map_err(store_err)?;
    if waiting > 0 && !json {
        errln!(
            "note: {} messages wait for the search index (`baton sessions index`); they were \
             scanned, so these results are complete",
            super::table::count(waiting)
        );
    }
    if json {
        print_json(&serde_json::to_value(&hits).map_err(json_err)?);
        return Ok(());
    }
    // Stored text may carry escape sequences a terminal would obey; show them, don't run them.
    let safe = |t: &str| -> String {
        if args.raw {
            t.to_string()
        } else {
            escape_controls(t).into_owned()
        }
    };
    if hits.is_empty() {
        outln!("no messages match `{}`", safe(&args.query));
    }
    let snippet_width = width().saturating_sub(36).max(20);
    for h in hits {
        outln!(
            "{:<24} {:<10} {}",
            safe(&h.session_id),
            safe(&h.role),
            fit(&safe(&h.snippet), snippet_width)
        );
    }
    Ok(())
}
