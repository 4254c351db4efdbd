#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{JournalMode, SCHEMA_VERSION, SessionStore, SqliteStore, StoreError};
use common::{session, temp_db};

#[test]
fn fresh_database_has_current_schema_version_and_wal() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));
    assert_eq!(store.journal_mode(), &JournalMode::Wal);
    drop(store);
    // Reopening is a no-op migration.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));
}

#[test]
fn missing_parent_directories_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/state.db");
    SqliteStore::open(&path).unwrap();
    assert!(path.exists());
}

#[test]
fn non_sqlite_file_is_refused_and_left_unchanged() {
    let (_dir, path) = temp_db();
    let original = b"these are my notes, not a database\n".repeat(10);
    std::fs::write(&path, &original).unwrap();
    let err = SqliteStore::open(&path).err().unwrap();
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err}");
    assert!(err.to_string().contains(&path.display().to_string()));
    assert_eq!(std::fs::read(&path).unwrap(), original);

    // Shorter than the header too.
    std::fs::write(&path, b"SQLite").unwrap();
    assert!(matches!(
        SqliteStore::open(&path).err().unwrap(),
        StoreError::NotSqlite { .. }
    ));
    assert_eq!(std::fs::read(&path).unwrap(), b"SQLite");
}

#[test]
fn empty_file_is_initialised() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").unwrap();
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));
}

#[test]
fn newer_schema_is_refused_and_file_unchanged() {
    let (_dir, path) = temp_db();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (99);
             CREATE TABLE sessions (id TEXT PRIMARY KEY, future_column TEXT);",
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = SqliteStore::open(&path).err().unwrap();
    match &err {
        StoreError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!(*found, 99);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other}"),
    }
    assert!(err.to_string().contains("99"));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Read-only open refuses it too.
    assert!(matches!(
        SqliteStore::open_read_only(&path).err().unwrap(),
        StoreError::NewerSchema { .. }
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// A version-1 database: the original columns only, external-content FTS with the old triggers.
fn create_v1(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version VALUES (1);
         CREATE TABLE sessions (
             id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
             model_config TEXT, system_prompt TEXT, parent_session_id TEXT,
             started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
             message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
             input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
             FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
         CREATE TABLE messages (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             session_id TEXT NOT NULL REFERENCES sessions(id),
             role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT,
             tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER);
         CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
         CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
             INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
         END;
         INSERT INTO sessions (id, source, started_at, message_count, tool_call_count, input_tokens)
             VALUES ('old1', 'cli', 1700000000.0, 4, 1, 42);
         INSERT INTO messages (session_id, role, content, timestamp)
             VALUES ('old1', 'user', 'where is the zeppelin config', 1700000001.0);
         INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
             VALUES ('old1', 'assistant', NULL,
             '[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"grep\",\"arguments\":\"{}\"}}]',
             1700000002.0);
         INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp)
             VALUES ('old1', 'tool', 'found it', 'c1', 'grep', 1700000003.0);
         INSERT INTO messages (session_id, role, content, timestamp)
             VALUES ('old1', 'assistant', 'It is in conf/', 1700000004.0);",
    )
    .unwrap();
}

#[test]
fn older_database_is_read_only_without_migrating() {
    let (_dir, path) = temp_db();
    create_v1(&path);
    let before = std::fs::read(&path).unwrap();
    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(1));
    assert_eq!(store.messages("old1").unwrap().len(), 4);
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn migration_from_version_1_keeps_data_and_reaches_current_version() {
    let (_dir, path) = temp_db();
    create_v1(&path);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));

    let s = store.get_session("old1").unwrap().unwrap();
    assert_eq!(s.message_count, 4);
    assert_eq!(s.input_tokens, 42);
    assert_eq!(s.cache_read_tokens, 0);
    assert_eq!(s.title, None);

    let msgs = store.messages("old1").unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[0], Message::user("where is the zeppelin config"));
    assert_eq!(msgs[1].calls()[0].function.name, "grep");
    assert_eq!(msgs[2], Message::tool("c1", "found it"));

    // New columns work on the migrated database.
    store.set_title("old1", "Old session").unwrap();
    let new_msg = Message::user("a fresh message");
    store
        .append_messages("old1", std::slice::from_ref(&new_msg))
        .unwrap();
    assert_eq!(store.messages("old1").unwrap()[4], new_msg);

    // FTS was rebuilt inline and backfilled, including tool names.
    let c = rusqlite::Connection::open(&path).unwrap();
    let hits = |q: &str| -> i64 {
        c.query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?1",
            [q],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(hits("zeppelin"), 1);
    assert!(hits("grep") >= 1);
    assert_eq!(hits("fresh"), 1);
}

