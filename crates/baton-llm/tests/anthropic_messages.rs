//! The Anthropic Messages client against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/requests.rs"]
mod requests;

use baton_core::conversation::Conversation;
use baton_core::formats::anthropic::to_anthropic;
use baton_llm::{ErrorKind, FinishReason, LlmError, ProviderKind, StreamEvent};
use common::{Behaviour, TestServer, client, fixture};
use requests::sample_request;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn json_server(status: u16, body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn complete_reads_thinking_text_and_tool_use_losslessly() {
    let server = json_server(200, fixture("anthropic_message.json")).await;
    let provider = client(
        ProviderKind::Anthropic,
        &server.uri(),
        Some("sk-ant-test"),
        1,
    );
    let response = provider
        .complete(&sample_request("claude-sonnet-4-20250514"))
        .await
        .unwrap();

    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.text(), "I'll look that up.");
    assert_eq!(
        response.message.calls()[0].id,
        "toolu_01A09q90qw90lq917835lq9"
    );
    assert!(response.message.reasoning_text().contains("call the tool"));
    assert_eq!(response.usage.input, 472);
    assert_eq!(response.usage.cache_write, 1200);
    assert_eq!(response.usage.cache_read, 3000);
    assert_eq!(response.usage.prompt(), 472 + 1200 + 3000);
    assert_eq!(response.metadata["stop_sequence"], Value::Null);

    // Replaying the message gives Anthropic back exactly the blocks it sent, signature included.
    let replay = to_anthropic(&Conversation::new(vec![response.message.clone()]));
    let fixture: Value = serde_json::from_str(&fixture("anthropic_message.json")).unwrap();
    assert_eq!(replay["messages"][0]["content"], fixture["content"]);

    let received = server.received_requests().await.unwrap();
    assert_eq!(received[0].headers["x-api-key"], "sk-ant-test");
    assert_eq!(received[0].headers["anthropic-version"], "2023-06-01");
    assert!(received[0].headers.get("authorization").is_none());
    let body: Value = received[0].body_json().unwrap();
    assert_eq!(body.to_string().matches("cache_control").count(), 4);
    // Snapshotted as serde_json text: insta\'s own serializer would show numbers as
    // serde_json\'s private `arbitrary_precision` wrapper.
    insta::assert_snapshot!(
        "anthropic_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test]
async fn stream_assembles_the_same_message_shape() {
    let server = TestServer::start(Behaviour::Sse {
        body: fixture("anthropic_stream.sse"),
        piece: 9,
        cut: None,
    })
    .await;
    let provider = client(ProviderKind::Anthropic, &server.url, None, 1);
    let request = sample_request("claude-sonnet-4-20250514");
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let response = provider.stream(&request, &mut sink).await.unwrap();

    assert_eq!(response.message.text(), "Checking now.");
    assert_eq!(
        response.message.reasoning_text(),
        "Need the weather for Paris."
    );
    let details = &response.message.reasoning["reasoning_details"][0];
    assert_eq!(details["signature"], "EqQBCgIYAhIMsig");
    let call = &response.message.calls()[0];
    assert_eq!(call.function.name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&call.function.arguments).unwrap(),
        json!({"location": "Paris"})
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.input, 472);
    assert_eq!(response.usage.cache_read, 2048);
    assert_eq!(response.usage.output, 89);
    assert_eq!(response.id.as_deref(), Some("msg_014p7gG3wDgGV9EUtLvnow3U"));

    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "Need the weather for Paris.");
    assert!(events.iter().any(|e| matches!(e, StreamEvent::ToolCallDelta { index: 0, name: Some(n), .. } if n == "get_weather")));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.body["stream"], true);
}

#[tokio::test]
async fn prompt_too_long_is_an_overflow_with_the_stated_limit() {
    let server = json_server(400, fixture("anthropic_prompt_too_long.json")).await;
    let provider = client(ProviderKind::Anthropic, &server.uri(), None, 3);
    let error = provider
        .complete(&sample_request("claude-sonnet-4"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::ContextOverflow {
                limit: Some(200_000),
                requested: Some(215_038),
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn payload_413_is_payload_too_large() {
    let server = json_server(413, fixture("anthropic_request_too_large.json")).await;
    let provider = client(ProviderKind::Anthropic, &server.uri(), None, 3);
    let error = provider
        .complete(&sample_request("claude-sonnet-4"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PayloadTooLarge, "{error}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn overloaded_529_is_a_retried_server_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(
            ResponseTemplate::new(529)
                .set_body_raw(fixture("anthropic_overloaded.json"), "application/json"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("anthropic_message.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let provider = client(ProviderKind::Anthropic, &server.uri(), None, 3);
    let response = provider
        .complete(&sample_request("claude-sonnet-4"))
        .await
        .unwrap();
    assert_eq!(response.attempts, 2);

    let always = json_server(529, fixture("anthropic_overloaded.json")).await;
    let provider = client(ProviderKind::Anthropic, &always.uri(), None, 2);
    let error = provider
        .complete(&sample_request("claude-sonnet-4"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Server, "{error}");
    assert_eq!(always.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_cut_stream_keeps_the_thinking_and_text_that_arrived() {
    let body = fixture("anthropic_stream.sse");
    let cut = body.find("\"now.\"").unwrap();
    let server = TestServer::start(Behaviour::Sse {
        body,
        piece: 50,
        cut: Some(cut),
    })
    .await;
    let provider = client(ProviderKind::Anthropic, &server.url, None, 1);
    let request = sample_request("claude-sonnet-4");
    let mut sink = |_e: StreamEvent| {};
    let error = provider.stream(&request, &mut sink).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
    let partial = error.partial().unwrap();
    assert_eq!(partial.message.text(), "Checking ");
    assert_eq!(
        partial.message.reasoning_text(),
        "Need the weather for Paris."
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported_with_the_partial_answer() {
    let body = fixture("anthropic_stream.sse");
    let cut = body
        .find("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2")
        .unwrap();
    let body = format!(
        "{}event: error\ndata: {}\n\n",
        &body[..cut],
        fixture("anthropic_overloaded.json").trim()
    );
    let server = TestServer::start(Behaviour::Sse {
        body,
        piece: 100,
        cut: None,
    })
    .await;
    let provider = client(ProviderKind::Anthropic, &server.url, None, 1);
    let request = sample_request("claude-sonnet-4");
    let mut sink = |_e: StreamEvent| {};
    let error = provider.stream(&request, &mut sink).await.unwrap_err();
    assert!(error.to_string().contains("Overloaded"), "{error}");
    assert_eq!(error.partial().unwrap().message.text(), "Checking now.");
}
