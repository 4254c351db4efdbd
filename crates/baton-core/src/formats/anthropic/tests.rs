//! Round trips, lossy cases and errors of the Anthropic converter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::conversation::Conversation;
use crate::formats::error::FormatError;
use crate::formats::notes::identical;
use crate::message::{Content, ContentPart, Message, Role};
use serde_json::json;

/// Anthropic → canonical → Anthropic, compared as values and as text (key order included).
fn assert_round_trip(body: &Value) -> Conversation {
    let conv = from_anthropic(body).unwrap();
    let back = to_anthropic(&conv);
    assert_eq!(&back, body);
    assert_eq!(back.to_string(), body.to_string(), "key order differs");
    conv
}

/// Canonical → Anthropic → canonical for a conversation written as OpenAI JSON.
fn assert_canonical_round_trip(messages: Value, tools: Option<Value>) -> Value {
    let conv = openai(messages, tools);
    let body = to_anthropic(&conv);
    assert_valid_anthropic(&body);
    let again = from_anthropic(&body).unwrap();
    assert_eq!(again, conv, "canonical round trip via {body:#}");
    body
}

fn openai(messages: Value, tools: Option<Value>) -> Conversation {
    let msgs = messages
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, m)| Message::from_value(m.clone(), i).unwrap())
        .collect();
    let mut conv = Conversation::new(msgs);
    conv.tools = tools.map(|t| t.as_array().unwrap().clone());
    conv
}

/// Roles alternate, and every tool_use is answered in the next (user) message.
fn assert_valid_anthropic(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    for pair in messages.windows(2) {
        assert_ne!(pair[0]["role"], pair[1]["role"], "roles must alternate");
        let ids = |m: &Value, ty: &str, key: &str| -> Vec<Value> {
            m["content"]
                .as_array()
                .map(|bs| {
                    bs.iter()
                        .filter(|b| b["type"] == ty)
                        .map(|b| b[key].clone())
                        .collect()
                })
                .unwrap_or_default()
        };
        let uses = ids(&pair[0], "tool_use", "id");
        if !uses.is_empty() {
            assert_eq!(uses, ids(&pair[1], "tool_result", "tool_use_id"));
        }
    }
    let no_markers = !body.to_string().contains(MARKER);
    assert!(no_markers, "bookkeeping leaked into the request: {body}");
}

fn weather_tool() -> Value {
    json!({
        "name": "get_weather",
        "description": "Current weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }
    })
}

#[test]
fn multi_turn_tool_use_round_trips() {
    let body = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are a helpful assistant.",
        "messages": [
            {"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C, cloudy"}
            ]},
            {"role": "assistant", "content": "It is 18°C and cloudy in Paris."},
            {"role": "user", "content": "Thanks!"}
        ],
        "tools": [weather_tool()],
        "temperature": 0.7,
        "metadata": {"user_id": "u-42"}
    });
    let conv = assert_round_trip(&body);
    let roles: Vec<Role> = conv.messages.iter().map(|m| m.role).collect();
    use Role::*;
    assert_eq!(roles, [System, User, Assistant, Tool, Assistant, User]);
    let call = &conv.messages[2].calls()[0];
    assert_eq!(call.function.arguments, r#"{"city":"Paris"}"#);
    assert_eq!(
        conv.messages[2].content,
        Some(Content::Text("Let me check.".into()))
    );
    assert_eq!(conv.messages[3].tool_call_id.as_deref(), Some("toolu_01"));
    assert_eq!(
        conv.system_prompt().as_deref(),
        Some("You are a helpful assistant.")
    );
    let tool = &conv.tools.as_ref().unwrap()[0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["city"]));
    assert_eq!(conv.extra["max_tokens"], 1024);
}

