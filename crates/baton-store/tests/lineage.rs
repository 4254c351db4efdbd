#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{ExportScope, NewSession, SessionFilter, SessionStore, SqliteStore};
use common::{set_times, temp_db};
use std::time::Duration;

const DAY: f64 = 86_400.0;

fn child(store: &SqliteStore, id: &str, parent: &str) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            parent_session_id: Some(parent.into()),
            ..NewSession::new("cli")
        })
        .unwrap();
}

/// root -(compression)-> mid -(compression)-> tip, plus a subagent of root and a branch of tip.
fn build(store: &SqliteStore, path: &std::path::Path, t0: f64) {
    common::session(store, "root");
    child(store, "mid", "root");
    child(store, "tip", "mid");
    child(store, "sub", "root");
    set_times(path, "root", t0, Some(t0 + 100.0), Some("compression"));
    set_times(path, "sub", t0 + 50.0, Some(t0 + 60.0), Some("done"));
    set_times(
        path,
        "mid",
        t0 + 100.0,
        Some(t0 + 200.0),
        Some("compression"),
    );
    set_times(path, "tip", t0 + 200.0, None, None);
    for (id, message) in [
        ("root", Message::user("one")),
        ("mid", Message::assistant("two")),
        ("tip", Message::user("three")),
    ] {
        store.append_messages(id, &[message]).unwrap();
    }
    store.set_title("tip", "Chain title").unwrap();
}

#[test]
fn compression_tip_follows_the_chain_and_ignores_subagents() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    build(&store, &path, 1_000_000.0);
    assert_eq!(store.compression_tip("root").unwrap(), "tip");
    assert_eq!(store.compression_tip("mid").unwrap(), "tip");
    assert_eq!(store.compression_tip("tip").unwrap(), "tip");
    assert_eq!(store.compression_tip("sub").unwrap(), "sub");
    assert_eq!(store.compression_tip("unknown").unwrap(), "unknown");
    assert_eq!(
        store.compression_chain("mid").unwrap(),
        ["root", "mid", "tip"]
    );

    let root = store.get_session("root").unwrap().unwrap();
    let mid = store.get_session("mid").unwrap().unwrap();
    let sub = store.get_session("sub").unwrap().unwrap();
    assert!(baton_store::lineage::is_compression_continuation(
        &root, &mid
    ));
    assert!(!baton_store::lineage::is_compression_continuation(
        &root, &sub
    ));
}

#[test]
fn listing_shows_one_row_per_chain_as_its_tip_with_the_root_start() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    build(&store, &path, 1_000_000.0);
    common::session(&store, "solo");
    let rows = store.list_sessions(&SessionFilter::default()).unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r.session.id.as_str()).collect();
    assert_eq!(ids, ["solo", "tip"]);
    let chain = &rows[1];
    assert_eq!(chain.lineage_root_id.as_deref(), Some("root"));
    assert_eq!(chain.session.started_at, 1_000_000.0);
    assert_eq!(chain.session.title.as_deref(), Some("Chain title"));
    assert_eq!(chain.session.end_reason, None);

    let all = store
        .list_sessions(&SessionFilter {
            include_children: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(all.len(), 5);
}

#[test]
fn chain_export_concatenates_the_chain_root_first() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    build(&store, &path, 1_000_000.0);
    let mut out = Vec::new();
    let n = baton_store::export_jsonl(&store, "tip", ExportScope::Chain, &mut out).unwrap();
    assert_eq!(n, 3);
    let text = String::from_utf8(out).unwrap();
    let contents: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["content"].to_string())
        .collect();
    assert_eq!(contents, ["\"one\"", "\"two\"", "\"three\""]);
}

#[test]
fn prune_keeps_a_chain_whole_while_any_part_is_live_or_recent() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let old = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 200.0 * DAY;
    build(&store, &path, old);
    // A lone old ended session, and a recent ended one.
    common::session(&store, "lone");
    set_times(&path, "lone", old, Some(old + 1.0), Some("cli_close"));
    common::session(&store, "recent");
    set_times(
        &path,
        "recent",
        old + 199.0 * DAY,
        Some(old + 199.0 * DAY),
        Some("cli_close"),
    );

    let pruned = store
        .prune_sessions(Duration::from_secs(90 * 86_400), None)
        .unwrap();
    // "lone" and the old ended subagent go; the chain stays because its tip is live.
    assert_eq!(pruned.len(), 2);
    for id in ["root", "mid", "tip", "recent"] {
        assert!(store.get_session(id).unwrap().is_some(), "{id} was pruned");
    }
    assert_eq!(store.messages("root").unwrap().len(), 1);

    // Once the tip ends, the whole chain goes together.
    set_times(
        &path,
        "tip",
        old + 200.0,
        Some(old + 300.0),
        Some("cli_close"),
    );
    let pruned = store
        .prune_sessions(Duration::from_secs(90 * 86_400), None)
        .unwrap();
    assert_eq!(pruned.len(), 3);
    assert!(store.get_session("tip").unwrap().is_none());
    assert!(store.get_session("recent").unwrap().is_some());
    let c = rusqlite::Connection::open(&path).unwrap();
    let left: i64 = c
        .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
    let fts_left: i64 = c
        .query_row("SELECT COUNT(*) FROM messages_fts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fts_left, 0);
}

