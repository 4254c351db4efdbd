//! Inputs that fuzzing found to panic a reader, kept as fixtures (`tests/fixtures/fuzz/`) and
//! replayed through the same harness as `fuzz_readers.rs`, plus what each one must read as.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::formats::{self, Dialect, FormatName};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz")
}

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

#[test]
fn every_recorded_crasher_now_reads_without_panicking() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            read_conversations(text);
        }
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn a_gemini_token_count_at_u64_max_saturates_instead_of_overflowing() {
    // Found by `readers_never_panic_on_mutated_real_files`: output + thoughts overflowed
    // (a panic in debug builds, a wrapped small number in release).
    let doc = formats::load_file(&fixtures().join("gemini-token-overflow.json"), None).unwrap();
    let meta = &doc.conversations[0].extra["meta"];
    let usage = &meta["usage"];
    assert_eq!(usage["output"], u64::MAX, "{meta:#}");
}
