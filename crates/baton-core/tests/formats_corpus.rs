//! Loading real files: every normalized corpus file and every sample loads, and writing a loaded
//! document back gives the same JSON.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::formats::{Dialect, FormatName, Layout, load_file, parse_document};
use serde_json::Value;
use std::path::Path;

fn jsonl_values(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Loads a records file and checks that writing it back reproduces each record's JSON value,
/// key order included.
fn assert_records_round_trip(path: &Path) {
    let doc = load_file(path, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.dialect, Dialect::OpenAi, "{}", path.display());
    assert_eq!(doc.layout, Layout::ObjectLines, "{}", path.display());
    let originals = jsonl_values(path);
    assert_eq!(
        doc.conversations.len(),
        originals.len(),
        "{}",
        path.display()
    );
    let written = doc.to_text();
    // The direct writer's text is, byte for byte, serde_json's text of each record's value.
    let through_values: String = doc
        .conversations
        .iter()
        .map(|c| baton_core::formats::openai::conversation_to_object(c).to_string() + "\n")
        .collect();
    assert!(
        written == through_values,
        "{}: the direct writer's text differs from serde_json's",
        path.display()
    );
    for (i, (line, original)) in written.lines().zip(&originals).enumerate() {
        let back: Value = serde_json::from_str(line).unwrap();
        assert_eq!(&back, original, "{} record {i} changed", path.display());
        let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(
            keys(&back),
            keys(original),
            "{} record {i} key order",
            path.display()
        );
    }
}

#[test]
fn every_normalized_corpus_file_loads_and_round_trips() {
    let Some(dir) = common::shared_normalized() else {
        return;
    };
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
            assert_records_round_trip(&path);
            files += 1;
        }
    }
    assert!(
        files >= 8,
        "expected the 8 normalized sources, found {files}"
    );
}

#[test]
fn sample_records_load_and_round_trip() {
    let dir = common::samples_dir();
    assert_records_round_trip(&dir.join("tau-bench-airline.jsonl"));
    assert_records_round_trip(&dir.join("tielec-ja.jsonl"));
}

#[test]
fn sample_sharegpt_dataset_loads_with_tool_calls_and_round_trips() {
    let path = common::samples_dir().join("glaive-toolcall-zh.json");
    let doc = load_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.dialect, Dialect::ShareGpt);
    assert_eq!(doc.layout, Layout::ObjectArray);
    assert_eq!(doc.conversations.len(), 40);
    let calls: usize = doc
        .conversations
        .iter()
        .flat_map(|c| &c.messages)
        .map(|m| m.calls().len())
        .sum();
    assert!(calls > 0, "function_call turns become tool calls");
    let original: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let back: Value = serde_json::from_str(&doc.to_text()).unwrap();
    assert_eq!(back, original);
}

#[test]
fn raw_sharegpt_corpus_files_load() {
    let Some(dir) = common::shared_corpus() else {
        return;
    };
    for name in [
        "glaive_toolcall_zh_demo.json",
        "glaive_toolcall_en_demo.json",
    ] {
        let path = dir.join("llamafactory-glaive-toolcall").join(name);
        let doc = load_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc.conversations.len(), 300, "{name}");
    }
}

#[test]
fn forcing_a_format_overrides_detection() {
    let text = r#"[{"role":"user","content":"hi"}]"#;
    let doc = parse_document(text, Some(FormatName::Anthropic)).unwrap();
    assert_eq!(doc.dialect, Dialect::Anthropic);
    let err = parse_document(text, Some(FormatName::Records)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("records") && msg.contains("array of messages"),
        "{msg}"
    );
}

#[test]
fn converting_records_to_anthropic_and_back_keeps_the_conversation() {
    let path = common::samples_dir().join("tau-bench-airline.jsonl");
    let doc = load_file(&path, None).unwrap();
    let anthropic = doc.converted_to(Dialect::Anthropic).to_text();
    let back = parse_document(&anthropic, Some(FormatName::Anthropic)).unwrap();
    for (a, b) in doc.conversations.iter().zip(&back.conversations) {
        let text = |c: &baton_core::Conversation| {
            c.messages
                .iter()
                .map(|m| (m.role, m.text(), m.calls().len()))
                .collect::<Vec<_>>()
        };
        assert_eq!(text(a), text(b));
    }
}

#[test]
fn converting_anthropic_to_openai_drops_round_trip_notes() {
    let body = serde_json::json!({
        "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a b"}]}
        ],
        "max_tokens": 100
    });
    let doc = parse_document(&body.to_string(), None).unwrap();
    assert_eq!(doc.dialect, Dialect::Anthropic);
    assert_eq!(
        doc.to_text().trim(),
        body.to_string(),
        "same-dialect write is exact"
    );
    let openai = doc.converted_to(Dialect::OpenAi).to_text();
    assert!(!openai.contains("_anthropic"), "{openai}");
    let back = parse_document(&openai, None).unwrap();
    assert_eq!(back.dialect, Dialect::OpenAi);
    let msgs = &back.conversations[0].messages;
    assert_eq!(msgs[2].calls()[0].function.name, "ls");
    assert_eq!(msgs[3].tool_call_id.as_deref(), Some("t1"));
}