#[test]
fn delete_detaches_children() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    build(&store, &path, 1_000_000.0);
    assert!(store.delete_session("mid").unwrap());
    assert!(!store.delete_session("mid").unwrap());
    let tip = store.get_session("tip").unwrap().unwrap();
    assert_eq!(tip.parent_session_id, None);
    assert_eq!(store.compression_tip("root").unwrap(), "root");
}

#[test]
fn start_continuation_ends_the_parent_and_continues_its_chain_atomically() {
    let store = baton_store::SqliteStore::open_in_memory().unwrap();
    let parent = store
        .create_session(baton_store::NewSession {
            id: Some("p".into()),
            model: Some("gpt-x".into()),
            ..baton_store::NewSession::new("cli")
        })
        .unwrap();
    store.set_title(&parent, "Refactor auth").unwrap();
    let original = vec![
        baton_core::Message::user("first"),
        baton_core::Message::assistant("done"),
    ];
    store.append_messages(&parent, &original).unwrap();

    let compacted = vec![baton_core::Message::user("[summary] first, done")];
    let child = store.start_continuation(&parent, &compacted).unwrap();

    let p = store.get_session(&parent).unwrap().unwrap();
    let c = store.get_session(&child).unwrap().unwrap();
    assert_eq!(p.end_reason.as_deref(), Some("compression"));
    assert_eq!(c.parent_session_id.as_deref(), Some("p"));
    assert_eq!(c.model.as_deref(), Some("gpt-x"));
    assert_eq!(c.source, "cli");
    assert!(c.started_at >= p.ended_at.unwrap());
    assert_eq!(c.title.as_deref(), Some("Refactor auth #2"));
    assert_eq!(
        store.messages(&parent).unwrap(),
        original,
        "parent keeps its messages"
    );
    assert_eq!(store.messages(&child).unwrap(), compacted);
    assert_eq!(store.compression_tip(&parent).unwrap(), child);
    assert_eq!(
        store.compression_chain(&child).unwrap(),
        vec![parent.clone(), child.clone()]
    );

    let again = store.start_continuation(&parent, &compacted).unwrap_err();
    assert!(
        matches!(&again, baton_store::StoreError::AlreadyContinued { child: Some(c), .. } if *c == child),
        "{again}"
    );
    let unknown = store.start_continuation("nope", &compacted).unwrap_err();
    assert!(
        matches!(unknown, baton_store::StoreError::NotFound { .. }),
        "{unknown}"
    );
}

#[test]
fn a_continuation_can_carry_its_own_system_prompt_and_model() {
    let store = baton_store::SqliteStore::open_in_memory().unwrap();
    let parent = store
        .create_session(baton_store::NewSession {
            system_prompt: Some("prompt with memory v1".into()),
            model: Some("big-model".into()),
            ..baton_store::NewSession::new("cli")
        })
        .unwrap();
    store
        .append_messages(&parent, &[baton_core::Message::user("hi")])
        .unwrap();
    let settings = baton_store::continuation::ChildSettings {
        system_prompt: Some("prompt with memory v2".into()),
        model: None,
    };
    let child = store
        .start_continuation_with(
            &parent,
            &[baton_core::Message::user("[summary]")],
            &settings,
        )
        .unwrap();
    let c = store.get_session(&child).unwrap().unwrap();
    assert_eq!(c.system_prompt.as_deref(), Some("prompt with memory v2"));
    assert_eq!(
        c.model.as_deref(),
        Some("big-model"),
        "unset fields inherit"
    );
    let p = store.get_session(&parent).unwrap().unwrap();
    assert_eq!(p.system_prompt.as_deref(), Some("prompt with memory v1"));
}
