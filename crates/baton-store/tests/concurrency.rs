#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{SessionStore, SqliteStore};
use common::temp_db;

#[test]
fn two_connections_appending_500_messages_each_lose_nothing() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    common::session(&store, "shared");
    drop(store);

    let handles: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let store = SqliteStore::open(&path).unwrap();
                for i in 0..500 {
                    // Any error (including "database is locked") fails the test.
                    store
                        .append_messages("shared", &[Message::user(format!("t{t} m{i}"))])
                        .unwrap_or_else(|e| panic!("thread {t} message {i}: {e}"));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }

    let store = SqliteStore::open(&path).unwrap();
    let s = store.get_session("shared").unwrap().unwrap();
    assert_eq!(s.message_count, 1000);
    let msgs = store.messages("shared").unwrap();
    assert_eq!(msgs.len(), 1000);
    for t in 0..2 {
        let mine: Vec<String> = msgs
            .iter()
            .map(Message::text)
            .filter(|x| x.starts_with(&format!("t{t} ")))
            .collect();
        let expected: Vec<String> = (0..500).map(|i| format!("t{t} m{i}")).collect();
        assert_eq!(
            mine, expected,
            "thread {t}'s messages out of order or missing"
        );
    }
}
