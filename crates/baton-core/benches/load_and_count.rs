//! Loading + exact token counting of the shared corpus (`../shared/data/normalized`), or of
//! the repository's `data/samples` when the corpus is absent (a fresh clone).
//!
//! Run: `cargo bench -p baton-core --bench load_and_count`. Throughput is in bytes of input
//! files, so criterion reports MB/s directly.

use baton_core::formats::parse_document;
use baton_core::tokens::{Encoding, RoughCounter, estimate_conversation};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus_files() -> (String, Vec<(PathBuf, String)>) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = manifest.join("../../../shared/data/normalized");
    let (label, dir) = if shared.is_dir() {
        ("shared corpus", shared)
    } else {
        eprintln!("note: ../shared/data/normalized not found; benchmarking data/samples instead");
        ("samples", manifest.join("../../data/samples"))
    };
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("jsonl" | "json")
                    )
                })
                .filter(|p| p.file_name().is_some_and(|n| n != "STATS.json"))
                .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    (label.to_string(), files)
}

fn bench(c: &mut Criterion) {
    let (label, files) = corpus_files();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut group = c.benchmark_group(format!("corpus ({label}, {} files)", files.len()));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));

    group.bench_function("load", |b| {
        b.iter(|| {
            for (_, text) in &files {
                black_box(parse_document(text, None).ok());
            }
        })
    });
    group.bench_function("load + count o200k", |b| {
        let counter = Encoding::O200k.counter();
        b.iter(|| {
            let mut total = 0usize;
            for (_, text) in &files {
                if let Ok(doc) = parse_document(text, None) {
                    for conv in &doc.conversations {
                        total += estimate_conversation(counter, conv).total();
                    }
                }
            }
            black_box(total)
        })
    });
    group.bench_function("load + count rough", |b| {
        b.iter(|| {
            let mut total = 0usize;
            for (_, text) in &files {
                if let Ok(doc) = parse_document(text, None) {
                    for conv in &doc.conversations {
                        total += estimate_conversation(&RoughCounter, conv).total();
                    }
                }
            }
            black_box(total)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
