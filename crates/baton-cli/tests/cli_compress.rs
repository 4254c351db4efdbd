//! `baton compress` end to end: output format, report, exit codes, summarizer choice.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, json_report, sample};
use predicates::prelude::*;

#[test]
fn compress_writes_the_same_format_and_reports_json_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let assert = baton()
        .args([
            "compress",
            "--context-length",
            "64000",
            "--report",
            "json",
            "-o",
        ])
        .arg(&out)
        .arg(sample("claude-code-session.jsonl"))
        .assert()
        .success();
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stderr).unwrap();
    for key in [
        "before_messages",
        "after_messages",
        "before_tokens",
        "after_tokens",
        "summarized_range",
        "pruned",
        "fallback_used",
        "summary",
    ] {
        assert!(report.get(key).is_some(), "missing {key}: {report}");
    }
    assert_eq!(report["before_messages"], 466);
    assert!(
        report["after_tokens"].as_u64().unwrap() < report["before_tokens"].as_u64().unwrap() / 2
    );
    assert!(
        report["summary"]
            .as_str()
            .unwrap()
            .contains("## Active Task")
    );
    // The output is the same record layout (one OpenAI record) and loads again.
    let text = std::fs::read_to_string(&out).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["id"], "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    assert_eq!(
        v["messages"].as_array().unwrap().len() as u64,
        report["after_messages"].as_u64().unwrap()
    );
}

#[test]
fn under_the_threshold_without_force_is_a_no_op_with_exit_zero() {
    let out = baton()
        .args(["compress", "--report", "json"])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let original = std::fs::read_to_string(sample("tau-bench-airline.jsonl")).unwrap();
    // Same conversations back (compact JSON rather than the source's spacing).
    let a: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let b: Vec<serde_json::Value> = original
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(a, b);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no_op"), "{stderr}");
}

#[test]
fn force_compresses_a_small_conversation_and_text_report_has_headline() {
    baton()
        .args([
            "compress",
            "--force",
            "--context-length",
            "8000",
            "--protect-last",
            "4",
        ])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success()
        .stderr(predicate::str::contains("→"))
        .stderr(predicate::str::contains("tokens"));
}

#[test]
fn exec_summarizer_receives_the_prompt_on_stdin() {
    // `head -c 400` stands in for a local model CLI: it returns the start of the prompt.
    let sample = sample("claude-code-session.jsonl");
    let report = json_report([
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--report",
        "json",
        "--summarizer",
        "exec:head -c 400",
        sample.to_str().unwrap(),
    ]);
    assert_eq!(report["summarizer"], "exec:head");
    assert_eq!(report["fallback_used"], false);
    // The gate appended the ledger to the model's (truncated) answer.
    assert!(
        report["summary"]
            .as_str()
            .unwrap()
            .contains("## Task Ledger")
    );
}

#[test]
fn failing_exec_summarizer_falls_back_and_says_why() {
    let sample = sample("claude-code-session.jsonl");
    let report = json_report([
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--report",
        "json",
        "--summarizer",
        "exec:sh -c 'echo model crashed >&2; exit 3'",
        sample.to_str().unwrap(),
    ]);
    assert_eq!(report["fallback_used"], true);
    assert_eq!(report["summarizer"], "extractive");
    let why = report["escalations"].to_string();
    assert!(why.contains("model crashed"), "{why}");
}

#[test]
fn bad_input_exits_with_code_2_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"[{"role":"tool","content":"x"}]"#).unwrap();
    baton()
        .arg("compress")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.json"))
        .stderr(predicate::str::contains("tool_call_id"));
    baton()
        .args(["compress", "--summarizer", "gpt"])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exec:COMMAND"));
}

#[test]
fn refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conv.jsonl");
    std::fs::copy(sample("tau-bench-airline.jsonl"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    baton()
        .args(["compress", "--force", "-o"])
        .arg(&path)
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("refusing to overwrite"));
    assert_eq!(std::fs::read(&path).unwrap(), before, "input untouched");
}

#[test]
fn reads_standard_input_and_anthropic_format_round_trips() {
    let body = serde_json::json!({
        "system": "be brief",
        "max_tokens": 512,
        "messages": (0..30).flat_map(|i| vec![
            serde_json::json!({"role": "user", "content": format!("question {i} {}", "detail ".repeat(50))}),
            serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {i}")}]}),
        ]).chain([serde_json::json!({"role": "user", "content": "final question"})]).collect::<Vec<_>>()
    });
    let out = baton()
        .args([
            "compress",
            "--force",
            "--context-length",
            "4000",
            "--protect-last",
            "3",
            "-",
        ])
        .write_stdin(body.to_string())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["max_tokens"], 512, "unknown top-level fields kept");
    assert!(v.get("system").is_some(), "still Anthropic-shaped");
    let msgs = v["messages"].as_array().unwrap();
    assert!(msgs.len() < 61);
    assert_eq!(msgs.last().unwrap()["content"], "final question");
}
