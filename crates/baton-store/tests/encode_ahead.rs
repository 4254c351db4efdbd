//! Bulk writes of new sessions encode their rows on a helper thread while the writer inserts
//! (`encode_ahead.rs`). Rows must come out exactly as the writer would have made them, in
//! order, tool results naming their calls; a failed batch must stop the helper and write
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionBatch, SessionStore, SqliteStore};

/// A conversation of `turns` user / call / result / answer rounds (results carry no `name`,
/// so their `tool_name` column comes from the call).
fn conversation(tag: &str, turns: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for t in 0..turns {
        let id = format!("{tag}-call-{t}");
        out.push(Message::user(format!(
            "{tag} question {t}: 数据库 and grep"
        )));
        out.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            format!("tool_{}", t % 3),
            format!("{{\"q\":{t}}}"),
        )]));
        out.push(Message::tool(&id, format!("result {t} of {tag}")));
        out.push(Message::assistant(format!("answer {t}")));
    }
    out
}

/// Six sessions of 120 messages each: 720 in one batch, over the helper's threshold.
fn six_sessions() -> Vec<(String, Vec<Message>)> {
    (0..6)
        .map(|i| (format!("s{i}"), conversation(&format!("c{i}"), 30)))
        .collect()
}

fn batch<'a>(convs: &'a [(String, Vec<Message>)], title: Option<&str>) -> Vec<SessionBatch<'a>> {
    convs
        .iter()
        .map(|(id, messages)| SessionBatch {
            session: NewSession {
                id: Some(id.clone()),
                ..NewSession::new("import")
            },
            messages,
            end_reason: Some("imported"),
            ended_at: None,
            usage: None,
            title: title.map(str::to_string),
        })
        .collect()
}

/// Every stored column of every message row, in id order (ids and timestamps included).
fn rows(path: &std::path::Path) -> Vec<Vec<String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name, \
             timestamp, token_count, raw_json FROM messages ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        (0..10)
            .map(|i| {
                r.get::<_, rusqlite::types::Value>(i)
                    .map(|v| format!("{v:?}"))
            })
            .collect()
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
fn rows_encoded_ahead_equal_the_rows_the_writer_makes_itself() {
    let convs = six_sessions();
    // 720 messages in one batch: over the threshold, so a helper encodes them.
    let dir = tempfile::tempdir().unwrap();
    let ahead = dir.path().join("ahead.db");
    let store = SqliteStore::open(&ahead).unwrap();
    let stored = store
        .write_new_sessions_deferred(&batch(&convs, None))
        .unwrap();
    assert!(stored.iter().all(|(_, s)| *s));
    drop(store);
    // The same sessions one at a time (120 messages each): the writer encodes them.
    let inline = dir.path().join("inline.db");
    let store = SqliteStore::open(&inline).unwrap();
    for one in convs.chunks(1) {
        store
            .write_new_sessions_deferred(&batch(one, None))
            .unwrap();
    }
    let messages_back = store.messages("s3").unwrap();
    drop(store);
    let (a, b) = (rows(&ahead), rows(&inline));
    assert_eq!(a.len(), 720);
    // Timestamps come from the sessions' start, the same in both; everything else must match.
    let strip = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
        rows.into_iter()
            .map(|mut r| {
                r.remove(7);
                r
            })
            .collect()
    };
    assert_eq!(strip(a.clone()), strip(b));
    assert!(
        a.iter().any(|r| r[6].contains("tool_1")),
        "tool results name their calls: {:?}",
        &a[2]
    );
    assert_eq!(messages_back, convs[3].1);
}

#[test]
fn a_failed_batch_stops_the_helper_and_writes_nothing() {
    let convs = six_sessions();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    // One title for six sessions: the second one is refused inside the transaction, with
    // the helper still encoding the rest.
    let err = store
        .write_new_sessions_deferred(&batch(&convs, Some("same title")))
        .unwrap_err();
    assert!(err.to_string().contains("same title"), "{err}");
    assert!(rows(&path).is_empty());
    assert!(store.get_session("s0").unwrap().is_none());
}
