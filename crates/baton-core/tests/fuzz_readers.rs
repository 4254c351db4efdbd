//! Property fuzzing of every file reader (the `cargo test` companion of `fuzz/`): arbitrary
//! bytes, and structured mutations of real files (a node replaced by another JSON type, a
//! string swapped for odd text, the text cut anywhere), through conversation loading in every
//! forced format, conversion and writing, trajectory records and arrays, and the trajectory
//! compressor. Any panic fails the case. `PROPTEST_CASES` raises the case count (default 48).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::formats::{self, Dialect, FormatName};
use baton_core::summary::extractive::{ExtractiveSummarizer, summarize_extractively};
use baton_core::tokens::Encoding;
use baton_core::trajectory::source::{ArraySource, LineSource, RecordSource};
use baton_core::trajectory::{
    PlanConfig, Prepared, Record, TrajectoryCompressor, TrajectoryConfig,
};
use proptest::prelude::*;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// What a user runs on a file: load it (detected and each forced format), convert, write.
fn read_conversations(text: &str) {
    let _ = formats::detect(text);
    for f in std::iter::once(None).chain(FormatName::ALL.into_iter().map(Some)) {
        if let Ok(doc) = formats::parse_document(text, f) {
            let _ = doc.to_text();
            for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::ShareGpt] {
                let _ = doc.converted_to(d).to_text();
            }
        }
    }
}

fn compressor() -> &'static TrajectoryCompressor {
    static C: OnceLock<TrajectoryCompressor> = OnceLock::new();
    C.get_or_init(|| {
        TrajectoryCompressor::new(
            TrajectoryConfig {
                plan: PlanConfig {
                    target_max_tokens: 60,
                    summary_target_tokens: 10,
                    ..PlanConfig::default()
                },
                ..TrajectoryConfig::default()
            },
            Encoding::Rough.counter(),
            Arc::new(ExtractiveSummarizer),
        )
    })
}

fn compress_record(bytes: Vec<u8>) {
    if let Ok(r) = Record::parse(&bytes) {
        let _ = r.to_line();
    }
    if let Ok(Prepared::Summarize(job)) = compressor().prepare(1, bytes) {
        let summary = summarize_extractively(&job.input(&job.view_refs()));
        let _ = compressor().finish(*job, Ok(summary));
    }
}

/// What `trajectories compress` does with a file: JSON Lines and JSON array readings.
fn read_trajectories(data: &[u8]) {
    let mut lines = LineSource::new(data);
    while let Ok(Some(item)) = lines.next_item() {
        compress_record(item.bytes);
    }
    let mut array = ArraySource::spawn(std::io::Cursor::new(data.to_vec())).unwrap();
    while let Ok(Some(item)) = array.next_item() {
        compress_record(item.bytes);
    }
}

/// Real documents to mutate: small files whole, the first lines of the larger ones.
fn seeds() -> &'static [Value] {
    static S: OnceLock<Vec<Value>> = OnceLock::new();
    S.get_or_init(|| {
        let samples = common::samples_dir();
        let fixtures =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
        let mut out = Vec::new();
        for (dir, name) in [
            (&samples, "claude-code-session.jsonl"),
            (&samples, "tau-bench-airline.jsonl"),
            (&samples, "tielec-ja.jsonl"),
            (&fixtures, "claude-code-tool-heavy.jsonl"),
            (&fixtures, "codex-rollout.jsonl"),
        ] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let lines: Vec<Value> = text
                .lines()
                .take(12)
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            // Kept as an array of lines; rendered back to JSON Lines below.
            out.push(Value::Array(lines));
        }
        for (dir, name) in [
            (&samples, "glaive-toolcall-zh.json"),
            (&fixtures, "gemini-cli-session.json"),
        ] {
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
            if let Value::Array(a) = &mut v {
                a.truncate(3);
            }
            out.push(Value::Object(
                [("__single".to_string(), v)].into_iter().collect(),
            ));
        }
        out
    })
}

