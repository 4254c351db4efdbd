//! Bad input: errors name the file, the line or message index, and what was expected; nothing
//! panics on arbitrary JSON.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::formats::{FormatName, load_file, parse_document};
use proptest::prelude::*;
use serde_json::{Value, json};

fn load_err(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    load_file(&path, None).unwrap_err().to_string()
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let err = load_err(
        "broken.json",
        "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": }\n]",
    );
    assert!(err.contains("broken.json:3:"), "{err}");
    assert!(err.contains("invalid JSON"), "{err}");
}

#[test]
fn invalid_jsonl_line_names_its_line() {
    let text = "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"assistant\",\"content\":\"b\"}\n{not json}\n";
    let err = load_err("chat.jsonl", text);
    assert!(err.contains("chat.jsonl:3:"), "{err}");
}

#[test]
fn tool_message_without_tool_call_id_names_the_message_and_field() {
    let text = json!([
        {"role": "user", "content": "run it"},
        {"role": "tool", "content": "ok"}
    ])
    .to_string();
    let err = load_err("t.json", &text);
    assert!(err.contains("t.json"), "{err}");
    assert!(
        err.contains("message 1") && err.contains("tool_call_id"),
        "{err}"
    );
}

#[test]
fn unknown_role_lists_the_expected_roles() {
    let err = load_err("r.json", r#"[{"role": "wizard", "content": "x"}]"#);
    assert!(err.contains("message 0") && err.contains("role"), "{err}");
    assert!(err.contains("assistant") && err.contains("wizard"), "{err}");
}

#[test]
fn wrong_content_type_says_what_was_expected() {
    let err = load_err("c.json", r#"[{"role": "user", "content": 42}]"#);
    assert!(
        err.contains("content") && err.contains("number 42"),
        "{err}"
    );
}

#[test]
fn bad_message_in_a_records_file_names_the_line() {
    let good = json!({"id": 1, "messages": [{"role": "user", "content": "x"}]});
    let bad = json!({"id": 2, "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]});
    let err = load_err("records.jsonl", &format!("{good}\n{bad}\n"));
    assert!(err.contains("records.jsonl:2:"), "{err}");
    assert!(err.contains("message 1"), "{err}");
}

#[test]
fn a_file_that_is_not_utf8_names_the_file_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.jsonl");
    let mut bytes = br#"{"role":"user","content":"caf"#.to_vec();
    bytes.extend([0xE9, b'"', b'}', b'\n']);
    std::fs::write(&path, &bytes).unwrap();
    let err = load_file(&path, None).unwrap_err().to_string();
    assert!(err.contains("latin1.jsonl"), "{err}");
    assert!(err.contains("byte 29"), "{err}");
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err = load_file(std::path::Path::new("/nonexistent/x.json"), None).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.json"), "{err}");
}

#[test]
fn unknown_format_name_lists_the_known_ones() {
    let err = FormatName::parse("yaml").unwrap_err().to_string();
    assert!(err.contains("yaml") && err.contains("sharegpt"), "{err}");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![
            Just("role".to_string()),
            Just("user".to_string()),
            Just("tool".to_string()),
            Just("assistant".to_string()),
            Just("text".to_string()),
            Just("tool_use".to_string()),
            Just("tool_result".to_string()),
            Just("function_call".to_string()),
            ".{0,8}".prop_map(String::from),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        let key = prop_oneof![
            Just("role".to_string()),
            Just("content".to_string()),
            Just("messages".to_string()),
            Just("conversations".to_string()),
            Just("from".to_string()),
            Just("value".to_string()),
            Just("type".to_string()),
            Just("tool_calls".to_string()),
            Just("tool_call_id".to_string()),
            Just("tool_use_id".to_string()),
            Just("function".to_string()),
            Just("arguments".to_string()),
            Just("system".to_string()),
            Just("tools".to_string()),
            Just("input".to_string()),
            "[a-z]{1,6}".prop_map(String::from),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Arbitrary JSON (biased toward message-like keys) never panics, detected or forced, and
    /// whatever loads can be written and loaded again.
    #[test]
    fn arbitrary_json_never_panics(value in arb_json(), forced in prop::option::of(0usize..FormatName::ALL.len())) {
        let text = value.to_string();
        let forced = forced.map(|i| FormatName::ALL[i]);
        if let Ok(doc) = parse_document(&text, forced) {
            let again = doc.to_text();
            let _ = parse_document(&again, forced);
        }
        let lines = format!("{text}\n{text}\n");
        let _ = parse_document(&lines, forced);
    }
}
