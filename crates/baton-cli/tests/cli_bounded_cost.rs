//! Bounded cost for pathological input (#13 item 10): a term repeated 40,000 times in one
//! message, a 100,000-character query, and `tokens` on 10 MB of one character. Each ran for
//! seconds to minutes (or hundreds of MiB) before; the generous timeouts here would fail then.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use baton_core::Message;
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::baton;
use predicates::prelude::*;

#[test]
fn search_for_a_term_repeated_40000_times_in_one_message_is_fast_with_a_bounded_snippet() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let store = SqliteStore::open(&db).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(
            &id,
            &[
                Message::user("deploy ".repeat(40_000)),
                Message::assistant("deploy finished"),
            ],
        )
        .unwrap();
    drop(store);
    // Before: FTS5 snippet() over 40,000 instances took 37 s (debug build).
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .args(["search", "deploy"])
        .timeout(Duration::from_secs(20))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let hits: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    for hit in hits {
        let snippet = hit["snippet"].as_str().unwrap();
        assert!(snippet.contains(">>>deploy<<<"), "{snippet}");
        assert!(
            snippet.chars().count() <= 200,
            "snippet is a bounded window: {snippet}"
        );
    }
}

#[test]
fn an_over_long_query_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    SqliteStore::open(&db).unwrap();
    let query = "x ".repeat(50_000);
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["search", &query])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("100000 characters long"))
        .stderr(predicate::str::contains("the limit is 1000 characters"));
    // At the limit it is still an ordinary search.
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["search", &"x".repeat(1000)])
        .timeout(Duration::from_secs(20))
        .assert()
        .success();
}

#[test]
fn tokens_on_10_mb_of_one_character_is_linear_and_small() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let conv = serde_json::json!([{"role": "user", "content": "a".repeat(10_000_000)}]);
    std::fs::write(&file, conv.to_string()).unwrap();
    // Before: 12 s and 546 MiB peak (debug build); after: 4 s and 75 MiB.
    let time = std::path::Path::new("/usr/bin/time");
    if !time.exists() {
        eprintln!("note: /usr/bin/time absent; checking the time bound only");
        baton()
            .args(["tokens", "--json"])
            .arg(&file)
            .timeout(Duration::from_secs(20))
            .assert()
            .success();
        return;
    }
    let out = assert_cmd::Command::new(time)
        .args(["-f", "maxrss_kib=%M"])
        .arg(assert_cmd::cargo::cargo_bin("baton"))
        .args(["tokens", "--json"])
        .arg(&file)
        .timeout(Duration::from_secs(20))
        .assert()
        .success()
        .get_output()
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.to_string().contains("o200k"), "{report}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kib="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no max RSS in {stderr}"));
    assert!(kib < 250 * 1024, "peak RSS {kib} KiB for a 10 MB input");
}
