//! Resolving what a user typed (an id or a title) to a session, as resume does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_store::{NewSession, SessionStore, SqliteStore, StoreError};
use common::{set_times, temp_db};

const T0: f64 = 1_000_000.0;

fn session(store: &SqliteStore, id: &str, parent: Option<&str>, title: Option<&str>) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            parent_session_id: parent.map(String::from),
            ..NewSession::new("cli")
        })
        .unwrap();
    if let Some(t) = title {
        store.set_title(id, t).unwrap();
    }
}

/// "Refactor auth" root -(compression)-> "#2" -(compression)-> "#3" tip, started in that order.
fn chain(store: &SqliteStore, path: &std::path::Path) {
    session(store, "20260101_000000_aaaaaa", None, Some("Refactor auth"));
    session(
        store,
        "20260101_010000_bbbbbb",
        Some("20260101_000000_aaaaaa"),
        Some("Refactor auth #2"),
    );
    session(
        store,
        "20260101_020000_cccccc",
        Some("20260101_010000_bbbbbb"),
        Some("Refactor auth #3"),
    );
    set_times(
        path,
        "20260101_000000_aaaaaa",
        T0,
        Some(T0 + 10.0),
        Some("compression"),
    );
    set_times(
        path,
        "20260101_010000_bbbbbb",
        T0 + 10.0,
        Some(T0 + 20.0),
        Some("compression"),
    );
    set_times(path, "20260101_020000_cccccc", T0 + 20.0, None, None);
}

const TIP: &str = "20260101_020000_cccccc";

#[test]
fn an_exact_id_wins() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    // An exact id is itself, even in the middle of a chain.
    assert_eq!(
        store
            .resolve_session("20260101_010000_bbbbbb")
            .unwrap()
            .as_deref(),
        Some("20260101_010000_bbbbbb")
    );
    // A title that spells another session's id does not shadow that id.
    session(&store, "x1", None, Some(TIP));
    assert_eq!(store.resolve_session(TIP).unwrap().as_deref(), Some(TIP));
}

#[test]
fn a_plain_title_resolves_after_cleaning() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    session(&store, "solo", None, Some("Fix the parser"));
    assert_eq!(
        store.resolve_session("Fix the parser").unwrap().as_deref(),
        Some("solo")
    );
    assert_eq!(
        store
            .resolve_session("  Fix\u{200b}   the parser\n")
            .unwrap()
            .as_deref(),
        Some("solo")
    );
}

#[test]
fn a_chain_title_resolves_to_its_tip() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    for input in [
        "Refactor auth",
        "Refactor auth #2",
        "Refactor auth #3",
        "refactor auth",
    ] {
        assert_eq!(
            store.resolve_session(input).unwrap().as_deref(),
            Some(TIP),
            "{input}"
        );
    }
}

#[test]
fn numbered_titles_without_the_original_resolve_along_their_lineage() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    // The original was deleted; its continuations still carry the numbered titles.
    store.delete_session("20260101_000000_aaaaaa").unwrap();
    assert_eq!(
        store.resolve_session("Refactor auth").unwrap().as_deref(),
        Some(TIP)
    );
    // A title that merely starts the same way is not part of the lineage.
    session(&store, "other", None, Some("Refactor authentication"));
    assert_eq!(
        store.resolve_session("Refactor auth").unwrap().as_deref(),
        Some(TIP)
    );
}

#[test]
fn titles_on_separate_chains_are_ambiguous_and_name_the_candidates() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    // An unrelated session that happens to be numbered along the same base title.
    session(&store, "stray", None, Some("Refactor auth #7"));
    let err = store.resolve_session("Refactor auth").unwrap_err();
    let StoreError::Ambiguous { input, candidates } = &err else {
        panic!("expected Ambiguous, got {err:?}");
    };
    assert_eq!(input, "Refactor auth");
    assert_eq!(candidates.len(), 2, "{candidates:?}");
    assert!(
        candidates.iter().any(|c| c.starts_with(TIP)),
        "{candidates:?}"
    );
    assert!(
        candidates.iter().any(|c| c.starts_with("stray")),
        "{candidates:?}"
    );
    let text = err.to_string();
    assert!(text.contains(TIP) && text.contains("stray"), "{text}");
    // The full numbered title of the stray session is still unambiguous.
    assert_eq!(
        store
            .resolve_session("Refactor auth #7")
            .unwrap()
            .as_deref(),
        Some("stray")
    );
}

#[test]
fn unique_id_prefixes_resolve_and_shared_ones_are_ambiguous() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    assert_eq!(
        store.resolve_session("20260101_02").unwrap().as_deref(),
        Some(TIP)
    );
    assert!(matches!(
        store.resolve_session("20260101_0"),
        Err(StoreError::Ambiguous { ref candidates, .. }) if candidates.len() == 3
    ));
    // Too short to be taken as a prefix.
    assert_eq!(store.resolve_session("202").unwrap(), None);
}

#[test]
fn unknown_input_is_none() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    chain(&store, &path);
    assert_eq!(store.resolve_session("nothing like it").unwrap(), None);
    assert_eq!(store.resolve_session("").unwrap(), None);
    assert_eq!(store.resolve_session(&"x".repeat(300)).unwrap(), None);
}
