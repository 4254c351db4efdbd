//! The OpenAI Responses client against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/requests.rs"]
mod requests;

use baton_llm::{ErrorKind, FinishReason, ProviderKind, StreamEvent};
use common::{Behaviour, TestServer, client, fixture};
use requests::sample_request;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn complete_reads_reasoning_text_function_calls_and_usage_details() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("responses_response.json"), "application/json"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let provider = client(
        ProviderKind::Responses,
        &format!("{}/v1", server.uri()),
        Some("sk-x"),
        1,
    );
    let response = provider.complete(&sample_request("gpt-5")).await.unwrap();

    assert_eq!(response.message.text(), "Reading it now.");
    let call = &response.message.calls()[0];
    assert_eq!(call.id, "call_12345xyz");
    assert_eq!(call.function.arguments, r#"{"path":"README.md"}"#);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.reasoning_text(), "Need the file first.");
    assert_eq!(response.usage.input, 328 - 256);
    assert_eq!(response.usage.cache_read, 256);
    assert_eq!(response.usage.output, 52);
    assert_eq!(response.usage.reasoning, 30);
    // The whole output array is kept verbatim.
    let fixture: Value = serde_json::from_str(&fixture("responses_response.json")).unwrap();
    assert_eq!(response.metadata["output"], fixture["output"]);

    let received = server.received_requests().await.unwrap();
    let body: Value = received[0].body_json().unwrap();
    // Snapshotted as serde_json text: insta\'s own serializer would show numbers as
    // serde_json\'s private `arbitrary_precision` wrapper.
    insta::assert_snapshot!(
        "responses_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test]
async fn reasoning_items_replay_with_their_encrypted_content() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("responses_response.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let provider = client(ProviderKind::Responses, &server.uri(), None, 1);
    let first = provider.complete(&sample_request("gpt-5")).await.unwrap();
    let mut next = sample_request("gpt-5");
    std::sync::Arc::make_mut(&mut next.messages).push(first.message.clone());
    std::sync::Arc::make_mut(&mut next.messages).push(baton_core::message::Message::tool(
        "call_12345xyz",
        "# README",
    ));
    provider.complete(&next).await.unwrap();
    let received = server.received_requests().await.unwrap();
    let body: Value = received[1].body_json().unwrap();
    let input = body["input"].as_array().unwrap();
    let reasoning = input.iter().find(|i| i["type"] == "reasoning").unwrap();
    assert_eq!(
        reasoning["id"],
        "rs_6876cf02e0bc8192b74af0fb64b715ff06fa2fcced15a5ac"
    );
    assert_eq!(
        reasoning["encrypted_content"],
        "gAAAAABoISQ24OyVRYbkYfukWDoDkyqe"
    );
    assert_eq!(reasoning["summary"][0]["text"], "Need the file first.");
    let output = input
        .iter()
        .rfind(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_12345xyz");
}

#[tokio::test]
async fn stream_assembles_text_and_function_call_arguments() {
    let server = TestServer::start(Behaviour::Sse {
        body: fixture("responses_stream.sse"),
        piece: 11,
        cut: None,
    })
    .await;
    let provider = client(ProviderKind::Responses, &server.url, None, 1);
    let request = sample_request("gpt-5");
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let response = provider.stream(&request, &mut sink).await.unwrap();
    assert_eq!(response.message.text(), "Hi there");
    assert_eq!(
        response.message.calls()[0].function.arguments,
        r#"{"location":"Paris"}"#
    );
    assert_eq!(response.usage.input, 37);
    assert_eq!(response.usage.output, 11);
    let pieces: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces, r#"{"location":"Paris"}"#);
    assert_eq!(server.requests()[0].path, "/responses");
}

#[tokio::test]
async fn a_cut_stream_keeps_the_partial_text_and_arguments() {
    let body = fixture("responses_stream.sse");
    let cut = body.find("event: response.completed").unwrap();
    let server = TestServer::start(Behaviour::Sse {
        body,
        piece: 64,
        cut: Some(cut),
    })
    .await;
    let provider = client(ProviderKind::Responses, &server.url, None, 1);
    let request = sample_request("gpt-5");
    let mut sink = |_e: StreamEvent| {};
    let error = provider.stream(&request, &mut sink).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Interrupted);
    let partial = error.partial().unwrap();
    assert_eq!(partial.message.text(), "Hi there");
    assert_eq!(
        partial.message.calls()[0].function.arguments,
        r#"{"location":"Paris"}"#
    );
}
