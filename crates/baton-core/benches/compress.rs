//! `compress` with the extractive summarizer on synthetic conversations of 1k, 10k and 100k
//! messages (~20% tool results of 2-50 KB) and on the longest real transcripts.
//!
//! Run: `cargo bench -p baton-core --bench compress`. Target: 10k messages (~5M tokens) in
//! under 50 ms on one core, growing linearly.

#[path = "common/compress_once.rs"]
mod compress_once;
use baton_core::formats::load_file;
use baton_core::message::{Message, ToolCall};
use baton_core::tokens::{RoughCounter, TokenCounter};
use compress_once::compress_once;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// A deterministic pseudo-random sequence (no `rand` dependency needed for a benchmark).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// `n` messages: system, then rounds of user → assistant(tool call) → tool result → assistant.
/// Tool results are 2-50 KB, skewed small, about a fifth of all messages.
fn synthetic(n: usize) -> Vec<Message> {
    let mut rng = Lcg(42);
    let mut out = vec![Message::system(
        "You are a coding agent. Follow the repository rules.",
    )];
    let mut i = 0;
    while out.len() < n {
        out.push(Message::user(format!(
            "Step {i}: please fix the failing test in module {i} and report back."
        )));
        let id = format!("call_{i}");
        let cmd = format!("{{\"command\":\"cargo test -p crate{i}\"}}");
        out.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id, "Bash", cmd,
        )]));
        // 2-50 KB, skewed to the small end (mean ≈ 10 KB), so 10,000 messages are ≈ 5M tokens.
        let u = (rng.next() % 1000) as f64 / 1000.0;
        let size = (2_000f64 * 25f64.powf(u * u)) as usize;
        let line = format!(
            "test module{i}::case ... FAILED at src/lib.rs:{}\n",
            rng.next() % 500
        );
        let body: String = line
            .repeat(size / line.len() + 1)
            .chars()
            .take(size)
            .collect();
        out.push(Message::tool(&id, format!("{body}\nexit code: 101")));
        out.push(Message::assistant(format!(
            "The test in module {i} fails at a boundary check; fixing it next."
        )));
        out.push(Message::user(format!("ok, continue with {i}")));
        i += 1;
    }
    out.truncate(n);
    out
}

fn bench_synthetic(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot build runtime: {e}");
            return;
        }
    };
    let mut group = c.benchmark_group("compress synthetic");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for n in [1_000usize, 10_000, 100_000] {
        let messages = synthetic(n);
        let bytes: usize = messages.iter().map(|m| m.text().len()).sum();
        let tokens: usize = messages.iter().map(|m| RoughCounter.count_message(m)).sum();
        eprintln!(
            "{n} messages: {:.1} MB of text, ~{:.1}M tokens",
            bytes as f64 / 1e6,
            tokens as f64 / 1e6
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &messages, |b, m| {
            b.iter(|| black_box(compress_once(&runtime, m)))
        });
    }
    group.finish();
}

fn bench_real(c: &mut Criterion) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/normalized/spotter-claude-code.jsonl");
    let Ok(doc) = load_file(&path, None) else {
        eprintln!(
            "note: {} not found; skipping the real-transcript benchmark",
            path.display()
        );
        return;
    };
    let mut convs = doc.conversations;
    convs.sort_by_key(|c| std::cmp::Reverse(c.messages.len()));
    let mut group = c.benchmark_group("compress real");
    group.sample_size(20);
    for conv in convs.iter().take(2) {
        let n = conv.messages.len();
        group.bench_with_input(
            BenchmarkId::new("spotter-claude-code", n),
            &conv.messages,
            |b, m| b.iter(|| black_box(compress_once(&runtime, m))),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_synthetic, bench_real);
criterion_main!(benches);
