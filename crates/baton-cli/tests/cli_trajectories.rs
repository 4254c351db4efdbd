//! `baton trajectories compress` end to end: real samples, refusals, on-error exit codes, the
//! `llm` summarizer against a loopback server, and a real SIGINT followed by `--resume`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The committed glaive ShareGPT sample (a JSON array) as JSONL, followed by the tau-bench
/// OpenAI records.
fn mixed_samples(dir: &Path) -> std::path::PathBuf {
    let glaive: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(sample("glaive-toolcall-zh.json")).unwrap())
            .unwrap();
    let mut text: String = glaive.iter().map(|r| r.to_string() + "\n").collect();
    text.push_str(&std::fs::read_to_string(sample("tau-bench-airline.jsonl")).unwrap());
    let path = dir.join("mixed.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn real_samples_compress_in_their_own_format_and_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = mixed_samples(dir.path());
    let out = dir.path().join("out.jsonl");
    let metrics = dir.path().join("m.jsonl");
    let summary = dir.path().join("summary.json");
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .args([
            "--target-max-tokens",
            "2500",
            "--summary-target-tokens",
            "300",
        ])
        .arg("--metrics")
        .arg(&metrics)
        .arg("--summary-json")
        .arg(&summary)
        .assert()
        .success()
        .stderr(predicate::str::contains("records:"));
    let inputs = lines(&input);
    let outputs = lines(&out);
    assert_eq!(inputs.len(), outputs.len());
    let rows: Vec<Value> = lines(&metrics)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for ((i, o), row) in inputs.iter().zip(&outputs).zip(&rows) {
        match row["action"].as_str().unwrap() {
            "unchanged" => assert_eq!(i, o, "unchanged records are byte-for-byte"),
            "compressed" => {
                let (iv, ov): (Value, Value) = (
                    serde_json::from_str(i).unwrap(),
                    serde_json::from_str(o).unwrap(),
                );
                let key = if iv.get("messages").is_some() {
                    "messages"
                } else {
                    "conversations"
                };
                assert!(ov.get(key).is_some(), "format kept");
                assert_eq!(iv.get("id"), ov.get("id"));
                assert!(o.contains("[CONTEXT SUMMARY]:"));
            }
            other => panic!("unexpected action {other}"),
        }
    }
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["records"]["total"], 43);
    assert!(s["records"]["compressed"].as_u64().unwrap() >= 3, "{s}");
}

