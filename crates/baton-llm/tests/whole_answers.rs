//! Servers that ignore `stream: true` and answer with one JSON document: the answer is parsed
//! whole and replayed to the stream's sink, not reported as a stream that never finished.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::message::Message;
use baton_llm::{ChatRequest, ProviderKind, StreamEvent};
use common::{client, fixture};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn a_json_answer_to_a_streamed_request_is_parsed_whole_in_every_api() {
    for (kind, file, base) in [
        (ProviderKind::OpenAi, "openai_chat_completion.json", "/v1"),
        (ProviderKind::Anthropic, "anthropic_message.json", ""),
        (ProviderKind::Responses, "responses_response.json", "/v1"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(fixture(file), "application/json"),
            )
            .mount(&server)
            .await;
        let provider = client(kind, &format!("{}{base}", server.uri()), Some("sk-x"), 1);
        let request = ChatRequest::new("m", vec![Message::user("hi")]);
        let whole = provider.complete(&request).await.unwrap();
        let mut deltas = String::new();
        let mut usage_seen = false;
        let streamed = {
            let mut sink = |e: StreamEvent| match e {
                StreamEvent::TextDelta(t) => deltas.push_str(&t),
                StreamEvent::Usage(_) => usage_seen = true,
                _ => {}
            };
            provider.stream(&request, &mut sink).await.unwrap()
        };
        assert_eq!(streamed.message, whole.message, "{kind:?}");
        assert_eq!(streamed.usage, whole.usage, "{kind:?}");
        assert_eq!(
            deltas,
            whole.message.text(),
            "{kind:?}: the text reaches the sink"
        );
        assert!(usage_seen, "{kind:?}");
    }
}
