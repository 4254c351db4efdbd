//! The `sessions` maintenance commands on a PostgreSQL store (`--db postgres://…`): import
//! (idempotent), title, export, delete, prune and stats behave as on the SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../baton-pg/tests/pg/mod.rs"]
mod pg;

use baton_pg::PgStore;
use baton_store::SessionStore;
use std::path::Path;

fn sessions(db: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    common::baton()
        .args(["sessions", "--db", db])
        .args(args)
        .assert()
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/samples")
        .join(name)
        .display()
        .to_string()
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).to_string()
}

#[test]
fn import_title_export_delete_prune_and_stats_work_on_postgres() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let file = sample("tau-bench-airline.jsonl");
    let first = sessions(&url, &["--json", "import", &file]).success();
    let imported: serde_json::Value = serde_json::from_str(&stdout(&first)).unwrap();
    let store = PgStore::connect(&url).unwrap();
    let ids = store.session_ids().unwrap();
    assert!(!ids.is_empty(), "{imported}");
    let messages: i64 = ids
        .iter()
        .map(|id| store.get_session(id).unwrap().unwrap().message_count)
        .sum();
    // A second import of the same file stores nothing new.
    sessions(&url, &["import", &file]).success();
    assert_eq!(store.session_ids().unwrap(), ids);
    let again: i64 = ids
        .iter()
        .map(|id| store.get_session(id).unwrap().unwrap().message_count)
        .sum();
    assert_eq!(again, messages);

    let id = &ids[0];
    sessions(&url, &["title", id, "Airline refund"]).success();
    assert_eq!(
        store.get_session(id).unwrap().unwrap().title.as_deref(),
        Some("Airline refund")
    );
    let exported = stdout(&sessions(&url, &["export", "Airline refund"]).success());
    // One message per line, each the stored message.
    assert_eq!(
        exported.lines().count() as i64,
        store.get_session(id).unwrap().unwrap().message_count
    );
    for line in exported.lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(message["role"].is_string(), "{line}");
    }

    // Delete asks for --yes and changes nothing without it.
    sessions(&url, &["delete", "Airline refund"]).failure();
    assert!(store.get_session(id).unwrap().is_some());
    sessions(&url, &["delete", "Airline refund", "--yes"]).success();
    assert!(store.get_session(id).unwrap().is_none());

    // Imported sessions are ended; their recorded start is old enough to prune, or not:
    // either way the dry run lists exactly what prune then deletes.
    let dry =
        stdout(&sessions(&url, &["--json", "prune", "--older-than", "1", "--dry-run"]).success());
    let would: serde_json::Value = serde_json::from_str(&dry).unwrap();
    let done =
        stdout(&sessions(&url, &["--json", "prune", "--older-than", "1", "--yes"]).success());
    let deleted: serde_json::Value = serde_json::from_str(&done).unwrap();
    assert_eq!(would["would_delete"], deleted["deleted"]);
    for gone in deleted["deleted"].as_array().unwrap() {
        assert!(store.get_session(gone.as_str().unwrap()).unwrap().is_none());
    }
    // Stats over what is left: the sessions, their messages and the tools they called.
    let left = store.session_ids().unwrap();
    let stats = stdout(&sessions(&url, &["--json", "stats", "--days", "36500"]).success());
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["overview"]["sessions"], left.len() as u64, "{stats}");
    let stored: i64 = left
        .iter()
        .map(|id| store.get_session(id).unwrap().unwrap().message_count)
        .sum();
    assert_eq!(stats["overview"]["messages"], stored);
    assert!(
        !stats["top_tools"].as_array().unwrap().is_empty(),
        "tau-bench calls tools: {stats}"
    );
}
