//! Requests real endpoints accept: reasoning models get `max_completion_tokens` (and no
//! sampling parameters they reject), and a missing key is reported naming the variable to set,
//! before any request when the server is known to need one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/requests.rs"]
mod requests;

use baton_llm::{ErrorKind, LlmError, ProviderConfig, ProviderKind};
use requests::sample_request;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn chat_server(status: u16, body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    server
}

async fn sent_body(model: &str) -> Value {
    let server = chat_server(200, common::fixture("openai_chat_completion.json")).await;
    let provider = common::client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        Some("sk-test"),
        1,
    );
    provider.complete(&sample_request(model)).await.unwrap();
    server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap()
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens_and_no_sampling_parameters() {
    for model in [
        "o1",
        "o3-mini",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini",
        "openai/o3",
    ] {
        let body = sent_body(model).await;
        assert_eq!(body["max_completion_tokens"], 512, "{model}: {body}");
        assert!(body.get("max_tokens").is_none(), "{model}: {body}");
        assert!(body.get("temperature").is_none(), "{model}: {body}");
        assert!(body.get("stop").is_none(), "{model}: {body}");
    }
}

#[tokio::test]
async fn other_models_keep_max_tokens_temperature_and_stop() {
    for model in ["gpt-4o", "gpt-4.1-mini", "llama3.1:8b"] {
        let body = sent_body(model).await;
        assert_eq!(body["max_tokens"], 512, "{model}: {body}");
        assert!(
            body.get("max_completion_tokens").is_none(),
            "{model}: {body}"
        );
        assert_eq!(body["temperature"], 0.2, "{model}: {body}");
        assert_eq!(body["stop"][0], "</answer>", "{model}: {body}");
    }
}

#[tokio::test]
async fn a_named_key_variable_that_is_unset_fails_before_any_request_naming_it() {
    let server = chat_server(200, common::fixture("openai_chat_completion.json")).await;
    let error = ProviderConfig::new(ProviderKind::OpenAi)
        .base_url(format!("{}/v1", server.uri()))
        .key_from_env(Some("BATON_TEST_KEY_THAT_IS_NEVER_SET"))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Auth);
    assert!(
        error
            .to_string()
            .ends_with("set the environment variable BATON_TEST_KEY_THAT_IS_NEVER_SET"),
        "{error}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_self_hosted_server_runs_without_a_key() {
    let server = chat_server(200, common::fixture("openai_chat_completion.json")).await;
    let mut config = ProviderConfig::new(ProviderKind::Ollama).base_url(server.uri());
    config.http = common::settings(1);
    // Ollama and LM Studio have no key variable at all.
    let config = config.key_from_env(None).unwrap();
    assert!(config.api_key.is_none());
    config
        .build()
        .unwrap()
        .complete(&sample_request("llama3.1:8b"))
        .await
        .unwrap();
    let received = server.received_requests().await.unwrap();
    assert!(!received[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_keyless_request_refused_with_401_names_the_variable_to_set() {
    let server = chat_server(401, common::fixture("openai_invalid_api_key.json")).await;
    let mut config =
        ProviderConfig::new(ProviderKind::OpenAi).base_url(format!("{}/v1", server.uri()));
    config.http = common::settings(3);
    config.key_env = Some("MY_PROXY_KEY".into());
    let error = config
        .build()
        .unwrap()
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::MissingApiKey { variable, status: Some(401), .. } if variable == "MY_PROXY_KEY"),
        "{error:?}"
    );
    let host = server.uri().trim_start_matches("http://").to_string();
    assert_eq!(
        error.to_string(),
        format!(
            "openai: no API key for {host} (it answered HTTP 401): set the environment variable MY_PROXY_KEY"
        )
    );
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1, "not retried");
    assert!(!received[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_host_name_that_does_not_resolve_is_one_sentence() {
    let provider = common::client(
        ProviderKind::OpenAi,
        "http://baton-test-host.invalid/v1",
        None,
        1,
    );
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    let shown = error.to_string();
    // Through a proxy the lookup may fail differently; without one it is a DNS failure.
    if std::env::var_os("HTTP_PROXY").is_none() && std::env::var_os("http_proxy").is_none() {
        assert_eq!(
            shown,
            "openai: cannot connect to baton-test-host.invalid: the host name could not be resolved (DNS lookup failed)"
        );
    }
    assert!(!shown.contains("error sending request"), "{shown}");
}
