#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::{Content, ContentPart, Message, ToolCall};
use baton_store::{SessionStore, SqliteStore, StoreError};
use common::{session, temp_db};
use serde_json::json;

fn msg(v: serde_json::Value) -> Message {
    Message::from_value(v, 0).unwrap()
}

fn conversation() -> Vec<Message> {
    vec![
        Message::system("You are terse."),
        msg(json!({"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
            {"type": "x_custom_part", "payload": {"k": [1, 2.5, null]}}
        ], "x_client_id": "abc"})),
        msg(json!({"role": "assistant", "content": null,
            "reasoning_content": "",
            "reasoning_details": [{"type": "reasoning.text", "text": "think", "signature": "sig=="}],
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"},
                 "extra_content": {"google": {"thought_signature": "ts"}}},
                {"id": "call_2", "function": {"name": "ls", "arguments": "not json"}}
            ],
            "finish_reason": "tool_calls",
            "annotations": [{"type": "url_citation"}]})),
        Message::tool("call_1", "file a"),
        msg(
            json!({"role": "tool", "tool_call_id": "call_2", "name": "ls", "content": "a b", "is_error": false}),
        ),
        msg(json!({"role": "assistant", "content": "done", "refusal": null, "x_float": 0.1})),
    ]
}

#[test]
fn append_then_read_round_trips_messages_with_unknown_fields_exactly() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    let conv = conversation();
    store.append_messages(&id, &conv).unwrap();
    let back = store.messages(&id).unwrap();
    assert_eq!(back, conv);
    // And serialised byte-for-byte the same.
    for (a, b) in back.iter().zip(&conv) {
        assert_eq!(a.to_json(), b.to_json());
    }
    // Survives a reopen.
    drop(store);
    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.messages(&id).unwrap(), conv);
}

#[test]
fn counters_are_updated_by_appends() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = session(&store, "s1");
    store.append_messages(&id, &conversation()).unwrap();
    store
        .append_messages(
            &id,
            &[Message::assistant_tool_calls(vec![ToolCall::function(
                "c9", "x", "{}",
            )])],
        )
        .unwrap();
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(s.message_count, 7);
    // Two calls in the first batch, one in the second; tool results do not count.
    assert_eq!(s.tool_call_count, 3);
}

type ColumnRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

