//! `baton sessions import FILE...`: store conversations from files as ended sessions.
//!
//! Anything the loaders read is accepted, including raw Claude Code, Codex and Gemini CLI
//! transcripts. Each conversation becomes one session, ended with reason `imported`. Its id
//! is taken from the transcript (Claude Code and Codex session ids) or derived from a hash of
//! its messages, so importing the same file twice stores it once, even when several
//! processes import it at once (the decision is taken inside the write transaction). Where
//! the transcript logs them, the session keeps its real start and end times (so pruning by
//! age and daily stats are right) and the token usage of its API calls.

use super::import_id::session_id;
use super::{open_for_write, print_json, store_err};
use crate::commands::Failure;
use crate::commands::compress::{FormatChoice, parse_format};
use crate::commands::io::read_input;
use baton_core::conversation::Conversation;
use baton_core::formats::Dialect;
use baton_core::usage::CanonicalUsage;
use baton_store::session::parse_rfc3339;
use baton_store::{NewSession, SessionBatch, SessionStore, SqliteStore, end_reason};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Conversation files (any supported format, detected from the content).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Force the input format (see `baton compress --help` for the names).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,
    /// Source tag for the sessions (default: the record's own `source` field, else the
    /// transcript format, e.g. `claude-code`, else `import`).
    #[arg(long)]
    pub source: Option<String>,
    /// Title for the session (only when importing a single conversation). A title that is too
    /// long or already used is refused before anything is written.
    #[arg(long)]
    pub title: Option<String>,
    /// Allow migrating a database of an older schema (e.g. the reference design's) first.
    #[arg(long)]
    pub migrate: bool,
}

/// Sessions per transaction: whole conversations, about this many messages at a time.
const BATCH_MESSAGES: usize = 2_000;

struct Planned {
    id: String,
    source: String,
    model: Option<String>,
    conversation: Conversation,
    file: String,
    /// When the transcript says the session ran (Unix seconds).
    started_at: Option<f64>,
    ended_at: Option<f64>,
    usage: Option<(CanonicalUsage, u64)>,
}

/// Imports into the SQLite file at `path` (created when missing).
pub fn run(path: &Path, json: bool, args: &ImportArgs) -> Result<(), Failure> {
    let planned = plan(args)?;
    if let (Some(title), true) = (&args.title, path.exists()) {
        // A title already used is refused before the database is opened for writing (and
        // checked again inside the write, which is all or nothing).
        let own: Vec<String> = planned.iter().map(|p| p.id.clone()).collect();
        super::open_read_only(path)?
            .read(|c| baton_store::retitle::check_new_title(c, title, &own))
            .map_err(store_err)?;
    }
    let store = if path.exists() {
        open_for_write(path, args.migrate)?
    } else {
        SqliteStore::open(path)
            .map_err(|e| Failure::BadInput(format!("{}: {e}", path.display())))?
    };
    store_planned(&store, planned, json, args)
}

/// Imports into a store already open (PostgreSQL).
pub fn run_on(store: &dyn SessionStore, json: bool, args: &ImportArgs) -> Result<(), Failure> {
    let planned = plan(args)?;
    store_planned(store, planned, json, args)
}

/// Every conversation of the input files, parsed before anything is written, so a bad file
/// is reported first.
fn plan(args: &ImportArgs) -> Result<Vec<Planned>, Failure> {
    if let Some(title) = &args.title {
        baton_store::clean_title(title).map_err(store_err)?;
    }
    let mut planned = Vec::new();
    for file in &args.files {
        let (label, doc) = read_input(Some(file), args.format.0)?;
        let format_source = doc
            .transcript
            .map(|_| doc.format_name().to_string())
            .unwrap_or_else(|| "import".to_string());
        let arguments_from_objects = doc.dialect != Dialect::OpenAi || doc.transcript.is_some();
        for (i, conversation) in doc.conversations.into_iter().enumerate() {
            if conversation.messages.is_empty() {
                continue;
            }
            let meta_time = |key: &str| {
                conversation
                    .meta()
                    .and_then(|m| m.get(key))
                    .and_then(Value::as_str)
                    .and_then(parse_rfc3339)
            };
            // A record that says where it came from (the shared corpus's records, a
            // conversation exported elsewhere) keeps that source.
            let own_source = conversation
                .extra
                .get("source")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            planned.push(Planned {
                id: session_id(&conversation, i, arguments_from_objects),
                source: args
                    .source
                    .clone()
                    .or(own_source)
                    .unwrap_or_else(|| format_source.clone()),
                model: model(&conversation),
                started_at: meta_time("started_at"),
                ended_at: meta_time("ended_at"),
                usage: usage(&conversation),
                conversation,
                file: label.clone(),
            });
        }
    }
    if args.title.is_some() && planned.len() != 1 {
        return Err(Failure::BadInput(format!(
            "--title names one session, but the input holds {} conversations",
            planned.len()
        )));
    }
    Ok(planned)
}

