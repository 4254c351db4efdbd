//! `baton sessions`: read a session database (ours, or a reference design `state.db`) and
//! maintain it. `list`, `show`, `search`, `export` and `stats` never modify the file (nor create
//! it: on a first run they say there is nothing yet and how to import); `import` and `title`
//! write, `delete` and `prune` only after `--yes`. (`compress --session` writes too: see
//! [`DB_HELP`].)

mod chart;
mod copy;
mod db;
mod delete;
mod export;
mod import;
mod import_id;
mod import_tally;
mod import_writer;
mod index;
pub(crate) mod list;
mod prune;
mod search;
mod show;
mod stats;
mod table;
mod title;

use crate::commands::Failure;
use baton_store::{SCHEMA_VERSION, SessionStore, SqliteStore, StoreError};
use clap::{Args, Subcommand};
use db::Db;
use std::path::{Path, PathBuf};

/// What every `--db` help says: which commands write the database. One text, so the help of
/// `sessions` and of `compress --session` cannot disagree.
pub(crate) const DB_HELP: &str = "Session database (default: $BATON_HOME/state.db, else \
    ~/.baton/state.db). Writers: `sessions import` (creates it), `sessions title`, `sessions \
    delete` and `sessions prune` (the last two only with --yes), and `compress --session` (adds \
    a continuation session; nothing is deleted). `sessions list`, `show`, `search`, `export` \
    and `stats` never write to it, nor create it.";

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[arg(long, global = true, value_name = "PATH", help = DB_HELP)]
    pub db: Option<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SessionsCommand {
    /// Recent sessions, one row per compression chain.
    List(list::ListArgs),
    /// One session (by id or title): its counters and messages.
    Show(show::ShowArgs),
    /// Full-text search over every message (any script, including 1-2 character CJK terms).
    Search(search::SearchArgs),
    /// A session (by id or title), or its whole compression chain, as JSONL messages.
    Export(export::ExportArgs),
    /// Usage over the last days: tokens, cost, models, sources, tools; `--chart` for a daily
    /// token chart.
    Stats(stats::StatsArgs),
    /// Store conversation files (any supported format, including raw Claude Code, Codex and
    /// Gemini CLI transcripts) as ended sessions; creates the database if needed.
    Import(import::ImportArgs),
    /// Set or change a session's title (a compression chain is titled as a whole: "Name",
    /// "Name #2", ...); an empty title clears it.
    Title(title::TitleArgs),
    /// Delete a session (by id or title) and its messages. Needs --yes.
    Delete(delete::DeleteArgs),
    /// Delete ended sessions older than some days, compression chains only as a whole.
    /// Needs --yes (or --dry-run to only list them).
    Prune(prune::PruneArgs),
    /// Bring the search index up to date with messages stored without it (`import
    /// --index-later`, rows other programs inserted).
    Index(index::IndexArgs),
    /// Copy every session, message and lineage link between stores (SQLite files, a
    /// reference-design state.db, postgres:// URLs); resumable, verified by checksums.
    Copy(copy::CopyArgs),
}

pub fn run(
    args: &SessionsArgs,
    settings: &crate::commands::settings::Settings,
) -> Result<(), Failure> {
    if let SessionsCommand::Copy(a) = &args.command {
        return copy::run(args.json, a);
    }
    let db = store_location(args.db.as_deref(), settings);
    if let Some(url) = postgres_url(db.as_deref()) {
        return on_postgres(url, args, settings);
    }
    let path = db_path(db.as_deref())?;
    if let SessionsCommand::Import(a) = &args.command {
        return import::run(&path, args.json, a);
    }
    if !path.exists() {
        return no_database(&path, args.json, &args.command);
    }
    let json = args.json;
    match &args.command {
        SessionsCommand::List(a) => list::run(&open_read_only(&path)?, json, a),
        SessionsCommand::Show(a) => show::run(&open_read_only(&path)?, json, a),
        SessionsCommand::Search(a) => search::run(&open_read_only(&path)?, json, a),
        SessionsCommand::Export(a) => export::run(Db::File(&path), a),
        SessionsCommand::Stats(a) => stats::run(&open_read_only(&path)?, json, a, settings),
        SessionsCommand::Title(a) => title::run(Db::File(&path), json, a),
        SessionsCommand::Delete(a) => delete::run(Db::File(&path), json, a),
        SessionsCommand::Prune(a) => prune::run(Db::File(&path), json, a),
        SessionsCommand::Import(a) => import::run(&path, json, a),
        SessionsCommand::Index(a) => index::run(&path, json, a),
        SessionsCommand::Copy(a) => copy::run(json, a),
    }
}

