//! A database Baton created or migrated stays writable by the reference design's own code on
//! the SQLite Debian stable ships (3.40), and the CJK index stays complete when another
//! program inserts messages.
//!
//! Every DDL statement is checked against a list of SQL features newer than SQLite 3.40 (this
//! always runs, with the bundled SQLite). Where the system `sqlite3` shell is installed (Debian
//! 12 ships 3.40.1), the reference design's inserts, edits and deletes also run through it for
//! real; without it that test prints a note and returns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_store::{SearchQuery, SqliteStore, search};
use rusqlite::Connection;
use std::path::Path;
use std::process::Command;

/// SQL features newer than SQLite 3.40 (the version each arrived in). A schema object using
/// one is unreadable or unwritable for a 3.40 library: a table option fails when the table is
/// first touched, a function in a trigger fails the statement that fires it.
const NEWER_THAN_3_40: &[(&str, &str)] = &[
    ("contentless_delete", "FTS5 option, 3.43"),
    ("contentless_unindexed", "FTS5 option, 3.45"),
    ("locale=", "FTS5 option, 3.47"),
    ("jsonb", "JSONB functions, 3.45"),
    ("unistr(", "3.50"),
    ("octet_length(", "3.43"),
    ("timediff(", "3.43"),
    ("concat(", "3.44"),
    ("concat_ws(", "3.44"),
    ("string_agg(", "3.44"),
    ("json_pretty(", "3.46"),
    ("if(", "3.48 alias of iif"),
    ("percentile", "3.47 extension functions"),
    ("median(", "3.47"),
];

