//! A fresh PostgreSQL schema per test on the server `BATON_PG_TEST_URL` names.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::{NewSession, SessionBatch};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The test server's URL; `None` (with a note) when it is not configured, a panic when CI
/// requires it.
pub fn url() -> Option<String> {
    match std::env::var("BATON_PG_TEST_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var_os("BATON_REQUIRE_PG").is_some() {
                panic!(
                    "BATON_REQUIRE_PG is set but BATON_PG_TEST_URL is not: run scripts/pg-test-server.sh"
                );
            }
            eprintln!(
                "note: PostgreSQL test skipped; to run it: eval \"$(scripts/pg-test-server.sh)\""
            );
            None
        }
    }
}

/// A new, empty schema on the test server, and the URL that makes it the search path.
pub fn fresh_schema() -> Option<String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let url = url()?;
    let schema = format!(
        "t_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    execute(&url, &format!("CREATE SCHEMA {schema}"));
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-csearch_path%3D{schema}"))
}

/// Runs `f` with a plain client of the server at `url`, outside any store.
pub fn with_client<T>(url: &str, f: impl AsyncFnOnce(&tokio_postgres::Client) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect to the test server");
        tokio::spawn(connection);
        f(&client).await
    })
}

/// Runs `sql` (one or more statements) on the server at `url`, outside any store.
pub fn execute(url: &str, sql: &str) {
    with_client(url, async |client| client.batch_execute(sql).await.unwrap());
}

pub fn fresh_store() -> Option<PgStore> {
    let url = fresh_schema()?;
    Some(PgStore::connect(&url).expect("connect PgStore"))
}

/// The first column of the first row of `sql` (a count, a size) on the server at `url`.
pub fn query_i64(url: &str, sql: &str) -> i64 {
    with_client(url, async |client| {
        client.query_one(sql, &[]).await.unwrap().get(0)
    })
}

/// A batch storing `messages` as the new session `id` from `source`, nothing else set.
pub fn new_session<'a>(id: &str, source: &str, messages: &'a [Message]) -> SessionBatch<'a> {
    SessionBatch {
        session: NewSession {
            id: Some(id.into()),
            ..NewSession::new(source)
        },
        messages,
        end_reason: None,
        ended_at: None,
        usage: None,
        title: None,
    }
}
