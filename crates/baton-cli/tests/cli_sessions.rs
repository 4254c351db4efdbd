//! `baton sessions` against a real database on disk, read-only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::baton;
use predicates::prelude::*;

fn database() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store.set_title(&id, "Fix the parser").unwrap();
    store
        .append_messages(
            &id,
            &[
                Message::user("修复解析器里的错误"),
                Message::assistant_tool_calls(vec![ToolCall::function(
                    "c1",
                    "Bash",
                    r#"{"command":"cargo test parser"}"#,
                )]),
                Message::tool("c1", "test parser ... FAILED"),
                Message::assistant("The tokenizer drops quoted spaces."),
            ],
        )
        .unwrap();
    drop(store);
    (dir, path, id)
}

#[test]
fn list_show_search_and_export_read_the_database_without_changing_it() {
    let (_dir, db, id) = database();
    let before = std::fs::read(&db).unwrap();
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains(&id))
        .stdout(predicate::str::contains("Fix the parser"));
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("[calls Bash]"))
        .stdout(predicate::str::contains("tokenizer"));
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .args(["search", "解析"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let hits: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(hits[0]["session_id"], id.as_str());
    let exported = baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["export", &id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let lines: Vec<serde_json::Value> = String::from_utf8(exported)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 4);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "read-only commands changed the database"
    );
}

#[test]
fn unknown_ids_and_missing_databases_are_clear_errors() {
    let (_dir, db, _) = database();
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["show", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown session id `nope`"));
    baton()
        .args(["sessions", "--db", "/nonexistent/state.db", "show", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no session database at /nonexistent/state.db",
        ));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "not a database").unwrap();
    baton()
        .args(["sessions", "--db"])
        .arg(&junk)
        .arg("list")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("notes.txt"));
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "not a database");
}

#[test]
fn show_and_export_accept_a_title() {
    let (_dir, db, id) = database();
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["show", "Fix the parser"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!("{id}  Fix the parser")))
        .stdout(predicate::str::contains("tokenizer"));
    let out = baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["export", "Fix the parser"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 4);
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["show", "Fix the lexer"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`Fix the lexer`"));
}

/// `search` takes the store's filters: source, session, role and a time range.
#[test]
fn search_filters_by_source_session_role_and_time() {
    let (_dir, db, id) = database();
    let hits = |extra: &[&str]| -> usize {
        let out = baton()
            .args(["sessions", "--json", "--db"])
            .arg(&db)
            .args(["search", "parser"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<serde_json::Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let all = hits(&[]);
    assert!(all >= 2, "{all}");
    assert_eq!(hits(&["--source", "cli"]), all);
    assert_eq!(hits(&["--source", "telegram"]), 0);
    assert_eq!(hits(&["--session", &id]), all);
    assert_eq!(hits(&["--session", "other"]), 0);
    assert_eq!(hits(&["--role", "tool"]), 1);
    assert_eq!(hits(&["--since", "2000-01-01T00:00:00Z"]), all);
    assert_eq!(hits(&["--since", "2999-01-01T00:00:00Z"]), 0);
    assert_eq!(hits(&["--until", "2000-01-01T00:00:00Z"]), 0);
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["search", "parser", "--since", "last week"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`last week` is neither a date such as 2026-05-01 nor an RFC 3339 time",
        ));
}