#[test]
fn refuses_to_overwrite_the_input_or_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = mixed_samples(dir.path());
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("over the input file"));
    let out = dir.path().join("exists.jsonl");
    std::fs::write(&out, "keep me\n").unwrap();
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    baton()
        .args(["trajectories", "compress", "--force"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn llm_summarizer_needs_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let input = mixed_samples(dir.path());
    baton()
        .args(["trajectories", "compress", "--summarizer", "llm"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("o.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--summarizer llm needs --llm-model",
        ));
}

/// `--summarizer llm` against a real loopback server: the server's summary is what the
/// compressed records carry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_summaries_come_from_the_model_server() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let body = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../baton-llm/tests/fixtures/openai_summary_completion.json"),
    )
    .unwrap();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tau.jsonl");
    std::fs::copy(sample("tau-bench-airline.jsonl"), &input).unwrap();
    let out = dir.path().join("o.jsonl");
    let metrics = dir.path().join("m.jsonl");
    let url = format!("{}/v1", server.uri());
    let args: Vec<String> = [
        "trajectories",
        "compress",
        "--target-max-tokens",
        "2000",
        "--summarizer",
        "llm",
        "--llm-model",
        "summary-model",
        "--llm-base-url",
        &url,
        "--metrics",
        metrics.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let status = tokio::task::spawn_blocking(move || {
        baton()
            .env("OPENAI_API_KEY", "sk-test-not-printed")
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let written = std::fs::read_to_string(&out).unwrap();
    let summarized = written
        .lines()
        .filter(|l| l.contains("[CONTEXT SUMMARY]:"))
        .count();
    assert!(summarized > 0, "no record was summarized");
    assert_eq!(
        summarized,
        written
            .lines()
            .filter(|l| l.contains("Fix the failing build"))
            .count(),
        "every summary is the server's"
    );
    assert!(!server.received_requests().await.unwrap().is_empty());
    let rows: Vec<Value> = std::fs::read_to_string(&metrics)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compressed = rows.iter().filter(|r| r["action"] == "compressed").count();
    assert_eq!(compressed, summarized, "{:?}", rows.first());
    assert!(
        rows.iter().all(|r| r["summarizer_failed"] == false),
        "a summarizer call failed: {:?}",
        rows.iter().find(|r| r["summarizer_failed"] != false)
    );
}

#[test]
fn malformed_lines_are_named_and_fail_mode_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    let good = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
    std::fs::write(&input, format!("{good}\n{{broken\n{good}\n")).unwrap();
    let out = dir.path().join("copy.jsonl");
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "bad.jsonl:2: malformed record (copied unchanged)",
        ));
    assert_eq!(lines(&out), [good, "{broken", good]);
    baton()
        .args(["trajectories", "compress", "--on-error", "fail"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("fail.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.jsonl:2: malformed record"));
}

/// Records that all need a summary, so every one waits on the slow summarizer.
fn long_records(n: usize) -> String {
    (0..n)
        .map(|i| {
            let mut messages = vec![
                json!({"role": "system", "content": "sys"}),
                json!({"role": "user", "content": format!("task {i}")}),
            ];
            for r in 0..6 {
                messages.push(json!({"role": "assistant", "content": format!("step {r} of {i}")}));
                let body: String = (0..150).map(|k| format!("w{i}_{r}_{k} ")).collect();
                messages.push(json!({"role": "user", "content": body}));
            }
            json!({"id": i, "messages": messages}).to_string() + "\n"
        })
        .collect()
}

fn compress_cmd(input: &Path, out: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("baton"));
    cmd.args(["trajectories", "compress"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .args([
            "--target-max-tokens",
            "1200",
            "--summary-target-tokens",
            "100",
        ])
        .args([
            "--summarizer",
            "exec:sh -c 'sleep 0.05; cat'",
            "--concurrency",
            "2",
        ])
        .args(extra);
    cmd
}

#[test]
fn sigint_leaves_complete_records_and_resume_finishes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, long_records(120)).unwrap();

    let full = dir.path().join("full.jsonl");
    let status = compress_cmd(&input, &full, &[])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let full_lines = lines(&full);
    assert_eq!(full_lines.len(), 120);

    let out = dir.path().join("out.jsonl");
    let metrics = dir.path().join("m.jsonl");
    let metrics_arg = metrics.to_str().unwrap();
    let child = compress_cmd(&input, &out, &["--metrics", metrics_arg])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (without asserting on time) until some records are out, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&out).map_or(0, |s| s.lines().count()) < 10 {
        assert!(Instant::now() < deadline, "no progress at all");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("--resume"));

    let partial = std::fs::read_to_string(&out).unwrap();
    assert!(partial.ends_with('\n'), "no partial line");
    let partial_lines: Vec<&str> = partial.lines().collect();
    assert!(
        partial_lines.len() < 120,
        "the interrupt came too late to test anything"
    );
    assert_eq!(
        partial_lines,
        full_lines[..partial_lines.len()],
        "complete, correct records"
    );
    assert_eq!(lines(&metrics).len(), partial_lines.len());

    // Simulate a crash mid-line on top of the interrupt: resume must drop it.
    let mut torn = partial.clone();
    torn.push_str("{\"id\": 9");
    std::fs::write(&out, torn).unwrap();
    let status = compress_cmd(&input, &out, &["--resume", "--metrics", metrics_arg])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        lines(&out),
        full_lines,
        "resumed output equals the uninterrupted run"
    );
    let rows: Vec<Value> = lines(&metrics)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 120);
    assert!(
        rows.iter()
            .enumerate()
            .all(|(i, r)| r["line"] == i as u64 + 1)
    );
}

/// `--exact-counts` counts what the default leaves out (a record under the target by its byte
/// length, the middle of a long span): the same output, and totals that cover every record.
#[test]
fn exact_counts_cover_every_record_and_change_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![
        json!({"role": "system", "content": "sys"}),
        json!({"role": "user", "content": "the long task"}),
    ];
    for r in 0..60 {
        messages.push(json!({"role": "assistant", "content": format!("step {r}")}));
        let body: String = (0..120).map(|k| format!("w{r}_{k} ")).collect();
        messages.push(json!({"role": "user", "content": body}));
    }
    let long = json!({"id": "long", "messages": messages});
    let short = json!({"id": "short", "messages": [{"role": "user", "content": "hi"}]});
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, format!("{long}\n{short}\n")).unwrap();
    let run = |name: &str, extra: &[&str]| -> (Vec<u8>, Value) {
        let out = dir.path().join(format!("{name}.jsonl"));
        let summary = dir.path().join(format!("{name}.json"));
        baton()
            .args(["trajectories", "compress"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args([
                "--target-max-tokens",
                "3000",
                "--summary-target-tokens",
                "200",
            ])
            .arg("--summary-json")
            .arg(&summary)
            .args(extra)
            .assert()
            .success();
        let summary = serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
        (std::fs::read(out).unwrap(), summary)
    };
    let (default_out, default) = run("default", &[]);
    let (exact_out, exact) = run("exact", &["--exact-counts"]);
    assert_eq!(default_out, exact_out);
    assert_eq!(default["records"]["not_counted_under_byte_bound"], 1);
    assert_eq!(default["records"]["span_not_counted"], 1);
    assert_eq!(exact["records"]["not_counted_under_byte_bound"], 0);
    assert_eq!(exact["records"]["span_not_counted"], 0);
    assert_eq!(exact["records"]["compressed"], 1);
    assert!(
        exact["tokens"]["before"].as_u64() > default["tokens"]["before"].as_u64(),
        "{exact} against {default}"
    );
}
