//! Baton's real provider clients against the scripted server, for all three APIs, whole and
//! streamed: what the server sends must parse to exactly what the script said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::message::Message;
use baton_llm::{
    ApiKey, ChatRequest, FinishReason, HttpSettings, LlmError, Provider, ProviderConfig,
    ProviderKind, RetryPolicy, StreamEvent,
};
use baton_scripted::{Api, Reply, Script, ScriptedServer, Usage};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const APIS: [(Api, ProviderKind); 3] = [
    (Api::ChatCompletions, ProviderKind::OpenAi),
    (Api::Messages, ProviderKind::Anthropic),
    (Api::Responses, ProviderKind::Responses),
];

fn client(server: &ScriptedServer, api: Api, kind: ProviderKind) -> Arc<dyn Provider> {
    ProviderConfig::new(kind)
        .base_url(server.base_url(api))
        .api_key(ApiKey::new("sk-test-secret-value"))
        .http(HttpSettings {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(10),
            retry: RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            },
        })
        .build()
        .unwrap()
}

fn request() -> ChatRequest {
    let mut r = ChatRequest::new("scripted-model", vec![Message::user("What is in main.rs?")]);
    r.system = Some("You are terse.".into());
    r.max_output_tokens = Some(512);
    r
}

async fn both_ways(
    provider: &Arc<dyn Provider>,
) -> (baton_llm::ChatResponse, baton_llm::ChatResponse, String) {
    let whole = provider.complete(&request()).await.unwrap();
    let mut streamed_text = String::new();
    let streamed = {
        let mut sink = |e: StreamEvent| {
            if let StreamEvent::TextDelta(t) = e {
                streamed_text.push_str(&t);
            }
        };
        provider.stream(&request(), &mut sink).await.unwrap()
    };
    (whole, streamed, streamed_text)
}

