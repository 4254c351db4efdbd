//! How documents are written: every OpenAI layout gives the text of its `Value` tree, byte for
//! byte, and Baton's in-process metadata is stripped the same way whether one message or all
//! of them carry some.

use super::*;
use serde_json::json;

const LAYOUTS: [Layout; 5] = [
    Layout::MessageArray,
    Layout::MessageLines,
    Layout::Object,
    Layout::ObjectArray,
    Layout::ObjectLines,
];

fn openai_document(layout: Layout, conversations: Vec<Conversation>) -> Document {
    Document {
        dialect: Dialect::OpenAi,
        layout,
        conversations,
        transcript: None,
    }
}

/// The text the `Value` path writes, the reference for the direct writer.
fn through_values(doc: &Document) -> String {
    let records = || doc.conversations.iter().map(openai::conversation_to_object);
    match doc.layout {
        Layout::MessageArray => openai::messages_to_array(&doc.conversations[0]).to_string() + "\n",
        Layout::Object => openai::conversation_to_object(&doc.conversations[0]).to_string() + "\n",
        Layout::ObjectArray => Value::Array(records().collect()).to_string() + "\n",
        Layout::MessageLines => doc
            .conversations
            .iter()
            .flat_map(|c| &c.messages)
            .map(|m| m.to_value().to_string() + "\n")
            .collect(),
        Layout::ObjectLines => records().map(|v| v.to_string() + "\n").collect(),
    }
}

#[test]
fn openai_documents_are_written_as_their_values_in_every_layout() {
    let record = json!({"id": "r1", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi ✓"}], "x": 1},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\": \"\\\"q\\\"\"}"}}],
            "reasoning_content": "hm"},
        {"role": "tool", "tool_call_id": "c", "content": "out\n"}
    ], "tools": [{"type": "function", "function": {"name": "f"}}], "meta": {"k": [1.5, null]}});
    let no_tools = json!({"messages": [{"role": "user", "content": "a"}], "tools": null});
    let conversations: Vec<Conversation> = [record, no_tools]
        .into_iter()
        .map(|v| {
            let Value::Object(obj) = v else {
                unreachable!()
            };
            openai::conversation_from_object(obj).unwrap()
        })
        .collect();
    for layout in LAYOUTS {
        let doc = openai_document(layout, conversations.clone());
        assert_eq!(doc.to_text(), through_values(&doc), "{layout:?}");
    }
}

/// A document without conversations writes what serde_json wrote for it: an empty record
/// or array, or nothing for the line layouts.
#[test]
fn empty_openai_documents_are_written_as_before() {
    for (layout, text) in [
        (Layout::MessageArray, "[]\n"),
        (Layout::Object, "{\"messages\":[]}\n"),
        (Layout::ObjectArray, "[]\n"),
        (Layout::MessageLines, ""),
        (Layout::ObjectLines, ""),
    ] {
        assert_eq!(
            openai_document(layout, Vec::new()).to_text(),
            text,
            "{layout:?}"
        );
    }
}

/// Copying only the messages that carry metadata writes what copying and stripping the
/// whole conversation wrote: a summary, importer flags, an empty `meta`, a user's own
/// `meta`, with and without a record `meta` to record the flags in.
#[test]
fn stripping_only_the_messages_with_metadata_writes_what_stripping_all_did() {
    use crate::compress::markers::mark_summary;
    use crate::synthetic::{SyntheticKind, mark};
    let mut summary = Message::user("[summary] the work so far");
    mark_summary(&mut summary);
    let mut injected = Message::user("<system-reminder>x</system-reminder>");
    mark(&mut injected, SyntheticKind::Injected);
    let mut empty_meta = Message::assistant("ok");
    empty_meta.extra.insert("meta".into(), json!({}));
    let mut own_meta = Message::user("mine");
    own_meta.extra.insert("meta".into(), json!({"k": 1}));
    let messages = vec![
        summary,
        injected,
        empty_meta,
        own_meta,
        Message::user("plain"),
    ];
    let with_record_meta = {
        let mut c = Conversation::new(messages.clone());
        c.extra.insert("meta".into(), json!({"source": "x"}));
        c.extra.insert("id".into(), json!("r"));
        c.field_order = vec!["id".into(), "meta".into(), "messages".into()];
        c
    };
    let without_metadata = Conversation::new(vec![Message::user("a"), {
        let mut m = Message::assistant("b");
        m.extra.insert("meta".into(), json!({}));
        m
    }]);
    let conversations = vec![
        Conversation::new(messages),
        with_record_meta,
        without_metadata,
    ];
    // The former writer: each conversation copied and stripped whole.
    let stripped: Vec<Cow<'_, Conversation>> =
        conversations.iter().map(without_baton_metadata).collect();
    fn line<T: serde::Serialize + ?Sized>(value: &T) -> String {
        serde_json::to_string(value).unwrap() + "\n"
    }
    for layout in LAYOUTS {
        let doc = openai_document(layout, conversations.clone());
        let former: String = match layout {
            Layout::MessageArray => line(&stripped[0].messages[..]),
            Layout::Object => line(&openai::RecordJson(&stripped[0])),
            Layout::ObjectArray => line(
                &stripped
                    .iter()
                    .map(|c| openai::RecordJson(c))
                    .collect::<Vec<_>>(),
            ),
            Layout::MessageLines => stripped
                .iter()
                .flat_map(|c| &c.messages)
                .map(line)
                .collect(),
            Layout::ObjectLines => stripped
                .iter()
                .map(|c| line(&openai::RecordJson(c)))
                .collect(),
        };
        assert_eq!(doc.to_text(), former, "{layout:?}");
    }
    // And the metadata is gone from what is written.
    let text = openai_document(Layout::ObjectLines, conversations).to_text();
    assert!(!text.contains("_baton"), "{text}");
    assert!(text.contains("synthetic_messages"), "{text}");
}
