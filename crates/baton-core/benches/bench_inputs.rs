//! Compress, exact token counting, and parsing and writing the files, on the shared
//! benchmark inputs (real and real-derived transcripts), the inputs the reference design's
//! figures were taken on, so the README can put ours beside them. Skipped with a note when
//! `../shared` is absent.
//!
//! Run: `cargo bench -p baton-core --bench bench_inputs`.

#[path = "common/shared_inputs.rs"]
mod shared_inputs;

#[path = "common/compress_once.rs"]
mod compress_once;
use baton_core::formats::load_file;
use baton_core::message::Message;
use baton_core::tokens::Encoding;
use compress_once::compress_once;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn messages(dir: &std::path::Path, name: &str) -> Option<Vec<Message>> {
    let path = shared_inputs::input(dir, name)?;
    let doc = load_file(&path, None).ok()?;
    Some(
        doc.conversations
            .into_iter()
            .flat_map(|c| c.messages)
            .collect(),
    )
}

fn bench_compress(c: &mut Criterion) {
    let Some(dir) = shared_inputs::dir() else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return;
    };
    let mut group = c.benchmark_group("compress shared");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for name in [
        "real1",
        "real2",
        "real3",
        "real4",
        "real5",
        "synth_1k",
        "synth_10k",
        "synth_100k",
    ] {
        let Some(m) = messages(&dir, name) else {
            continue;
        };
        if name == "synth_100k" {
            // A pass takes a few hundred milliseconds: criterion's fewest samples.
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(10));
        }
        group.throughput(Throughput::Elements(m.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &m, |b, m| {
            b.iter(|| black_box(compress_once(&runtime, m)))
        });
    }
    group.finish();
}

fn bench_count(c: &mut Criterion) {
    let Some(dir) = shared_inputs::dir() else {
        return;
    };
    let mut group = c.benchmark_group("exact o200k count");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let counter = Encoding::O200k.counter();
    for name in ["normalized_all", "synth_10k"] {
        let Some(m) = messages(&dir, name) else {
            continue;
        };
        group.throughput(Throughput::Elements(m.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &m, |b, m| {
            b.iter(|| black_box(m.iter().map(|x| counter.count_message(x)).sum::<usize>()))
        });
    }
    group.finish();
}

/// Parsing a file's text into its document and writing the document back: the two ends of
/// every `baton compress` process (its parsing floor).
fn bench_load_and_write(c: &mut Criterion) {
    let Some(dir) = shared_inputs::dir() else {
        return;
    };
    let mut group = c.benchmark_group("file shared");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for name in ["real1", "real3", "synth_10k", "normalized_all"] {
        let Some(path) = shared_inputs::input(&dir, name) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(doc) = baton_core::formats::parse_document(&text, None) else {
            continue;
        };
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("parse", name), &text, |b, text| {
            b.iter(|| black_box(baton_core::formats::parse_document(text, None).is_ok()))
        });
        let mut out = Vec::with_capacity(text.len() + (1 << 20));
        group.bench_with_input(BenchmarkId::new("write", name), &doc, |b, doc| {
            b.iter(|| {
                out.clear();
                black_box(doc.write_text(&mut out).is_ok())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_compress, bench_count, bench_load_and_write);
criterion_main!(benches);