#[tokio::test]
async fn text_answers_parse_the_same_whole_and_streamed_in_every_api() {
    for (api, kind) in APIS {
        let usage = Usage {
            prompt: 1200,
            cached: 1024,
            cache_write: 0,
            completion: 7,
        };
        let server = ScriptedServer::start(Script::replies([
            Reply::text("It holds the entry point.").with_usage(usage),
            Reply::text("It holds the entry point.").with_usage(usage),
        ]))
        .await
        .unwrap();
        let provider = client(&server, api, kind);
        let (whole, streamed, deltas) = both_ways(&provider).await;
        for r in [&whole, &streamed] {
            assert_eq!(r.message.text(), "It holds the entry point.", "{api:?}");
            assert_eq!(r.finish_reason, FinishReason::Stop, "{api:?}");
            assert_eq!(r.usage.prompt(), 1200, "{api:?}: {:?}", r.usage);
            assert_eq!(r.usage.cache_read, 1024, "{api:?}: {:?}", r.usage);
            assert_eq!(r.usage.output, 7, "{api:?}");
        }
        assert_eq!(
            deltas, "It holds the entry point.",
            "{api:?} streamed deltas"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert!(!requests[0].streamed() && requests[1].streamed(), "{api:?}");
        assert_eq!(
            requests[0].last_user_text(),
            "What is in main.rs?",
            "{api:?}"
        );
    }
}

#[tokio::test]
async fn parallel_tool_calls_arrive_in_order_with_their_arguments() {
    for (api, kind) in APIS {
        let calls = || {
            Reply::tool_calls(vec![
                ("read_file", json!({"path": "src/main.rs"})),
                (
                    "terminal",
                    json!({"command": "cargo test", "timeout_seconds": 60}),
                ),
            ])
        };
        let server = ScriptedServer::start(Script::replies([calls(), calls()]))
            .await
            .unwrap();
        let provider = client(&server, api, kind);
        let (whole, streamed, _) = both_ways(&provider).await;
        for r in [&whole, &streamed] {
            assert_eq!(r.finish_reason, FinishReason::ToolCalls, "{api:?}");
            let calls = r.message.calls();
            assert_eq!(calls.len(), 2, "{api:?}");
            assert_eq!(calls[0].function.name, "read_file");
            assert_eq!(calls[1].function.name, "terminal");
            let args: serde_json::Value =
                serde_json::from_str(&calls[1].function.arguments).unwrap();
            assert_eq!(
                args,
                json!({"command": "cargo test", "timeout_seconds": 60}),
                "{api:?}"
            );
            assert_ne!(calls[0].id, calls[1].id);
        }
    }
}

#[tokio::test]
async fn scripted_errors_are_classified_as_intended() {
    for (api, kind) in APIS {
        let server = ScriptedServer::start(Script::replies([
            Reply::context_overflow(api, 128_000, 131_072),
            Reply::output_cap_too_large(api, 100_000, 16_384),
            Reply::payload_too_large(),
        ]))
        .await
        .unwrap();
        let provider = client(&server, api, kind);
        let overflow = provider.complete(&request()).await.unwrap_err();
        assert!(
            matches!(
                overflow,
                LlmError::ContextOverflow {
                    limit: Some(128_000),
                    ..
                }
            ),
            "{api:?}: {overflow}"
        );
        let cap = provider.complete(&request()).await.unwrap_err();
        assert!(
            matches!(
                cap,
                LlmError::OutputCapTooLarge {
                    available: Some(16_384),
                    ..
                }
            ),
            "{api:?}: {cap}"
        );
        let big = provider.complete(&request()).await.unwrap_err();
        assert!(
            matches!(big, LlmError::PayloadTooLarge { .. }),
            "{api:?}: {big}"
        );
    }
}

#[tokio::test]
async fn a_broken_stream_hands_back_what_arrived() {
    for (api, kind) in APIS {
        let server = ScriptedServer::start(Script::replies([Reply::broken_stream(
            "The first half of an answer that never finishes",
        )]))
        .await
        .unwrap();
        let provider = client(&server, api, kind);
        let mut sink = |_e: StreamEvent| {};
        let err = provider.stream(&request(), &mut sink).await.unwrap_err();
        let LlmError::Interrupted { partial, .. } = &err else {
            panic!("{api:?}: {err}");
        };
        assert!(
            partial.message.text().starts_with("The first half"),
            "{api:?}: {err}"
        );
    }
}

#[tokio::test]
async fn an_exhausted_script_fails_loudly_and_keys_are_redacted() {
    let server = ScriptedServer::start(Script::replies([Reply::text("only one")]))
        .await
        .unwrap();
    let provider = client(&server, Api::ChatCompletions, ProviderKind::OpenAi);
    provider.complete(&request()).await.unwrap();
    let err = provider.complete(&request()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("script exhausted after 1 requests"),
        "{err}"
    );
    let captured = server.requests();
    assert_eq!(
        captured[0].headers.get("authorization").map(String::as_str),
        Some("[redacted]")
    );
    assert!(!format!("{captured:?}").contains("sk-test-secret-value"));
}

#[tokio::test]
async fn derived_usage_grows_with_the_request_and_the_simulated_cache_reports_the_shared_prefix() {
    let server = ScriptedServer::start(Script::responder(|_| Reply::text("ok")))
        .await
        .unwrap();
    server.simulate_prompt_cache(true);
    let provider = client(&server, Api::ChatCompletions, ProviderKind::OpenAi);
    let long = "context ".repeat(2_000);
    let mut first = ChatRequest::new("m", vec![Message::user(long.clone())]);
    first.system = Some("sys".into());
    let a = provider.complete(&first).await.unwrap();
    let mut second = first.clone();
    Arc::make_mut(&mut second.messages).push(Message::assistant("ok"));
    Arc::make_mut(&mut second.messages).push(Message::user("and then?"));
    let b = provider.complete(&second).await.unwrap();
    assert!(a.usage.prompt() > 3_000, "{:?}", a.usage);
    assert_eq!(a.usage.cache_read, 0, "nothing cached on the first call");
    assert!(b.usage.prompt() > a.usage.prompt());
    assert!(
        b.usage.cache_read >= 3_000 && b.usage.cache_read < b.usage.prompt(),
        "{:?}",
        b.usage
    );
}