#[test]
fn parallel_calls_and_results_with_errors_and_list_content_round_trip() {
    let body = json!({
        "model": "claude-opus-4-1",
        "messages": [
            {"role": "user", "content": "Compare Paris and Oslo."},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Oslo", "units": {"temp": "C", "precision": 0.5}}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": [
                    {"type": "text", "text": "18°C"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
                ]},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "service unavailable", "is_error": true},
                {"type": "text", "text": "Also, keep it short."}
            ]},
            {"role": "assistant", "content": "Paris is 18°C; Oslo is unknown."}
        ],
        "max_tokens": 512
    });
    let conv = assert_round_trip(&body);
    use Role::*;
    let roles: Vec<Role> = conv.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [User, Assistant, Tool, Tool, User, Assistant]);
    assert_eq!(conv.messages[1].content, Some(Content::Null));
    assert_eq!(conv.messages[3].extra["is_error"], true);
    assert_eq!(
        conv.messages[4].content,
        Some(Content::Text("Also, keep it short.".into()))
    );
    let Some(Content::Parts(parts)) = &conv.messages[2].content else {
        panic!("list content expected")
    };
    assert_eq!(
        parts[1].fields()["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}

#[test]
fn images_base64_and_url_round_trip() {
    let body = json!({
        "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQSkZJRg=="}, "cache_control": {"type": "ephemeral"}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
            {"type": "image", "source": {"type": "file", "file_id": "file_011"}},
            {"type": "text", "text": "What differs between these?"}
        ]}]
    });
    let conv = assert_round_trip(&body);
    let Some(Content::Parts(parts)) = &conv.messages[0].content else {
        panic!("parts expected")
    };
    let kinds: Vec<&str> = parts.iter().map(ContentPart::type_name).collect();
    assert_eq!(kinds, ["image_url", "image_url", "image", "text"]);
    assert_eq!(parts[0].fields()["cache_control"]["type"], "ephemeral");
    assert_eq!(
        parts[1].fields()["image_url"]["url"],
        "https://example.com/cat.png"
    );
    assert!(parts.iter().all(|p| !p.fields().contains_key(MARKER)));
}

#[test]
fn thinking_with_signature_and_redacted_thinking_round_trip() {
    let body = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 16000,
        "thinking": {"type": "enabled", "budget_tokens": 10000},
        "messages": [
            {"role": "user", "content": "Is 1009 prime?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Check divisors up to 31.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "text", "text": "Let me verify with the calculator."},
                {"type": "tool_use", "id": "toolu_c", "name": "calc", "input": {"expr": "1009 % 7"}},
                {"type": "thinking", "thinking": "Interleaved second thought.", "signature": "sig2"},
                {"type": "tool_use", "id": "toolu_d", "name": "calc", "input": {"expr": "1009 % 11"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_c", "content": "1"},
                {"type": "tool_result", "tool_use_id": "toolu_d", "content": "8"}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "No divisor found.", "signature": "sig3"},
                {"type": "text", "text": "Yes, 1009 is prime."}
            ]}
        ]
    });
    let conv = assert_round_trip(&body);
    let details = &conv.messages[1].reasoning["reasoning_details"];
    assert_eq!(details[0]["type"], "reasoning.text");
    assert_eq!(details[0]["signature"], "EqQBCgIYAhIM1gbcDa9GJwZA2b3h");
    assert_eq!(details[0]["format"], REASONING_FORMAT);
    assert_eq!(details[1]["type"], "reasoning.encrypted");
    assert!(conv.messages[1].extra[MARKER]["order"].is_array());
    // Default block order needs no bookkeeping.
    assert!(!conv.messages[4].extra.contains_key(MARKER));
    assert_eq!(
        conv.messages[4].content,
        Some(Content::Text("Yes, 1009 is prime.".into()))
    );
}

#[test]
fn system_block_list_with_cache_control_round_trips() {
    let body = json!({
        "model": "claude-haiku-4-5",
        "max_tokens": 256,
        "system": [
            {"type": "text", "text": "You are a code reviewer."},
            {"type": "text", "text": "Style guide: …long…", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Review this diff.", "cache_control": {"type": "ephemeral"}}
        ]}],
        "tools": [
            {"type": "custom", "name": "read_file", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
        ],
        "tool_choice": {"type": "auto"},
        "stream": true
    });
    let conv = assert_round_trip(&body);
    assert_eq!(conv.messages[0].role, Role::System);
    assert!(matches!(&conv.messages[0].content, Some(Content::Parts(p)) if p.len() == 2));
    let tools = conv.tools.as_ref().unwrap();
    assert_eq!(tools[0]["function"]["name"], "read_file");
    assert_eq!(tools[1]["type"], "web_search_20250305");
}

