//! `export --chain` gives one valid conversation for a compression chain: the full original
//! history in order, with no summary mid-stream and no kept tail repeated; `ChainRaw` gives
//! the stored rows as they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::markers::{SUMMARY_KEY, SUMMARY_PREFIX, is_summary_message};
use baton_core::compress::sanitize::validate_sequence;
use baton_core::{Message, ToolCall};
use baton_store::{ExportScope, SessionStore, SqliteStore, export_jsonl};

fn summary(text: &str) -> Message {
    let mut m = Message::user(format!("{SUMMARY_PREFIX}\n{text}"));
    m.extra
        .insert(SUMMARY_KEY.into(), serde_json::Value::Bool(true));
    m
}

fn exchange(n: usize) -> Vec<Message> {
    let id = format!("call_{n}");
    vec![
        Message::user(format!("request {n}")),
        Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            "read_file",
            format!(r#"{{"path":"src/f{n}.rs"}}"#),
        )]),
        Message::tool(&id, format!("contents of f{n}")),
        Message::assistant(format!("answer {n}")),
    ]
}

fn export(store: &SqliteStore, id: &str, scope: ExportScope) -> Vec<Message> {
    let mut out = Vec::new();
    export_jsonl(store, id, scope, &mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| Message::from_value(serde_json::from_str(l).unwrap(), i).unwrap())
        .collect()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().map(|m| m.text()).collect()
}

#[test]
fn a_chain_exports_as_its_full_history_without_summaries_or_repeated_tails() {
    let (_d, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let root = common::session(&store, "root");
    let system = Message::system("You are a coding agent.");
    let mut history = vec![system.clone()];
    for n in 0..3 {
        history.extend(exchange(n));
    }
    store.append_messages(&root, &history).unwrap();

    // First compaction: system + first request as head, summary, last exchange kept.
    let mut view = vec![system.clone(), history[1].clone(), summary("one")];
    view.extend(history[history.len() - 4..].iter().cloned());
    let mid = store.start_continuation(&root, &view).unwrap();
    let new_mid = exchange(3);
    store.append_messages(&mid, &new_mid).unwrap();
    history.extend(new_mid.clone());

    // Second compaction of the continuation: keeps its last exchange after a new summary.
    let mut view2 = vec![system.clone(), summary("two")];
    view2.extend(new_mid.iter().cloned());
    let tip = store.start_continuation(&mid, &view2).unwrap();
    let new_tip = exchange(4);
    store.append_messages(&tip, &new_tip).unwrap();
    history.extend(new_tip);

    let chain = export(&store, &tip, ExportScope::Chain);
    assert_eq!(texts(&chain), texts(&history));
    assert!(!chain.iter().any(is_summary_message));
    validate_sequence(&chain).unwrap();
    // From any member of the chain.
    assert_eq!(
        texts(&export(&store, &root, ExportScope::Chain)),
        texts(&history)
    );

    let raw = export(&store, &tip, ExportScope::ChainRaw);
    let stored: usize = [&root, &mid, &tip]
        .iter()
        .map(|id| store.messages(id).unwrap().len())
        .sum();
    assert_eq!(raw.len(), stored);
    assert_eq!(raw.iter().filter(|m| is_summary_message(m)).count(), 2);
    assert!(raw.iter().any(|m| m.extra.contains_key(SUMMARY_KEY)));

    // A session export may be sent to a provider as it is: the summary is there, recognised
    // by its text, without Baton's marker key.
    let session = export(&store, &tip, ExportScope::Session);
    assert!(session.iter().any(is_summary_message));
    assert!(session.iter().all(|m| m.extra.is_empty()), "{session:?}");
}

#[test]
fn a_chain_that_cannot_make_a_valid_conversation_is_refused_by_name() {
    let (_d, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let root = common::session(&store, "root");
    store.append_messages(&root, &exchange(0)).unwrap();
    // A continuation whose first own message is a tool result answering no call.
    let tip = store
        .start_continuation(&root, &[summary("s"), Message::tool("call_x", "orphan")])
        .unwrap();
    let mut out = Vec::new();
    let err = export_jsonl(&store, &tip, ExportScope::Chain, &mut out).unwrap_err();
    assert!(
        matches!(err, baton_store::StoreError::InvalidChain { .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains(&tip) && text.contains("call_x"), "{text}");
}
