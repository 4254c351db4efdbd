//! Ingest and search on the shared benchmark inputs (`../shared/bench/make_inputs.py`), the
//! inputs the reference design's figures were taken on, so the README can put ours beside
//! them. Skipped with a note when `../shared` is absent.
//!
//! Run: `cargo bench -p baton-store --bench shared_inputs`.
//!
//! Reports:
//! - ingest: `normalized_all` (885 conversations, 12,977 messages) into a fresh database per
//!   sample, criterion: indexed in each write (500-message transactions), and as `sessions
//!   import` writes (5,000-message transactions, index after: the rows alone, and the rows
//!   plus the catch-up); and `corpus_x16` (14,160 conversations, 207,632 messages) once, with
//!   the database's size per million messages;
//! - search: p50/p99 per query class on the `corpus_x16` database, plus criterion per class.

#![allow(clippy::expect_used)]

#[path = "../../baton-core/benches/common/shared_inputs.rs"]
mod shared_inputs;

#[path = "common/corpus.rs"]
mod corpus_data;

use baton_core::Message;
use baton_core::formats::load_file;
use baton_store::SqliteStore;
use corpus_data::{FreshDb, bench_classes, report_latencies, time_fresh_ingests, top10};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
use std::time::{Duration, Instant};

const BATCH: usize = 500;
/// Messages per transaction of `sessions import`.
const IMPORT_BATCH: usize = 5_000;

/// The conversations of input `name`.
fn conversations(dir: &Path, name: &str) -> Option<Vec<Vec<Message>>> {
    let path = shared_inputs::input(dir, name)?;
    let doc = load_file(&path, None).ok()?;
    Some(
        doc.conversations
            .into_iter()
            .map(|c| c.messages)
            .filter(|m| !m.is_empty())
            .collect(),
    )
}

/// Stores every message of `convs` once, in transactions of about [`BATCH`] messages.
fn ingest(store: &SqliteStore, convs: &[Vec<Message>], tag: &str) -> usize {
    let total = convs.iter().map(Vec::len).sum();
    corpus_data::fill(convs, total, BATCH, tag, &mut |sessions| {
        store.write_batch(sessions).expect("write batch");
    })
}

/// Stores every message of `convs` as `sessions import` does: transactions of about
/// [`IMPORT_BATCH`] messages, the search index left for the catch-up.
fn ingest_deferred(store: &SqliteStore, convs: &[Vec<Message>], tag: &str) -> usize {
    let total = convs.iter().map(Vec::len).sum();
    corpus_data::fill_deferred(store, convs, total, IMPORT_BATCH, tag)
}

fn bench(c: &mut Criterion) {
    let Some(dir) = shared_inputs::dir() else {
        return;
    };
    if let Some(convs) = conversations(&dir, "normalized_all") {
        let n: usize = convs.iter().map(Vec::len).sum();
        let mut group = c.benchmark_group("ingest shared");
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(20));
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function("normalized_all", |b| {
            b.iter_custom(|iters| {
                time_fresh_ingests(iters, &|_| FreshDb::new(), &|db| {
                    ingest(&db.store, &convs, "n")
                })
            });
        });
        group.bench_function(
            "normalized_all, indexed later (import --index-later)",
            |b| {
                b.iter_custom(|iters| {
                    time_fresh_ingests(iters, &|_| FreshDb::new(), &|db| {
                        ingest_deferred(&db.store, &convs, "n")
                    })
                });
            },
        );
        group.bench_function("normalized_all, rows then the catch-up (import)", |b| {
            b.iter_custom(|iters| {
                time_fresh_ingests(iters, &|_| FreshDb::new(), &|db| {
                    let stored = ingest_deferred(&db.store, &convs, "n");
                    corpus_data::catch_up(&db.store);
                    stored
                })
            });
        });
        group.finish();
    }
    let Some(convs) = conversations(&dir, "corpus_x16") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("state.db");
    let store = SqliteStore::open(&path).expect("open");
    let start = Instant::now();
    let stored = ingest(&store, &convs, "x16");
    let secs = start.elapsed().as_secs_f64();
    store
        .read(|c| {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        })
        .expect("checkpoint");
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "corpus_x16: {stored} messages in {secs:.1} s, {:.0} messages/s; {:.2} GB per million messages",
        stored as f64 / secs,
        bytes as f64 / 1e9 * 1e6 / stored as f64
    );
    report_latencies(&|q| top10(&store, q));
    bench_classes(c, "search shared corpus_x16", &|q| top10(&store, q));
}

criterion_group!(benches, bench);
criterion_main!(benches);