#[test]
fn unknown_fields_blocks_and_key_orders_round_trip() {
    // Shapes seen in Claude Code logs: response objects as messages, `caller` on tool_use,
    // tool_result keys in another order, unknown block types.
    let body = json!([
        {"role": "user", "content": [{"type": "text", "text": "Find the bug."}]},
        {"model": "claude-opus-4-6", "id": "msg_01", "type": "message", "role": "assistant",
         "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "bug"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found it.", "citations": [{"type": "web_search_result_location", "url": "https://x"}]},
            {"type": "tool_use", "id": "toolu_e", "name": "Read", "input": {"path": "a.rs"}, "caller": {"type": "direct"}}
         ],
         "stop_reason": "tool_use", "stop_sequence": null,
         "usage": {"input_tokens": 10, "output_tokens": 5}},
        {"role": "user", "content": [
            {"tool_use_id": "toolu_e", "type": "tool_result", "content": "fn main() {}", "is_error": false},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}, "title": "Notes"}
        ], "uuid": "5f0c"},
        {"content": "ok", "role": "assistant"},
        {"role": "assistant", "content": "and a second assistant message"},
        {"role": "user", "content": []},
        {"role": "user", "content": [{"type": "tool_use", "id": "odd", "name": "n", "input": {}}]}
    ]);
    let conv = assert_round_trip(&body);
    assert_eq!(conv.messages[1].extra["usage"]["output_tokens"], 5);
    assert_eq!(
        conv.messages[1].calls()[0].extra["caller"]["type"],
        "direct"
    );
}

#[test]
fn odd_but_accepted_shapes_round_trip() {
    let body = json!({
        "messages": [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "noargs"},
                {"type": "tool_use", "id": "t2", "name": "list", "input": [1, 2]},
                {"type": "text", "text": ""},
                {"type": "thinking", "thinking": "t", "signature": "s", "index": 0}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1"},
                {"type": "tool_result", "tool_use_id": "t2", "content": null},
                {"type": "image", "source": {"data": "AAAA", "media_type": "image/gif", "type": "base64"}},
                {"type": "image", "image_url": "x", "source": {"type": "url", "url": "https://y"}},
                {"type": "image_url", "image_url": {"url": "https://z", "detail": "low"}}
            ]},
            {"role": "user", "content": "two user messages in a row"}
        ],
        "system": "",
        "tools": [{"input_schema": {"type": "object"}, "name": "noargs", "description": "d"}]
    });
    assert_round_trip(&body);
}

#[test]
fn bare_array_round_trips_and_gains_an_object_when_needed() {
    let body =
        json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    let mut conv = assert_round_trip(&body);
    conv.messages.insert(0, Message::system("Be brief."));
    let out = to_anthropic(&conv);
    assert_eq!(out["system"], "Be brief.");
    assert_eq!(out["messages"], body);
}

#[test]
fn edited_canonical_content_wins_over_recorded_original() {
    let body = json!({"messages": [
        {"role": "user", "content": [
            {"type": "image", "image_url": "x", "source": {"type": "url", "url": "https://y"}}
        ]}
    ]});
    let mut conv = from_anthropic(&body).unwrap();
    let Some(Content::Parts(parts)) = &mut conv.messages[0].content else {
        panic!("parts expected")
    };
    parts[0]
        .fields_mut()
        .insert("image_url".into(), json!({"url": "https://new"}));
    let out = to_anthropic(&conv);
    let block = &out["messages"][0]["content"][0];
    assert_eq!(
        block["source"],
        json!({"type": "url", "url": "https://new"})
    );
    assert!(!out.to_string().contains(MARKER));
}

