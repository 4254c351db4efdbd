//! Costs are known or honestly unknown: `ping` and `sessions stats` price what the price
//! table knows and print "unknown" with the reason (JSON: `null` + reason), never `$0.0000`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::usage::CanonicalUsage;
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::baton;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn llm_fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

async fn chat_server(body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    server
}

async fn ping(server: &MockServer, model: &str, json: bool) -> std::process::Output {
    let url = format!("{}/v1", server.uri());
    let model = model.to_string();
    tokio::task::spawn_blocking(move || {
        let mut cmd = baton();
        cmd.env_remove("OPENAI_BASE_URL")
            .env("OPENAI_API_KEY", "sk-cost-test-000000")
            .args(["ping", "--base-url", &url, "--model", &model]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_prices_a_known_model_by_the_name_that_answered() {
    // The fixture answers as gpt-4o-2024-08-06: 93 uncached input, 1,024 cached, 46 output
    // at $2.50 / $1.25 / $10 per million = $0.0019725.
    let server = chat_server(llm_fixture("openai_chat_completion.json")).await;
    let out = ping(&server, "gpt-4o", true).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let usd = report["cost_usd"].as_f64().unwrap();
    assert!((usd - 0.001_972_5).abs() < 1e-12, "{usd}");
    assert_eq!(report["cost"]["priced_as"], "gpt-4o");
    assert!(report["cost_unknown_reason"].is_null());

    let out = ping(&server, "gpt-4o", false).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cost: $0.0020 (priced as gpt-4o, prices of 2025-11)"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_of_an_unpriced_model_says_unknown_never_zero() {
    let body = json!({"id": "x", "object": "chat.completion", "model": "llama3.1:8b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}});
    let server = chat_server(body.to_string()).await;
    let out = ping(&server, "llama3.1:8b", false).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cost: unknown (no price for model `llama3.1:8b` (add [pricing.\"llama3.1:8b\"] to config.toml))"),
        "{text}"
    );
    assert!(!text.contains("$0.0000"), "{text}");
    let out = ping(&server, "llama3.1:8b", true).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["cost_usd"].is_null());
    assert!(
        report["cost_unknown_reason"]
            .as_str()
            .unwrap()
            .contains("llama3.1:8b")
    );
}

/// `[pricing."<model>"]` in `config.toml` prices a model the built-in list does not know, and
/// an override that is not a price stops the command before any request, naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_pricing_overrides_price_an_unknown_model_and_bad_ones_are_refused() {
    let body = json!({"id": "x", "object": "chat.completion", "model": "llama3.1:8b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}});
    let server = chat_server(body.to_string()).await;
    let url = format!("{}/v1", server.uri());
    let home = tempfile::tempdir().unwrap();
    let run = |config: &str| {
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let mut cmd = baton();
        cmd.env("BATON_HOME", home.path())
            .env_remove("OPENAI_BASE_URL")
            .env("OPENAI_API_KEY", "sk-cost-test-000000")
            .args([
                "ping",
                "--base-url",
                &url,
                "--model",
                "llama3.1:8b",
                "--json",
            ]);
        cmd.output().unwrap()
    };
    // $2 input, $10 output per million: 1,000 × 2 + 100 × 10 = 3,000 micro-dollars.
    let out = tokio::task::block_in_place(|| {
        run("[pricing.\"llama3.1:8b\"]\ninput = 2.0\noutput = 10.0\n")
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let usd = report["cost_usd"].as_f64().unwrap();
    assert!((usd - 0.003).abs() < 1e-12, "{usd}");

    let requests_before = server.received_requests().await.unwrap().len();
    let out = tokio::task::block_in_place(|| run("[pricing.\"llama3.1:8b\"]\ninput = 2.0\n"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("llama3.1:8b"),
        "{err}"
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        requests_before
    );
}

fn session(store: &SqliteStore, id: &str, model: &str, usage: CanonicalUsage) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            model: Some(model.into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    store.add_usage(id, &usage, None).unwrap();
}

fn stats_db(dir: &Path, with_priced: bool) -> PathBuf {
    let path = dir.join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    let usage = |input, output| CanonicalUsage {
        input,
        output,
        ..CanonicalUsage::default()
    };
    session(&store, "new", "claude-opus-4-6", usage(10_000, 1_000));
    if with_priced {
        // $3 per million input.
        session(
            &store,
            "dated",
            "anthropic/claude-sonnet-4-5-20250929",
            usage(1_000_000, 0),
        );
    }
    path
}

fn stats(db: &Path, json: bool) -> String {
    let mut cmd = baton();
    cmd.env("COLUMNS", "100").args(["sessions", "--db"]).arg(db);
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .arg("stats")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn stats_of_unpriced_sessions_say_unknown_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = stats_db(dir.path(), false);
    let text = stats(&db, false);
    assert!(!text.contains("$0.0000"), "{text}");
    assert!(!text.contains("$0.00"), "{text}");
    assert!(
        text.contains("cost unknown for 1 session: no price for model `claude-opus-4-6`"),
        "{text}"
    );
    let cost_line = text.lines().find(|l| l.contains("cost ")).unwrap();
    assert!(cost_line.contains("unknown"), "{cost_line}");

    let v: Value = serde_json::from_str(&stats(&db, true)).unwrap();
    assert!(v["overview"]["cost_usd"].is_null(), "{v}");
    assert!(
        v["overview"]["cost_unknown_reason"]
            .as_str()
            .unwrap()
            .contains("claude-opus-4-6")
    );
    assert!(v["by_model"][0]["cost_usd"].is_null());
    assert!(v["by_source"][0]["cost_usd"].is_null());
}

#[test]
fn stats_price_known_models_and_count_the_rest_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let db = stats_db(dir.path(), true);
    let text = stats(&db, false);
    assert!(text.contains("$3.00 (+1 unknown)"), "{text}");
    let v: Value = serde_json::from_str(&stats(&db, true)).unwrap();
    assert_eq!(v["overview"]["cost_usd"], 3.0);
    assert_eq!(v["overview"]["sessions_unknown_cost"], 1);
    let dated = v["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "claude-sonnet-4-5-20250929")
        .unwrap();
    assert_eq!(dated["cost_usd"], 3.0);
}
