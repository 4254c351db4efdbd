//! Interoperability: a database written by the reference design (schema version 11, built here
//! from its DDL) opens read-only and can be listed, read, searched and exported, and the file is
//! not modified.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Role;
use baton_store::{
    ExportScope, SearchQuery, SessionFilter, SessionStore, SqliteStore, export_jsonl, search,
};

/// role, content, tool_call_id, tool_calls, tool_name: the reference's message columns.
type ReferenceRow<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn build_reference_db(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(&baton_store::schema::reference_v11_ddl())
        .unwrap();
    c.execute("INSERT INTO schema_version (version) VALUES (11)", [])
        .unwrap();
    c.execute(
        "INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, message_count, \
         tool_call_count, input_tokens, output_tokens, title) \
         VALUES ('20260101_120000_ab12cd', 'cli', 'claude-sonnet-4-5', 1767268800.0, 1767270000.0, \
         'user_exit', 4, 1, 1200, 300, 'Fix the parser')",
        [],
    )
    .unwrap();
    let rows: [ReferenceRow; 4] = [
        (
            "user",
            Some("修复解析器里的错误，然后运行测试"),
            None,
            None,
            None,
        ),
        (
            "assistant",
            None,
            None,
            Some(
                r#"[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"cargo test parser\"}"}}]"#,
            ),
            None,
        ),
        (
            "tool",
            Some("test parser ... FAILED\nexit code: 101"),
            Some("call_1"),
            None,
            Some("terminal"),
        ),
        (
            "assistant",
            Some("The tokenizer drops quoted spaces; fixing it."),
            None,
            None,
            None,
        ),
    ];
    for (i, (role, content, tool_call_id, tool_calls, tool_name)) in rows.iter().enumerate() {
        c.execute(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp) \
             VALUES ('20260101_120000_ab12cd', ?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![role, content, tool_call_id, tool_calls, tool_name, 1767268800.0 + i as f64],
        )
        .unwrap();
    }
}

#[test]
fn reference_v11_database_is_read_only_listed_searched_and_exported_unchanged() {
    let (_dir, path) = common::temp_db();
    build_reference_db(&path);
    let before = std::fs::read(&path).unwrap();

    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), Some(11));

    let listed = store.list_sessions(&SessionFilter::default()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session.title.as_deref(), Some("Fix the parser"));

    let messages = store.messages("20260101_120000_ab12cd").unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1].calls()[0].function.name, "terminal");
    assert_eq!(messages[2].role, Role::Tool);
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("call_1"));

    for (query, expect) in [
        ("tokenizer", "tokenizer"),
        ("解析器", "解析器"),
        ("测试", "测试"),
    ] {
        let hits = store
            .read(|conn| Ok(search(conn, &SearchQuery::new(query))?))
            .unwrap();
        assert!(
            hits.iter().any(|h| h.snippet.contains(expect)),
            "{query}: {hits:?}"
        );
    }

    let mut out = Vec::new();
    let n = export_jsonl(
        &store,
        "20260101_120000_ab12cd",
        ExportScope::Session,
        &mut out,
    )
    .unwrap();
    assert!(n >= 4);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("cargo test parser")
    );

    drop(store);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "read-only open modified the file"
    );
}
