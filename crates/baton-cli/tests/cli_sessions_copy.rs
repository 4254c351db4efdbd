//! `baton sessions copy`: every session, message and lineage link between stores, resumable,
//! idempotent and verified. SQLite ↔ SQLite (and a reference-design database) always run;
//! the PostgreSQL round trip runs when `BATON_PG_TEST_URL` is set (CI sets it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../baton-pg/tests/pg/mod.rs"]
mod pg;

use baton_core::Message;
use baton_store::continuation::ChildSettings;
use baton_store::{NewSession, SessionStore, SqliteStore};
use std::path::Path;

/// A store with a compression chain (titled, with usage), a branch, and a CJK session.
fn populate(store: &dyn SessionStore) -> String {
    store
        .create_session(NewSession {
            id: Some("root".into()),
            model: Some("gpt-5".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    store.set_title("root", "Migrate the database").unwrap();
    store
        .append_messages(
            "root",
            &[
                Message::user("move the sessions table to postgres"),
                Message::assistant("first, export the schema"),
            ],
        )
        .unwrap();
    store
        .add_usage(
            "root",
            &baton_core::usage::CanonicalUsage {
                input: 1200,
                output: 80,
                cache_read: 900,
                cache_write: 0,
                reasoning: 0,
            },
            Some(0.0123),
        )
        .unwrap();
    let child = store
        .start_continuation_with(
            "root",
            &[Message::user("summary of the migration so far")],
            &ChildSettings::default(),
        )
        .unwrap();
    store
        .create_session(NewSession {
            id: Some("zh".into()),
            ..NewSession::new("telegram")
        })
        .unwrap();
    store
        .append_messages("zh", &[Message::user("把用户配置迁移到数据库")])
        .unwrap();
    store.end_session("zh", "user_exit").unwrap();
    // A branch of an ended session: linked, but not a continuation.
    store
        .create_session(NewSession {
            id: Some("branch".into()),
            parent_session_id: Some("zh".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    child
}

fn copy(from: &str, to: &str) -> assert_cmd::assert::Assert {
    common::baton()
        .args(["sessions", "copy", "--from", from, "--to", to])
        .assert()
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Everything a copy must carry, for comparing two stores.
fn exports(store: &dyn SessionStore) -> Vec<baton_store::transfer::SessionExport> {
    store
        .session_ids()
        .unwrap()
        .iter()
        .map(|id| store.export_session(id).unwrap().unwrap())
        .collect()
}

#[test]
fn a_sqlite_copy_carries_sessions_messages_lineage_and_usage_and_reruns_copy_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let source = SqliteStore::open(&a).unwrap();
    let child = populate(&source);
    copy(&path(&a), &path(&b))
        .success()
        .stdout(predicates::str::contains("copied 4 sessions (4 messages)"))
        .stdout(predicates::str::contains("every checksum equal"));
    let target = SqliteStore::open_read_only(&b).unwrap();
    assert_eq!(exports(&target), exports(&source));
    assert_eq!(target.compression_tip("root").unwrap(), child);
    assert_eq!(
        target.resolve_session("Migrate the database").unwrap(),
        Some(child.clone())
    );
    let hits = target
        .search(&baton_store::SearchQuery::new("用户"))
        .unwrap();
    assert_eq!(hits.len(), 1, "the copy is indexed for search");
    copy(&path(&a), &path(&b))
        .success()
        .stdout(predicates::str::contains("copied 0 sessions"))
        .stdout(predicates::str::contains("4 were already there"));
}

#[test]
fn an_interrupted_copy_resumes_with_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let source = SqliteStore::open(&a).unwrap();
    populate(&source);
    // What a copy stopped after two sessions leaves: two whole sessions in the target.
    let target = SqliteStore::open(&b).unwrap();
    for id in source.session_ids().unwrap().iter().take(2) {
        target
            .import_session(&source.export_session(id).unwrap().unwrap())
            .unwrap();
    }
    drop(target);
    copy(&path(&a), &path(&b))
        .success()
        .stdout(predicates::str::contains("copied 2 sessions"))
        .stdout(predicates::str::contains("2 were already there"));
    let target = SqliteStore::open_read_only(&b).unwrap();
    assert_eq!(exports(&target), exports(&source));
}

#[test]
fn a_different_session_under_the_same_id_stops_the_copy_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    populate(&SqliteStore::open(&a).unwrap());
    let target = SqliteStore::open(&b).unwrap();
    target
        .create_session(NewSession {
            id: Some("zh".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    target
        .append_messages("zh", &[Message::user("mine")])
        .unwrap();
    drop(target);
    copy(&path(&a), &path(&b))
        .failure()
        .stderr(predicates::str::contains(
            "session zh already exists in the target",
        ));
    let target = SqliteStore::open_read_only(&b).unwrap();
    assert_eq!(target.messages("zh").unwrap(), vec![Message::user("mine")]);
}

#[test]
fn a_reference_design_database_is_copied_with_messages_rebuilt_from_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("state.db"), dir.path().join("b.db"));
    let conn = rusqlite_reference(&a);
    drop(conn);
    copy(&path(&a), &path(&b))
        .success()
        .stdout(predicates::str::contains("copied 2 sessions (3 messages)"));
    let target = SqliteStore::open_read_only(&b).unwrap();
    let messages = target.messages("ref-1").unwrap();
    assert_eq!(
        messages[0],
        Message::user("hello from the reference design")
    );
    assert_eq!(
        target.compression_chain("ref-1").unwrap(),
        ["ref-1", "ref-2"]
    );
}

/// A database with the reference design's schema and rows as its own code writes them.
fn rusqlite_reference(path: &Path) -> SqliteStore {
    let ddl = baton_store::schema::reference_v11_ddl();
    let status = std::process::Command::new("sqlite3")
        .arg(path)
        .arg(format!(
            "{ddl}\nINSERT INTO schema_version VALUES (11);\n\
             INSERT INTO sessions (id, source, started_at, ended_at, end_reason, message_count) \
             VALUES ('ref-1', 'cli', 1000, 2000, 'compression', 2);\n\
             INSERT INTO sessions (id, source, started_at, parent_session_id, message_count) \
             VALUES ('ref-2', 'cli', 2000, 'ref-1', 1);\n\
             INSERT INTO messages (session_id, role, content, timestamp) VALUES \
             ('ref-1', 'user', 'hello from the reference design', 1001), \
             ('ref-1', 'assistant', 'hi', 1002), ('ref-2', 'user', 'summary', 2001);"
        ))
        .status();
    match status {
        Ok(s) if s.success() => SqliteStore::open_read_only(path).unwrap(),
        other => panic!("sqlite3 (installed by scripts/ci-deps.sh) failed: {other:?}"),
    }
}

#[test]
fn sqlite_to_postgres_and_back_is_lossless() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, c) = (dir.path().join("a.db"), dir.path().join("c.db"));
    let source = SqliteStore::open(&a).unwrap();
    let child = populate(&source);
    copy(&path(&a), &url)
        .success()
        .stdout(predicates::str::contains("copied 4 sessions (4 messages)"));
    copy(&path(&a), &url)
        .success()
        .stdout(predicates::str::contains("4 were already there"));
    let pg = baton_pg::PgStore::connect(&url).unwrap();
    assert_eq!(exports(&pg), exports(&source));
    assert_eq!(pg.compression_tip("root").unwrap(), child);
    let list = common::baton()
        .args(["sessions", "--db", &url, "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("Migrate the database"));
    // `[store] url` chooses the store when --db is not given.
    let configured = common::baton()
        .args(["--set", &format!("store.url={url}"), "sessions", "list"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&configured.stdout).contains("Migrate the database"),
        "{configured:?}"
    );
    copy(&url, &path(&c)).success();
    let back = SqliteStore::open_read_only(&c).unwrap();
    assert_eq!(exports(&back), exports(&source));
    let search = common::baton()
        .args(["sessions", "--db", &url, "search", "用户"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&search.stdout).contains("zh"),
        "{search:?}"
    );
    assert!(
        !String::from_utf8_lossy(&search.stderr).contains("password"),
        "no credentials in output"
    );
}
