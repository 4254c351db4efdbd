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
fn exec_summarizer_that_echoes_its_prompt_is_rejected_and_escalates() {
    // `head -c 400` stands in for a local model that parrots its input: it returns the start
    // of the prompt it received on stdin. The gate used to patch that into a "summary".
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
    assert_eq!(report["summarizer"], "extractive");
    assert_eq!(report["fallback_used"], true);
    let rejections = report["gate_rejections"].as_array().unwrap();
    assert_eq!(rejections.len(), 2, "summary and re-summary: {report}");
    assert!(
        rejections[0]
            .as_str()
            .unwrap()
            .contains("repeats the summarization prompt's instructions"),
        "{report}"
    );
    let summary = report["summary"].as_str().unwrap();
    assert!(!summary.contains("context checkpoint"), "{summary}");
    assert!(summary.contains("## Task Ledger"));
}

#[test]
fn exec_summarizer_without_headings_is_rejected_and_the_text_report_says_so() {
    let sample = sample("claude-code-session.jsonl");
    baton()
        .args([
            "compress",
            "--force",
            "--context-length",
            "64000",
            "--summarizer",
            "exec:sh -c 'cat >/dev/null; echo Sure, the agent added tracing and all went fine.'",
        ])
        .arg(&sample)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "note: the quality gate rejected exec:sh's summary: it lacks 4 of the 4 required headings",
        ))
        .stderr(predicate::str::contains("; asked again"))
        .stderr(predicate::str::contains("; used the extractive summary"));
}

#[test]
fn exec_summarizer_with_a_good_summary_is_accepted_unchanged() {
    // A script that writes every required section and copies the ledger block from the prompt.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("good.sh");
    std::fs::write(
        &script,
        "ledger=$(awk '/^## Task Ledger$/{p=1} p&&/^$/{exit} p{print}')\n\
         printf '## Active Task\\nUser asked: continue implementation\\n\\n## Goal\\nEnd-to-end tracing.\\n\\n## Completed Actions\\n1. Added spans to the hook controllers.\\n\\n## Active State\\n- Tests pass.\\n\\n## Relevant Files\\n- lib/spotter_web/controllers/otel_trace_helpers.ex\\n\\n%s\\n' \"$ledger\"\n",
    )
    .unwrap();
    let sample = sample("claude-code-session.jsonl");
    let report = json_report([
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--report",
        "json",
        "--summarizer",
        &format!("exec:sh {}", script.display()),
        sample.to_str().unwrap(),
    ]);
    assert_eq!(report["summarizer"], "exec:sh", "{report}");
    assert_eq!(report["fallback_used"], false);
    assert_eq!(report["gate_rejections"], serde_json::json!([]));
    assert_eq!(report["gate_added"], 0);
    assert_eq!(report["escalations"], serde_json::json!([]));
    let summary = report["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(
            "## Active Task\nUser asked: continue implementation\n\n## Goal\nEnd-to-end tracing.\n\n## Completed Actions\n1. Added spans"
        ),
        "{summary}"
    );
    assert_eq!(summary.matches("## Task Ledger").count(), 1);
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
