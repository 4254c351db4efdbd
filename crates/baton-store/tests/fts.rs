#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::{Message, ToolCall};
use baton_store::{SessionStore, SqliteStore};
use common::temp_db;

#[test]
fn fts_triggers_index_words_tool_names_and_cjk_trigrams_on_insert() {
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
    assert_eq!(count("messages_fts_trigram", "\"认证模\""), 1);
    assert_eq!(count("messages_fts_trigram", "\"重构认证\""), 1);
    assert_eq!(count("messages_fts_trigram", "\"模块化\""), 0);
}
