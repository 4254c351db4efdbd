//! Nothing internal reaches a provider: compacted output (in memory, and as written to a file)
//! goes through each client to a strict loopback endpoint that rejects any field its API does
//! not document, and `_`-prefixed keys anywhere in a message are never sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/strict.rs"]
mod strict;

use baton_core::compress::markers::{SUMMARY_KEY, is_summary_message};
use baton_core::compress::{CompressorConfig, Outcome};
use baton_core::engine::{CompressRequest, ContextEngine};
use baton_core::formats::{Document, load_file, parse_document};
use baton_core::message::{Content, ContentPart, Message, ToolCall};
use baton_llm::{ChatRequest, ProviderKind};
use serde_json::{Value, json};
use std::path::PathBuf;
use strict::StrictServer;

fn sample_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/samples/claude-code-session.jsonl")
}

/// The shipped Claude Code sample, compacted as `baton compress --force` does, and the same
/// document as it is written to a file.
async fn compacted_sample() -> (Document, Document) {
    let doc = load_file(&sample_path(), None).unwrap();
    let conv = &doc.conversations[0];
    let mut engine = baton_core::compress::Compressor::new(CompressorConfig::default());
    let result = engine
        .compress(CompressRequest {
            messages: (&conv.messages).into(),
            current_tokens: None,
            focus_topic: None,
            force: true,
        })
        .await;
    assert!(
        matches!(result.outcome, Outcome::Compressed),
        "{:?}",
        result.outcome
    );
    let mut compacted = doc.clone();
    compacted.conversations[0].messages = result.messages;
    let written = parse_document(&compacted.to_text(), None).unwrap();
    (compacted, written)
}

fn request_for(kind: ProviderKind, doc: &Document) -> ChatRequest {
    let model = match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::Responses => "gpt-5",
        _ => "gpt-4o",
    };
    let conv = &doc.conversations[0];
    let mut request = ChatRequest::new(model, conv.messages.clone());
    request.tools = conv.tools.clone().unwrap_or_default();
    request.max_output_tokens = Some(256);
    request
}

fn base_url(kind: ProviderKind, server: &StrictServer) -> String {
    match kind {
        ProviderKind::Anthropic => server.url.clone(),
        _ => format!("{}/v1", server.url),
    }
}

const CLIENTS: [ProviderKind; 3] = [
    ProviderKind::OpenAi,
    ProviderKind::Anthropic,
    ProviderKind::Responses,
];

#[tokio::test]
async fn the_compacted_file_holds_no_internal_key_and_its_summary_is_still_recognised() {
    let (compacted, written) = compacted_sample().await;
    assert!(
        compacted.conversations[0]
            .messages
            .iter()
            .any(|m| m.extra.contains_key(SUMMARY_KEY)),
        "in memory the summary carries its marker key"
    );
    let text = compacted.to_text();
    assert!(!text.contains("\"_baton"), "marker key written to the file");
    // Every message of the file is one a strict Chat Completions endpoint accepts as is.
    let file: Value = serde_json::from_str(&text).unwrap();
    let mut violations = Vec::new();
    for (i, m) in file["messages"].as_array().unwrap().iter().enumerate() {
        strict::openai_message(m, &format!("messages[{i}]"), &mut violations);
    }
    assert!(violations.is_empty(), "{violations:?}");
    // The summary is found again by its text.
    let messages = &written.conversations[0].messages;
    assert_eq!(messages.iter().filter(|m| is_summary_message(m)).count(), 1);
}

#[tokio::test]
async fn old_files_with_the_marker_key_are_still_recognised() {
    let mut m = Message::user("an old summary whose text has no prefix");
    m.extra.insert(SUMMARY_KEY.into(), json!(true));
    let old = json!([m.to_value(), {"role": "user", "content": "next"}]).to_string();
    let doc = parse_document(&old, None).unwrap();
    assert!(is_summary_message(&doc.conversations[0].messages[0]));
}

#[tokio::test]
async fn every_client_sends_compacted_output_that_a_strict_endpoint_accepts() {
    let (compacted, written) = compacted_sample().await;
    let server = StrictServer::start().await;
    for kind in CLIENTS {
        let provider = common::client(kind, &base_url(kind, &server), Some("sk-test"), 1);
        for (what, doc) in [("in memory", &compacted), ("from the file", &written)] {
            let response = provider.complete(&request_for(kind, doc)).await;
            let seen = server.seen();
            let last = seen.last().unwrap();
            assert!(
                last.violations.is_empty(),
                "{kind:?} {what}: {:?}",
                last.violations
            );
            assert_eq!(response.unwrap().message.text(), "ok", "{kind:?} {what}");
        }
    }
    assert_eq!(server.seen().len(), 6);
}

/// A message with `_`-keys at every level the clients write: the message, a content part, a
/// tool call and its function. Tool arguments keep theirs: they are the tool's data.
fn messages_with_internal_keys() -> Vec<Message> {
    let mut user = Message::user("");
    user.content = Some(Content::Parts(vec![ContentPart::text("look at this")]));
    if let Some(Content::Parts(parts)) = &mut user.content {
        parts[0].fields_mut().insert("_part_note".into(), json!(1));
    }
    user.extra.insert(SUMMARY_KEY.into(), json!(true));
    user.extra.insert("_private".into(), json!("x"));
    let mut call = ToolCall::function("call_1", "read", r#"{"_path":"a.rs"}"#);
    call.extra.insert("_call_note".into(), json!(1));
    call.function.extra.insert("_fn_note".into(), json!(1));
    let mut assistant = Message::assistant_tool_calls(vec![call]);
    assistant
        .extra
        .insert("_compressed_summary".into(), json!(true));
    let mut result = Message::tool("call_1", "fn main() {}");
    result.extra.insert("_baton_other".into(), json!(1));
    vec![user, assistant, result, Message::user("and now?")]
}

/// Keys of every object in `v` that are not inside an open value (`input`, `arguments`,
/// `parameters`): the structural keys a provider validates.
fn structural_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(obj) => {
            for (k, inner) in obj {
                out.push(k.clone());
                if !["input", "arguments", "parameters", "input_schema"].contains(&k.as_str()) {
                    structural_keys(inner, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| structural_keys(i, out)),
        _ => {}
    }
}

#[tokio::test]
async fn underscore_keys_are_never_sent_by_any_client() {
    let server = StrictServer::start().await;
    for kind in CLIENTS {
        let provider = common::client(kind, &base_url(kind, &server), Some("sk-test"), 1);
        let request = ChatRequest::new("gpt-4o", messages_with_internal_keys());
        let response = provider.complete(&request).await;
        let seen = server.seen();
        let body = &seen.last().unwrap().body;
        let mut keys = Vec::new();
        structural_keys(body, &mut keys);
        let internal: Vec<&String> = keys.iter().filter(|k| k.starts_with('_')).collect();
        assert!(internal.is_empty(), "{kind:?} sent {internal:?}: {body}");
        assert!(response.is_ok(), "{kind:?}: {response:?}");
        // The tool's own argument names are data and are kept.
        assert!(body.to_string().contains("_path"), "{kind:?}: {body}");
    }
}
