//! A strict loopback endpoint: it accepts a request only when every key at every structural
//! level is one the provider's API documents (a closed allow-list per object kind), and
//! answers 400 naming the first unknown field otherwise — as OpenAI ("Additional properties
//! are not allowed"), Anthropic ("Extra inputs are not permitted") and strict gateways do.
//! Values the schemas leave open (tool arguments, JSON schemas, metadata) are not searched.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

type Object = Map<String, Value>;

/// What the server saw: the path, the body and the violations found in it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub body: Value,
    pub violations: Vec<String>,
}

pub struct StrictServer {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl StrictServer {
    pub async fn start() -> StrictServer {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new().fallback(handle).with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        StrictServer {
            url: format!("http://{addr}"),
            seen,
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn handle(State(seen): State<Arc<Mutex<Vec<Seen>>>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (violations, answer) = if path.ends_with("/chat/completions") {
        (openai_chat_violations(&body), openai_answer())
    } else if path.ends_with("/v1/messages") {
        (anthropic_violations(&body), anthropic_answer())
    } else if path.ends_with("/responses") {
        (responses_violations(&body), responses_answer())
    } else {
        (vec![format!("unknown endpoint {path}")], Value::Null)
    };
    seen.lock().unwrap().push(Seen {
        path,
        body,
        violations: violations.clone(),
    });
    match violations.first() {
        Some(v) => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {"type": "invalid_request_error",
                "message": format!("Additional properties are not allowed: {v}")}})),
        )
            .into_response(),
        None => axum::Json(answer).into_response(),
    }
}

fn openai_answer() -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
}

fn anthropic_answer() -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 1}})
}

fn responses_answer() -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "model": "m",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
        "usage": {"input_tokens": 10, "output_tokens": 1, "total_tokens": 11}})
}

/// Checks `value` is an object whose keys are all in `allowed`; returns it for deeper checks.
fn object<'a>(
    value: &'a Value,
    at: &str,
    allowed: &[&str],
    out: &mut Vec<String>,
) -> Option<&'a Object> {
    let Some(obj) = value.as_object() else {
        out.push(format!("{at}: expected an object"));
        return None;
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            out.push(format!("'{key}' was unexpected at {at}"));
        }
    }
    Some(obj)
}

fn each(value: Option<&Value>) -> impl Iterator<Item = (usize, &Value)> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------

const OPENAI_BODY: &[&str] = &[
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "stream",
    "stream_options",
    "n",
    "seed",
    "response_format",
    "user",
    "reasoning_effort",
    "metadata",
    "store",
    "logprobs",
    "top_logprobs",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "service_tier",
];

pub fn openai_chat_violations(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = object(body, "body", OPENAI_BODY, &mut out) else {
        return out;
    };
    for (i, m) in each(obj.get("messages")) {
        openai_message(m, &format!("messages[{i}]"), &mut out);
    }
    for (i, t) in each(obj.get("tools")) {
        openai_tool(t, &format!("tools[{i}]"), &mut out);
    }
    out
}

/// One message as Chat Completions documents it, per role.
pub fn openai_message(m: &Value, at: &str, out: &mut Vec<String>) {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let allowed: &[&str] = match role {
        "system" | "developer" | "user" => &["role", "content", "name"],
        "assistant" => &[
            "role",
            "content",
            "name",
            "tool_calls",
            "refusal",
            "audio",
            "function_call",
        ],
        "tool" => &["role", "content", "tool_call_id"],
        other => {
            out.push(format!("{at}.role: unknown role `{other}`"));
            return;
        }
    };
    let Some(obj) = object(m, at, allowed, out) else {
        return;
    };
    if let Some(Value::Array(parts)) = obj.get("content") {
        for (j, p) in parts.iter().enumerate() {
            let at = format!("{at}.content[{j}]");
            let allowed: &[&str] = match p.get("type").and_then(Value::as_str) {
                Some("text") => &["type", "text"],
                Some("image_url") => &["type", "image_url"],
                Some("input_audio") => &["type", "input_audio"],
                Some("file") => &["type", "file"],
                Some("refusal") => &["type", "refusal"],
                _ => {
                    out.push(format!("{at}.type: unknown content part type"));
                    continue;
                }
            };
            object(p, &at, allowed, out);
        }
    }
    for (j, call) in each(obj.get("tool_calls")) {
        let at = format!("{at}.tool_calls[{j}]");
        if let Some(c) = object(call, &at, &["id", "type", "function"], out)
            && let Some(f) = c.get("function")
        {
            object(f, &format!("{at}.function"), &["name", "arguments"], out);
        }
    }
}

