//! Model listings and context-length discovery against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_llm::context_length::{ContextLengths, ContextSource};
use baton_llm::{LlmError, ProviderKind};
use common::{client, fixture};
use serde_json::json;
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn serve(server: &MockServer, verb: &str, at: &str, body: String) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(server)
        .await;
}

#[tokio::test]
async fn vllm_models_report_max_model_len() {
    let server = MockServer::start().await;
    serve(&server, "GET", "/v1/models", fixture("vllm_models.json")).await;
    let provider = client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        None,
        1,
    );
    let models = provider.list_models().await.unwrap();
    assert_eq!(models[0].id, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(models[0].context_length, Some(32_768));
    assert_eq!(models[0].context_source.as_deref(), Some("max_model_len"));
}

#[tokio::test]
async fn ollama_uses_the_configured_num_ctx_then_the_trained_length() {
    let server = MockServer::start().await;
    serve(&server, "GET", "/api/tags", fixture("ollama_tags.json")).await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .and(body_partial_json(json!({"model": "qwen2.5-coder:7b"})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("ollama_show_num_ctx.json"), "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .and(body_partial_json(json!({"model": "llama3.2:latest"})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("ollama_show_trained.json"), "application/json"),
        )
        .mount(&server)
        .await;
    // A pasted OpenAI-style URL (…/v1) still finds the native API at the root.
    let provider = client(
        ProviderKind::Ollama,
        &format!("{}/v1", server.uri()),
        None,
        1,
    );
    let models = provider.list_models().await.unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0].context_length, Some(16_384));
    assert_eq!(models[0].context_source.as_deref(), Some("num_ctx"));
    assert_eq!(models[1].context_length, Some(131_072));
}

#[tokio::test]
async fn lmstudio_prefers_the_loaded_context_length() {
    let server = MockServer::start().await;
    serve(
        &server,
        "GET",
        "/api/v0/models",
        fixture("lmstudio_models.json"),
    )
    .await;
    let provider = client(ProviderKind::LmStudio, &server.uri(), None, 1);
    let models = provider.list_models().await.unwrap();
    assert_eq!(models[0].context_length, Some(32_768));
    assert_eq!(models[1].context_length, Some(8_192));
    assert_eq!(
        models[1].context_source.as_deref(),
        Some("loaded_context_length")
    );
}

#[tokio::test]
async fn context_length_order_configured_server_table_and_lowered_by_stated_limits() {
    let server = MockServer::start().await;
    serve(&server, "GET", "/v1/models", fixture("vllm_models.json")).await;
    let provider = client(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.uri()),
        None,
        1,
    );
    let mut lengths = ContextLengths::new();
    lengths.configure("configured-model", 50_000);

    assert_eq!(
        lengths.resolve(provider.as_ref(), "configured-model").await,
        (50_000, ContextSource::Configured)
    );
    assert_eq!(
        lengths
            .resolve(provider.as_ref(), "Qwen/Qwen2.5-7B-Instruct")
            .await,
        (32_768, ContextSource::Server)
    );
    assert_eq!(
        lengths.resolve(provider.as_ref(), "claude-sonnet-4").await,
        (200_000, ContextSource::Table)
    );
    assert_eq!(
        lengths.resolve(provider.as_ref(), "mystery").await.1,
        ContextSource::Fallback
    );

    let overflow = |limit| LlmError::ContextOverflow {
        provider: "openai".into(),
        limit,
        requested: None,
        message: String::new(),
    };
    // A vague overflow (no stated limit) changes nothing.
    assert_eq!(
        lengths.record_error(provider.as_ref(), "claude-sonnet-4", &overflow(None)),
        None
    );
    // A stated limit above the known window changes nothing either.
    assert_eq!(
        lengths.record_error(
            provider.as_ref(),
            "claude-sonnet-4",
            &overflow(Some(300_000))
        ),
        None
    );
    assert_eq!(
        lengths.record_error(
            provider.as_ref(),
            "claude-sonnet-4",
            &overflow(Some(150_000))
        ),
        Some(150_000)
    );
    assert_eq!(
        lengths.resolve(provider.as_ref(), "claude-sonnet-4").await,
        (150_000, ContextSource::ProviderError)
    );
    // The server was asked once for the listing per model, not on every resolve.
    let listings = server.received_requests().await.unwrap().len();
    lengths
        .resolve(provider.as_ref(), "Qwen/Qwen2.5-7B-Instruct")
        .await;
    assert_eq!(server.received_requests().await.unwrap().len(), listings);
}