#[test]
fn openai_conversations_round_trip_through_anthropic() {
    let messages = json!([
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\",\"days\":[1,2]}"}}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "4°C"},
        {"role": "user", "content": "And this picture?"},
        {"role": "assistant", "content": "Both answered; send the picture."},
        {"role": "user", "content": [
            {"type": "text", "text": "Here:"},
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklGRg=="}},
            {"type": "image_url", "image_url": {"url": "https://example.com/sky.jpg"}}
        ]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_3", "type": "function", "function": {"name": "describe", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "call_3", "content": "A clear sky."},
        {"role": "assistant", "content": "A clear sky."}
    ]);
    let tools = json!([{"type": "function", "function": {
        "name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}}]);
    let body = assert_canonical_round_trip(messages, Some(tools));
    assert_eq!(body["system"], "You answer weather questions.");
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["messages"][2]["content"][2]["type"], "text");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    let image = &body["messages"][4]["content"][1];
    assert_eq!(image["source"]["media_type"], "image/webp");
}

#[test]
fn unrepresentable_canonical_shapes_still_give_valid_anthropic() {
    let conv = openai(
        json!([
            {"role": "developer", "content": "Dev rules."},
            {"role": "system", "content": "More rules."},
            {"role": "user", "content": "a", "name": "alice"},
            {"role": "user", "content": "b"},
            {"role": "system", "content": "mid-conversation note"},
            {"role": "assistant", "content": "", "reasoning_content": "unsigned", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "r", "name": "f"},
            {"role": "assistant", "content": "x"},
            {"role": "assistant", "content": "y"}
        ]),
        None,
    );
    let body = to_anthropic(&conv);
    assert_valid_anthropic(&body);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Dev rules."}, {"type": "text", "text": "More rules."}])
    );
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[0]["content"][2]["text"], "mid-conversation note");
    assert_eq!(
        msgs[1]["content"],
        json!([{"type": "tool_use", "id": "c1", "name": "f", "input": {"_raw_arguments": "not json"}}])
    );
    assert_eq!(msgs[3]["content"].as_array().unwrap().len(), 2);
}

fn shape_at(err: FormatError) -> String {
    match err {
        FormatError::Shape { at, .. } => at,
        other => panic!("expected a shape error, got {other:?}"),
    }
}

#[test]
fn bad_input_names_the_location() {
    let cases = [
        (json!("hello"), "$"),
        (json!({"system": "s"}), "messages"),
        (json!({"messages": {}}), "messages"),
        (json!({"messages": [], "system": 5}), "system"),
        (json!({"messages": [], "tools": {}}), "tools"),
        (json!({"messages": [], "tools": [1]}), "tools[0]"),
        (json!({"messages": [7]}), "messages[0]"),
        (
            json!({"messages": [{"role": "system", "content": "x"}]}),
            "messages[0].role",
        ),
        (
            json!({"messages": [{"role": "user"}]}),
            "messages[0].content",
        ),
        (
            json!({"messages": [{"role": "user", "content": 3}]}),
            "messages[0].content",
        ),
        (
            json!({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "tool_result"}]}]}),
            "messages[1].content[0].tool_use_id",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 1}]}]}),
            "messages[0].content[0].content",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"text": "no type"}]}]}),
            "messages[0].content[0].type",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}),
            "messages[0].content[0].text",
        ),
        (
            json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "i"}]}]}),
            "messages[0].content[0].name",
        ),
        (
            json!({"messages": [{"role": "assistant", "content": [{"type": "thinking"}]}]}),
            "messages[0].content[0].thinking",
        ),
        (
            json!({"messages": [{"role": "assistant", "content": [{"type": "redacted_thinking"}]}]}),
            "messages[0].content[0].data",
        ),
        (
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [1]}]}]),
            "[0].content[0].content[0]",
        ),
    ];
    for (input, at) in cases {
        let err = from_anthropic(&input).unwrap_err();
        let text = err.to_string();
        assert_eq!(shape_at(err), at, "for {input}");
        assert!(text.contains(at) && text.contains("expected"), "{text}");
    }
}

