//! The LLM summarizer against loopback servers: auxiliary model, fallback to the main model,
//! typed failures and cooldowns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::summary::ledger::TaskLedger;
use baton_core::summary::{Summarizer, SummaryError, SummaryInput};
use baton_llm::summarizer::ModelRoute;
use baton_llm::{AuxiliaryConfig, LlmSummarizer, ProviderKind, SummaryFailureKind};
use common::{client, fixture};
use std::time::{Duration, Instant};
use wiremock::matchers::{body_partial_json, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn summary_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("openai_summary_completion.json"),
            "application/json",
        ))
        .mount(&server)
        .await;
    server
}

async fn failing_server(status: u16, body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(status).set_body_raw(body.to_string(), "application/json"),
        )
        .mount(&server)
        .await;
    server
}

fn route(server: &MockServer, model: &str) -> ModelRoute {
    ModelRoute::new(
        client(
            ProviderKind::OpenAi,
            &server.uri(),
            Some("sk-summary-key-0123456789"),
            1,
        ),
        model,
    )
}

#[tokio::test]
async fn the_trait_sends_the_prompt_and_returns_the_body_without_think_blocks() {
    let server = summary_server().await;
    let summarizer = LlmSummarizer::new(Some(route(&server, "main-model")), None);
    let ledger = TaskLedger::default();
    let input = SummaryInput {
        turns: &[],
        previous_summary: None,
        focus_topic: None,
        budget_tokens: 500,
        ledger: &ledger,
        prompt: "SUMMARIZE THESE TURNS",
        first_request: None,
        actions: None,
        calls: None,
    };
    let body = summarizer.summarize(input).await.unwrap();
    assert!(body.starts_with("## Goal"), "{body}");
    assert!(!body.contains("<think>"));
    let sent: serde_json::Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["model"], "main-model");
    assert_eq!(sent["messages"][0]["content"], "SUMMARIZE THESE TURNS");
    assert!(
        sent.get("max_tokens").is_none(),
        "no output cap on summaries"
    );
    assert_eq!(summarizer.name(), "llm:main-model");
}

