#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{NewSession, SessionBatch, SessionStore, SqliteStore};
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

/// A conversation of `n` messages for the import tests.
fn conversation(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i}"))
            } else {
                Message::assistant(format!("answer {i}"))
            }
        })
        .collect()
}

/// Sessions and messages in the file, counted by plain SQL.
fn row_counts(store: &SqliteStore) -> (i64, i64) {
    store
        .read(|c| {
            let n = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0));
            Ok((
                n("SELECT COUNT(*) FROM sessions")?,
                n("SELECT COUNT(*) FROM messages")?,
            ))
        })
        .unwrap()
}

#[test]
fn connections_importing_the_same_sessions_at_once_store_each_once() {
    // Issue #13 item 3: the "already imported" decision is taken inside the write transaction,
    // so every trial ends with each session stored once, by exactly one of the racers.
    const THREADS: usize = 6;
    const TRIALS: usize = 25;
    let first = conversation(40);
    let second = conversation(7);
    for trial in 0..TRIALS {
        let (_dir, path) = temp_db();
        drop(SqliteStore::open(&path).unwrap());
        let start = std::sync::Arc::new(std::sync::Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (path, start) = (path.clone(), start.clone());
                let (first, second) = (first.clone(), second.clone());
                std::thread::spawn(move || {
                    let store = SqliteStore::open(&path).unwrap();
                    let batch =
                        [("imp-a", &first), ("imp-b", &second)].map(|(id, msgs)| SessionBatch {
                            session: NewSession {
                                id: Some(id.to_string()),
                                ..NewSession::new("import")
                            },
                            messages: msgs,
                            end_reason: Some("imported"),
                            ended_at: None,
                            usage: None,
                            title: None,
                        });
                    start.wait();
                    store
                        .write_new_sessions(&batch)
                        .unwrap_or_else(|e| panic!("trial {trial} thread {t}: {e}"))
                })
            })
            .collect();
        let results: Vec<Vec<(String, bool)>> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (k, id) in ["imp-a", "imp-b"].iter().enumerate() {
            let winners = results.iter().filter(|r| r[k] == (id.to_string(), true));
            assert_eq!(
                winners.count(),
                1,
                "trial {trial}: {id} stored by {results:?}"
            );
        }
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(row_counts(&store), (2, 47), "trial {trial}");
        assert_eq!(
            store.get_session("imp-a").unwrap().unwrap().message_count,
            40
        );
        assert_eq!(store.messages("imp-b").unwrap(), second, "trial {trial}");
    }
}

#[test]
fn the_same_id_twice_in_one_batch_is_stored_once() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let msgs = conversation(3);
    let one = SessionBatch {
        session: NewSession {
            id: Some("twice".to_string()),
            ..NewSession::new("import")
        },
        messages: &msgs,
        end_reason: None,
        ended_at: None,
        usage: None,
        title: None,
    };
    let stored = store.write_new_sessions(&[one.clone(), one]).unwrap();
    let flags: Vec<bool> = stored.iter().map(|(_, s)| *s).collect();
    assert_eq!(flags, [true, false]);
    assert_eq!(row_counts(&store), (1, 3));
}