#[test]
fn error_display_reads_well() {
    let err = from_anthropic(
        &json!({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at `messages[0].content[0].tool_use_id`: expected the id of the tool_use block this \
         result answers, found nothing (field missing)"
    );
}

/// Every Claude Code / Agent SDK log in the shared corpus, as bare message arrays.
#[test]
fn real_claude_logs_round_trip() {
    let root = std::path::Path::new("/work/shared/data/corpus");
    if !root.exists() {
        eprintln!("skipping: {} not present", root.display());
        return;
    }
    let mut files = Vec::new();
    collect_files(root, &mut files);
    let mut total = 0;
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let messages: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|r| r.get("message").cloned())
            .filter(|m| {
                matches!(m["role"].as_str(), Some("user" | "assistant"))
                    && m.get("content").is_some()
            })
            .collect();
        if messages.is_empty() {
            continue;
        }
        total += messages.len();
        let body = Value::Array(messages);
        let conv = from_anthropic(&body).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let back = to_anthropic(&conv);
        assert!(
            identical(&back, &body),
            "{} did not round-trip",
            file.display()
        );
    }
    assert!(total > 1000, "only {total} messages found");
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "txt")
        ) {
            out.push(path);
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const KEYS: [&str; 24] = [
        "role",
        "content",
        "type",
        "text",
        "messages",
        "system",
        "tools",
        "tool_use_id",
        "id",
        "name",
        "input",
        "source",
        "thinking",
        "signature",
        "data",
        "is_error",
        "media_type",
        "url",
        "input_schema",
        "image_url",
        "cache_control",
        "description",
        "format",
        "x",
    ];
    const STRINGS: [&str; 14] = [
        "user",
        "assistant",
        "system",
        "text",
        "tool_use",
        "tool_result",
        "image",
        "thinking",
        "redacted_thinking",
        "base64",
        "url",
        "function",
        "data:a;base64,b",
        "",
    ];

    pub(super) fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop::sample::select(STRINGS.to_vec()).prop_map(Value::from),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 96, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..6).prop_map(
                    |kv| {
                        Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                    }
                ),
            ]
        })
    }

    /// A block from the vocabulary Anthropic uses, with extra fields and shuffled keys.
    fn arb_block(user: bool) -> impl Strategy<Value = Value> {
        let templates = if user {
            vec![
                json!({"type": "text", "text": "hello"}),
                json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}),
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}),
                json!({"type": "image", "source": {"type": "url", "url": "https://e/x.png"}}),
                json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
                json!({"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "r"}], "is_error": true}),
                json!({"type": "document", "source": {"type": "text", "data": "d"}}),
            ]
        } else {
            vec![
                json!({"type": "text", "text": "answer"}),
                json!({"type": "tool_use", "id": "t1", "name": "f", "input": {"a": [1, 2.5, null]}}),
                json!({"type": "tool_use", "id": "t2", "name": "g", "input": {}}),
                json!({"type": "thinking", "thinking": "hmm", "signature": "sig"}),
                json!({"type": "redacted_thinking", "data": "enc"}),
                json!({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}),
            ]
        };
        (prop::sample::select(templates), any::<u64>(), any::<bool>())
            .prop_map(|(block, seed, extra)| decorate(block, seed, extra))
    }

    /// Adds an unknown field (sometimes) and permutes the keys, deterministically from `seed`.
    fn decorate(value: Value, seed: u64, extra: bool) -> Value {
        let Value::Object(mut obj) = value else {
            return value;
        };
        if extra {
            obj.insert("x_extra".into(), json!({"seed": seed % 7}));
        }
        let mut entries: Vec<(String, Value)> = obj.into_iter().collect();
        let mut s = seed;
        for i in (1..entries.len()).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            entries.swap(i, (s >> 33) as usize % (i + 1));
        }
        Value::Object(entries.into_iter().collect())
    }

    fn arb_message() -> impl Strategy<Value = Value> {
        any::<bool>().prop_flat_map(|user| {
            let content = prop_oneof![
                Just(json!("plain text")),
                prop::collection::vec(arb_block(user), 0..5).prop_map(Value::Array),
            ];
            (content, any::<u64>(), any::<bool>()).prop_map(move |(content, seed, extra)| {
                let role = if user { "user" } else { "assistant" };
                decorate(json!({"role": role, "content": content}), seed, extra)
            })
        })
    }

    fn arb_body() -> impl Strategy<Value = Value> {
        let system = prop_oneof![
            Just(None),
            Just(Some(json!("sys"))),
            Just(Some(
                json!([{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}])
            )),
        ];
        (
            prop::collection::vec(arb_message(), 0..6),
            system,
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|(messages, system, seed, tools)| {
                let mut body = json!({"model": "m", "messages": messages, "max_tokens": 10});
                if let Some(system) = system {
                    body["system"] = system;
                }
                if tools {
                    body["tools"] = json!([weather_tool()]);
                }
                decorate(body, seed, false)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn arbitrary_json_never_panics(value in arb_json()) {
            if let Ok(conv) = from_anthropic(&value) {
                // Whatever is accepted comes back exactly.
                prop_assert_eq!(to_anthropic(&conv).to_string(), value.to_string());
            }
        }

        #[test]
        fn generated_bodies_round_trip_exactly(body in arb_body()) {
            let conv = from_anthropic(&body);
            prop_assert!(conv.is_ok(), "{:?}", conv.err());
            let back = conv.map(|c| to_anthropic(&c)).unwrap_or_default();
            prop_assert_eq!(back.to_string(), body.to_string());
        }
    }
}
