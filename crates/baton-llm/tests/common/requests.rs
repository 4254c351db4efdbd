//! The conversation every client test sends, so the snapshots of the three wire formats can be
//! compared side by side.

use baton_core::caching::CacheTtl;
use baton_core::message::{Message, ToolCall};
use baton_llm::ChatRequest;
use serde_json::json;

pub fn sample_request(model: &str) -> ChatRequest {
    let mut request = ChatRequest::new(
        model,
        vec![
            Message::user("What's the weather in Paris?"),
            Message::assistant_tool_calls(vec![ToolCall::function(
                "call_1",
                "get_weather",
                r#"{"location":"Paris"}"#,
            )]),
            Message::tool("call_1", "18°C, light rain"),
            Message::user("Thanks. And tomorrow?"),
        ],
    );
    request.system = Some("You are a concise assistant.".into());
    request.tools = vec![json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"]
            }
        }
    })];
    request.max_output_tokens = Some(512);
    request.temperature = Some(0.2);
    request.stop = vec!["</answer>".into()];
    request.cache = Some(CacheTtl::FiveMinutes);
    request
}