/// Where the sessions live: `--db`, else `[store] url` in config.toml; `None` means the
/// default file ([`db_path`]). Shared by `sessions` and `chat`.
pub(crate) fn store_location(
    explicit: Option<&Path>,
    settings: &crate::commands::settings::Settings,
) -> Option<PathBuf> {
    explicit.map(Path::to_path_buf).or_else(|| {
        baton_config::Config::text(&settings.config.store_url).map(|(url, _)| PathBuf::from(url))
    })
}

/// The location as a `postgres://` URL, when it is one.
pub(crate) fn postgres_url(db: Option<&Path>) -> Option<&str> {
    db.and_then(Path::to_str)
        .filter(|u| baton_pg::is_postgres_url(u))
}

/// Every command on a PostgreSQL store (`--db postgres://…`), through the same store trait as
/// the SQLite file.
fn on_postgres(
    url: &str,
    args: &SessionsArgs,
    settings: &crate::commands::settings::Settings,
) -> Result<(), Failure> {
    let store = baton_pg::PgStore::connect(url).map_err(store_err)?;
    let json = args.json;
    match &args.command {
        SessionsCommand::List(a) => list::run(&store, json, a),
        SessionsCommand::Show(a) => show::run(&store, json, a),
        SessionsCommand::Search(a) => search::run(&store, json, a),
        SessionsCommand::Export(a) => export::run(Db::Postgres(&store), a),
        SessionsCommand::Title(a) => title::run(Db::Postgres(&store), json, a),
        SessionsCommand::Delete(a) => delete::run(Db::Postgres(&store), json, a),
        SessionsCommand::Prune(a) => prune::run(Db::Postgres(&store), json, a),
        SessionsCommand::Import(a) => import::run_on(&store, json, a),
        SessionsCommand::Stats(a) => stats::run(&store, json, a, settings),
        SessionsCommand::Index(_) => index::run_on(&store, json),
        SessionsCommand::Copy(a) => copy::run(json, a),
    }
}

/// A first run, before anything was imported: `list` shows the empty list with a hint (exit
/// 0), every other command says there is nothing yet and how to get something (exit 2).
/// Nothing creates the file: only `import` does.
fn no_database(path: &Path, json: bool, command: &SessionsCommand) -> Result<(), Failure> {
    let hint = "import conversations with `baton sessions import FILE...` (Claude Code, Codex \
                or Gemini CLI transcripts, or any conversation file `baton compress` reads), \
                or pass --db PATH";
    let verb = match command {
        SessionsCommand::List(_) => {
            if json {
                print_json(&serde_json::json!([]));
                errln!("no session database at {} yet: {hint}", path.display());
            } else {
                outln!("no sessions yet (no database at {})", path.display());
                outln!("hint: {hint}");
            }
            return Ok(());
        }
        SessionsCommand::Show(_) => "show",
        SessionsCommand::Search(_) => "search",
        SessionsCommand::Export(_) => "export",
        SessionsCommand::Stats(_) => "count",
        SessionsCommand::Title(_) => "title",
        SessionsCommand::Delete(_) => "delete",
        SessionsCommand::Prune(_) => "prune",
        SessionsCommand::Import(_) => "import",
        SessionsCommand::Index(_) => "index",
        SessionsCommand::Copy(_) => "copy",
    };
    Err(Failure::BadInput(format!(
        "no session database at {} yet, so there is nothing to {verb}; {hint}",
        path.display()
    )))
}

