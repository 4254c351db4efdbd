//! `baton compress` and the kept tail (issue #12): `--protect-last N` means N, the JSON report
//! states the tail against its budget and floors, and a file a provider would reject is refused
//! the same way with and without `--force`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::baton;
use predicates::prelude::*;
use serde_json::{Value, json};

/// One OpenAI record: a request, `steps` explained tool calls with results, a final reply.
fn agent_record(steps: usize) -> String {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Implement the epic."}),
    ];
    for k in 0..steps {
        let id = format!("toolu_{k}");
        messages.push(json!({
            "role": "assistant",
            "content": format!("Step {k}: {}", "checking the next module ".repeat(30)),
            "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "Bash", "arguments": format!("{{\"command\":\"step {k}\"}}")}}],
        }));
        messages.push(
            json!({"role": "tool", "tool_call_id": id, "content": format!("out{k} ").repeat(600)}),
        );
    }
    messages.push(json!({"role": "assistant", "content": "All done; everything is pushed."}));
    json!({"messages": messages}).to_string()
}

#[test]
fn protect_last_keeps_that_many_messages_verbatim_beyond_eight() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let out = dir.path().join("out.jsonl");
    std::fs::write(&input, agent_record(40)).unwrap();
    let assert = baton()
        .args([
            "compress",
            "--force",
            "--context-length",
            "32000",
            "--protect-last",
            "30",
        ])
        .args(["--report", "json", "-o"])
        .arg(&out)
        .arg(&input)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&assert.get_output().stderr).unwrap();
    assert_eq!(report["outcome"]["kind"], "compressed", "{report}");
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let (b, a) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert_eq!(
        &a[a.len() - 30..],
        &b[b.len() - 30..],
        "the last 30 are verbatim"
    );
    let tail = &report["tail"];
    assert!(tail["messages"].as_u64().unwrap() >= 30, "{tail}");
    assert_eq!(tail["floor_messages"], 30);
    assert_eq!(tail["below_floor"], false);
    assert!(tail["budget_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn a_leading_tool_result_without_its_call_is_refused_with_and_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orphan.jsonl");
    let record = json!({"messages": [
        {"role": "tool", "tool_call_id": "toolu_gone", "content": "stale output"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
    ]});
    std::fs::write(&input, record.to_string()).unwrap();
    for force in [false, true] {
        let out = dir.path().join(format!("out-{force}.jsonl"));
        let mut cmd = baton();
        cmd.arg("compress");
        if force {
            cmd.arg("--force");
        }
        cmd.arg("-o")
            .arg(&out)
            .arg(&input)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("orphan.jsonl"))
            .stderr(predicate::str::contains("message 0"))
            .stderr(predicate::str::contains("toolu_gone"));
        assert!(!out.exists(), "nothing is written (force: {force})");
    }
}

/// The same refusal for a stored session: a continuation holding an orphan result would be
/// rejected by every provider.
#[test]
fn a_stored_session_with_a_result_without_its_call_is_not_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let input = dir.path().join("orphan.jsonl");
    let mut lines = vec![json!({"role": "user", "content": "start"})];
    lines.push(json!({"role": "tool", "tool_call_id": "call_gone", "content": "stale output"}));
    for i in 0..20 {
        lines.push(json!({"role": "user", "content": format!("question {i}")}));
        lines.push(json!({"role": "assistant", "content": format!("answer {i}")}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .arg("import")
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let id = report["imported"][0]["id"].as_str().unwrap().to_string();
    baton()
        .args(["compress", "--force", "--db"])
        .arg(&db)
        .args(["--session", &id])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("session {id}")))
        .stderr(predicate::str::contains("call_gone"));
    let list = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .arg("list")
        .output()
        .unwrap();
    let sessions: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(
        sessions.as_array().unwrap().len(),
        1,
        "no continuation was created"
    );
}