#[test]
fn reference_v11_database_gains_raw_json_column() {
    let (_dir, path) = temp_db();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(baton_store::schema::BASE_SCHEMA_SQL)
            .unwrap();
        c.execute_batch(baton_store::schema::FTS_SQL).unwrap();
        c.execute_batch(baton_store::schema::FTS_TRIGRAM_SQL)
            .unwrap();
        c.execute("INSERT INTO schema_version VALUES (11)", [])
            .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));
    let id = session(&store, "s");
    // A field no reference column holds: only `raw_json` keeps it.
    let mut m = Message::assistant("hi");
    m.extra
        .insert("provider_field".into(), serde_json::Value::from(7));
    store
        .append_messages(&id, std::slice::from_ref(&m))
        .unwrap();
    assert_eq!(store.messages(&id).unwrap(), vec![m]);
    let c = rusqlite::Connection::open(&path).unwrap();
    let raw: String = c
        .query_row("SELECT raw_json FROM messages", [], |r| r.get(0))
        .unwrap();
    assert!(raw.contains("\"provider_field\":7"), "{raw}");
}

#[test]
fn migrating_a_reference_database_backfills_the_cjk_index() {
    let (_dir, path) = temp_db();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&baton_store::schema::reference_v11_ddl())
            .unwrap();
        c.execute("INSERT INTO schema_version VALUES (11)", [])
            .unwrap();
        c.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1.0)",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) \
             VALUES ('old', 'user', '请检查用户配置', 2.0)",
            [],
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let mut q = baton_store::SearchQuery::new("用户");
    q.limit = 5;
    let via_index = store
        .read(|c| {
            let indexed: i64 = c.query_row(
                "SELECT COUNT(*) FROM messages_fts_cjk WHERE messages_fts_cjk MATCH '\"用户\"'",
                [],
                |r| r.get(0),
            )?;
            assert_eq!(indexed, 1, "the pre-existing message was backfilled");
            Ok(baton_store::search(c, &q)?)
        })
        .unwrap();
    assert_eq!(via_index.len(), 1);
    assert_eq!(via_index[0].session_id, "old");
}

/// Every earlier version migrates: a version-1 database brought to version N by the steps
/// before it, given a message written at version N, then opened. Its data is kept and every
/// index answers, whichever version it started from.
#[test]
fn migration_from_every_earlier_version_keeps_data_and_indexes_it() {
    for version in 1..SCHEMA_VERSION {
        let (_dir, path) = temp_db();
        create_v1(&path);
        {
            let mut c = rusqlite::Connection::open(&path).unwrap();
            let tx = c.transaction().unwrap();
            baton_store::schema::migrate_between(&tx, 1, version).unwrap();
            tx.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) \
                 VALUES ('old1', 'user', ?1, 1700000005.0)",
                [format!("written at version {version}: 请检查用户配置")],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            Some(SCHEMA_VERSION),
            "from version {version}"
        );
        let msgs = store.messages("old1").unwrap();
        assert_eq!(msgs.len(), 5, "from version {version}");
        assert_eq!(msgs[0], Message::user("where is the zeppelin config"));
        for query in ["zeppelin", "用户", "用户配置"] {
            let mut q = baton_store::SearchQuery::new(query);
            q.limit = 5;
            let hits = store.read(|c| Ok(baton_store::search(c, &q)?)).unwrap();
            assert!(
                !hits.is_empty(),
                "from version {version}: no hit for {query}"
            );
        }
        let appended = Message::user("after the migration");
        store
            .append_messages("old1", std::slice::from_ref(&appended))
            .unwrap();
        assert_eq!(store.messages("old1").unwrap()[5], appended);
    }
}