#[tokio::test]
async fn a_failing_auxiliary_model_falls_back_once_to_the_main_model() {
    let aux = failing_server(
        404,
        r#"{"error":{"message":"The model `cheap` does not exist","code":"model_not_found"}}"#,
    )
    .await;
    let main = summary_server().await;
    let summarizer =
        LlmSummarizer::new(Some(route(&main, "main-model")), Some(route(&aux, "cheap")));
    assert!(
        summarizer
            .summarize_prompt("p")
            .await
            .unwrap()
            .starts_with("## Goal")
    );
    let why = summarizer.auxiliary_failure().unwrap();
    assert_eq!(why.model, "cheap");
    // From now on the main model is asked directly.
    summarizer.summarize_prompt("p").await.unwrap();
    assert_eq!(aux.received_requests().await.unwrap().len(), 1);
    assert_eq!(main.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn auth_failures_are_typed_redacted_and_cool_down() {
    let key_echo = r#"{"error":{"message":"Incorrect API key provided: sk-summary-key-0123456789","code":"invalid_api_key"}}"#;
    let server = failing_server(401, key_echo).await;
    let summarizer = LlmSummarizer::new(Some(route(&server, "main-model")), None);
    let failure = summarizer.summarize_prompt("p").await.unwrap_err();
    assert_eq!(failure.kind, SummaryFailureKind::Auth);
    assert!(failure.leaves_conversation_unchanged());
    assert!(!failure.to_string().contains("0123456789"), "{failure}");
    let left = summarizer.cooldown_remaining(Instant::now()).unwrap();
    assert!(left > Duration::from_secs(50) && left <= Duration::from_secs(60));
    // While cooling down nothing is sent.
    let again = summarizer.summarize_prompt("p").await.unwrap_err();
    assert_eq!(again.kind, SummaryFailureKind::CoolingDown);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn quota_network_and_malformed_failures_have_their_kinds() {
    let quota = failing_server(
        429,
        r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#,
    )
    .await;
    let s = LlmSummarizer::new(Some(route(&quota, "m")), None);
    assert_eq!(
        s.summarize_prompt("p").await.unwrap_err().kind,
        SummaryFailureKind::Quota
    );

    let url = common::closed_port_url().await;
    let s = LlmSummarizer::new(
        Some(ModelRoute::new(
            client(ProviderKind::OpenAi, &url, None, 1),
            "m",
        )),
        None,
    );
    let failure = s.summarize_prompt("p").await.unwrap_err();
    assert_eq!(failure.kind, SummaryFailureKind::Network);
    assert!(failure.leaves_conversation_unchanged());

    let html = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw("<html>bad gateway</html>", "text/html"),
        )
        .mount(&html)
        .await;
    let s = LlmSummarizer::new(Some(route(&html, "m")), None);
    assert_eq!(
        s.summarize_prompt("p").await.unwrap_err().kind,
        SummaryFailureKind::MalformedOutput
    );
    let left = s.cooldown_remaining(Instant::now()).unwrap();
    assert!(left <= Duration::from_secs(30) && left > Duration::from_secs(20));
}

#[tokio::test]
async fn no_provider_is_typed_and_rests_long() {
    let s = LlmSummarizer::new(None, None);
    let failure = s.summarize_prompt("p").await.unwrap_err();
    assert_eq!(failure.kind, SummaryFailureKind::NoProvider);
    assert!(s.cooldown_remaining(Instant::now()).unwrap() > Duration::from_secs(500));
    let ledger = TaskLedger::default();
    s.clear_cooldown();
    let e = s
        .summarize(SummaryInput {
            turns: &[],
            previous_summary: None,
            focus_topic: None,
            budget_tokens: 1,
            ledger: &ledger,
            prompt: "p",
            first_request: None,
            actions: None,
            calls: None,
        })
        .await
        .unwrap_err();
    // Through the core trait it is `Unavailable`, which makes the compressor leave the
    // conversation unchanged instead of falling back to a weaker summary.
    assert!(
        matches!(e, SummaryError::Unavailable { ref reason, ref message, .. }
            if reason == "no provider" && message.starts_with("no provider")),
        "{e:?}"
    );
}

#[tokio::test]
async fn auxiliary_config_builds_a_separate_route_and_borrows_from_main() {
    let main_server = summary_server().await;
    let aux_server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(
            serde_json::json!({"model": "small-model"}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("openai_summary_completion.json"),
            "application/json",
        ))
        .expect(1)
        .mount(&aux_server)
        .await;
    let main = route(&main_server, "main-model");
    let config = AuxiliaryConfig {
        provider: Some(ProviderKind::OpenAi),
        model: Some("small-model".into()),
        base_url: Some(aux_server.uri()),
        api_key_env: Some("BATON_TEST_UNSET_KEY_VAR".into()),
        http: Some(common::settings(1)),
    };
    let aux = config.route(Some(&main)).unwrap().unwrap();
    let s = LlmSummarizer::new(Some(main), Some(aux));
    s.summarize_prompt("p").await.unwrap();
    assert_eq!(main_server.received_requests().await.unwrap().len(), 0);
    assert!(AuxiliaryConfig::default().route(None).unwrap().is_none());
}

#[tokio::test]
async fn a_timeout_is_typed_and_starts_the_ladder() {
    let server = common::TestServer::start(common::Behaviour::Slow {
        delay: Duration::from_secs(5),
    })
    .await;
    let mut settings = common::settings(1);
    settings.read_timeout = Duration::from_millis(300);
    let provider = baton_llm::ProviderConfig::new(ProviderKind::OpenAi)
        .base_url(&server.url)
        .http(settings)
        .build()
        .unwrap();
    let s = LlmSummarizer::new(Some(ModelRoute::new(provider, "slow-model")), None);
    let failure = s.summarize_prompt("p").await.unwrap_err();
    assert_eq!(failure.kind, SummaryFailureKind::Timeout, "{failure}");
    assert!(!failure.leaves_conversation_unchanged());
    let left = s.cooldown_remaining(Instant::now()).unwrap();
    assert!(left > Duration::from_secs(50) && left <= Duration::from_secs(60));
}
