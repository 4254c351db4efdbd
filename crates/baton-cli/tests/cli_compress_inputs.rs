//! `compress` decides on what the request holds (issue #12 item 3): tool schemas count toward
//! the threshold and the totals, `--max-output-tokens` reserves the reply's room, and a
//! threshold or target ratio the engine raises or clamps is stated, never changed silently.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use serde_json::{Value, json};

/// An object-format conversation: 12 short turns (~3,000 estimated tokens) and 5 tool schemas
/// (~9,000), so the messages alone are under a 12,000-token window's threshold (10,200) and
/// the request is over it.
fn conversation_with_tools(dir: &std::path::Path) -> std::path::PathBuf {
    let messages: Vec<Value> = (0..12)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"role": role, "content": format!("turn {i}: {}", "word ".repeat(200))})
        })
        .collect();
    let tools: Vec<Value> = (0..5)
        .map(|i| {
            json!({"type": "function", "function": {
                "name": format!("tool_{i}"),
                "description": "describes a parameter at length ".repeat(225),
                "parameters": {"type": "object", "properties": {}}
            }})
        })
        .collect();
    let path = dir.join("with_tools.json");
    std::fs::write(
        &path,
        serde_json::to_string(&json!({"messages": messages, "tools": tools})).unwrap(),
    )
    .unwrap();
    path
}

fn json_report(args: &[&str]) -> Value {
    let out = baton()
        .args(["compress", "--report", "json", "-o", "-"])
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    serde_json::from_str(stderr.lines().next().unwrap()).unwrap()
}

fn text_report(args: &[&str]) -> String {
    let out = baton()
        .args(["compress", "-o", "-"])
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn tool_schemas_count_toward_the_threshold_and_the_totals() {
    let dir = tempfile::tempdir().unwrap();
    let file = conversation_with_tools(dir.path());
    let f = file.to_str().unwrap();
    let r = json_report(&[f, "--context-length", "12000"]);
    let schema_tokens = r["tool_schemas"]["tokens"].as_u64().unwrap();
    assert_eq!(r["tool_schemas"]["count"], 5);
    assert!(schema_tokens > 8_000, "{r}");
    let before = r["before_tokens"].as_u64().unwrap();
    assert!(before > schema_tokens + 2_500, "{r}");
    assert!(before >= r["settings"]["threshold"]["tokens"].as_u64().unwrap());
    // Over the threshold with the schemas: not a no-op for being under it.
    let reason = r["outcome"]["reason"].as_str().unwrap_or_default();
    assert!(!reason.contains("under the compression threshold"), "{r}");
    // The schemas are sent unchanged, so they are in the after total too.
    assert!(r["after_tokens"].as_u64().unwrap() >= schema_tokens, "{r}");

    let text = text_report(&[f, "--context-length", "12000"]);
    assert!(
        text.contains("tool schemas: 5 tools, ~")
            && text.contains("counted in the threshold decision"),
        "{text}"
    );
}

#[test]
fn the_tools_stay_in_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = conversation_with_tools(dir.path());
    let out = baton()
        .args([
            "compress",
            "--force",
            "--context-length",
            "12000",
            "-o",
            "-",
        ])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 5);
}

#[test]
fn a_threshold_raised_for_a_small_window_is_stated() {
    let input = sample("tau-bench-airline.jsonl");
    let i = input.to_str().unwrap();
    let text = text_report(&[i, "--threshold", "0.5"]);
    assert!(
        text.contains(
            "threshold: 0.50 (--threshold) raised to 0.75, the least for windows under 512,000 tokens: compresses at 150,000 tokens"
        ),
        "{text}"
    );
    let r = json_report(&[i]);
    assert_eq!(r["settings"]["threshold"]["applied"], 0.75);
    assert_eq!(r["settings"]["threshold"]["raised_for_small_window"], true);
    // A large window keeps the requested value, and says so.
    let text = text_report(&[i, "--context-length", "1000000"]);
    assert!(
        text.contains("threshold: 0.50 (default): compresses at 500,000 tokens"),
        "{text}"
    );
}

#[test]
fn the_threshold_floor_and_a_degenerate_window_are_stated() {
    let input = sample("tau-bench-airline.jsonl");
    let i = input.to_str().unwrap();
    let text = text_report(&[i, "--context-length", "80000"]);
    assert!(
        text.contains("under the 64,000-token floor, which is used: compresses at 64,000 tokens"),
        "{text}"
    );
    let text = text_report(&[i, "--context-length", "32000"]);
    assert!(
        text.contains("the 64,000-token floor reaches the 32,000-token window, so 85% of it is used: compresses at 27,200 tokens"),
        "{text}"
    );
}

#[test]
fn a_clamped_target_ratio_is_stated() {
    let input = sample("tau-bench-airline.jsonl");
    let i = input.to_str().unwrap();
    let text = text_report(&[i, "--target-ratio", "0.95"]);
    assert!(
        text.contains("target ratio: 0.95 (--target-ratio) clamped to 0.80 (allowed 0.10-0.80): tail budget 120,000 tokens"),
        "{text}"
    );
    let r = json_report(&[i, "--target-ratio", "0.05"]);
    assert_eq!(r["settings"]["target_ratio"]["requested"], 0.05);
    assert_eq!(r["settings"]["target_ratio"]["applied"], 0.1);
    // Out of (0, 1] is an error, not a silent clamp.
    baton()
        .args(["compress", "--target-ratio", "0", "-o", "-"])
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--target-ratio"));
}

#[test]
fn help_states_the_raise_and_the_clamp() {
    baton()
        .args(["compress", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("raises it to at least 0.75"))
        .stdout(predicate::str::contains("Clamped to 0.10-0.80"))
        .stdout(predicate::str::contains("--max-output-tokens"));
}

#[test]
fn max_output_tokens_is_reserved_before_the_threshold() {
    let input = sample("tau-bench-airline.jsonl");
    let i = input.to_str().unwrap();
    let r = json_report(&[i, "--max-output-tokens", "40000"]);
    assert_eq!(r["settings"]["usable_window"], 160_000);
    assert_eq!(r["settings"]["max_output_tokens"], 40_000);
    assert_eq!(r["settings"]["threshold"]["tokens"], 120_000);
    let text = text_report(&[i, "--max-output-tokens", "40000"]);
    assert!(
        text.contains("output reserve: 40,000 tokens (--max-output-tokens); the threshold applies to the remaining 160,000"),
        "{text}"
    );
    // A reservation that leaves no prompt is refused, not ignored.
    baton()
        .args(["compress", "--max-output-tokens", "200000", "-o", "-"])
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("leaves no room"));
}
