//! Bulk writes that leave the search indexes to catch up: nothing is missing from search
//! before, during or after the catch-up, deletes of waiting rows keep the index sound, and
//! every other write still indexes inline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::search::{SearchQuery, search};
use baton_store::{NewSession, SessionBatch, SessionStore, SqliteStore};

fn hits(store: &SqliteStore, text: &str) -> Vec<String> {
    let mut ids: Vec<String> = store
        .read(|c| Ok(search(c, &SearchQuery::new(text))?))
        .unwrap()
        .into_iter()
        .map(|h| h.session_id)
        .collect();
    ids.sort();
    ids
}

fn messages(words: &str, cjk: &str) -> Vec<Message> {
    vec![
        Message::user(format!("please check the {words} config")),
        Message::assistant(format!("确认了{cjk}的问题")),
    ]
}

fn bulk(store: &SqliteStore, ids: &[&str], msgs: &[Vec<Message>]) {
    let batch: Vec<SessionBatch<'_>> = ids
        .iter()
        .zip(msgs)
        .map(|(id, m)| SessionBatch {
            session: NewSession {
                id: Some((*id).into()),
                ..NewSession::new("import")
            },
            messages: m,
            end_reason: None,
            ended_at: None,
            usage: None,
            title: None,
        })
        .collect();
    store.write_new_sessions_deferred(&batch).unwrap();
}

/// FTS5's own consistency check of the word index against `messages` (external content).
fn word_index_is_sound(store: &SqliteStore) {
    store
        .read(|c| {
            c.execute(
                "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn deferred_rows_are_found_before_and_after_the_catch_up() {
    let (_d, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let msgs = [messages("zanzibar", "数据库"), messages("quokka", "缓存")];
    bulk(&store, &["a", "b"], &msgs);
    assert_eq!(store.index_backlog().unwrap(), 4, "all four rows wait");
    let indexed: i64 = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zanzibar'",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(indexed, 0, "the word index has not seen them");

    // Waiting rows are scanned: words, CJK of any length; and the scan answers what the
    // index answers once it has the rows.
    assert_eq!(hits(&store, "zanzibar"), ["a"]);
    assert_eq!(hits(&store, "quokka"), ["b"]);
    assert_eq!(hits(&store, "数据库"), ["a"]);
    assert_eq!(hits(&store, "缓"), ["b"]);
    let queries = [
        "zanzibar",
        "zanzib",
        "anzibar",
        "zanzibar*",
        "config",
        "check config",
        "quokka OR zanzibar",
        "config NOT quokka",
        "数据库",
        "缓",
        "确认",
        "问题",
    ];
    let scanned: Vec<Vec<String>> = queries.iter().map(|q| hits(&store, q)).collect();

    // One step of the catch-up indexes the oldest, the rest are still scanned.
    assert_eq!(store.catch_up_index(2).unwrap(), 2);
    assert_eq!(store.index_backlog().unwrap(), 2);
    assert_eq!(hits(&store, "zanzibar"), ["a"]);
    assert_eq!(hits(&store, "quokka"), ["b"]);
    assert_eq!(store.catch_up_index(100).unwrap(), 2);
    assert_eq!(store.catch_up_index(100).unwrap(), 0);
    assert_eq!(store.index_backlog().unwrap(), 0);
    for (q, before) in queries.iter().zip(&scanned) {
        assert_eq!(&hits(&store, q), before, "`{q}`: scanned vs indexed");
    }
    word_index_is_sound(&store);
}

#[test]
fn deleting_a_waiting_row_leaves_the_index_sound() {
    let (_d, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    bulk(
        &store,
        &["a", "b"],
        &[messages("zanzibar", "数据库"), messages("quokka", "缓存")],
    );
    assert_eq!(store.catch_up_index(2).unwrap(), 2, "session a indexed");
    // b's rows still wait; a's are indexed: delete one of each kind.
    assert!(store.delete_session("b").unwrap());
    assert!(store.delete_session("a").unwrap());
    assert_eq!(
        store.index_backlog().unwrap(),
        0,
        "deleted rows left the queue"
    );
    assert!(hits(&store, "quokka").is_empty());
    assert!(hits(&store, "zanzibar").is_empty());
    word_index_is_sound(&store);
}

#[test]
fn other_writes_index_inline_and_the_flag_never_outlives_a_batch() {
    let (_d, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    bulk(&store, &["a"], &[messages("zanzibar", "数据库")]);
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(&id, &[Message::user("wombat 仓库")])
        .unwrap();
    // The append indexed its own row (and the bounded share of the backlog: here, all).
    assert_eq!(store.index_backlog().unwrap(), 0);
    let flags: i64 = store
        .read(|c| {
            Ok(
                c.query_row("SELECT count(*) FROM messages_index_deferred", [], |r| {
                    r.get(0)
                })?,
            )
        })
        .unwrap();
    assert_eq!(flags, 0);
    // A plain connection (another program) inserting is indexed inline by the triggers.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', 'platypus', 1.0)",
        [&id],
    )
    .unwrap();
    let in_index: i64 = c
        .query_row(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'platypus'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(in_index, 1);
    assert_eq!(hits(&store, "wombat"), vec![id]);
    assert_eq!(hits(&store, "zanzibar"), ["a"]);
    word_index_is_sound(&store);
}
