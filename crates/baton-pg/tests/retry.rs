//! A write that PostgreSQL aborts as a deadlock victim is retried from the start: the caller
//! sees success, and nothing of the aborted attempt is left behind (no doubled messages).
//!
//! The deadlock is real. A second connection share-locks session `b`, the store's batch locks
//! its sessions in id order, `a` and then waits for `b`, and the second connection then
//! updates `a`. The second connection
//! waits 10 s before checking for a deadlock, the store's backend the default 1 s, so the
//! store's transaction is the one PostgreSQL aborts (SQLSTATE 40P01).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::{NewSession, SessionBatch, SessionStore};
use std::time::Duration;

fn batch<'a>(id: &str, messages: &'a [Message]) -> SessionBatch<'a> {
    pg::new_session(id, "cli", messages)
}

async fn deadlocks(client: &tokio_postgres::Client) -> i64 {
    client
        .query_one(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[test]
fn a_deadlock_victim_is_retried_and_written_once() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    for id in ["a", "b"] {
        store
            .create_session(NewSession {
                id: Some(id.into()),
                ..NewSession::new("cli")
            })
            .unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (client, before) = runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let before = deadlocks(&client).await;
        client
            .batch_execute(
                "BEGIN; SET LOCAL deadlock_timeout = '10s'; \
                 SELECT 1 FROM sessions WHERE id = 'b' FOR SHARE",
            )
            .await
            .unwrap();
        (client, before)
    });

    // The store's batch: locks `a`, then waits on `b`.
    let writer = std::thread::spawn(move || {
        let one = [Message::user("hello")];
        let result = store.write_batch(&[batch("b", &one), batch("a", &one)]);
        (store, result)
    });
    std::thread::sleep(Duration::from_millis(500));
    runtime.block_on(async {
        // Waits for `a`, held by the store: a deadlock, which the store's backend detects. Had
        // this connection been the victim instead, this statement would fail.
        client
            .batch_execute("UPDATE sessions SET model = 'other writer' WHERE id = 'a'")
            .await
            .unwrap();
        client.batch_execute("COMMIT").await.unwrap();
    });
    let (store, result) = writer.join().unwrap();
    assert_eq!(
        store.get_session("a").unwrap().unwrap().model.as_deref(),
        Some("other writer"),
        "the other writer's change, committed while the store waited to retry, is kept"
    );
    result.expect("the retried batch succeeds");

    for id in ["a", "b"] {
        let s = store.get_session(id).unwrap().unwrap();
        assert_eq!(s.message_count, 1, "{id}: written once");
        assert_eq!(store.messages(id).unwrap().len(), 1, "{id}");
    }
    // Statistics reach the server's counters a moment after the transaction ends.
    let after = runtime.block_on(async {
        for _ in 0..50 {
            let n = deadlocks(&client).await;
            if n > before {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        before
    });
    assert!(after > before, "a deadlock happened ({before} -> {after})");
}
