//! `baton sessions import FILE...`: store conversations from files as ended sessions.
//!
//! Anything the loaders read is accepted, including raw Claude Code, Codex and Gemini CLI
//! transcripts. Each conversation becomes one session, ended with reason `imported`. Its id
//! is taken from the transcript (Claude Code and Codex session ids) or derived from a hash of
//! its messages, so importing the same file twice stores it once, even when several
//! processes import it at once (the decision is taken inside the write transaction). Where
//! the transcript logs them, the session keeps its real start and end times (so pruning by
//! age and daily stats are right) and the token usage of its API calls.
//!
//! Files are read conversation by conversation ([`for_each_conversation`]) and written in
//! batches as they come, so memory holds a batch, not the file. The rows are written first
//! and the search index catches up after them in its own transactions (four times faster
//! than indexing inside every write): `import` returns once both are done, or right after
//! the rows with `--index-later`, when searches scan the waiting messages until `sessions
//! index` indexes them (on SQLite, later writes also index a little each).

use super::import_id::session_id;
use super::import_tally::Tally;
use super::import_writer::{Imported, Importer, ReadFailure, import_with};
use super::{open_for_write, print_json, store_err};
use crate::commands::Failure;
use crate::commands::compress::{FormatChoice, parse_format};
use crate::commands::io::read_input;
use baton_core::conversation::Conversation;
use baton_core::formats::stream::{StreamError, check_lines, for_each_conversation};
use baton_core::formats::{Dialect, Shape};
use baton_core::usage::CanonicalUsage;
use baton_store::session::parse_rfc3339;
use baton_store::{SessionStore, SqliteStore};
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
    /// Return once the messages are stored, leaving the search index to catch up (`baton
    /// sessions index`, or a little with every later write). Searches find the waiting
    /// messages meanwhile, by scanning them.
    #[arg(long)]
    pub index_later: bool,
}

pub(super) struct Planned {
    pub id: String,
    pub source: String,
    pub model: Option<String>,
    pub conversation: Conversation,
    pub file: String,
    /// When the transcript says the session ran (Unix seconds).
    pub started_at: Option<f64>,
    pub ended_at: Option<f64>,
    pub usage: Option<(CanonicalUsage, u64)>,
}

/// What the report says about one conversation (the conversation itself is gone by then).
#[derive(Clone)]
pub(super) struct Outcome {
    pub(super) id: String,
    pub(super) source: String,
    pub(super) messages: usize,
    pub(super) file: String,
}

impl From<&Planned> for Outcome {
    fn from(p: &Planned) -> Self {
        Outcome {
            id: p.id.clone(),
            source: p.source.clone(),
            messages: p.conversation.messages.len(),
            file: p.file.clone(),
        }
    }
}

/// Imports into the SQLite file at `path` (created when missing).
pub fn run(path: &Path, json: bool, args: &ImportArgs) -> Result<(), Failure> {
    if let Some(title) = &args.title {
        baton_store::clean_title(title).map_err(store_err)?;
    }
    // A titled import is one conversation: read it first, so a title already used (or an
    // input holding several conversations) is refused before the database is touched.
    let planned = args.title.as_ref().map(|_| plan(args)).transpose()?;
    if planned.is_none() {
        check_inputs(args)?;
    }
    if let (Some(title), Some(planned), true) = (&args.title, &planned, path.exists()) {
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
    import_into(&store, planned, json, args)
}

/// Imports into a store already open (PostgreSQL).
pub fn run_on(store: &dyn SessionStore, json: bool, args: &ImportArgs) -> Result<(), Failure> {
    if let Some(title) = &args.title {
        baton_store::clean_title(title).map_err(store_err)?;
    }
    let planned = args.title.as_ref().map(|_| plan(args)).transpose()?;
    if planned.is_none() {
        check_inputs(args)?;
    }
    import_into(store, planned, json, args)
}

/// Writes `planned` (a titled import, read already) or every conversation of the input files
/// as it is read, then brings the search index up to date (unless `--index-later`).
fn import_into(
    store: &dyn SessionStore,
    planned: Option<Vec<Planned>>,
    json: bool,
    args: &ImportArgs,
) -> Result<(), Failure> {
    let progress = spinner(json);
    let Imported { fresh, skipped } =
        import_with(store, args.title.as_deref(), json, &progress, |importer| {
            match planned {
                Some(planned) => {
                    for p in planned {
                        importer.add(p).map_err(ReadFailure::Failed)?;
                    }
                }
                None => {
                    for file in &args.files {
                        stream_file(file, args, importer)?;
                    }
                }
            }
            Ok(())
        })?;
    progress.finish_and_clear();
    if let (Some(title), Some(p), true) = (&args.title, skipped.first(), fresh.is_empty()) {
        // Imported before: the title still applies to it.
        store.retitle_chain(&p.id, title).map_err(store_err)?;
    }
    let waiting = if args.index_later {
        store.index_backlog().map_err(store_err)?
    } else {
        super::index::catch_up(store, json)?;
        0
    };
    report(json, &fresh, &skipped, waiting);
    Ok(())
}

/// Refuses an input file that cannot be read or a JSON Lines file with a line that is not
/// JSON, before the database is opened (standard input is read once, so it is not checked).
fn check_inputs(args: &ImportArgs) -> Result<(), Failure> {
    for file in args.files.iter().filter(|f| f.as_os_str() != "-") {
        let label = file.display().to_string();
        let f = std::fs::File::open(file)
            .map_err(|e| Failure::BadInput(format!("{label}: cannot read: {e}")))?;
        check_lines(std::io::BufReader::with_capacity(1 << 20, f))
            .map_err(|e| Failure::BadInput(e.to_string().replacen("<input>", &label, 1)))?;
    }
    Ok(())
}

/// Reads one input file (or standard input for `-`) conversation by conversation, handing
/// each to the importer: memory holds one batch, not the file.
fn stream_file(file: &Path, args: &ImportArgs, importer: &mut Importer) -> Result<(), ReadFailure> {
    let stdin = file.as_os_str() == "-";
    let label = if stdin {
        "<stdin>".to_string()
    } else {
        file.display().to_string()
    };
    let input: Box<dyn std::io::BufRead> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(file).map_err(|e| {
            ReadFailure::Failed(Failure::BadInput(format!("{label}: cannot read: {e}")))
        })?;
        Box::new(std::io::BufReader::with_capacity(1 << 20, f))
    };
    let mut index = 0;
    let result = for_each_conversation(input, args.format.0, |shape, conversation| {
        let i = index;
        index += 1;
        match planned_from(shape, conversation, i, &label, args) {
            Some(p) => importer.add(p),
            None => Ok(()),
        }
    });
    match result {
        Ok(()) => Ok(()),
        Err(StreamError::Consumer(failure)) => Err(ReadFailure::Failed(failure)),
        // Batches written before the bad line stay (each is whole, and a re-run after the
        // fix skips them); the ones read but not written yet are not written.
        Err(StreamError::Load(e)) => Err(ReadFailure::BadInput(
            e.to_string().replacen("<input>", &label, 1),
        )),
    }
}

