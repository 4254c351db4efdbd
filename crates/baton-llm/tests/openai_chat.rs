//! The Chat Completions client against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/requests.rs"]
mod requests;

use baton_llm::{ErrorKind, FinishReason, LlmError, ProviderKind, StreamEvent, TimeoutPhase};
use common::{Behaviour, TestServer, client, fixture};
use requests::sample_request;
use std::time::{Duration, Instant};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn json_server(status: u16, body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn complete_reads_tool_calls_usage_and_keeps_unknown_fields() {
    let server = json_server(200, fixture("openai_chat_completion.json")).await;
    let provider = client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        Some("sk-test"),
        1,
    );
    let response = provider.complete(&sample_request("gpt-4o")).await.unwrap();

    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let calls = response.message.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_abc123");
    assert_eq!(calls[0].function.arguments, r#"{"path":"src/main.rs"}"#);
    // Fields the model does not know survive: `refusal`, `annotations`.
    assert!(response.message.extra.contains_key("annotations"));
    assert_eq!(response.usage.cache_read, 1024);
    assert_eq!(response.usage.input, 1117 - 1024);
    assert_eq!(response.usage.output, 46);
    assert_eq!(response.usage.prompt(), 1117);
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(response.metadata["system_fingerprint"], "fp_fc9f1d7035");
    assert_eq!(response.attempts, 1);

    let received = server.received_requests().await.unwrap();
    assert_eq!(received[0].headers["authorization"], "Bearer sk-test");
    let body: serde_json::Value = received[0].body_json().unwrap();
    // Snapshotted as serde_json text: insta\'s own serializer would show numbers as
    // serde_json\'s private `arbitrary_precision` wrapper.
    insta::assert_snapshot!(
        "openai_chat_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test]
async fn openrouter_claude_route_gets_cache_markers() {
    let server = json_server(200, fixture("openai_chat_completion.json")).await;
    let mut config = baton_llm::ProviderConfig::new(ProviderKind::OpenAi)
        .base_url(format!("{}/v1", server.uri()));
    config.cache_route = Some("openrouter".into());
    config.http = common::settings(1);
    let provider = config.build().unwrap();
    provider
        .complete(&sample_request("anthropic/claude-sonnet-4"))
        .await
        .unwrap();
    let received = server.received_requests().await.unwrap();
    let body: serde_json::Value = received[0].body_json().unwrap();
    let markers = body.to_string().matches("cache_control").count();
    assert_eq!(markers, 4, "system + last 3 messages: {body}");
    // Snapshotted as serde_json text: insta\'s own serializer would show numbers as
    // serde_json\'s private `arbitrary_precision` wrapper.
    insta::assert_snapshot!(
        "openai_chat_openrouter_cached_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test]
async fn stream_assembles_text_split_tool_calls_and_final_usage() {
    let server = TestServer::start(Behaviour::Sse {
        body: fixture("openai_chat_stream.sse"),
        piece: 7,
        cut: None,
    })
    .await;
    let provider = client(ProviderKind::OpenAi, &server.url, None, 1);
    let mut events = Vec::new();
    let request = sample_request("gpt-4o-mini");
    let mut sink = |e: StreamEvent| events.push(e);
    let response = provider.stream(&request, &mut sink).await.unwrap();

    assert_eq!(response.message.text(), "Let me check.");
    let calls = response.message.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].function.name, "get_weather");
    assert_eq!(calls[0].function.arguments, r#"{"location": "Paris"}"#);
    assert_eq!(calls[1].id, "call_2");
    assert_eq!(calls[1].function.arguments, "{}");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.cache_read, 1920);
    assert_eq!(response.usage.input, 2050 - 1920);
    assert_eq!(response.usage.output, 37);

    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me check.");
    let argument_pieces = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallDelta { index: 0, arguments, .. } if !arguments.is_empty()))
        .count();
    assert_eq!(argument_pieces, 3, "arguments arrive in three pieces");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Usage(u) if u.output == 37))
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/chat/completions");
    // Snapshotted as serde_json text: insta\'s own serializer would show numbers as
    // serde_json\'s private `arbitrary_precision` wrapper.
    insta::assert_snapshot!(
        "openai_chat_stream_request",
        serde_json::to_string_pretty(&sent.body).unwrap()
    );
}