/// Writes the planned conversations that are not stored yet and reports what was done.
fn store_planned(
    store: &dyn SessionStore,
    planned: Vec<Planned>,
    json: bool,
    args: &ImportArgs,
) -> Result<(), Failure> {
    let (fresh, mut skipped) = split_already_imported(store, planned)?;
    // The check above only spares the work of sending what is surely stored already; the
    // decision is taken again inside each write transaction, where a session another process
    // stored meanwhile (a race lost) is skipped and counted as already imported.
    let stored = write(store, &fresh, args.title.as_deref(), json)?;
    let mut written = Vec::with_capacity(fresh.len());
    for (p, was_stored) in fresh.into_iter().zip(stored) {
        if was_stored {
            written.push(p);
        } else {
            skipped.push(p);
        }
    }
    let fresh = written;
    if let (Some(title), Some(p), true) = (&args.title, skipped.first(), fresh.is_empty()) {
        // Imported before: the title still applies to it.
        store.retitle_chain(&p.id, title).map_err(store_err)?;
    }
    report(json, &fresh, &skipped);
    Ok(())
}

/// The token usage the transcript logged (`meta.usage`, written by the transcript loaders).
fn usage(c: &Conversation) -> Option<(CanonicalUsage, u64)> {
    let u = c.meta()?.get("usage")?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let calls = n("api_calls");
    (calls > 0).then(|| {
        (
            CanonicalUsage {
                input: n("input"),
                output: n("output"),
                cache_read: n("cache_read"),
                cache_write: n("cache_write"),
                reasoning: n("reasoning"),
            },
            calls,
        )
    })
}

fn model(c: &Conversation) -> Option<String> {
    let meta = c.meta()?;
    meta.get("models")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .or_else(|| meta.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn split_already_imported(
    store: &dyn SessionStore,
    planned: Vec<Planned>,
) -> Result<(Vec<Planned>, Vec<Planned>), Failure> {
    let mut fresh = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in planned {
        let exists = store.get_session(&p.id).map_err(store_err)?.is_some();
        if exists || !seen.insert(p.id.clone()) {
            skipped.push(p);
        } else {
            fresh.push(p);
        }
    }
    Ok((fresh, skipped))
}

/// Writes the sessions in batches, showing progress on a terminal. Returns, in order, whether
/// each was stored (`false`: another writer stored the same id first).
fn write(
    store: &dyn SessionStore,
    planned: &[Planned],
    title: Option<&str>,
    json: bool,
) -> Result<Vec<bool>, Failure> {
    let total: usize = planned.iter().map(|p| p.conversation.messages.len()).sum();
    let progress = progress_bar(total as u64, json);
    let mut stored = Vec::with_capacity(planned.len());
    let mut batch: Vec<SessionBatch<'_>> = Vec::new();
    let mut pending = 0;
    let mut flush = |batch: &mut Vec<SessionBatch<'_>>, pending: &mut usize| {
        let written = store.write_new_sessions(batch).map_err(store_err)?;
        stored.extend(written.into_iter().map(|(_, was_stored)| was_stored));
        progress.inc(*pending as u64);
        batch.clear();
        *pending = 0;
        Ok::<(), Failure>(())
    };
    for p in planned {
        batch.push(SessionBatch {
            session: NewSession {
                id: Some(p.id.clone()),
                model: p.model.clone(),
                system_prompt: p.conversation.system_prompt(),
                started_at: p.started_at,
                ..NewSession::new(p.source.clone())
            },
            messages: &p.conversation.messages,
            end_reason: Some(end_reason::IMPORTED),
            ended_at: p.ended_at.or(p.started_at),
            usage: p.usage,
            title: title.map(str::to_string),
        });
        pending += p.conversation.messages.len();
        if pending >= BATCH_MESSAGES {
            flush(&mut batch, &mut pending)?;
        }
    }
    if !batch.is_empty() {
        flush(&mut batch, &mut pending)?;
    }
    progress.finish_and_clear();
    Ok(stored)
}

/// A bar of messages written, drawn only when stderr is a terminal (never in `--json` mode,
/// whose output a program reads).
fn progress_bar(total: u64, json: bool) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() && !json {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) = ProgressStyle::with_template(
        "importing {bar:30} {human_pos}/{human_len} messages · ETA {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

fn report(json: bool, fresh: &[Planned], skipped: &[Planned]) {
    let row = |p: &Planned| {
        json!({
            "id": p.id,
            "source": p.source,
            "messages": p.conversation.messages.len(),
            "file": p.file,
        })
    };
    if json {
        print_json(&json!({
            "imported": fresh.iter().map(row).collect::<Vec<_>>(),
            "skipped": skipped.iter().map(|p| &p.id).collect::<Vec<_>>(),
        }));
        return;
    }
    let messages: usize = fresh.iter().map(|p| p.conversation.messages.len()).sum();
    let files: std::collections::BTreeSet<&str> = fresh
        .iter()
        .chain(skipped)
        .map(|p| p.file.as_str())
        .collect();
    let mut sources: Vec<&str> = fresh.iter().map(|p| p.source.as_str()).collect();
    sources.sort_unstable();
    sources.dedup();
    // One line, whatever the number of sessions: `sessions list` shows them.
    outln!(
        "imported {} session(s), {} messages from {} file(s){}{}",
        super::table::count(fresh.len()),
        super::table::count(messages),
        super::table::count(files.len()),
        if sources.is_empty() {
            String::new()
        } else {
            format!(" (source {})", sources.join(", "))
        },
        if skipped.is_empty() {
            String::new()
        } else {
            format!(
                "; {} already imported, skipped",
                super::table::count(skipped.len())
            )
        }
    );
}
