//! Provider requests real endpoints accept: a missing key is reported before any request,
//! naming the variable to set; connection errors are one sentence naming the host; reasoning
//! models get `max_completion_tokens`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn llm_fixture(name: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// `baton` with no key or base URL in its environment.
fn clean_baton() -> assert_cmd::Command {
    let mut cmd = baton();
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    cmd
}

async fn run(args: Vec<String>, envs: Vec<(&'static str, &'static str)>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let mut cmd = clean_baton();
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.args(args).output().unwrap()
    })
    .await
    .unwrap()
}

async fn capturing_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            llm_fixture("openai_chat_completion.json"),
            "application/json",
        ))
        .mount(&server)
        .await;
    server
}

#[test]
fn a_hosted_api_without_its_key_is_reported_before_any_request() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["ping", "--model", "gpt-4o"],
            "openai: no API key for api.openai.com: set the environment variable OPENAI_API_KEY",
        ),
        (
            &["models"],
            "openai: no API key for api.openai.com: set the environment variable OPENAI_API_KEY",
        ),
        (
            &["models", "--provider", "responses"],
            "responses: no API key for api.openai.com: set the environment variable OPENAI_API_KEY",
        ),
        (
            &[
                "ping",
                "--provider",
                "anthropic",
                "--model",
                "claude-haiku-4-5",
            ],
            "anthropic: no API key for api.anthropic.com: set the environment variable ANTHROPIC_API_KEY",
        ),
        (
            &[
                "ping",
                "--base-url",
                "https://openrouter.ai/api/v1",
                "--model",
                "x",
            ],
            "openai: no API key for openrouter.ai: set the environment variable OPENAI_API_KEY",
        ),
    ];
    for (args, expected) in cases {
        clean_baton()
            .args(args)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(format!("baton: {expected}\n"));
    }
}

#[test]
fn compress_with_an_llm_summarizer_and_no_key_fails_before_compressing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    clean_baton()
        .args(["compress", "--force", "--summarizer", "llm", "--llm-provider", "anthropic"])
        .args(["--llm-model", "claude-haiku-4-5", "-o"])
        .arg(&out)
        .arg(sample("claude-code-session.jsonl"))
        .assert()
        .code(2)
        .stderr("baton: anthropic: no API key for api.anthropic.com: set the environment variable ANTHROPIC_API_KEY\n");
    assert!(!out.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_key_variable_is_required_and_its_value_is_what_is_sent() {
    let server = capturing_server().await;
    let url = format!("{}/v1", server.uri());
    let args = |var: &str| {
        [
            "ping",
            "--base-url",
            &url,
            "--model",
            "gpt-4o",
            "--api-key-env",
            var,
        ]
        .map(String::from)
        .to_vec()
    };
    let out = run(args("BATON_CLI_TEST_UNSET_KEY"), vec![]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with("set the environment variable BATON_CLI_TEST_UNSET_KEY\n"),
        "{stderr}"
    );
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "nothing sent"
    );

    let out = run(
        args("BATON_CLI_TEST_KEY"),
        vec![("BATON_CLI_TEST_KEY", "sk-named-var-0123456789")],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let received = server.received_requests().await.unwrap();
    assert_eq!(
        received[0].headers["authorization"],
        "Bearer sk-named-var-0123456789"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_hosted_server_needs_no_key() {
    let server = capturing_server().await;
    let url = format!("{}/v1", server.uri());
    let out = run(
        ["ping", "--base-url", &url, "--model", "gpt-4o"]
            .map(String::from)
            .to_vec(),
        vec![],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !server.received_requests().await.unwrap()[0]
            .headers
            .contains_key("authorization")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_of_a_reasoning_model_sends_max_completion_tokens() {
    let server = capturing_server().await;
    let url = format!("{}/v1", server.uri());
    for (model, key) in [
        ("o4-mini", "max_completion_tokens"),
        ("gpt-5-mini", "max_completion_tokens"),
        ("gpt-4o", "max_tokens"),
    ] {
        let out = run(
            ["ping", "--base-url", &url, "--model", model]
                .map(String::from)
                .to_vec(),
            vec![],
        )
        .await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body: Value = server
            .received_requests()
            .await
            .unwrap()
            .last()
            .unwrap()
            .body_json()
            .unwrap();
        assert_eq!(body[key], 16, "{model}: {body}");
        let other = if key == "max_tokens" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        assert!(body.get(other).is_none(), "{model}: {body}");
    }
}

#[test]
fn connection_refused_is_one_sentence_naming_the_host() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = listener.local_addr().unwrap().to_string();
    drop(listener);
    clean_baton()
        .args(["ping", "--base-url", &format!("http://{host}/v1"), "--model", "m"])
        .assert()
        .code(2)
        .stderr(format!(
            "baton: openai: cannot connect to {host}: connection refused (is the server running on that port?)\n"
        ));
}
