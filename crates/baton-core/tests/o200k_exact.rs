//! o200k_base counts are tiktoken's: the pre-tokenizer written out in
//! `tokens/o200k_pieces.rs` gives the same count as tiktoken-rs's regex on generated text
//! built from the characters its cases turn on (every class, ASCII alone and mixed), and on
//! every string of the shared corpus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::tokens::{BPE_RUN_CHUNK_BYTES, Encoding};
use proptest::prelude::*;
use serde_json::Value;

fn tiktoken(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

fn ours(text: &str) -> usize {
    Encoding::O200k.counter().count_text(text)
}

/// Whether Baton counts `text` whole, as tiktoken does: no non-whitespace run is long enough
/// for Baton to cut it (`BPE_RUN_CHUNK_BYTES`, a deliberate difference on `aaaa…` runs).
fn counted_whole(text: &str) -> bool {
    text.split(char::is_whitespace)
        .all(|run| run.len() <= BPE_RUN_CHUNK_BYTES)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn ascii_text_counts_as_tiktoken_counts_it(
        text in proptest::string::string_regex(
            "[aAbZzsStTdDmMlLrReEvV09 '\t\n\r\u{b}\u{c}!/(.,_\\-=\"\u{1}\u{7f}]{0,160}"
        ).unwrap()
    ) {
        prop_assert_eq!(ours(&text), tiktoken(&text), "{:?}", text);
    }

    #[test]
    fn text_of_every_character_class_counts_as_tiktoken_counts_it(
        text in proptest::string::string_regex(
            "[aZ0 '\t\n\r!/sSLlé—用ǅßʰ\u{a0}\u{85}\u{2028}\u{301}\u{94d}٣Ⅻ½ſ€😀\u{1f}]{0,120}"
        ).unwrap()
    ) {
        prop_assert_eq!(ours(&text), tiktoken(&text), "{:?}", text);
    }
}

#[test]
fn long_whitespace_and_mixed_scripts_count_as_tiktoken_counts_them() {
    for text in [
        "",
        "x",
        &" ".repeat(150),
        &format!("a{}b", " ".repeat(120)),
        &format!("{}\n", "\t \r".repeat(50)),
        "naïve café — 用户配置 and ASCII after",
        "It's WE'LL they'RE I'M you'Ve he'D",
        "fn main() {\r\n    println!(\"{}\", 1_000_000);\r\n}\r\n",
        "first — line\nplain ascii\n/slash after\n\u{a0}nbsp\n用户 配置\n!\n/x\nend\n",
        "déjà\n\n  indented\n\tTabbed\nlast",
    ] {
        assert_eq!(ours(text), tiktoken(text), "{text:?}");
    }
}

#[test]
fn every_string_of_the_shared_corpus_counts_as_tiktoken_counts_it() {
    let Some(files) = common::shared_normalized_files() else {
        return;
    };
    let (mut compared, mut tokens) = (0usize, 0usize);
    for path in files {
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let mut texts = Vec::new();
            common::json_strings(&value, &mut texts);
            for text in texts.into_iter().filter(|t| counted_whole(t)) {
                let expected = tiktoken(text);
                assert_eq!(ours(text), expected, "{}: {text:?}", path.display());
                compared += 1;
                tokens += expected;
            }
        }
    }
    eprintln!("{compared} strings, {tokens} tokens: identical");
    assert!(compared > 10_000, "only {compared} strings compared");
}