/// Every `CREATE` statement stored in the database (tables, indexes, triggers, views).
fn ddl(path: &Path) -> Vec<(String, String)> {
    let c = Connection::open(path).unwrap();
    let mut stmt = c
        .prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn assert_no_newer_features(path: &Path, what: &str) {
    let ddl = ddl(path);
    assert!(ddl.iter().any(|(n, _)| n == "messages_fts_cjk"), "{what}");
    for (name, sql) in ddl {
        let lower = sql.to_lowercase();
        // Word-boundary check so `iif(` does not count as `if(`.
        for (feature, since) in NEWER_THAN_3_40 {
            let hit = lower.match_indices(feature).any(|(i, _)| {
                i == 0
                    || !lower[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            assert!(
                !hit,
                "{what}: `{name}` uses `{feature}` ({since}), newer than SQLite 3.40:\n{sql}"
            );
        }
    }
}

/// A reference-design database (schema 11) with one session and one message.
fn reference_db(path: &Path) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(&baton_store::schema::reference_v11_ddl())
        .unwrap();
    c.execute("INSERT INTO schema_version (version) VALUES (11)", [])
        .unwrap();
    c.execute_batch(
        "INSERT INTO sessions (id, source, started_at) VALUES ('ref1', 'cli', 1767268800.0);
         INSERT INTO messages (session_id, role, content, timestamp)
             VALUES ('ref1', 'user', '请检查用户配置', 1767268801.0);",
    )
    .unwrap();
}

/// The database Baton's own schema 13 wrote: the CJK index contentless with
/// `contentless_delete=1` (what every earlier release left on disk).
fn baton_v13_db(path: &Path) {
    reference_db(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        "ALTER TABLE messages ADD COLUMN raw_json TEXT;
         CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(uni, bi, content='',
             contentless_delete=1, tokenize='unicode61');
         CREATE TRIGGER messages_fts_cjk_delete AFTER DELETE ON messages BEGIN
             DELETE FROM messages_fts_cjk WHERE rowid = old.id;
         END;
         UPDATE schema_version SET version = 13;",
    )
    .unwrap();
}

fn hits(store: &SqliteStore, text: &str) -> Vec<String> {
    store
        .read(|c| Ok(search(c, &SearchQuery::new(text))?))
        .unwrap()
        .into_iter()
        .map(|h| h.session_id)
        .collect()
}

#[test]
fn every_ddl_baton_writes_is_within_sqlite_3_40() {
    let (_d, fresh) = common::temp_db();
    drop(SqliteStore::open(&fresh).unwrap());
    assert_no_newer_features(&fresh, "fresh database");

    let (_d, migrated) = common::temp_db();
    reference_db(&migrated);
    drop(SqliteStore::open(&migrated).unwrap());
    assert_no_newer_features(&migrated, "reference database migrated");

    let (_d, old) = common::temp_db();
    baton_v13_db(&old);
    drop(SqliteStore::open(&old).unwrap());
    assert_no_newer_features(&old, "schema-13 database migrated");
}

#[test]
fn a_schema_13_index_is_rebuilt_and_still_finds_what_it_held() {
    let (_d, path) = common::temp_db();
    baton_v13_db(&path);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        Some(baton_store::schema::SCHEMA_VERSION)
    );
    assert_eq!(hits(&store, "用户"), ["ref1"]);
    assert_eq!(hits(&store, "查"), ["ref1"]);
}

/// What the reference design's `create_session` and `append_message` run (state-memory.md
/// §1.6 and §1.8), then an edit and `replace_messages`' delete, all without Baton's code.
fn reference_writes(run: impl Fn(&str)) {
    run(
        "INSERT OR IGNORE INTO sessions (id, source, user_id, model, model_config, \
         system_prompt, parent_session_id, started_at) \
         VALUES ('ext1', 'cli', NULL, 'gpt-4o', NULL, NULL, NULL, 1767300000.0)",
    );
    run(
        "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, \
         tool_call_id, timestamp, token_count, finish_reason, reasoning, reasoning_content, \
         reasoning_details, codex_reasoning_items, codex_message_items) \
         VALUES ('ext1', 'user', '部署脚本失败了', NULL, NULL, NULL, 1767300001.0, NULL, \
         NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    run(
        "INSERT INTO messages (session_id, role, content, timestamp) \
         VALUES ('ext1', 'assistant', 'temporary row', 1767300002.0)",
    );
    run("UPDATE messages SET content = '已修复缓存' WHERE content = 'temporary row'");
    run(
        "INSERT INTO messages (session_id, role, content, timestamp) \
         VALUES ('ext1', 'assistant', '要删除的行', 1767300003.0)",
    );
    run("DELETE FROM messages WHERE content = '要删除的行'");
    run("UPDATE sessions SET message_count = message_count + 2 WHERE id = 'ext1'");
}

/// Search from a read-only store (nobody indexes the queue: it is scanned), then from a
/// read-write open (which indexes the queue), for 1- and 2-character and longer CJK terms.
fn assert_foreign_rows_found(path: &Path) {
    for read_only in [true, false] {
        let store = if read_only {
            SqliteStore::open_read_only(path).unwrap()
        } else {
            SqliteStore::open(path).unwrap()
        };
        let ctx = if read_only { "read-only" } else { "read-write" };
        assert_eq!(hits(&store, "部署"), ["ext1"], "{ctx}: 2-char term");
        assert_eq!(hits(&store, "败"), ["ext1"], "{ctx}: 1-char term");
        assert_eq!(hits(&store, "缓存"), ["ext1"], "{ctx}: edited row");
        assert!(hits(&store, "删除").is_empty(), "{ctx}: deleted row");
        assert!(hits(&store, "temporary").is_empty(), "{ctx}: edited away");
        assert_eq!(hits(&store, "用户"), ["ref1"], "{ctx}: migrated row");
    }
    let c = Connection::open(path).unwrap();
    let queued: i64 = c
        .query_row("SELECT COUNT(*) FROM messages_cjk_pending", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(queued, 0, "a read-write open indexes the queue");
    let indexed: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM messages_fts_cjk WHERE messages_fts_cjk MATCH 'bi : \"部署\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
}

#[test]
fn rows_a_plain_connection_inserts_are_found_by_cjk_search() {
    let (_d, path) = common::temp_db();
    reference_db(&path);
    drop(SqliteStore::open(&path).unwrap());
    let c = Connection::open(&path).unwrap();
    reference_writes(|sql| {
        c.execute_batch(sql).unwrap();
    });
    drop(c);
    assert_foreign_rows_found(&path);
}

#[test]
fn the_system_sqlite3_shell_can_write_a_migrated_database() {
    let version = Command::new("sqlite3").arg("--version").output().ok();
    let Some(version) = version.filter(|o| o.status.success()) else {
        eprintln!("note: no `sqlite3` shell on PATH (Debian: apt-get install sqlite3); skipped");
        return;
    };
    eprintln!(
        "system sqlite3 {}",
        String::from_utf8_lossy(&version.stdout).trim()
    );
    for old in [false, true] {
        let (_d, path) = common::temp_db();
        if old {
            baton_v13_db(&path);
        } else {
            reference_db(&path);
        }
        drop(SqliteStore::open(&path).unwrap());
        reference_writes(|sql| {
            let out = Command::new("sqlite3")
                .arg("-bail")
                .arg(&path)
                .arg(sql)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "system sqlite3 failed on a migrated database: {}\n{sql}",
                String::from_utf8_lossy(&out.stderr)
            );
        });
        assert_foreign_rows_found(&path);
    }
}
