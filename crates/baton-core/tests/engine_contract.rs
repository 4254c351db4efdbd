//! The `ContextEngine` contract as a host uses it: token state, preflight, real usage, status,
//! model switches and session resets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::compress::{Compressor, CompressorConfig};
use baton_core::engine::{ContextEngine, EngineRegistry};
use baton_core::message::Message;
use baton_core::usage::CanonicalUsage;
use serde_json::json;

fn engine(context_length: u64) -> Box<dyn ContextEngine> {
    EngineRegistry::with_builtin()
        .create(
            "compressor",
            &CompressorConfig {
                context_length,
                ..CompressorConfig::default()
            },
        )
        .unwrap()
}

#[test]
fn token_state_follows_reported_usage_and_drives_should_compress() {
    let mut e = engine(200_000);
    let threshold = e.tokens().threshold_tokens;
    assert_eq!(threshold, 150_000, "75% floor for a 200K window");
    assert!(!e.should_compress(None), "no usage yet");
    e.update_from_response(&CanonicalUsage {
        input: 100_000,
        cache_read: 60_000,
        output: 2_000,
        ..CanonicalUsage::default()
    });
    let t = e.tokens();
    assert_eq!(
        t.last_prompt_tokens, 160_000,
        "prompt = input + cache read + cache write"
    );
    assert_eq!(t.last_completion_tokens, 2_000);
    assert_eq!(t.last_total_tokens, 162_000);
    assert!(e.should_compress(None));
    assert!(!e.should_compress(Some(threshold - 1)));
    assert!(
        e.should_compress(Some(threshold)),
        "reaching the threshold fires"
    );
    let status = e.status();
    assert_eq!(status.engine, "compressor");
    assert!((status.usage_percent - 80.0).abs() < 1e-9);
}

#[test]
fn preflight_counts_messages_and_tool_schemas() {
    let mut e = engine(8_000);
    let threshold = e.tokens().threshold_tokens as usize;
    let small = vec![Message::system("s"), Message::user("hi")];
    assert!(!e.should_compress_preflight(&small, None));
    // Tool schemas alone push the request over the threshold.
    let tools: Vec<serde_json::Value> = (0..200)
        .map(|i| json!({"type": "function", "function": {"name": format!("tool_{i}"), "description": "x".repeat(200)}}))
        .collect();
    assert!(e.should_compress_preflight(&small, Some(&tools)));
    let big = vec![Message::user("word ".repeat(threshold))];
    assert!(e.should_compress_preflight(&big, None));
}

#[test]
fn model_switch_recomputes_thresholds_and_reset_clears_state() {
    let mut e = engine(200_000);
    e.update_from_response(&CanonicalUsage {
        input: 10_000,
        ..CanonicalUsage::default()
    });
    e.update_model("gpt-5", 1_000_000);
    let t = e.tokens();
    assert_eq!(t.context_length, 1_000_000);
    assert_eq!(
        t.threshold_tokens, 500_000,
        "50% for windows of 512K and more"
    );
    assert_eq!(
        t.last_prompt_tokens, 0,
        "readings from the old model are dropped"
    );
    e.update_from_response(&CanonicalUsage {
        input: 5,
        ..CanonicalUsage::default()
    });
    e.on_session_reset();
    assert_eq!(e.tokens().last_prompt_tokens, 0);
    assert_eq!(e.tokens().compression_count, 0);
    assert!(e.status().blocked.is_none());
}

#[test]
fn default_tools_and_unknown_tool_calls() {
    let mut e = Compressor::new(CompressorConfig::default());
    assert!(e.tool_schemas().is_empty());
    let reply = e.handle_tool_call("expand_summary", &json!({}));
    assert!(reply["error"].as_str().unwrap().contains("expand_summary"));
}

#[test]
fn has_content_to_compress_needs_a_middle() {
    let e = engine(8_000);
    assert!(!e.has_content_to_compress(&[Message::system("s"), Message::user("hi")]));
    let mut long = vec![Message::system("s")];
    for i in 0..60 {
        long.push(Message::user(format!("{i} {}", "detail ".repeat(60))));
        long.push(Message::assistant(format!("{i} {}", "answer ".repeat(60))));
    }
    assert!(e.has_content_to_compress(&long));
}