/// The session database: `--db`, else `$BATON_HOME/state.db`, else `~/.baton/state.db`.
pub(crate) fn db_path(explicit: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
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

fn open_read_only(path: &Path) -> Result<SqliteStore, Failure> {
    SqliteStore::open_read_only(path).map_err(|e| open_err(path, e))
}

/// A database that cannot be opened is bad input (exit 2), except a damaged one: that is not
/// something a different argument fixes, so it fails like any other error (exit 1), with the
/// store's message naming the file and how to recover.
fn open_err(path: &Path, e: StoreError) -> Failure {
    match e {
        StoreError::Corrupt { .. } => Failure::Other(e.to_string()),
        other => Failure::BadInput(format!("{}: {other}", path.display())),
    }
}

/// Opens the database for writing. Opening read-write migrates an older schema (a reference
/// design database, say) to ours, which its own tools may not expect; that only happens when
/// the user passed `--migrate`.
pub(crate) fn open_for_write(path: &Path, migrate: bool) -> Result<SqliteStore, Failure> {
    let found = open_read_only(path)?.schema_version().map_err(store_err)?;
    let older = found.is_none_or(|v| v < SCHEMA_VERSION);
    if older && !migrate {
        let found = found.map_or_else(
            || "no schema version".to_string(),
            |v| format!("schema version {v}"),
        );
        return Err(Failure::BadInput(format!(
            "{} has {found}, older than version {SCHEMA_VERSION} of this build; writing to it \
             would migrate it first, which the program that wrote it may not expect. Nothing \
             was changed; pass --migrate to allow the migration",
            path.display()
        )));
    }
    SqliteStore::open(path).map_err(|e| open_err(path, e))
}

pub(crate) fn store_err(e: StoreError) -> Failure {
    match e {
        StoreError::Ambiguous { .. }
        | StoreError::TitleTooLong { .. }
        | StoreError::TitleInUse { .. }
        | StoreError::AlreadyContinued { .. } => Failure::BadInput(e.to_string()),
        other => Failure::Other(other.to_string()),
    }
}

/// The session id `input` names (an id, a title, a unique id prefix); unknown or ambiguous
/// input is bad input (exit 2) that names it.
pub(crate) fn resolve(store: &dyn SessionStore, input: &str) -> Result<String, Failure> {
    store
        .resolve_session(input)
        .map_err(store_err)?
        .ok_or_else(|| {
            Failure::BadInput(format!(
                "unknown session id `{input}` (no session has that id or title)"
            ))
        })
}

fn json_err(e: serde_json::Error) -> Failure {
    Failure::Other(format!("cannot encode JSON: {e}"))
}

/// Prints `value` as pretty JSON.
fn print_json(value: &serde_json::Value) {
    outln!("{value:#}");
}

/// A table of the sessions `ids` (for what delete and prune will remove), oldest first as given.
fn describe(store: &dyn SessionStore, ids: &[String]) -> Result<Vec<String>, Failure> {
    use baton_store::session::format_utc_minutes;
    use table::{Column, Table, count};
    let mut t = Table::new(
        vec![
            Column::left("id"),
            Column::left("source"),
            Column::left("started (UTC)"),
            Column::right("messages"),
            Column::left("title"),
        ],
        4,
    );
    for id in ids {
        let Some(s) = store.get_session(id).map_err(store_err)? else {
            continue;
        };
        t.push(vec![
            s.id,
            s.source,
            format_utc_minutes(s.started_at),
            count(s.message_count),
            s.title.unwrap_or_else(|| "-".into()),
        ]);
    }
    Ok(t.render(table::width().saturating_sub(2)))
}
