//! `baton trajectories compress` on a JSON array dataset (the LLaMA-Factory / ShareGPT `.json`
//! layout): the shipped sample compresses exactly as its JSON Lines form does, and files that
//! are not records are refused with exit 2 before an output file exists.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn compress(input: &Path, out: &Path) -> assert_cmd::assert::Assert {
    baton()
        .args(["trajectories", "compress"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .args([
            "--target-max-tokens",
            "400",
            "--summary-target-tokens",
            "100",
            "--protect-last",
            "1",
        ])
        .assert()
}

#[test]
fn the_glaive_array_sample_compresses_like_its_json_lines_form() {
    let dir = tempfile::tempdir().unwrap();
    let array = sample("glaive-toolcall-zh.json");
    let records: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&array).unwrap()).unwrap();
    let jsonl = dir.path().join("glaive.jsonl");
    let text: String = records.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(&jsonl, text).unwrap();

    let from_array = dir.path().join("from_array.jsonl");
    compress(&array, &from_array)
        .success()
        .stderr(predicate::str::contains("0 malformed"));
    let from_lines = dir.path().join("from_lines.jsonl");
    compress(&jsonl, &from_lines).success();

    let out = std::fs::read_to_string(&from_array).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        records.len(),
        "one output line per array element"
    );
    for (line, original) in lines.iter().zip(&records) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["conversations"].is_array(), "{line}");
        assert_eq!(v["tools"], original["tools"]);
    }
    assert!(
        lines.iter().any(|l| l.contains("[CONTEXT SUMMARY]")),
        "at this budget some records must have been compressed"
    );
    assert_eq!(out, std::fs::read_to_string(&from_lines).unwrap());
}

#[test]
fn files_that_are_not_records_are_refused_before_any_output() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, expect) in [
        (
            "object.json",
            r#"{"data": [1, 2]}"#,
            "not a trajectory record",
        ),
        ("number.json", "42\n", "starts with a number"),
        (
            "numbers.json",
            "[1, 2, 3]",
            "record 1: not a trajectory record",
        ),
        (
            "cut.json",
            "[{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]},\n {\"mess",
            "not a readable JSON array",
        ),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let out = dir.path().join(format!("{name}.out.jsonl"));
        let metrics = dir.path().join(format!("{name}.metrics.jsonl"));
        baton()
            .args(["trajectories", "compress"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg("--metrics")
            .arg(&metrics)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(name))
            .stderr(predicate::str::contains(expect));
        assert!(!out.exists(), "{name}: no output file may be created");
        assert!(!metrics.exists(), "{name}: no metrics file may be created");
    }
}

#[test]
fn malformed_array_elements_are_named_by_position() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mixed.json");
    let good = r#"{"messages": [{"role": "user", "content": "hi"}]}"#;
    std::fs::write(&input, format!("[{good},\n  {{\"x\": 1}},\n  {good}]")).unwrap();
    let out = dir.path().join("out.jsonl");
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "mixed.json: record 2: malformed record (copied unchanged)",
        ));
    let written = std::fs::read_to_string(&out).unwrap();
    let compact = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
    assert_eq!(
        written.lines().collect::<Vec<_>>(),
        [compact, r#"{"x":1}"#, compact]
    );
}