fn openai_tool(t: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(obj) = object(t, at, &["type", "function"], out)
        && let Some(f) = obj.get("function")
    {
        object(
            f,
            &format!("{at}.function"),
            &["name", "description", "parameters", "strict"],
            out,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------

const ANTHROPIC_BODY: &[&str] = &[
    "model",
    "messages",
    "system",
    "max_tokens",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "stream",
    "metadata",
    "thinking",
    "service_tier",
];

pub fn anthropic_violations(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = object(body, "body", ANTHROPIC_BODY, &mut out) else {
        return out;
    };
    if let Some(Value::Array(blocks)) = obj.get("system") {
        for (i, b) in blocks.iter().enumerate() {
            object(
                b,
                &format!("system[{i}]"),
                &["type", "text", "cache_control", "citations"],
                &mut out,
            );
        }
    }
    for (i, m) in each(obj.get("messages")) {
        let at = format!("messages[{i}]");
        let Some(msg) = object(m, &at, &["role", "content"], &mut out) else {
            continue;
        };
        match msg.get("role").and_then(Value::as_str) {
            Some("user" | "assistant") => {}
            _ => out.push(format!("{at}.role must be user or assistant")),
        }
        for (j, b) in each(msg.get("content")) {
            anthropic_block(b, &format!("{at}.content[{j}]"), &mut out);
        }
    }
    for (i, t) in each(obj.get("tools")) {
        object(
            t,
            &format!("tools[{i}]"),
            &[
                "name",
                "description",
                "input_schema",
                "cache_control",
                "type",
            ],
            &mut out,
        );
    }
    out
}

fn anthropic_block(b: &Value, at: &str, out: &mut Vec<String>) {
    let allowed: &[&str] = match b.get("type").and_then(Value::as_str) {
        Some("text") => &["type", "text", "cache_control", "citations"],
        Some("image") => &["type", "source", "cache_control"],
        Some("document") => &[
            "type",
            "source",
            "cache_control",
            "title",
            "context",
            "citations",
        ],
        Some("tool_use") => &["type", "id", "name", "input", "cache_control"],
        Some("tool_result") => &[
            "type",
            "tool_use_id",
            "content",
            "is_error",
            "cache_control",
        ],
        Some("thinking") => &["type", "thinking", "signature"],
        Some("redacted_thinking") => &["type", "data"],
        _ => {
            out.push(format!("{at}.type: unknown block type"));
            return;
        }
    };
    if let Some(obj) = object(b, at, allowed, out)
        && obj.get("type").and_then(Value::as_str) == Some("tool_result")
    {
        for (k, inner) in each(obj.get("content")) {
            anthropic_block(inner, &format!("{at}.content[{k}]"), out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------

const RESPONSES_BODY: &[&str] = &[
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stream",
    "store",
    "include",
    "reasoning",
    "previous_response_id",
    "metadata",
    "text",
    "truncation",
    "user",
];

pub fn responses_violations(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = object(body, "body", RESPONSES_BODY, &mut out) else {
        return out;
    };
    for (i, item) in each(obj.get("input")) {
        let at = format!("input[{i}]");
        let allowed: &[&str] = match item.get("type").and_then(Value::as_str) {
            None | Some("message") => &["type", "role", "content", "id", "status"],
            Some("function_call") => &["type", "call_id", "name", "arguments", "id", "status"],
            Some("function_call_output") => &["type", "call_id", "output", "id", "status"],
            Some("reasoning") => &["type", "id", "summary", "encrypted_content", "content"],
            Some(other) => {
                out.push(format!("{at}.type: unknown item type `{other}`"));
                continue;
            }
        };
        let Some(it) = object(item, &at, allowed, &mut out) else {
            continue;
        };
        if let Some(Value::Array(parts)) = it.get("content") {
            for (j, p) in parts.iter().enumerate() {
                let at = format!("{at}.content[{j}]");
                let allowed: &[&str] = match p.get("type").and_then(Value::as_str) {
                    Some("input_text") => &["type", "text"],
                    Some("output_text") => &["type", "text", "annotations"],
                    Some("input_image") => &["type", "image_url", "file_id", "detail"],
                    Some("input_file") => &["type", "file_id", "file_data", "filename"],
                    _ => {
                        out.push(format!("{at}.type: unknown content type"));
                        continue;
                    }
                };
                object(p, &at, allowed, &mut out);
            }
        }
    }
    for (i, t) in each(obj.get("tools")) {
        object(
            t,
            &format!("tools[{i}]"),
            &["type", "name", "description", "parameters", "strict"],
            &mut out,
        );
    }
    out
}
