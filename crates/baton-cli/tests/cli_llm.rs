//! `baton models`, `baton ping` and `baton compress --summarizer llm` against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn llm_fixture(name: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// Runs the binary off the async runtime, so the mock server keeps serving.
async fn run(args: Vec<String>, envs: Vec<(&'static str, &'static str)>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let mut cmd = baton();
        cmd.env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.args(args).output().unwrap()
    })
    .await
    .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_ids_and_context_lengths() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("authorization", "Bearer sk-cli-test-key-123456"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(llm_fixture("vllm_models.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    let out = run(
        strings(&[
            "models",
            "--base-url",
            &url,
            "--api-key-env",
            "MY_KEY",
            "--json",
        ]),
        vec![("MY_KEY", "sk-cli-test-key-123456")],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["models"][0]["id"], "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(report["models"][0]["context_length"], 32768);

    let text = run(
        strings(&["models", "--base-url", &url, "--api-key-env", "MY_KEY"]),
        vec![("MY_KEY", "sk-cli-test-key-123456")],
    )
    .await;
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("Qwen/Qwen2.5-7B-Instruct") && stdout.contains("32,768"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_reads_ollama_listings() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/tags"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(llm_fixture("ollama_tags.json"), "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(llm_fixture("ollama_show_num_ctx.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let out = run(
        strings(&[
            "models",
            "--provider",
            "ollama",
            "--base-url",
            &server.uri(),
            "--json",
        ]),
        vec![],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["models"][0]["context_length"], 16384);
    assert_eq!(report["models"][0]["context_source"], "num_ctx");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_prints_latency_and_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-cli-test-0123456"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(llm_fixture("anthropic_message.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let out = run(
        strings(&[
            "ping",
            "--provider",
            "anthropic",
            "--base-url",
            &server.uri(),
            "--model",
            "claude-sonnet-4",
            "--json",
        ]),
        vec![("ANTHROPIC_API_KEY", "sk-ant-cli-test-0123456")],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["model"], "claude-sonnet-4");
    assert_eq!(report["usage"]["cache_read"], 3000);
    assert!(report["latency_ms"].is_u64());
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["max_tokens"], 16);

    let text = run(
        strings(&[
            "ping",
            "--provider",
            "anthropic",
            "--base-url",
            &server.uri(),
            "--model",
            "claude-sonnet-4",
        ]),
        vec![("ANTHROPIC_API_KEY", "sk-ant-cli-test-0123456")],
    )
    .await;
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains(" ms") && stdout.contains("cache read 3,000"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_errors_never_show_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_raw(
                json!({"error":{"message":"Incorrect API key provided: sk-cli-secret-987654321"}})
                    .to_string(),
                "application/json",
            ),
        )
        .mount(&server)
        .await;
    let out = run(
        strings(&["ping", "--base-url", &server.uri(), "--model", "m"]),
        vec![("OPENAI_API_KEY", "sk-cli-secret-987654321")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert!(!stderr.contains("987654321"), "{stderr}");
}

#[test]
fn unreachable_url_exits_2_naming_the_host() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = listener.local_addr().unwrap().to_string();
    let url = format!("http://{host}");
    drop(listener);
    baton()
        .env("OPENAI_API_KEY", "sk-never-printed-55555")
        .args(["models", "--base-url", &url, "--timeout", "5"])
        .assert()
        .code(2)
        .stderr(format!(
            "baton: openai: cannot connect to {host}: connection refused (is the server running on that port?)\n"
        ))
        .stderr(predicate::str::contains("55555").not());
}

#[test]
fn bad_flags_exit_2() {
    baton()
        .args(["models", "--provider", "gemini"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown provider `gemini`"));
    baton()
        .args(["ping", "--base-url", "not a url", "--model", "m"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a url"));
    baton()
        .env_remove("NO_SUCH_KEY_VAR")
        .args([
            "models",
            "--api-key-env",
            "NO_SUCH_KEY_VAR",
            "--base-url",
            "http://127.0.0.1:9",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("NO_SUCH_KEY_VAR"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compress_with_the_llm_summarizer_uses_the_server_summary() {
    // The fixture's two-section stub lacks most required headings and facts, which the quality
    // gate rejects; the server here answers with a summary that has the required sections.
    let mut body: Value =
        serde_json::from_str(&llm_fixture("openai_summary_completion.json")).unwrap();
    body["choices"][0]["message"]["content"] = Value::String(
        "<think>plan the summary</think>## Active Task\nUser asked: continue implementation\n\n\
         ## Goal\nFix the failing build.\n\n## Completed Actions\n1. READ src/main.rs — found \
         the typo [tool: read_file]\n\n## Active State\n- Build fixed.\n\n## Relevant Files\n\
         - src/main.rs"
            .into(),
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json"))
        .mount(&server)
        .await;
    let input = sample("claude-code-session.jsonl");
    let url = format!("{}/v1", server.uri());
    let out = run(
        strings(&[
            "compress",
            "--force",
            "--context-length",
            "64000",
            "--report",
            "json",
            "--summarizer",
            "llm",
            "--llm-model",
            "summary-model",
            "--llm-base-url",
            &url,
            input.to_str().unwrap(),
        ]),
        vec![],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["summarizer"], "llm:summary-model", "{report}");
    assert_eq!(report["fallback_used"], false);
    let summary = report["summary"].as_str().unwrap();
    assert!(summary.contains("Fix the failing build"), "{summary}");
    assert!(!summary.contains("<think>"));
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["model"], "summary-model");
}

#[test]
fn compress_llm_without_a_model_is_bad_input() {
    baton()
        .args(["compress", "--summarizer", "llm", "--force"])
        .arg(sample("claude-code-session.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--llm-model"));
}

/// A summarizer that rejects the key leaves the conversation alone: exit 1 with the reason,
/// no output file, and the key never printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compress_with_a_rejected_key_changes_nothing_and_says_why() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_raw(
                json!({"error":{"message":"Incorrect API key provided: sk-compress-secret-24680"}})
                    .to_string(),
                "application/json",
            ),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.jsonl");
    let input = sample("claude-code-session.jsonl");
    let url = format!("{}/v1", server.uri());
    let out = run(
        strings(&[
            "compress",
            "--force",
            "--context-length",
            "64000",
            "--summarizer",
            "llm",
            "--llm-model",
            "summary-model",
            "--llm-base-url",
            &url,
            "-o",
            out_path.to_str().unwrap(),
            input.to_str().unwrap(),
        ]),
        vec![("OPENAI_API_KEY", "sk-compress-secret-24680")],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("summarizer is unavailable"), "{stderr}");
    assert!(stderr.contains("auth"), "{stderr}");
    assert!(!stderr.contains("24680"), "{stderr}");
    assert!(!out_path.exists(), "nothing was written");
}