#[tokio::test]
async fn context_length_exceeded_states_the_limit() {
    let server = json_server(400, fixture("openai_context_length_exceeded.json")).await;
    let provider = client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        None,
        3,
    );
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error}");
    assert_eq!(error.stated_context_limit(), Some(128_000));
    assert!(matches!(
        error,
        LlmError::ContextOverflow {
            requested: Some(131_072),
            ..
        }
    ));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "overflow is not retried"
    );
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_and_counts_attempts() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_raw(fixture("openai_rate_limit.json"), "application/json"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("openai_chat_completion.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let provider = client(ProviderKind::OpenAi, &server.uri(), None, 3);
    let started = Instant::now();
    let response = provider.complete(&sample_request("gpt-4o")).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(response.attempts, 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_a_bounded_number_of_times() {
    let server = json_server(500, r#"{"error":{"message":"internal error"}}"#.into()).await;
    let provider = client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        None,
        3,
    );
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Server);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn auth_errors_are_not_retried_and_never_show_the_key() {
    let key = "sk-test-LEAKME-0123456789abcdef";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("authorization", format!("Bearer {key}").as_str()))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_raw(fixture("openai_invalid_api_key.json"), "application/json"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let provider = client(ProviderKind::OpenAi, &server.uri(), Some(key), 4);
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Auth);
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("LEAKME"), "{shown}");
    assert!(!shown.contains(key), "{shown}");
    assert!(shown.contains("Incorrect API key provided"), "{shown}");
    let provider_debug = format!("{:?}", provider.base_url());
    assert!(!provider_debug.contains("LEAKME"));
}

#[tokio::test]
async fn a_cut_stream_returns_what_arrived_and_a_typed_error() {
    let body = fixture("openai_chat_stream.sse");
    let cut = body.find("get_time").unwrap();
    let server = TestServer::start(Behaviour::Sse {
        body,
        piece: 64,
        cut: Some(cut),
    })
    .await;
    let provider = client(ProviderKind::OpenAi, &server.url, None, 1);
    let request = sample_request("gpt-4o-mini");
    let mut sink = |_e: StreamEvent| {};
    let error = provider.stream(&request, &mut sink).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
    let partial = error.partial().unwrap();
    assert_eq!(partial.message.text(), "Let me check.");
    assert_eq!(partial.message.calls()[0].function.name, "get_weather");
    assert_eq!(partial.finish_reason, FinishReason::Unknown);
}

#[tokio::test]
async fn a_slow_server_hits_the_read_timeout() {
    let server = TestServer::start(Behaviour::Slow {
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
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Timeout {
                phase: TimeoutPhase::Read,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_unreachable_server_names_the_url() {
    let url = common::closed_port_url().await;
    let provider = client(
        ProviderKind::OpenAi,
        &url,
        Some("sk-secret-value-123456"),
        2,
    );
    let error = provider
        .complete(&sample_request("gpt-4o"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Connect, "{error}");
    let shown = error.to_string();
    let host = url.trim_start_matches("http://");
    // One sentence naming the host and the cause, not reqwest's chain.
    assert_eq!(
        shown,
        format!(
            "openai: cannot connect to {host}: connection refused (is the server running on that port?)"
        )
    );
    assert!(!shown.contains("sk-secret"), "{shown}");
}

#[tokio::test]
async fn bad_input_is_an_error_before_sending() {
    let provider = client(ProviderKind::OpenAi, "http://127.0.0.1:9", None, 1);
    let mut request = sample_request("gpt-4o");
    std::sync::Arc::make_mut(&mut request.messages).clear();
    let error = provider.complete(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    let bad = baton_llm::ProviderConfig::new(ProviderKind::OpenAi)
        .base_url("ftp://example.com")
        .build();
    assert!(bad.is_err());
}
