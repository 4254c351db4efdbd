//! The real `baton` binary: `tokens`, `--version`, `help`, and errors on bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;

#[test]
fn version_prints_the_crate_version() {
    baton()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_lists_the_tokens_command() {
    baton()
        .arg("help")
        .assert()
        .success()
        .stdout(predicate::str::contains("tokens"));
}

#[test]
fn tokens_prints_per_role_rows_and_total_for_records() {
    let out = baton()
        .arg("tokens")
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("records, 3 conversations, 82 messages"),
        "{text}"
    );
    for row in ["system", "user", "assistant", "tool", "total", "o200k_base"] {
        assert!(text.contains(row), "missing {row}: {text}");
    }
}

#[test]
fn tokens_json_totals_equal_the_sum_of_roles() {
    let out = baton()
        .args(["tokens", "--json", "--encoding", "cl100k"])
        .arg(sample("glaive-toolcall-zh.json"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["encoding"], "cl100k_base");
    assert_eq!(v["format"], "sharegpt records");
    let roles = v["roles"].as_object().unwrap();
    let messages: u64 = roles
        .values()
        .map(|r| r["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(v["total"]["messages"].as_u64().unwrap(), messages);
    let exact: u64 = roles
        .values()
        .map(|r| r["exact"].as_u64().unwrap())
        .sum::<u64>()
        + v["tools"]["exact"].as_u64().unwrap()
        + 3 * v["conversations"].as_u64().unwrap();
    assert_eq!(v["total"]["exact"].as_u64().unwrap(), exact);
}

#[test]
fn rough_encoding_prints_no_exact_column_values() {
    let out = baton()
        .args(["tokens", "-e", "rough"])
        .arg(sample("tielec-ja.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let total = text.lines().find(|l| l.starts_with("total")).unwrap();
    assert_eq!(total.split_whitespace().last(), Some("-"), "{text}");
}

#[test]
fn tokens_reads_standard_input() {
    baton()
        .args(["tokens", "-"])
        .write_stdin(r#"[{"role":"user","content":"hello world"}]"#)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 messages"));
}

#[test]
fn bad_input_fails_with_the_message_index_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        r#"[{"role":"user","content":"a"},{"role":"tool","content":"b"}]"#,
    )
    .unwrap();
    baton()
        .arg("tokens")
        .arg(&path)
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad.json"))
        .stderr(predicate::str::contains("message 1"))
        .stderr(predicate::str::contains("tool_call_id"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn unknown_encoding_is_rejected_with_the_choices() {
    baton()
        .args(["tokens", "-e", "p50k", "x.json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("o200k"));
}

#[test]
fn forced_format_that_does_not_fit_says_what_the_file_is() {
    baton()
        .args(["tokens", "--format", "jsonl"])
        .arg(sample("glaive-toolcall-zh.json"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("jsonl"))
        .stderr(predicate::str::contains("array of records"));
}
