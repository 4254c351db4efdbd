//! Messages stored before they are indexed (`write_new_sessions_deferred`, what `sessions
//! import` does on PostgreSQL): search finds them while they wait, with the indexes' own
//! semantics (a word matches whole words, a CJK term any occurrence), the indexer brings the
//! backlog to zero in bounded steps, several indexers share it without indexing a row twice,
//! and the results are the same before and after.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::{NewSession, SearchQuery, SessionBatch, SessionStore};

fn batch<'a>(id: &str, messages: &'a [Message]) -> SessionBatch<'a> {
    SessionBatch {
        end_reason: Some("imported"),
        ..pg::new_session(id, "import", messages)
    }
}

/// The message ids a query finds, sorted.
fn found(store: &PgStore, text: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = store
        .search(&SearchQuery::new(text))
        .unwrap()
        .into_iter()
        .map(|h| h.message_id)
        .collect();
    ids.sort_unstable();
    ids
}

fn corpus() -> (Vec<Message>, Vec<Message>) {
    let first = vec![
        Message::user("please run cargo test --workspace"),
        Message::assistant("the tests are testing the parser"),
        Message::user("把用户配置迁移到数据库"),
        Message::assistant("確認しました。設定を更新します"),
    ];
    let second = vec![
        Message::user("deploy the service after cargo build"),
        Message::assistant("配置文件已更新 config_path 完成"),
    ];
    (first, second)
}

const QUERIES: &[&str] = &[
    "cargo",
    "test",
    "testing",
    "\"cargo test\"",
    "cargo AND workspace",
    "cargo NOT deploy",
    "配置",
    "用户配置",
    "確認",
    "config_path",
    "parse*",
];

#[test]
fn waiting_messages_are_found_with_the_index_semantics_before_and_after_the_catch_up() {
    let Some(store) = pg::fresh_store() else {
        return;
    };
    let (first, second) = corpus();
    store
        .write_new_sessions_deferred(&[batch("a", &first), batch("b", &second)])
        .unwrap();
    assert_eq!(store.index_backlog().unwrap(), 6);
    let waiting: Vec<Vec<i64>> = QUERIES.iter().map(|q| found(&store, q)).collect();
    // Whole words, as the index would match: `test` is not found inside `tests`/`testing`.
    assert_eq!(waiting[1].len(), 1, "test: {:?}", waiting[1]);
    assert_eq!(waiting[0].len(), 2, "cargo");
    assert_eq!(waiting[4].len(), 1, "cargo AND workspace");
    assert_eq!(waiting[5].len(), 1, "cargo NOT deploy");
    assert_eq!(waiting[6].len(), 2, "配置 in both sessions");
    assert_eq!(waiting[8].len(), 1, "確認");
    assert_eq!(waiting[10].len(), 1, "parse* as a prefix");

    // Bounded steps, oldest first, until nothing waits.
    assert_eq!(store.catch_up_index(4).unwrap(), 4);
    assert_eq!(store.index_backlog().unwrap(), 2);
    let halfway: Vec<Vec<i64>> = QUERIES.iter().map(|q| found(&store, q)).collect();
    assert_eq!(halfway, waiting, "half indexed, half waiting");
    assert_eq!(store.catch_up_index(4).unwrap(), 2);
    assert_eq!(store.catch_up_index(4).unwrap(), 0);
    assert_eq!(store.index_backlog().unwrap(), 0);
    let indexed: Vec<Vec<i64>> = QUERIES.iter().map(|q| found(&store, q)).collect();
    assert_eq!(indexed, waiting, "indexed");

    // The same messages written the inline way give the same results.
    let inline = pg::fresh_store().unwrap();
    inline
        .write_new_sessions(&[batch("a", &first), batch("b", &second)])
        .unwrap();
    assert_eq!(inline.index_backlog().unwrap(), 0);
    let counts = |r: &[Vec<i64>]| r.iter().map(Vec::len).collect::<Vec<_>>();
    let inline_found: Vec<Vec<i64>> = QUERIES.iter().map(|q| found(&inline, q)).collect();
    assert_eq!(counts(&inline_found), counts(&indexed));
}

#[test]
fn live_appends_are_indexed_at_once_and_filters_apply_to_waiting_messages() {
    let Some(store) = pg::fresh_store() else {
        return;
    };
    let (first, second) = corpus();
    store
        .write_new_sessions_deferred(&[batch("a", &first)])
        .unwrap();
    let live = store.create_session(NewSession::new("cli")).unwrap();
    store.append_messages(&live, &second).unwrap();
    assert_eq!(store.index_backlog().unwrap(), 4, "only the import waits");
    let mut q = SearchQuery::new("cargo");
    q.sources = vec!["cli".into()];
    let hits = store.search(&q).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, live);
    q.sources = vec!["import".into()];
    let hits = store.search(&q).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, "a");
    assert!(hits[0].snippet.contains("cargo"), "{}", hits[0].snippet);
}

#[test]
fn concurrent_indexers_share_the_backlog_and_index_each_message_once() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    let messages: Vec<Message> = (0..3_000)
        .map(|i| Message::user(format!("message number {i} about topic{}", i % 7)))
        .collect();
    let batches: Vec<(String, &[Message])> = messages
        .chunks(100)
        .enumerate()
        .map(|(k, c)| (format!("s{k}"), c))
        .collect();
    let sessions: Vec<SessionBatch<'_>> = batches.iter().map(|(id, m)| batch(id, m)).collect();
    store.write_new_sessions_deferred(&sessions).unwrap();
    assert_eq!(store.index_backlog().unwrap(), 3_000);
    let indexed: Vec<usize> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let url = url.clone();
                scope.spawn(move || {
                    let store = PgStore::connect(&url).unwrap();
                    let mut total = 0;
                    loop {
                        let n = store.catch_up_index(250).unwrap();
                        if n == 0 {
                            return total;
                        }
                        total += n;
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(indexed.iter().sum::<usize>(), 3_000, "{indexed:?}");
    assert_eq!(store.index_backlog().unwrap(), 0);
    let mut q = SearchQuery::new("topic3");
    q.limit = 1_000;
    assert_eq!(store.search(&q).unwrap().len(), 429);
}