/// Reading an old database as it is (no migration) works for every read the CLI offers.
#[test]
fn a_version_1_database_lists_shows_searches_and_reports_stats_read_only() {
    let (_dir, path) = temp_db();
    create_v1(&path);
    let before = std::fs::read(&path).unwrap();
    let store = SqliteStore::open_read_only(&path).unwrap();
    let listed = store
        .list_sessions(&baton_store::SessionFilter::default())
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session.id, "old1");
    assert_eq!(listed[0].session.title, None);
    let s = store.get_session("old1").unwrap().unwrap();
    assert_eq!(s.input_tokens, 42);
    let mut q = baton_store::SearchQuery::new("zeppelin");
    q.limit = 5;
    let hits = store.read(|c| Ok(baton_store::search(c, &q)?)).unwrap();
    assert_eq!(hits.len(), 1);
    let stats = store
        .stats(&baton_store::StatsQuery {
            days: 100_000,
            ..baton_store::StatsQuery::last_days(30)
        })
        .unwrap();
    assert_eq!(stats.overview.sessions, 1);
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// A search binds its values (a hit's message id; FTS5's own segment lookups bind a segment
/// id); SQLite would otherwise compile a statement again each time a new value is bound when
/// its row estimate read the old one (a comparison with a bound integer): a search process
/// compiled its hit lookup once per hit and FTS5's segment lookup once per term, ~4% of it. Every connection opens
/// with the query planner stability guarantee, so a bound value never recompiles a statement.
#[test]
fn binding_new_values_does_not_compile_a_statement_again() {
    let (_dir, path) = temp_db();
    let fill = |store: &SqliteStore| {
        let id = session(store, "s1");
        store
            .append_messages(
                &id,
                &[
                    Message::user("the README explains the build"),
                    Message::user("and the Makefile runs it"),
                ],
            )
            .unwrap();
    };
    fill(&SqliteStore::open(&path).unwrap());
    let in_memory = SqliteStore::open_in_memory().unwrap();
    fill(&in_memory);
    for store in [
        SqliteStore::open(&path).unwrap(),
        SqliteStore::open_read_only(&path).unwrap(),
        in_memory,
    ] {
        let reprepared = store
            .read(|conn| {
                // The shape of a search's hit lookup (`search/hits.rs`).
                let mut stmt = conn.prepare(
                    "SELECT m.session_id FROM messages m \
                     JOIN sessions s ON s.id = m.session_id WHERE m.id = ?",
                )?;
                for message in [1_i64, 2] {
                    let session: String = stmt.query_row([message], |r| r.get(0))?;
                    assert_eq!(session, "s1");
                }
                Ok(stmt.get_status(rusqlite::StatementStatus::RePrepare))
            })
            .unwrap();
        assert_eq!(
            reprepared, 0,
            "the statement was compiled again after binding"
        );
    }
}

/// Writers check every page they read whole (`cell_size_check`), so damage is refused before
/// a write can spread it; readers rely on SQLite's own bounds checks and skip the cost
/// (`cli_sessions_damaged`: a damaged file's reader gives the intact answer or reports the
/// damage, never another answer).
#[test]
fn writers_check_cell_sizes_and_readers_rely_on_sqlites_own_checks() {
    let (_dir, path) = temp_db();
    let cell_size_check = |store: &SqliteStore| -> bool {
        store
            .read(|conn| Ok(conn.query_row("PRAGMA cell_size_check", [], |r| r.get(0))?))
            .unwrap()
    };
    let writer = SqliteStore::open(&path).unwrap();
    assert!(cell_size_check(&writer), "a writer checks cell sizes");
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert!(!cell_size_check(&reader), "a reader leaves it to SQLite");
}
