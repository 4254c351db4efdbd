//! `baton sessions copy --from SRC --to DST`: every session, message and lineage link from one
//! store to another — SQLite files (a reference-design `state.db` included) and PostgreSQL
//! URLs, either way. Each session is one transaction in the target, so an interrupted copy
//! leaves whole sessions only; running it again skips what is already there (same checksum)
//! and copies the rest. At the end both stores are read back and compared: session and
//! message counts, and a checksum per session.

use super::{open_err, store_err};
use crate::commands::Failure;
use baton_core::truncate::group_digits;
use baton_store::transfer::{ImportOutcome, checksum};
use baton_store::{SessionStore, SqliteStore};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// Where to read: a SQLite file or a postgres:// URL.
    #[arg(long, value_name = "PATH|URL")]
    pub from: String,
    /// Where to write: a SQLite file (created if missing) or a postgres:// URL.
    #[arg(long, value_name = "PATH|URL")]
    pub to: String,
}

/// Counts of one copy.
#[derive(Debug, Default)]
struct Report {
    sessions: usize,
    messages: usize,
    copied: usize,
    already_present: usize,
    detached: Vec<String>,
    verified_sessions: usize,
    verified_messages: usize,
}

pub fn run(json: bool, args: &CopyArgs) -> Result<(), Failure> {
    if args.from == args.to {
        return Err(Failure::BadInput(
            "--from and --to name the same store; nothing to copy".into(),
        ));
    }
    let source = open(&args.from, false)?;
    let target = open(&args.to, true)?;
    let ids = source.session_ids().map_err(store_err)?;
    let bar = progress(ids.len() as u64, json);
    let mut report = Report {
        sessions: ids.len(),
        ..Report::default()
    };
    for id in &ids {
        let Some(export) = source.export_session(id).map_err(store_err)? else {
            // Deleted from the source while copying.
            report.sessions -= 1;
            bar.inc(1);
            continue;
        };
        report.messages += export.messages.len();
        match target.import_session(&export).map_err(store_err)? {
            ImportOutcome::Imported => report.copied += 1,
            ImportOutcome::AlreadyPresent => report.already_present += 1,
            ImportOutcome::ImportedDetached => {
                report.copied += 1;
                report.detached.push(id.clone());
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    verify(&*source, &*target, &ids, &mut report)?;
    if json {
        let value = serde_json::json!({
            "sessions": report.sessions,
            "messages": report.messages,
            "copied": report.copied,
            "already_present": report.already_present,
            "detached": report.detached,
            "verified_sessions": report.verified_sessions,
            "verified_messages": report.verified_messages,
        });
        outln!("{value:#}");
        return Ok(());
    }
    outln!(
        "copied {} sessions ({} messages); {} were already there",
        group_digits(report.copied),
        group_digits(report.messages),
        group_digits(report.already_present)
    );
    for id in &report.detached {
        outln!("note: {id}'s parent is not in the source; it was copied without the link");
    }
    outln!(
        "verified: {} sessions and {} messages in both, every checksum equal",
        group_digits(report.verified_sessions),
        group_digits(report.verified_messages)
    );
    Ok(())
}

/// Reads every copied session back from both stores and compares checksums (a session
/// copied without its dangling parent link is compared without it).
fn verify(
    source: &dyn SessionStore,
    target: &dyn SessionStore,
    ids: &[String],
    report: &mut Report,
) -> Result<(), Failure> {
    let mut mismatched = Vec::new();
    for id in ids {
        let Some(mut from) = source.export_session(id).map_err(store_err)? else {
            continue;
        };
        let Some(to) = target.export_session(id).map_err(store_err)? else {
            mismatched.push(format!("{id} (missing from the target)"));
            continue;
        };
        if report.detached.contains(id) {
            from.session.parent_session_id = None;
        }
        if checksum(&from) != checksum(&to) {
            mismatched.push(id.clone());
            continue;
        }
        report.verified_sessions += 1;
        report.verified_messages += to.messages.len();
    }
    if mismatched.is_empty() {
        return Ok(());
    }
    Err(Failure::Other(format!(
        "the copy does not match its source for {} sessions: {}",
        mismatched.len(),
        mismatched.join(", ")
    )))
}

/// A store by path or URL; a missing SQLite file is created only for the target.
fn open(location: &str, create: bool) -> Result<Box<dyn SessionStore>, Failure> {
    if baton_pg::is_postgres_url(location) {
        return Ok(Box::new(
            baton_pg::PgStore::connect(location).map_err(store_err)?,
        ));
    }
    let path = Path::new(location);
    if !create {
        if !path.exists() {
            return Err(Failure::BadInput(format!(
                "--from {location}: no such database"
            )));
        }
        return Ok(Box::new(
            SqliteStore::open_read_only(path).map_err(|e| open_err(path, e))?,
        ));
    }
    if path.exists() {
        return Ok(Box::new(super::open_for_write(path, false)?));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::Other(format!("cannot create {}: {e}", parent.display())))?;
    }
    Ok(Box::new(
        SqliteStore::open(path).map_err(|e| open_err(path, e))?,
    ))
}

fn progress(total: u64, json: bool) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) =
        ProgressStyle::with_template("copying {bar:30} {pos}/{len} sessions  {per_sec}  eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}
