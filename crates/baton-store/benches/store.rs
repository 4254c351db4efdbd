//! Session-store throughput and search latency on the real corpus, replicated.
//!
//! Run: `cargo bench -p baton-store --bench store`. `BATON_BENCH_MESSAGES` sets the size of the
//! search database (default 1,000,000). It is built once into `target/bench-data/` and reused
//! by later runs (delete the file to rebuild).
//!
//! Reports:
//! - ingest: messages/s storing whole conversations in batched transactions (about 500
//!   messages each, `SqliteStore::write_batch`) with every full-text trigger and the CJK index on, measured by criterion on
//!   50,000-message ingests, and once over the full build;
//! - search: p50/p99 latency per query class over the large database (English words and
//!   phrases, CJK of 3+ characters, 1-2 character CJK), plus criterion's estimate per class;
//! - size: database bytes per million messages.
//!
//! Corpus: every conversation in `../shared/data/normalized` when present, else the samples in
//! `data/samples` (the figures in the README come from the full corpus).

// A benchmark that cannot set up its database has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use baton_core::Message;
use baton_store::SqliteStore;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const BATCH: usize = 500;
const INGEST_MESSAGES: usize = 50_000;

#[path = "common/corpus.rs"]
mod corpus_data;
use corpus_data::{
    FreshDb, bench_classes, corpus, repo_root, report_latencies, time_fresh_ingests, top10,
};

/// [`corpus_data::fill`] into a SQLite store with `write_batch`.
fn fill(store: &SqliteStore, corpus: &[Vec<Message>], target: usize) -> usize {
    corpus_data::fill(corpus, target, BATCH, "bench", &mut |sessions| {
        store.write_batch(sessions).expect("write batch");
    })
}

fn bench_ingest(c: &mut Criterion) {
    let corpus = corpus();
    if corpus.is_empty() {
        eprintln!("note: no corpus found; skipping the ingest benchmark");
        return;
    }
    let mut group = c.benchmark_group("store ingest");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(INGEST_MESSAGES as u64));
    group.bench_function("50k messages, FTS on", |b| {
        b.iter_custom(|iters| {
            time_fresh_ingests(iters, &|_| FreshDb::new(), &|db| {
                fill(&db.store, &corpus, INGEST_MESSAGES)
            })
        });
    });
    group.finish();
}

/// The large database, built on first use and reused afterwards.
fn large_db(corpus: &[Vec<Message>], n: usize) -> PathBuf {
    let dir = repo_root().join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench-data dir");
    let path = dir.join(format!("store-{n}-v{}.db", baton_store::SCHEMA_VERSION));
    if path.exists() {
        eprintln!("reusing {}", path.display());
        return path;
    }
    let partial = dir.join("store-building.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    let store = SqliteStore::open(&partial).expect("open");
    let start = Instant::now();
    let stored = fill(&store, corpus, n);
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "built {stored} messages in {secs:.1} s: {:.0} messages/s (FTS triggers and CJK index on)",
        stored as f64 / secs
    );
    store
        .read(|c| {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        })
        .expect("checkpoint");
    drop(store);
    std::fs::rename(&partial, &path).expect("rename");
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    path
}

fn bench_search(c: &mut Criterion) {
    let corpus = corpus();
    if corpus.is_empty() {
        eprintln!("note: no corpus found; skipping the search benchmark");
        return;
    }
    let n: usize = std::env::var("BATON_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let path = large_db(&corpus, n);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "database: {n} messages, {:.0} MB ({:.0} MB per million messages)",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 * 1e6 / n as f64
    );
    let store = SqliteStore::open_read_only(&path).expect("open");
    report_latencies(&|q| top10(&store, q));
    bench_classes(c, "store search", &|q| top10(&store, q));
}

criterion_group!(benches, bench_ingest, bench_search);
criterion_main!(benches);
