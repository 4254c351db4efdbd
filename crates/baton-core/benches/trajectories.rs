//! Trajectory compression throughput (records/s, MB/s) on the real corpus, replicated to a
//! temp file, with the extractive summarizer, from 1 thread to all cores; prints peak memory.
//!
//! Data: `../shared/data/normalized/*.jsonl` (OpenAI records; `$BATON_SHARED_DATA` overrides
//! the location) plus the committed samples (glaive ShareGPT, tau-bench OpenAI); the samples
//! alone when the corpus is absent. Size: `BATON_TRAJ_BENCH_MB` (default 16; the README's
//! figures use 1024).
//!
//! Also the shared benchmark input `sharegpt_x6` (`../shared/bench`; 5,310 ShareGPT records,
//! 78 MB), all cores, the input the reference design's 6.5 s was taken on; skipped with a
//! note without `../shared`.
//!
//! `cargo bench -p baton-core --bench trajectories`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::summary::extractive::ExtractiveSummarizer;
use baton_core::tokens::Encoding;
use baton_core::trajectory::{
    Pipeline, PipelineOptions, StopSignal, TrajectoryCompressor, TrajectoryConfig,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[path = "common/shared_inputs.rs"]
mod shared_inputs;

fn corpus_lines() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = std::env::var_os("BATON_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data"))
        .join("normalized");
    let mut lines = Vec::new();
    match std::fs::read_dir(&shared) {
        Ok(dir) => {
            for entry in dir.flatten() {
                let p = entry.path();
                if p.extension().is_some_and(|e| e == "jsonl") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    lines.extend(text.lines().map(str::to_string));
                }
            }
        }
        Err(_) => eprintln!(
            "note: {} is absent; benchmarking data/samples only",
            shared.display()
        ),
    }
    let samples = root.join("data/samples");
    let glaive: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(samples.join("glaive-toolcall-zh.json")).unwrap(),
    )
    .unwrap();
    lines.extend(glaive.iter().map(|v| v.to_string()));
    let tau = std::fs::read_to_string(samples.join("tau-bench-airline.jsonl")).unwrap();
    lines.extend(tau.lines().map(str::to_string));
    lines
}

/// Writes the corpus repeatedly until the file reaches `mb` MB; returns (path, records).
fn replicated(mb: u64) -> (tempfile::TempPath, u64) {
    let lines = corpus_lines();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let (mut bytes, mut records) = (0u64, 0u64);
    'fill: loop {
        for l in &lines {
            file.write_all(l.as_bytes()).unwrap();
            file.write_all(b"\n").unwrap();
            bytes += l.len() as u64 + 1;
            records += 1;
            if bytes >= mb << 20 {
                break 'fill;
            }
        }
    }
    file.flush().unwrap();
    (file.into_temp_path(), records)
}

fn run_once(path: &std::path::Path, threads: usize, rt: &tokio::runtime::Runtime) -> u64 {
    let compressor = TrajectoryCompressor::new(
        TrajectoryConfig::default(),
        Encoding::O200k.counter(),
        Arc::new(ExtractiveSummarizer),
    );
    let pipeline = Pipeline::new(
        compressor,
        PipelineOptions {
            threads,
            ..PipelineOptions::default()
        },
    )
    .unwrap();
    let input = BufReader::new(std::fs::File::open(path).unwrap());
    let summary = rt
        .block_on(pipeline.run(
            input,
            std::io::sink(),
            None::<std::io::Sink>,
            &StopSignal::new(),
            &mut |_, _| {},
        ))
        .unwrap();
    summary.lines_written
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(c: &mut Criterion) {
    let mb: u64 = std::env::var("BATON_TRAJ_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let (path, records) = replicated(mb);
    let bytes = std::fs::metadata(&path).unwrap().len();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _ = Encoding::O200k
        .counter()
        .count_text("warm up the BPE tables");
    let mut group = c.benchmark_group("trajectories");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    for threads in 1..=cores {
        group.bench_function(format!("compress_{mb}MB_{threads}_threads"), |b| {
            b.iter(|| assert_eq!(run_once(&path, threads, &rt), records));
        });
        let start = std::time::Instant::now();
        run_once(&path, threads, &rt);
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "trajectories: {threads} thread(s): {records} records, {:.1} MB in {secs:.2} s = {:.0} records/s, {:.1} MB/s",
            bytes as f64 / 1e6,
            records as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
    }
    group.finish();
    if let Some(kb) = peak_rss_kb() {
        eprintln!(
            "trajectories: peak RSS (VmHWM) {:.1} MB over a {:.0} MB input",
            kb as f64 / 1024.0,
            bytes as f64 / 1e6
        );
    }
}

/// `sharegpt_x6` with every core, as `baton trajectories compress` runs by default.
fn bench_shared(c: &mut Criterion) {
    let Some(dir) = shared_inputs::dir() else {
        return;
    };
    let Some(path) = shared_inputs::input(&dir, "sharegpt_x6") else {
        return;
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("trajectories shared");
    group.sample_size(10);
    group.throughput(Throughput::Elements(5_310));
    group.bench_function("sharegpt_x6", |b| {
        b.iter(|| assert_eq!(run_once(&path, cores, &rt), 5_310));
    });
    group.finish();
}

criterion_group!(benches, bench, bench_shared);
criterion_main!(benches);