#[test]
fn reference_columns_are_filled_for_reference_readers() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    store.append_messages(&id, &conversation()).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<ColumnRow> = c
        .prepare("SELECT role, content, tool_name, finish_reason, reasoning_content FROM messages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(rows[1].1.as_deref().unwrap().starts_with("\u{0}json:["));
    assert_eq!(rows[2].3.as_deref(), Some("tool_calls"));
    assert_eq!(rows[2].4.as_deref(), Some(""));
    // Tool name from the matching call, and from `name` when present.
    assert_eq!(rows[3].2.as_deref(), Some("read_file"));
    assert_eq!(rows[4].2.as_deref(), Some("ls"));
}

#[test]
fn tool_name_is_found_from_a_call_appended_earlier() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    store
        .append_messages(
            &id,
            &[Message::assistant_tool_calls(vec![ToolCall::function(
                "c7", "search", "{}",
            )])],
        )
        .unwrap();
    store
        .append_messages(&id, &[Message::tool("c7", "r")])
        .unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let name: String = c
        .query_row(
            "SELECT tool_name FROM messages WHERE role = 'tool'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(name, "search");
}

#[test]
fn appending_to_a_missing_session_is_not_found() {
    let store = SqliteStore::open_in_memory().unwrap();
    let err = store
        .append_messages("nope", &[Message::user("x")])
        .unwrap_err();
    assert!(matches!(&err, StoreError::NotFound { id } if id == "nope"));
    assert!(err.to_string().contains("nope"));
    assert!(matches!(
        store.messages("nope").unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

#[test]
fn multimodal_parts_survive_when_rebuilt_from_columns() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    let m = Message {
        content: Some(Content::Parts(vec![
            ContentPart::text("look"),
            ContentPart::image_url("u"),
        ])),
        ..Message::user("")
    };
    store
        .append_messages(&id, std::slice::from_ref(&m))
        .unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE messages SET raw_json = NULL", [])
        .unwrap();
    assert_eq!(store.messages(&id).unwrap(), vec![m]);
}

#[test]
fn export_writes_one_message_per_line_in_our_format() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = session(&store, "s1");
    let conv = conversation();
    store.append_messages(&id, &conv).unwrap();
    let mut out = Vec::new();
    let n = baton_store::export_jsonl(&store, &id, baton_store::ExportScope::Session, &mut out)
        .unwrap();
    assert_eq!(n, conv.len());
    let text = String::from_utf8(out).unwrap();
    let parsed: Vec<Message> = text
        .lines()
        .enumerate()
        .map(|(i, l)| Message::from_value(serde_json::from_str(l).unwrap(), i).unwrap())
        .collect();
    assert_eq!(parsed, conv);
}

/// Each row carries the reference's `token_count`: the rough estimate of that message.
#[test]
fn rows_record_each_messages_estimated_token_count() {
    use baton_core::tokens::{RoughCounter, TokenCounter};
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    session(&store, "s");
    let messages = conversation();
    store.append_messages("s", &messages).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let counts: Vec<i64> = c
        .prepare("SELECT token_count FROM messages ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<i64> = messages
        .iter()
        .map(|m| RoughCounter.count_message(m) as i64)
        .collect();
    assert_eq!(counts, expected);
    assert!(counts.iter().all(|&n| n > 0));
}

#[test]
fn an_answer_and_its_usage_are_stored_together() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s");
    let usage = baton_core::usage::CanonicalUsage {
        input: 120,
        output: 30,
        cache_read: 1000,
        ..Default::default()
    };
    store
        .append_answer(&id, &[Message::assistant("done")], &usage, Some(0.25))
        .unwrap();
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(s.message_count, 1);
    assert_eq!(
        (s.input_tokens, s.output_tokens, s.cache_read_tokens),
        (120, 30, 1000)
    );
    assert_eq!(s.api_call_count, 1);
    assert_eq!(s.estimated_cost_usd, Some(0.25));
    let err = store
        .append_answer("missing", &[Message::assistant("x")], &usage, None)
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

/// Appending a tool result looks up recent call names; that lookup must walk the session
/// index back from its newest row, not sort the whole session (which made each append of an
/// agent's turn grow with its history).
#[test]
fn the_recent_call_lookup_uses_the_session_index_without_sorting() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let plan: Vec<String> = store
        .read(|c| {
            let mut stmt = c.prepare(
                "EXPLAIN QUERY PLAN SELECT tool_calls FROM messages WHERE session_id = 'x' \
                 AND tool_calls IS NOT NULL ORDER BY timestamp DESC, id DESC LIMIT 20",
            )?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(3))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .unwrap();
    let plan = plan.join(" | ");
    assert!(plan.contains("idx_messages_session"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    let source = include_str!("../src/sqlite.rs");
    assert!(
        source.contains(
            "AND tool_calls IS NOT NULL \\\n             ORDER BY timestamp DESC, id DESC LIMIT 20"
        ),
        "the store's query is the one whose plan is checked here"
    );
}

/// Rows are written many to a statement (`row_insert.rs`: 32, 16, 8, 4, 2, 1 at a time): 71
/// messages come back in order, with consecutive ids, increasing timestamps, and each tool
/// result named after a call made in an earlier statement or in its own.
#[test]
fn a_long_append_is_stored_in_order_across_multi_row_statements() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    let mut messages = Vec::new();
    for i in 0..35 {
        messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
            format!("c{i}"),
            format!("tool_{i}"),
            "{}",
        )]));
        messages.push(Message::tool(format!("c{i}"), format!("result {i}")));
    }
    messages.push(Message::user("the last one"));
    assert_eq!(messages.len(), 71);
    store.append_messages(&id, &messages).unwrap();
    assert_eq!(store.messages(&id).unwrap(), messages);

    let c = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<(i64, f64, Option<String>, Option<String>)> = c
        .prepare("SELECT id, timestamp, tool_call_id, tool_name FROM messages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 71);
    for pair in rows.windows(2) {
        assert_eq!(pair[1].0, pair[0].0 + 1, "ids are consecutive");
        assert!(pair[1].1 > pair[0].1, "timestamps increase");
    }
    for (_, _, call_id, name) in &rows {
        if let Some(call_id) = call_id {
            let i = call_id.trim_start_matches('c');
            assert_eq!(name.as_deref(), Some(format!("tool_{i}").as_str()));
        }
    }
}

/// The CJK index is caught up from the first row a multi-row append wrote: every one of 40
/// rows (a 32-row statement, then 8) is indexed in the transaction, none left queued.
#[test]
fn every_row_of_a_long_append_is_in_the_cjk_index() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let id = session(&store, "s1");
    let messages: Vec<Message> = (0..40)
        .map(|i| Message::user(format!("用户配置 {i}")))
        .collect();
    store.append_messages(&id, &messages).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM messages_cjk_pending"), 0);
    assert_eq!(
        count("SELECT COUNT(*) FROM messages_fts_cjk WHERE messages_fts_cjk MATCH '\"用户\"'"),
        40
    );
}