/// Renders a seed: an array of lines as JSON Lines, a `__single` wrapper as one document.
fn render(seed: &Value, pretty: bool) -> String {
    match seed {
        Value::Object(o) if o.contains_key("__single") => {
            let v = &o["__single"];
            if pretty {
                serde_json::to_string_pretty(v).unwrap()
            } else {
                v.to_string()
            }
        }
        Value::Array(lines) => lines.iter().map(|l| l.to_string() + "\n").collect(),
        other => other.to_string(),
    }
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count_nodes).sum(),
        Value::Object(o) => o.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// The `k`-th node in pre-order (0 is the root).
fn node_mut(v: &mut Value, mut k: usize) -> &mut Value {
    let path = path_to(v, &mut k).unwrap_or_default();
    let mut cur = v;
    for step in path {
        cur = match cur {
            Value::Array(a) => &mut a[step],
            Value::Object(o) => o.values_mut().nth(step).unwrap(),
            _ => unreachable!(),
        };
    }
    cur
}

fn path_to(v: &Value, k: &mut usize) -> Option<Vec<usize>> {
    if *k == 0 {
        return Some(Vec::new());
    }
    *k -= 1;
    let children: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => o.values().collect(),
        _ => return None,
    };
    for (i, c) in children.into_iter().enumerate() {
        if let Some(mut p) = path_to(c, k) {
            p.insert(0, i);
            return Some(p);
        }
    }
    None
}

/// Odd but valid JSON values a file may hold where another was expected.
fn replacement(kind: u8, old: &Value) -> Value {
    match kind % 14 {
        0 => Value::Null,
        1 => Value::Bool(true),
        2 => serde_json::json!(-1),
        3 => serde_json::json!(1e308),
        4 => serde_json::json!(u64::MAX),
        5 => Value::String(String::new()),
        6 => Value::String("\u{0}\u{202e}日本語\u{1F600}\r\n\t\"\\".into()),
        7 => Value::Array(Vec::new()),
        8 => Value::Object(serde_json::Map::new()),
        9 => Value::Array(vec![old.clone(), old.clone()]),
        10 => Value::String(old.to_string()),
        11 => {
            serde_json::json!({"type": old.clone(), "text": old.clone(), "content": [old.clone()]})
        }
        12 => Value::String("x".repeat(5_000)),
        _ => serde_json::json!(0.5),
    }
}

fn mutated(seed: usize, edits: &[(usize, u8)], pretty: bool, cut: Option<usize>) -> String {
    let seeds = seeds();
    let mut v = seeds[seed % seeds.len()].clone();
    for &(at, kind) in edits {
        let n = count_nodes(&v);
        // Never replace the wrapper itself, so the layout survives most edits.
        let k = 1 + at % n.saturating_sub(1).max(1);
        let node = node_mut(&mut v, k.min(n - 1));
        let new = replacement(kind, node);
        *node = new;
    }
    let mut text = render(&v, pretty);
    if let Some(c) = cut {
        let mut c = c % (text.len() + 1);
        while !text.is_char_boundary(c) {
            c -= 1;
        }
        text.truncate(c);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn conversation_readers_never_panic_on_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(text) = std::str::from_utf8(&data) {
            read_conversations(text);
        }
        read_trajectories(&data);
    }

    #[test]
    fn conversation_readers_never_panic_on_json_shaped_text(
        text in r#"[\[\]{}",:0-9a-z \n\\-]{0,300}"#
    ) {
        read_conversations(&text);
        read_trajectories(text.as_bytes());
    }

    #[test]
    fn readers_never_panic_on_mutated_real_files(
        seed in 0usize..64,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        pretty in any::<bool>(),
        cut in proptest::option::weighted(0.2, any::<usize>()),
    ) {
        let text = mutated(seed, &edits, pretty, cut);
        read_conversations(&text);
        read_trajectories(text.as_bytes());
    }
}
