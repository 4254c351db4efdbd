//! The COPY bulk path (`PgStore::write_batch`) stores exactly what the INSERT path does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::usage::CanonicalUsage;
use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SearchQuery, SessionBatch, SessionStore};

#[test]
fn copy_batches_round_trip_text_that_copy_must_escape_and_are_searchable() {
    let Some(store) = pg::fresh_store() else {
        return;
    };
    let tricky = vec![
        Message::user("tab\there, newline\nthere, CR\r, back\\slash, \\N literal, NUL \0 byte"),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c1",
            "terminal",
            r#"{"command":"printf 'a\tb\n'"}"#,
        )]),
        Message::tool("c1", "a\tb"),
        Message::assistant("把用户配置迁移到数据库 — 完成"),
    ];
    let other = vec![Message::user("second session")];
    let ids = store
        .write_batch(&[
            SessionBatch {
                session: NewSession {
                    id: Some("bulk-1".into()),
                    started_at: Some(1_000.0),
                    ..NewSession::new("import")
                },
                messages: &tricky,
                end_reason: Some("imported"),
                ended_at: Some(2_000.0),
                usage: Some((
                    CanonicalUsage {
                        input: 10,
                        output: 5,
                        cache_read: 1,
                        cache_write: 0,
                        reasoning: 0,
                    },
                    2,
                )),
                title: Some("Bulk import".into()),
            },
            pg::new_session("bulk-2", "import", &other),
        ])
        .unwrap();
    assert_eq!(ids, ["bulk-1", "bulk-2"]);
    assert_eq!(store.messages("bulk-1").unwrap(), tricky);
    assert_eq!(store.messages("bulk-2").unwrap(), other);
    let s = store.get_session("bulk-1").unwrap().unwrap();
    assert_eq!((s.message_count, s.tool_call_count), (4, 1));
    assert_eq!((s.input_tokens, s.api_call_count), (10, 2));
    assert_eq!(s.title.as_deref(), Some("Bulk import"));
    assert_eq!(
        (s.ended_at, s.end_reason.as_deref()),
        (Some(2_000.0), Some("imported"))
    );
    let export = store.export_session("bulk-1").unwrap().unwrap();
    assert_eq!(export.timestamps[0], 1_000.0);
    assert!(export.timestamps.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(store.search(&SearchQuery::new("用户")).unwrap().len(), 1);
    assert_eq!(store.search(&SearchQuery::new("printf")).unwrap().len(), 1);
    assert_eq!(
        store
            .search(&SearchQuery::new("\"back slash\""))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn only_messages_the_columns_cannot_rebuild_keep_their_json() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = baton_pg::PgStore::connect(&url).unwrap();
    let parts: Message = serde_json::from_value(serde_json::json!({
        "role": "user",
        "content": [{"type": "text", "text": "look at this"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    }))
    .unwrap();
    let messages = vec![
        Message::user("plain text, rebuilt from the columns"),
        Message::assistant("NUL \0 inside, which PostgreSQL text cannot hold"),
        parts,
    ];
    store
        .write_new_sessions(&[pg::new_session("raw", "import", &messages)])
        .unwrap();
    assert_eq!(store.messages("raw").unwrap(), messages);
    let with_json = pg::query_i64(
        &url,
        "SELECT COUNT(*) FROM messages WHERE raw_json IS NOT NULL",
    );
    assert_eq!(with_json, 2, "the NUL and the list-valued messages only");
}
