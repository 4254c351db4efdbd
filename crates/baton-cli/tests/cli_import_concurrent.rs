//! `baton sessions import` run by several processes at once on the same files stores each
//! conversation once (issue #13 item 3). The "already imported" decision must be taken inside
//! the write transaction: a check made before it lets every racing process see "not there yet"
//! and append its own copy of the messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_store::SqliteStore;
use common::{empty_home, sample};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Processes importing the same files at once, and how many times the race is run.
const PROCESSES: usize = 6;
const TRIALS: usize = 10;
/// Conversations in the generated file, and messages in each: more messages than one write
/// transaction takes (2,000), so each import commits several times and the racers interleave.
const CONVERSATIONS: usize = 30;
const MESSAGES_EACH: usize = 200;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-core/tests/fixtures/transcripts")
        .join(name)
}

/// Sessions and messages stored in `db`, read with plain SQL (no Baton logic in between).
fn counts(db: &Path) -> (i64, i64) {
    let store = SqliteStore::open_read_only(db).unwrap();
    let n = |sql: &str| {
        store
            .read(|c| Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))?))
            .unwrap()
    };
    (
        n("SELECT COUNT(*) FROM sessions"),
        n("SELECT COUNT(*) FROM messages"),
    )
}

/// The sessions a summary line says were stored, and those it says were already there:
/// `imported N session(s), M messages from F file(s)[ (source …)][; K already imported, skipped]`.
fn summary(line: &str) -> (i64, i64) {
    let number = |s: &str| s.trim().replace(',', "").parse::<i64>().ok();
    let stored = line
        .strip_prefix("imported ")
        .and_then(|rest| rest.split(" session(s)").next())
        .and_then(number);
    let skipped = match line.split("; ").nth(1) {
        None => Some(0),
        Some(tail) => tail
            .strip_suffix(" already imported, skipped")
            .and_then(number),
    };
    match (stored, skipped) {
        (Some(a), Some(b)) => (a, b),
        _ => panic!("not an import summary: {line:?}"),
    }
}

/// A JSONL file of [`CONVERSATIONS`] distinct conversations without ids of their own (so their
/// ids are hashes of their messages).
fn many_conversations(dir: &Path) -> PathBuf {
    let path = dir.join("many.jsonl");
    let mut text = String::new();
    for c in 0..CONVERSATIONS {
        let messages: Vec<serde_json::Value> = (0..MESSAGES_EACH)
            .map(|m| {
                let role = if m % 2 == 0 { "user" } else { "assistant" };
                serde_json::json!({"role": role, "content": format!("conversation {c} message {m}")})
            })
            .collect();
        text.push_str(&serde_json::json!({ "messages": messages }).to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn import_command(db: &Path, files: &[PathBuf]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("baton"));
    cmd.env("BATON_HOME", empty_home())
        .env_remove("OPENAI_BASE_URL")
        .args(["sessions", "--db"])
        .arg(db)
        .arg("import")
        .args(files)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn six_processes_importing_the_same_files_store_each_conversation_once() {
    // A transcript with its own session id, and conversations whose ids are hashes of their
    // messages: both ways of naming a session must be idempotent under the race.
    let dir = tempfile::tempdir().unwrap();
    let files = vec![
        fixture("claude-code-tool-heavy.jsonl"),
        sample("tau-bench-airline.jsonl"),
        many_conversations(dir.path()),
    ];

    // What one import alone stores.
    let reference = dir.path().join("reference.db");
    let out = import_command(&reference, &files).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (sessions, messages) = counts(&reference);
    let generated = (CONVERSATIONS * MESSAGES_EACH) as i64;
    assert!(
        sessions > CONVERSATIONS as i64 && messages > generated,
        "{sessions} {messages}"
    );

    for trial in 0..TRIALS {
        let db = dir.path().join(format!("trial{trial}.db"));
        // The database exists with its schema, so the processes race on the import itself.
        drop(SqliteStore::open(&db).unwrap());
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| import_command(&db, &files).spawn().unwrap())
            .collect();
        let mut stored_total = 0;
        for child in children {
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "trial {trial}: an import failed: {stdout}{stderr}"
            );
            // Every process accounts for every session: stored by it, or already there (a
            // race lost is "already imported", not an error).
            let (stored, skipped) = summary(stdout.trim_end());
            assert_eq!(stored + skipped, sessions, "trial {trial}: {stdout}");
            stored_total += stored;
        }
        assert_eq!(
            counts(&db),
            (sessions, messages),
            "trial {trial}: sessions and messages after {PROCESSES} concurrent imports"
        );
        assert_eq!(
            stored_total, sessions,
            "trial {trial}: the summaries claim {stored_total} sessions stored"
        );
    }
}
