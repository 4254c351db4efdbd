//! The canonical message model: what it accepts, what it rejects, and that unknown fields
//! survive a round trip exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::message::{Content, Message, PartKind, Role};
use serde_json::{Value, json};
use std::borrow::Cow;

fn round_trip(v: Value) -> Value {
    Message::from_value(v, 0).unwrap().to_value()
}

#[test]
fn every_role_parses_and_unknown_role_is_rejected() {
    for role in ["system", "developer", "user", "assistant"] {
        let m = Message::from_value(json!({"role": role, "content": "x"}), 0).unwrap();
        assert_eq!(m.role.as_str(), role);
    }
    let err = Message::from_value(json!({"role": "function", "content": "x"}), 4).unwrap_err();
    assert_eq!(err.index, 4);
    assert_eq!(err.field, "role");
}

#[test]
fn unknown_fields_round_trip_exactly() {
    let v = json!({
        "role": "assistant",
        "content": "done",
        "refusal": null,
        "annotations": [{"type": "url_citation", "url": "https://example.com", "start": 1.5e-7}],
        "x_vendor": {"nested": [1, 2.0, "three"]}
    });
    assert_eq!(round_trip(v.clone()), v);
    assert_eq!(
        round_trip(v.clone()).to_string(),
        v.to_string(),
        "key order kept"
    );
}

#[test]
fn content_parts_of_every_kind_round_trip_and_unknown_kinds_are_kept() {
    let v = json!({"role": "user", "content": [
        {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
        {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-abc", "filename": "a.pdf"}},
        {"type": "hologram", "payload": {"voxels": 3}}
    ]});
    let m = Message::from_value(v.clone(), 0).unwrap();
    let Some(Content::Parts(parts)) = &m.content else {
        panic!("expected parts")
    };
    let kinds: Vec<PartKind> = parts.iter().map(|p| p.kind()).collect();
    assert_eq!(
        kinds,
        vec![
            PartKind::Text,
            PartKind::ImageUrl,
            PartKind::InputAudio,
            PartKind::File,
            PartKind::Other
        ]
    );
    assert_eq!(m.to_value(), v);
}

#[test]
fn null_content_and_absent_content_stay_distinct() {
    let with_null = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    ]});
    assert_eq!(round_trip(with_null.clone()), with_null);
    let absent = json!({"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "ls", "arguments": "{}"}}
    ]});
    assert_eq!(
        round_trip(absent.clone()),
        absent,
        "missing `type` is not invented"
    );
}

#[test]
fn tool_call_arguments_must_be_a_json_string() {
    let v = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": {"path": "."}}}
    ]});
    let err = Message::from_value(v, 7).unwrap_err();
    assert_eq!(err.index, 7);
    assert!(err.field.contains("arguments"), "{err}");
    assert!(err.to_string().contains("string"), "{err}");
}

#[test]
fn invalid_json_in_arguments_is_kept_as_it_came() {
    let v = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\": "}}
    ]});
    let m = Message::from_value(v.clone(), 0).unwrap();
    assert_eq!(m.calls()[0].function.arguments, "{\"path\": ");
    assert_eq!(m.to_value(), v);
}

#[test]
fn tool_message_requires_tool_call_id_and_keeps_name() {
    let err = Message::from_value(json!({"role": "tool", "content": "x"}), 2).unwrap_err();
    assert_eq!((err.index, err.field.as_str()), (2, "tool_call_id"));
    let v = json!({"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "a b"});
    let m = Message::from_value(v, 0).unwrap();
    assert_eq!(m.role, Role::Tool);
    assert_eq!(m.name.as_deref(), Some("ls"));
}

#[test]
fn reasoning_fields_are_recognised_and_round_trip() {
    let v = json!({
        "role": "assistant",
        "content": "answer",
        "reasoning_content": "step one",
        "reasoning_details": [{"type": "reasoning.text", "text": "step two", "signature": "s"}]
    });
    let m = Message::from_value(v.clone(), 0).unwrap();
    assert_eq!(m.reasoning.len(), 2);
    assert_eq!(m.reasoning_text(), "step one\nstep two");
    assert_eq!(m.to_value(), v);
}

#[test]
fn non_object_message_is_rejected_with_what_was_found() {
    let err = Message::from_value(json!("hello"), 3).unwrap_err();
    assert_eq!(err.index, 3);
    assert!(err.to_string().contains("string \"hello\""), "{err}");
}

#[test]
fn serde_round_trip_matches_to_value() {
    let v = json!({"role": "user", "content": "x", "meta": 1});
    let m: Message = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&m).unwrap(), v);
}

/// A call's usual `type` is shared, not allocated per call (every copy of a kept call copied
/// it); any other `type`, and its absence, come back as written.
#[test]
fn a_calls_function_type_is_shared_and_other_types_are_kept() {
    let call = |kind: Option<&str>| {
        let mut c = json!({"id": "c1", "function": {"name": "f", "arguments": "{}"}});
        if let Some(kind) = kind {
            c["type"] = json!(kind);
        }
        json!({"role": "assistant", "tool_calls": [c]})
    };
    let kind_of = |v: Value| {
        let m = Message::from_value(v, 0).expect("a valid call");
        m.calls()[0].kind.clone()
    };
    assert!(matches!(
        kind_of(call(Some("function"))),
        Some(Cow::Borrowed("function"))
    ));
    assert_eq!(
        kind_of(call(Some("custom"))),
        Some(Cow::<str>::Owned("custom".into()))
    );
    assert_eq!(kind_of(call(None)), None);
    for v in [call(Some("function")), call(Some("custom")), call(None)] {
        assert_eq!(round_trip(v.clone()), v);
    }
}
