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
    assert!(sources.contains(&"tau-bench"), "{sources:?}");

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

    // The session keeps the transcript's own times and usage, computed here independently:
    // the first and last record timestamps, and per API response (message.id) its last usage.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let stamps: Vec<f64> = records
        .iter()
        .filter_map(|r| r["timestamp"].as_str())
        .filter_map(baton_store::session::parse_rfc3339)
        .collect();
    assert_eq!(session.started_at, stamps[0]);
    // Its messages are stamped at the session's own time, not at the import.
    let first_message_at = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT MIN(timestamp) FROM messages WHERE session_id = ?1",
                [id],
                |r| r.get::<_, f64>(0),
            )?)
        })
        .unwrap();
    assert!(
        (first_message_at - stamps[0]).abs() < 1e-3,
        "{first_message_at}"
    );
    assert_eq!(session.ended_at, stamps.last().copied());
    let mut by_id = std::collections::BTreeMap::new();
    for r in records.iter().filter(|r| r["type"] == "assistant") {
        if let (Some(mid), Some(u)) = (r["message"]["id"].as_str(), r["message"].get("usage")) {
            by_id.insert(mid.to_string(), u.clone());
        }
    }
    let sum = |k: &str| -> i64 { by_id.values().map(|u| u[k].as_i64().unwrap_or(0)).sum() };
    assert!(!by_id.is_empty());
    assert_eq!(session.api_call_count, by_id.len() as i64);
    assert_eq!(session.input_tokens, sum("input_tokens"));
    assert_eq!(session.output_tokens, sum("output_tokens"));
    assert_eq!(session.cache_read_tokens, sum("cache_read_input_tokens"));
    assert_eq!(
        session.cache_write_tokens,
        sum("cache_creation_input_tokens")
    );

    // Gemini logs usage per response (`tokens`, with `input` including the cached part).
    let gemini_row = imported
        .iter()
        .find(|r| r["source"] == "gemini-cli")
        .unwrap();
    let gemini = store
        .get_session(gemini_row["id"].as_str().unwrap())
        .unwrap()
        .unwrap();
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    let calls: Vec<&serde_json::Value> = raw["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["tokens"].is_object())
        .collect();
    let total = |k: &str| -> i64 {
        calls
            .iter()
            .map(|m| m["tokens"][k].as_i64().unwrap_or(0))
            .sum()
    };
    assert_eq!(gemini.api_call_count, calls.len() as i64);
    assert_eq!(gemini.input_tokens, total("input") - total("cached"));
    assert_eq!(gemini.output_tokens, total("output") + total("thoughts"));
    assert_eq!(gemini.reasoning_tokens, total("thoughts"));
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

/// The same file given twice in one import: its three conversations are met twice and stored
/// once.
/// The one-line report counts it as imported once and skipped once, with the file and source
/// named once; `--json` lists it under both.
#[test]
fn a_conversation_met_twice_in_one_import_is_stored_once_and_reported_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample("tau-bench-airline.jsonl");
    let db = dir.path().join("text.db");
    let text = common::success_stdout(
        baton()
            .args(["sessions", "--db"])
            .arg(&db)
            .arg("import")
            .arg(&file)
            .arg(&file),
    );
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("imported 3 session(s), 82 messages "),
        "{first}"
    );
    assert!(
        first.contains(" from 1 file(s) (source tau-bench)"),
        "{first}"
    );
    assert!(first.ends_with("; 3 already imported, skipped"), "{first}");
    let store = SqliteStore::open_read_only(&db).unwrap();
    assert_eq!(store.list_sessions(&Default::default()).unwrap().len(), 3);

    let report = import_json(&dir.path().join("json.db"), &[file.clone(), file]);
    let imported = report["imported"].as_array().unwrap();
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!((imported.len(), skipped.len()), (3, 3));
    let ids: Vec<&serde_json::Value> = imported.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, skipped.iter().collect::<Vec<_>>());
}
