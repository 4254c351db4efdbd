//! The PostgreSQL store on the same corpus and queries as `baton-store`'s `store` benchmark.
//!
//! Run: `eval "$(scripts/pg-test-server.sh)"` then `cargo bench -p baton-pg --bench pg_store`
//! (it reads `BATON_PG_TEST_URL`; without it there is nothing to measure and it says so).
//! `BATON_BENCH_MESSAGES` sets the search database's size (default 1,000,000); it is built
//! once into the schema `bench_<n>` and reused by later runs (`DROP SCHEMA` to rebuild).
//!
//! Reports:
//! - ingest: messages/s storing whole conversations by COPY, ~5,000 per transaction,
//!   criterion on 50,000-message ingests into a fresh schema: indexed in the write
//!   (`PgStore::write_batch`), indexed later (`write_new_sessions_deferred`, what `sessions
//!   import` does), and indexed later plus the whole catch-up; and once over the full build;
//! - search: p50/p99 per query class over the large database, as for SQLite;
//! - size: the schema's bytes per million messages (tables, TOAST and indexes).

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../../baton-store/benches/common/corpus.rs"]
mod corpus_data;
#[path = "../tests/pg/mod.rs"]
mod pg;

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::SessionStore;
use corpus_data::{bench_classes, catch_up, corpus, report_latencies, time_fresh_ingests, top10};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::{Duration, Instant};

const BATCH: usize = 5_000;
const INGEST_MESSAGES: usize = 50_000;

fn server() -> Option<String> {
    let url = std::env::var("BATON_PG_TEST_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if url.is_none() {
        eprintln!("note: BATON_PG_TEST_URL is not set; run eval \"$(scripts/pg-test-server.sh)\"");
    }
    url
}

fn schema_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// A store on a new schema, dropped with it.
struct FreshSchema {
    store: PgStore,
    url: String,
    schema: String,
}

impl FreshSchema {
    fn new(url: &str, schema: &str) -> Self {
        pg::execute(
            url,
            &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
        );
        let store = PgStore::connect(&schema_url(url, schema)).expect("connect");
        FreshSchema {
            store,
            url: url.to_string(),
            schema: schema.to_string(),
        }
    }
}

impl Drop for FreshSchema {
    fn drop(&mut self) {
        pg::execute(&self.url, &format!("DROP SCHEMA {} CASCADE", self.schema));
    }
}

/// [`corpus_data::fill`] into the PostgreSQL store with its COPY path.
fn fill(store: &PgStore, corpus: &[Vec<Message>], target: usize, tag: &str) -> usize {
    corpus_data::fill(corpus, target, BATCH, tag, &mut |sessions| {
        store.write_batch(sessions).expect("write batch");
    })
}

fn bench_ingest(c: &mut Criterion) {
    let Some(url) = server() else { return };
    let corpus = corpus();
    let mut group = c.benchmark_group("pg ingest");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.throughput(Throughput::Elements(INGEST_MESSAGES as u64));
    group.bench_function("50k messages, COPY, GIN on", |b| {
        b.iter_custom(|iters| {
            time_fresh_ingests(
                iters,
                &|i| FreshSchema::new(&url, &format!("ingest_{}_{i}", std::process::id())),
                &|fresh| fill(&fresh.store, &corpus, INGEST_MESSAGES, "ingest"),
            )
        });
    });
    group.bench_function("50k messages, COPY, indexed later", |b| {
        b.iter_custom(|iters| {
            time_fresh_ingests(
                iters,
                &|i| FreshSchema::new(&url, &format!("later_{}_{i}", std::process::id())),
                &|fresh| fill_deferred(&fresh.store, &corpus, INGEST_MESSAGES, "later"),
            )
        });
    });
    group.bench_function("50k messages, COPY then the index catch-up", |b| {
        b.iter_custom(|iters| {
            time_fresh_ingests(
                iters,
                &|i| FreshSchema::new(&url, &format!("caught_{}_{i}", std::process::id())),
                &|fresh| {
                    let stored = fill_deferred(&fresh.store, &corpus, INGEST_MESSAGES, "caught");
                    catch_up(&fresh.store);
                    stored
                },
            )
        });
    });
    group.finish();
}

/// [`fill`] with the search columns left for the indexer (what `sessions import` does).
fn fill_deferred(store: &PgStore, corpus: &[Vec<Message>], target: usize, tag: &str) -> usize {
    corpus_data::fill_deferred(store, corpus, target, BATCH, tag)
}

/// The large database: built into schema `bench_<n>` on first use, reused afterwards.
fn large_store(url: &str, corpus: &[Vec<Message>], n: usize) -> PgStore {
    let schema = format!("bench_{n}");
    pg::execute(url, &format!("CREATE SCHEMA IF NOT EXISTS {schema}"));
    let store = PgStore::connect(&schema_url(url, &schema)).expect("connect");
    let have = store.session_ids().expect("ids").len();
    if have > 0 {
        eprintln!("reusing schema {schema}");
        return store;
    }
    let start = Instant::now();
    let stored = fill(&store, corpus, n, "bench");
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "built {stored} messages in {secs:.1} s: {:.0} messages/s (COPY, both GIN indexes on)",
        stored as f64 / secs
    );
    pg::execute(url, &format!("VACUUM ANALYZE {schema}.messages"));
    store
}

fn bench_search(c: &mut Criterion) {
    let Some(url) = server() else { return };
    let corpus = corpus();
    let n: usize = std::env::var("BATON_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let store = large_store(&url, &corpus, n);
    let size = size_of_schema(&url, &format!("bench_{n}"));
    eprintln!(
        "database: {n} messages, {:.0} MB ({:.0} MB per million messages)",
        size as f64 / 1e6,
        size as f64 / 1e6 * 1e6 / n as f64
    );
    report_latencies(&|q| top10(&store, q));
    bench_classes(c, "pg search", &|q| top10(&store, q));
}

/// Bytes of a schema's tables with their TOAST and indexes.
fn size_of_schema(url: &str, schema: &str) -> u64 {
    pg::with_client(url, async |client| {
        let row = client
            .query_one(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relkind = 'r'",
                &[&schema],
            )
            .await
            .unwrap();
        u64::try_from(row.get::<_, i64>(0)).unwrap_or(0)
    })
}

criterion_group!(benches, bench_ingest, bench_search);
criterion_main!(benches);
