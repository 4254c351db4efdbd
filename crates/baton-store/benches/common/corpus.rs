//! The benchmark corpus and queries every store benchmark uses (`baton-store`'s `store`,
//! `baton-pg`'s `pg_store`), so both backends are measured on the same data and questions.

#![allow(dead_code, clippy::expect_used)]

use baton_core::Message;
use baton_core::formats::load_file;
use baton_store::{NewSession, SearchQuery, SessionBatch, SessionStore, SqliteStore};
use criterion::{Criterion, Throughput};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const ENGLISH: &[&str] = &[
    "cargo test",
    "permission denied",
    "migration",
    "\"tool call\"",
    "refactor*",
    "README",
];
pub const CJK_LONG: &[&str] = &[
    "確認しました",
    "数据库",
    "設定ファイル",
    "股票价格",
    "电子邮件",
];
pub const CJK_SHORT: &[&str] = &["用户", "配置", "確認", "天气", "实现", "文件"];

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The conversations of the corpus, each a list of messages.
pub fn corpus() -> Vec<Vec<Message>> {
    let shared = repo_root().join("../shared/data/normalized");
    let (dir, label) = if shared.is_dir() {
        (shared, "../shared/data/normalized")
    } else {
        (repo_root().join("data/samples"), "data/samples")
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    let mut convs = Vec::new();
    for f in files {
        let Some(ext) = f.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        if ext != "jsonl" && ext != "json" {
            continue;
        }
        if let Ok(doc) = load_file(&f, None) {
            convs.extend(
                doc.conversations
                    .into_iter()
                    .map(|c| c.messages)
                    .filter(|m| !m.is_empty()),
            );
        }
    }
    let total: usize = convs.iter().map(Vec::len).sum();
    eprintln!(
        "corpus: {label}: {} conversations, {total} messages",
        convs.len()
    );
    convs
}

/// Stores conversations (cycling through the corpus, session ids `{tag}-{copy}-{i}`) until
/// `target` messages are stored, handing `write` transactions of about `batch` messages
/// (whole short sessions grouped together, long ones split). Returns the number stored.
pub fn fill(
    corpus: &[Vec<Message>],
    target: usize,
    batch: usize,
    tag: &str,
    write: &mut dyn FnMut(&[SessionBatch<'_>]),
) -> usize {
    let mut stored = 0;
    let mut pending: Vec<(String, &[Message])> = Vec::new();
    let mut pending_len = 0;
    let mut flush = |pending: &mut Vec<(String, &[Message])>| {
        let sessions: Vec<SessionBatch<'_>> = pending
            .iter()
            .map(|(id, messages)| SessionBatch {
                session: NewSession {
                    id: Some(id.clone()),
                    ..NewSession::new("bench")
                },
                messages,
                end_reason: None,
                ended_at: None,
                usage: None,
                title: None,
            })
            .collect();
        write(&sessions);
        pending.clear();
    };
    'outer: for copy in 0.. {
        for (i, conv) in corpus.iter().enumerate() {
            let id = format!("{tag}-{copy}-{i}");
            for chunk in conv.chunks(batch) {
                let take = chunk.len().min(target - stored);
                pending.push((id.clone(), &chunk[..take]));
                pending_len += take;
                stored += take;
                if pending_len >= batch || stored >= target {
                    flush(&mut pending);
                    pending_len = 0;
                }
                if stored >= target {
                    break 'outer;
                }
            }
        }
    }
    stored
}

/// [`fill`] as `sessions import` writes: the search index left for [`catch_up`].
pub fn fill_deferred(
    store: &dyn SessionStore,
    corpus: &[Vec<Message>],
    target: usize,
    batch: usize,
    tag: &str,
) -> usize {
    fill(corpus, target, batch, tag, &mut |sessions| {
        store
            .write_new_sessions_deferred(sessions)
            .expect("write batch");
    })
}

/// Indexes every waiting message, in the steps `baton sessions index` takes.
pub fn catch_up(store: &dyn SessionStore) {
    while store
        .catch_up_index(baton_store::deferred_index::CATCH_UP_CHUNK)
        .expect("catch up")
        > 0
    {}
}

/// The query classes every store benchmark reports.
pub const CLASSES: [(&str, &[&str]); 3] = [
    ("english", ENGLISH),
    ("cjk 3+ chars", CJK_LONG),
    ("cjk 1-2 chars", CJK_SHORT),
];

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Prints p50 / p99 / max per query class: each query run once to warm caches, then every
/// query of the class 20 times. `run` returns a query's hit count.
pub fn report_latencies(run: &dyn Fn(&str) -> usize) {
    eprintln!(
        "{:<14} {:>8} {:>9} {:>9} {:>9}  hits per query (slowest query)",
        "class", "samples", "p50 ms", "p99 ms", "max ms"
    );
    for (class, queries) in CLASSES {
        let hits: Vec<usize> = queries.iter().map(|q| run(q)).collect();
        let mut times = Vec::new();
        let mut slowest = (Duration::ZERO, "");
        for _ in 0..20 {
            for q in queries {
                let start = Instant::now();
                black_box(run(q));
                let t = start.elapsed();
                if t > slowest.0 {
                    slowest = (t, q);
                }
                times.push(t);
            }
        }
        times.sort();
        eprintln!(
            "{class:<14} {:>8} {:>9.2} {:>9.2} {:>9.2}  {hits:?} (slowest: {})",
            times.len(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(times[times.len() - 1]),
            slowest.1,
        );
    }
}

/// Runs one search for `text` with the benchmarks' limit (10 hits) and returns the hit count.
pub fn top10(store: &dyn SessionStore, text: &str) -> usize {
    let mut q = SearchQuery::new(text);
    q.limit = 10;
    store.search(&q).expect("search").len()
}

/// A criterion group `name` with one benchmark per query class, each running its queries.
pub fn bench_classes(c: &mut Criterion, name: &str, run: &dyn Fn(&str) -> usize) {
    let mut group = c.benchmark_group(name);
    group.sample_size(20);
    for (class, queries) in CLASSES {
        group.throughput(Throughput::Elements(queries.len() as u64));
        group.bench_function(class, |b| {
            b.iter(|| {
                for q in queries {
                    black_box(run(q));
                }
            })
        });
    }
    group.finish();
}

/// Criterion's total for `iters` ingests, each into a store `fresh(i)` makes (not timed),
/// timing only `ingest`; the store is dropped (and anything `fresh` set up for it is
/// removed by its `Drop`) outside the timed part.
pub fn time_fresh_ingests<S>(
    iters: u64,
    fresh: &dyn Fn(u64) -> S,
    ingest: &dyn Fn(&S) -> usize,
) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let store = fresh(i);
        let start = Instant::now();
        black_box(ingest(&store));
        total += start.elapsed();
        drop(store);
    }
    total
}

/// A new database in its own temporary folder, removed when dropped.
pub struct FreshDb {
    pub store: SqliteStore,
    _dir: tempfile::TempDir,
}

impl FreshDb {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path().join("state.db")).expect("open");
        FreshDb { store, _dir: dir }
    }
}
