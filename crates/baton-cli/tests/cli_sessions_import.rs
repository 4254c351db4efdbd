//! `baton sessions import` and `baton compress --session`: conversations go into the store
//! faithfully, and a stored session compacts into a continuation as the agent loop does it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::formats::load_file;
use baton_store::{SessionStore, SqliteStore};
use common::{baton, sample};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-core/tests/fixtures/transcripts")
        .join(name)
}

fn import_json(db: &Path, files: &[PathBuf]) -> serde_json::Value {
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(db)
        .arg("import")
        .args(files)
        .assert()
        .success()
        .get_output()
        .clone();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn raw_transcripts_import_faithfully_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let files = vec![
        fixture("claude-code-tool-heavy.jsonl"),
        fixture("codex-rollout.jsonl"),
        fixture("gemini-cli-session.json"),
        sample("tau-bench-airline.jsonl"),
    ];
    let report = import_json(&db, &files);
    let imported = report["imported"].as_array().unwrap();
    let sources: Vec<&str> = imported
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    assert!(sources.contains(&"claude-code"), "{sources:?}");
    assert!(sources.contains(&"codex"), "{sources:?}");
    assert!(sources.contains(&"gemini-cli"), "{sources:?}");
    assert!(sources.contains(&"import"), "{sources:?}");

    let store = SqliteStore::open_read_only(&db).unwrap();
    let claude = load_file(&files[0], None).unwrap().conversations.remove(0);
    let claude_row = imported
        .iter()
        .find(|r| r["source"] == "claude-code")
        .unwrap();
    let id = claude_row["id"].as_str().unwrap();
    assert_eq!(
        store.messages(id).unwrap(),
        claude.messages,
        "stored messages equal the loaded transcript"
    );
    let session = store.get_session(id).unwrap().unwrap();
    assert_eq!(session.end_reason.as_deref(), Some("imported"));
    assert_eq!(session.message_count as usize, claude.messages.len());
    drop(store);

    let again = import_json(&db, &files);
    assert_eq!(again["imported"].as_array().unwrap().len(), 0);
    assert_eq!(
        again["skipped"].as_array().unwrap().len(),
        imported.len(),
        "a second import stores nothing twice"
    );
}

#[test]
fn a_bad_file_is_reported_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"role\": \"user\", \"content\": \"hi\"}\n{not json\n",
    )
    .unwrap();
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .arg("import")
        .arg(sample("tielec-ja.jsonl"))
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bad.jsonl"));
    assert!(!db.exists(), "no database was created for a failed import");
}

#[test]
fn compress_session_continues_the_chain_and_keeps_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let report = import_json(&db, &[sample("claude-code-session.jsonl")]);
    let id = report["imported"][0]["id"].as_str().unwrap().to_string();
    let original = SqliteStore::open_read_only(&db)
        .unwrap()
        .messages(&id)
        .unwrap();

    let out = baton()
        .args([
            "compress",
            "--report",
            "json",
            "--context-length",
            "64000",
            "--db",
        ])
        .arg(&db)
        .args(["--session", &id])
        .assert()
        .success()
        .get_output()
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    let child = report["continuation"].as_str().unwrap().to_string();
    assert_eq!(report["session"], id.as_str());

    let store = SqliteStore::open_read_only(&db).unwrap();
    assert_eq!(
        store.messages(&id).unwrap(),
        original,
        "the original is kept"
    );
    let compacted = store.messages(&child).unwrap();
    assert!(
        compacted.len() < original.len() / 2,
        "{} -> {}",
        original.len(),
        compacted.len()
    );
    assert_eq!(
        report["after_messages"].as_u64().unwrap() as usize,
        compacted.len()
    );
    assert_eq!(store.compression_tip(&id).unwrap(), child);
    let parent = store.get_session(&id).unwrap().unwrap();
    assert_eq!(parent.end_reason.as_deref(), Some("compression"));
    drop(store);

    // Naming the old session again compacts the live end of the chain, never forks it.
    baton()
        .args(["compress", "--force", "--context-length", "64000", "--db"])
        .arg(&db)
        .args(["--session", &id])
        .assert()
        .success()
        .stderr(predicates::str::contains(format!(
            "compressing its newest continuation {child}"
        )));
}

#[test]
fn compress_session_names_an_unknown_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    import_json(&db, &[sample("tielec-ja.jsonl")]);
    baton()
        .args(["compress", "--db"])
        .arg(&db)
        .args(["--session", "no-such-session"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such-session"));
}
