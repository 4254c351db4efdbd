//! Text reports: a fallback's real reason is the first line, and counts are grouped
//! (`1,234,567`) the same way in every command's text output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};

fn stderr_of(args: &[&str]) -> String {
    let out = baton().args(args).assert().success();
    String::from_utf8(out.get_output().stderr.clone()).unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = baton().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// Runs of four or more digits that are not part of a decimal fraction, a date, a time, an id
/// or a path: counts that should have been grouped.
fn ungrouped_numbers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "(),;:[]".contains(c)) {
        let w = word.trim_matches(|c: char| "~%$".contains(c));
        if w.len() >= 4 && w.chars().all(|c| c.is_ascii_digit()) {
            found.push(w.to_string());
        }
    }
    found
}

#[test]
fn a_failed_summarizer_is_named_on_the_first_line() {
    let input = sample("claude-code-session.jsonl");
    let err = stderr_of(&[
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--summarizer",
        "exec:sh -c 'cat >/dev/null; echo model crashed >&2; exit 3'",
        input.to_str().unwrap(),
    ]);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("summarizer `exec:sh` failed: exit status: 3")
            && first.contains("model crashed")
            && first.ends_with("; used the extractive summary"),
        "first line: {first}\n{err}"
    );
    assert!(!err.contains("short fallback context"), "{err}");
    assert_eq!(
        err.matches("model crashed").count(),
        1,
        "the reason is stated once: {err}"
    );
}

#[test]
fn a_gate_rejection_is_named_on_the_first_line() {
    let input = sample("claude-code-session.jsonl");
    let err = stderr_of(&[
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--summarizer",
        "exec:sh -c 'cat >/dev/null; echo Sure, all went fine.'",
        input.to_str().unwrap(),
    ]);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("the quality gate rejected exec:sh's summary: ")
            && first.ends_with("; used the extractive summary"),
        "first line: {first}\n{err}"
    );
}

#[test]
fn a_run_without_fallback_starts_with_the_settings() {
    let input = sample("claude-code-session.jsonl");
    let err = stderr_of(&[
        "compress",
        "--force",
        "--context-length",
        "64000",
        input.to_str().unwrap(),
    ]);
    assert!(err.starts_with("window: 64,000 tokens"), "{err}");
}

#[test]
fn the_json_report_carries_the_fallback_reason() {
    let input = sample("claude-code-session.jsonl");
    let report = common::json_report([
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--json",
        "--summarizer",
        "exec:false",
        input.to_str().unwrap(),
    ]);
    assert_eq!(
        report["fallback_reason"],
        "summarizer `exec:false` failed: exit status: 1; no stderr output; used the extractive summary"
    );
}

#[test]
fn trajectory_and_compress_reports_group_their_counts() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("claude-code-session.jsonl");
    let out = dir.path().join("out.jsonl");
    let err = stderr_of(&[
        "trajectories",
        "compress",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--target-max-tokens",
        "20000",
    ]);
    let report: String = err
        .lines()
        .filter(|l| !l.starts_with("wrote "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(report.contains(" → "), "{report}");
    assert_eq!(ungrouped_numbers(&report), Vec::<String>::new(), "{report}");

    let err = stderr_of(&[
        "compress",
        "--force",
        "--context-length",
        "64000",
        input.to_str().unwrap(),
    ]);
    assert_eq!(ungrouped_numbers(&err), Vec::<String>::new(), "{err}");
}

#[test]
fn tokens_and_session_tables_group_their_counts() {
    let input = sample("claude-code-session.jsonl");
    let text = stdout_of(&["tokens", input.to_str().unwrap(), "--encoding", "rough"]);
    assert_eq!(
        ungrouped_numbers(
            &text
                .lines()
                .skip(1) // the file path
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Vec::<String>::new(),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let db = db.to_str().unwrap();
    let imported = stdout_of(&["sessions", "--db", db, "import", input.to_str().unwrap()]);
    assert_eq!(
        ungrouped_numbers(&imported),
        Vec::<String>::new(),
        "{imported}"
    );
    let stats = stdout_of(&["sessions", "--db", db, "stats"]);
    let stats: String = stats
        .lines()
        .filter(|l| !l.contains("sessions started"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(ungrouped_numbers(&stats), Vec::<String>::new(), "{stats}");
}

#[test]
fn the_helper_finds_ungrouped_counts() {
    assert_eq!(
        ungrouped_numbers("tokens: 12904 → 8,235 (0.6382) 2026-05-01"),
        vec!["12904".to_string()]
    );
}
