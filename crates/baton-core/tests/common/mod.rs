//! Paths to test data: the repository's samples (always present) and the shared corpus (present
//! on the team's machines, absent on a fresh clone, where tests using it print a note and skip),
//! and in `filler` the ordinary conversation tests pad a span with.

#![allow(dead_code)]

use std::path::PathBuf;

pub mod filler;

/// `data/samples` in this repository.
pub fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/samples")
}

/// `../shared/data` beside the repository, or `$BATON_SHARED_DATA` when set (for checkouts
/// that do not sit beside `shared/`, such as git worktrees elsewhere).
pub fn shared_data() -> PathBuf {
    match std::env::var_os("BATON_SHARED_DATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// `../shared/data/normalized`, if present.
pub fn shared_normalized() -> Option<PathBuf> {
    let dir = shared_data().join("normalized");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "note: ../shared/data/normalized is absent (set BATON_SHARED_DATA to point elsewhere); skipping the shared-corpus part of this test"
        );
        None
    }
}

/// The `.jsonl` files of `../shared/data/normalized`, sorted; `None` (with the note) when the
/// directory is absent.
pub fn shared_normalized_files() -> Option<Vec<PathBuf>> {
    let dir = shared_normalized()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Some(files)
}

/// Every string in a JSON value, in document order.
pub fn json_strings<'v>(v: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    use serde_json::Value;
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| json_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| json_strings(i, out)),
        _ => {}
    }
}

/// `../shared/data/corpus`, if present.
pub fn shared_corpus() -> Option<PathBuf> {
    let dir = shared_data().join("corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "note: ../shared/data/corpus is absent (set BATON_SHARED_DATA to point elsewhere); skipping the shared-corpus part of this test"
        );
        None
    }
}

/// Runs one `compress` call of a fresh default engine on a current-thread runtime.
pub fn compress_with(
    messages: &[baton_core::Message],
    config: baton_core::compress::CompressorConfig,
    force: bool,
) -> baton_core::compress::CompressionResult {
    use baton_core::engine::{CompressRequest, ContextEngine};
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        panic!("cannot build a tokio runtime");
    };
    let mut engine = baton_core::compress::Compressor::new(config);
    rt.block_on(engine.compress(CompressRequest {
        messages: messages.into(),
        current_tokens: None,
        focus_topic: None,
        force,
    }))
}
