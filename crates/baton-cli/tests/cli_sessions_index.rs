//! `sessions import` reading JSON Lines of records as a stream and indexing after the rows:
//! `--index-later` leaves the index to `sessions index`, searches are complete meanwhile, and
//! a record that is not a conversation mid-file keeps the batches written before it and
//! says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::baton;
use std::path::{Path, PathBuf};

fn sessions(db: &Path) -> assert_cmd::Command {
    let mut cmd = baton();
    cmd.args(["sessions", "--db"]).arg(db);
    cmd
}

fn count(db: &Path, sql: &str) -> i64 {
    baton_store::SqliteStore::open_read_only(db)
        .unwrap()
        .read(|c| Ok(c.query_row(sql, [], |r| r.get(0))?))
        .unwrap()
}

fn output(cmd: &mut assert_cmd::Command) -> (String, String) {
    let out = cmd.assert().success().get_output().clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// JSON Lines of `n` conversation records, record `i` mentioning `marker{i}`.
fn records(dir: &Path, n: usize, bad_line: Option<usize>) -> PathBuf {
    let path = dir.join("records.jsonl");
    let lines: Vec<String> = (0..n)
        .map(|i| {
            if Some(i + 1) == bad_line {
                // Valid JSON (so the syntax check before writing passes), not a conversation.
                return "{\"messages\": 5}".to_string();
            }
            serde_json::json!({"messages": [
                {"role": "user", "content": format!("find marker{i} in the 日志文件")},
                {"role": "assistant", "content": format!("found marker{i}")},
            ]})
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn index_later_leaves_searches_complete_and_sessions_index_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // More than a read-write open indexes on the way (2,000 messages).
    let input = records(dir.path(), 1_500, None);
    let (out, _) = output(sessions(&db).arg("import").arg("--index-later").arg(&input));
    assert!(
        out.starts_with("imported 1,500 session(s), 3,000 messages"),
        "{out}"
    );
    assert!(
        out.contains("3,000 messages wait for the search index"),
        "{out}"
    );

    let (found, note) = output(sessions(&db).args(["search", "marker123", "--json"]));
    let hits: serde_json::Value = serde_json::from_str(&found).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 2, "{found}");
    assert!(note.is_empty(), "--json prints no note: {note}");
    let (_, note) = output(sessions(&db).args(["search", "日志"]));
    assert!(note.contains("wait for the search index"), "{note}");

    let (out, _) = output(sessions(&db).arg("index"));
    assert_eq!(
        out,
        "indexed 1,000 messages; the search index is up to date\n"
    );
    let (out, _) = output(sessions(&db).arg("index"));
    assert_eq!(out, "the search index is up to date\n");
    let (found, note) = output(sessions(&db).args(["search", "marker123", "--json"]));
    let hits: serde_json::Value = serde_json::from_str(&found).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 2, "{found}");
    assert!(note.is_empty(), "{note}");
}

#[test]
fn a_plain_import_returns_with_the_index_complete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let input = records(dir.path(), 50, None);
    let (out, _) = output(sessions(&db).arg("import").arg(&input));
    assert!(!out.contains("wait for the search index"), "{out}");
    assert_eq!(count(&db, "SELECT count(*) FROM messages_fts_pending"), 0);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'marker7'"
        ),
        2
    );
}

#[test]
fn a_bad_line_mid_file_names_it_and_keeps_the_batches_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // 5,000 messages make a batch: 3,000 records (6,000 messages) write one before line 2,900.
    let input = records(dir.path(), 3_000, Some(2_900));
    let err = sessions(&db)
        .arg("import")
        .arg(&input)
        .assert()
        .failure()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("records.jsonl:2900"), "names the line: {err}");
    assert!(
        err.contains("session(s) read before it were imported"),
        "{err}"
    );
    // Fixed and imported again: the sessions stored before are skipped, the rest stored.
    let input = records(dir.path(), 3_000, None);
    let (out, _) = output(sessions(&db).arg("import").arg(&input));
    assert!(out.contains("already imported, skipped"), "{out}");
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 3_000);
}