/// The session a conversation becomes: its id, source, model, times and usage. `None` for a
/// conversation without messages.
fn planned_from(
    shape: &Shape,
    conversation: Conversation,
    i: usize,
    label: &str,
    args: &ImportArgs,
) -> Option<Planned> {
    if conversation.messages.is_empty() {
        return None;
    }
    let format_source = shape
        .transcript
        .map(|_| shape.format_name().to_string())
        .unwrap_or_else(|| "import".to_string());
    let arguments_from_objects = shape.dialect != Dialect::OpenAi || shape.transcript.is_some();
    let meta_time = |key: &str| {
        conversation
            .meta()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .and_then(parse_rfc3339)
    };
    // A record that says where it came from (the shared corpus's records, a conversation
    // exported elsewhere) keeps that source.
    let own_source = conversation
        .extra
        .get("source")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Some(Planned {
        id: session_id(&conversation, i, arguments_from_objects),
        source: args.source.clone().or(own_source).unwrap_or(format_source),
        model: model(&conversation),
        started_at: meta_time("started_at"),
        ended_at: meta_time("ended_at"),
        usage: usage(&conversation),
        conversation,
        file: label.to_string(),
    })
}

/// Every conversation of the input files, read before anything is written: a titled import
/// (one conversation, checked before the database is opened).
fn plan(args: &ImportArgs) -> Result<Vec<Planned>, Failure> {
    let mut planned = Vec::new();
    for file in &args.files {
        let (label, doc) = read_input(Some(file), args.format.0)?;
        let shape = doc.shape();
        for (i, conversation) in doc.conversations.into_iter().enumerate() {
            planned.extend(planned_from(&shape, conversation, i, &label, args));
        }
    }
    if planned.len() != 1 {
        return Err(Failure::BadInput(format!(
            "--title names one session, but the input holds {} conversations",
            planned.len()
        )));
    }
    Ok(planned)
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

/// Where progress is drawn: stderr when it is a terminal, never in `--json` mode (whose
/// output a program reads).
fn progress_target(json: bool) -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() && !json {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// Messages written so far and the rate (the input's size is not known before it is read).
fn spinner(json: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, progress_target(json));
    if let Ok(style) =
        ProgressStyle::with_template("importing {spinner} {human_pos} messages · {per_sec}")
    {
        bar.set_style(style);
    }
    bar
}

/// A bar of `total` messages with `template`, drawn like [`spinner`].
pub(super) fn progress_bar(total: u64, json: bool, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), progress_target(json));
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// One line of what was imported, and, when the index was left to catch up later, how many
/// messages wait for it.
fn report(json: bool, fresh: &Tally, skipped: &Tally, waiting: usize) {
    let row = |p: &Outcome| {
        json!({
            "id": p.id,
            "source": p.source,
            "messages": p.messages,
            "file": p.file,
        })
    };
    if json {
        print_json(&json!({
            "imported": fresh.listed().iter().map(row).collect::<Vec<_>>(),
            "skipped": skipped.listed().iter().map(|p| &p.id).collect::<Vec<_>>(),
            "waiting_for_index": waiting,
        }));
        return;
    }
    let messages = fresh.messages();
    let files: std::collections::BTreeSet<&str> = fresh
        .files()
        .iter()
        .chain(skipped.files())
        .map(String::as_str)
        .collect();
    let sources: Vec<&str> = fresh.sources().iter().map(String::as_str).collect();
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
    if waiting > 0 {
        outln!(
            "{} messages wait for the search index: searches find them meanwhile (by scanning, \
             slower); `baton sessions index` indexes them now",
            super::table::count(waiting)
        );
    }
}
