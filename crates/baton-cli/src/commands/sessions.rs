//! `baton sessions list|show|search|export`: read a session database (ours, or a reference
//! design `state.db`) without modifying it.

use crate::commands::Failure;
use crate::commands::io::write_output;
use baton_core::truncate::group_digits;
use baton_store::{
    ExportScope, SearchQuery, Session, SessionFilter, SessionStore, SqliteStore, export_jsonl,
    search,
};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Session database (default: $BATON_HOME/state.db, else ~/.baton/state.db). Opened
    /// read-only: these commands never change it.
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Recent sessions, one row per compression chain.
    List {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Only sessions from this source (cli, api_server, cron, ...).
        #[arg(long)]
        source: Option<String>,
    },
    /// One session: its counters and messages.
    Show { id: String },
    /// Full-text search over every message (any script, including 1-2 character CJK terms).
    Search {
        query: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Only messages of this role.
        #[arg(long)]
        role: Option<String>,
    },
    /// A session (or its whole compression chain) as JSONL messages.
    Export {
        id: String,
        /// Export the whole compression chain the session belongs to.
        #[arg(long)]
        chain: bool,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

pub fn run(args: &SessionsArgs) -> Result<(), Failure> {
    let path = db_path(args)?;
    if !path.exists() {
        return Err(Failure::BadInput(format!(
            "no session database at {} (pass --db PATH)",
            path.display()
        )));
    }
    let store = SqliteStore::open_read_only(&path)
        .map_err(|e| Failure::BadInput(format!("{}: {e}", path.display())))?;
    match &args.command {
        SessionsCommand::List { limit, source } => list(&store, args.json, *limit, source.clone()),
        SessionsCommand::Show { id } => show(&store, args.json, id),
        SessionsCommand::Search { query, limit, role } => {
            search_messages(&store, args.json, query, *limit, role.as_deref())
        }
        SessionsCommand::Export { id, chain, output } => {
            export(&store, id, *chain, output.as_deref())
        }
    }
}

fn db_path(args: &SessionsArgs) -> Result<PathBuf, Failure> {
    if let Some(p) = &args.db {
        return Ok(p.clone());
    }
    if let Some(home) = std::env::var_os("BATON_HOME") {
        return Ok(PathBuf::from(home).join("state.db"));
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".baton").join("state.db"))
        .ok_or_else(|| {
            Failure::BadInput("no --db given and neither BATON_HOME nor HOME is set".into())
        })
}

fn store_err(e: baton_store::StoreError) -> Failure {
    Failure::Other(e.to_string())
}

/// Terminal width from `COLUMNS` (set by most shells), else 100.
fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w: &usize| *w >= 40)
        .unwrap_or(100)
}

fn fit(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn list(
    store: &SqliteStore,
    json: bool,
    limit: usize,
    source: Option<String>,
) -> Result<(), Failure> {
    let filter = SessionFilter {
        source,
        limit,
        ..SessionFilter::default()
    };
    let rows = store.list_sessions(&filter).map_err(store_err)?;
    if json {
        let value = serde_json::to_value(&rows).map_err(|e| Failure::Other(e.to_string()))?;
        println!("{value:#}");
        return Ok(());
    }
    let title_width = width().saturating_sub(24 + 10 + 10 + 6).max(10);
    println!("{:<24}{:<10}{:>10}  title", "id", "source", "messages");
    for row in rows {
        let s = &row.session;
        println!(
            "{:<24}{:<10}{:>10}  {}",
            s.id,
            fit(&s.source, 9),
            group_digits(s.message_count.max(0) as usize),
            fit(s.title.as_deref().unwrap_or("-"), title_width)
        );
    }
    Ok(())
}

fn session_or_unknown(store: &SqliteStore, id: &str) -> Result<Session, Failure> {
    store
        .get_session(id)
        .map_err(store_err)?
        .ok_or_else(|| Failure::BadInput(format!("unknown session id `{id}`")))
}

fn show(store: &SqliteStore, json: bool, id: &str) -> Result<(), Failure> {
    let session = session_or_unknown(store, id)?;
    let messages = store.messages(id).map_err(store_err)?;
    if json {
        let value = json!({
            "session": session,
            "messages": messages.iter().map(|m| m.to_value()).collect::<Vec<_>>(),
        });
        println!("{value:#}");
        return Ok(());
    }
    println!("{}  {}", session.id, session.title.as_deref().unwrap_or(""));
    println!(
        "source {}  model {}  messages {}  tokens in {} / out {} / cache read {} / cache write {} / reasoning {}",
        session.source,
        session.model.as_deref().unwrap_or("-"),
        session.message_count,
        group_digits(session.input_tokens.max(0) as usize),
        group_digits(session.output_tokens.max(0) as usize),
        group_digits(session.cache_read_tokens.max(0) as usize),
        group_digits(session.cache_write_tokens.max(0) as usize),
        group_digits(session.reasoning_tokens.max(0) as usize),
    );
    let text_width = width().saturating_sub(12).max(20);
    for m in &messages {
        let calls: Vec<&str> = m.calls().iter().map(|c| c.function.name.as_str()).collect();
        let text = if calls.is_empty() {
            m.text()
        } else {
            format!("[calls {}] {}", calls.join(", "), m.text())
        };
        println!("{:<11} {}", m.role.as_str(), fit(&text, text_width));
    }
    Ok(())
}

fn search_messages(
    store: &SqliteStore,
    json: bool,
    query: &str,
    limit: usize,
    role: Option<&str>,
) -> Result<(), Failure> {
    let mut q = SearchQuery::new(query);
    q.limit = limit;
    q.roles = role.map(|r| vec![r.to_string()]).unwrap_or_default();
    let hits = store
        .read(|conn| Ok(search(conn, &q)?))
        .map_err(store_err)?;
    if json {
        let value = serde_json::to_value(&hits).map_err(|e| Failure::Other(e.to_string()))?;
        println!("{value:#}");
        return Ok(());
    }
    if hits.is_empty() {
        println!("no messages match `{query}`");
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

fn export(
    store: &SqliteStore,
    id: &str,
    chain: bool,
    output: Option<&std::path::Path>,
) -> Result<(), Failure> {
    session_or_unknown(store, id)?;
    let scope = if chain {
        ExportScope::Chain
    } else {
        ExportScope::Session
    };
    let mut buf = Vec::new();
    export_jsonl(store, id, scope, &mut buf).map_err(store_err)?;
    let text = String::from_utf8(buf).map_err(|e| Failure::Other(e.to_string()))?;
    write_output(output, &text)
}
