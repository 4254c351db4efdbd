#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::{Message, ToolCall};
use baton_store::{SessionStore, SqliteStore};
use common::temp_db;

#[test]
fn inserts_index_words_tool_names_and_cjk_bigrams() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = common::session(&store, "s");
    store
        .append_messages(
            &id,
            &[
                Message::user("The quick brown fox"),
                Message::user("请帮我重构认证模块"),
                Message::assistant_tool_calls(vec![ToolCall::function(
                    "c1",
                    "ripgrep_search",
                    "{}",
                )]),
            ],
        )
        .unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let count = |table: &str, q: &str| -> i64 {
        c.query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE {table} MATCH ?1"),
            [q],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(count("messages_fts", "brown"), 1);
    assert_eq!(count("messages_fts", "ripgrep_search"), 1);
    assert_eq!(count("messages_fts", "zebra"), 0);
    // CJK text is in the bigram index (schema 13 has no trigram table).
    assert_eq!(count("messages_fts_cjk", "bi : \"认证 证模\""), 1);
    assert_eq!(count("messages_fts_cjk", "bi : \"重构 构认 认证\""), 1);
    assert_eq!(count("messages_fts_cjk", "bi : \"模块 块化\""), 0);
    assert_eq!(count("messages_fts_cjk", "uni : \"认\""), 1);
}

fn cjk_rows(path: &std::path::Path, gram: &str) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(
        "SELECT COUNT(*) FROM messages_fts_cjk WHERE messages_fts_cjk MATCH ?1",
        [format!("\"{gram}\"")],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn cjk_index_holds_unigrams_and_bigrams_of_new_messages_and_forgets_deleted_ones() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    common::session(&store, "keep");
    common::session(&store, "gone");
    store
        .append_messages(
            "keep",
            &[Message::user("修改用户配置"), Message::user("only english")],
        )
        .unwrap();
    store
        .append_messages("gone", &[Message::user("用户登录失败")])
        .unwrap();
    assert_eq!(cjk_rows(&path, "用户"), 2);
    assert_eq!(cjk_rows(&path, "配置"), 1);
    assert_eq!(cjk_rows(&path, "配"), 1);
    // `户配` is a bigram of the run, `置修` is not (it would cross the run's end).
    assert_eq!(cjk_rows(&path, "户配"), 1);
    assert_eq!(cjk_rows(&path, "置修"), 0);
    let c = rusqlite::Connection::open(&path).unwrap();
    let indexed: i64 = c
        .query_row("SELECT COUNT(*) FROM messages_fts_cjk", [], |r| r.get(0))
        .unwrap();
    assert_eq!(indexed, 2, "messages without CJK text get no index row");

    assert!(store.delete_session("gone").unwrap());
    assert_eq!(cjk_rows(&path, "用户"), 1);
    assert_eq!(cjk_rows(&path, "登录"), 0);
}

#[test]
fn two_character_cjk_search_uses_the_index_and_ranks_by_occurrences() {
    let store = SqliteStore::open_in_memory().unwrap();
    common::session(&store, "s");
    store
        .append_messages(
            "s",
            &[
                Message::user("配置文件在哪里"),
                Message::user("用户配置和系统配置都要改，配置很多"),
                Message::user("没有相关内容"),
            ],
        )
        .unwrap();
    let mut q = baton_store::SearchQuery::new("配置");
    q.limit = 5;
    let hits = store.read(|c| Ok(baton_store::search(c, &q)?)).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits[0].snippet.contains(">>>配置<<<"), "{hits:?}");
    assert!(
        hits[0].snippet.contains("系统"),
        "the message with three occurrences ranks first: {hits:?}"
    );
}

/// `search` reads in one transaction of its own, and leaves a caller's transaction as it was:
/// it sees the caller's uncommitted rows and does not end the transaction.
#[test]
fn search_runs_in_a_read_snapshot_and_inside_a_callers_transaction() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = common::session(&store, "s");
    store
        .append_messages(&id, &[Message::user("committed lighthouse note")])
        .unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let hits = baton_store::search(&c, &baton_store::SearchQuery::new("lighthouse")).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(c.is_autocommit(), "search's own snapshot was released");

    c.execute_batch("BEGIN").unwrap();
    c.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) \
         VALUES (?1, 'user', 'uncommitted lighthouse draft', 1.0)",
        [&id],
    )
    .unwrap();
    let hits = baton_store::search(&c, &baton_store::SearchQuery::new("lighthouse")).unwrap();
    assert_eq!(hits.len(), 2, "the caller's uncommitted row is found");
    assert!(!c.is_autocommit(), "the caller's transaction is still open");
    c.execute_batch("ROLLBACK").unwrap();
    let hits = baton_store::search(&c, &baton_store::SearchQuery::new("lighthouse")).unwrap();
    assert_eq!(hits.len(), 1);
}
