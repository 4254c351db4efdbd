//! The listing forms of prune and delete that `baton sessions prune|delete` use: what would go
//! is exactly what goes, and a chain is deleted as one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::{set_times, temp_db};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DAY: f64 = 86_400.0;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn child(store: &SqliteStore, id: &str, parent: &str) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            parent_session_id: Some(parent.into()),
            ..NewSession::new("cli")
        })
        .unwrap();
}

#[test]
fn prune_candidates_are_exactly_what_prune_deletes_oldest_first() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    let t = now();
    for id in ["b_old", "a_old", "live_old", "fresh"] {
        common::session(&store, id);
    }
    set_times(
        &path,
        "b_old",
        t - 50.0 * DAY,
        Some(t - 50.0 * DAY + 1.0),
        Some("done"),
    );
    set_times(
        &path,
        "a_old",
        t - 40.0 * DAY,
        Some(t - 40.0 * DAY + 1.0),
        Some("done"),
    );
    set_times(&path, "live_old", t - 60.0 * DAY, None, None);
    let age = Duration::from_secs(30 * 86_400);

    let candidates = store.prune_candidates(age, None).unwrap();
    assert_eq!(candidates, ["b_old", "a_old"]);
    assert!(
        store.get_session("b_old").unwrap().is_some(),
        "listing deleted"
    );
    assert!(
        store
            .prune_candidates(age, Some("cron"))
            .unwrap()
            .is_empty()
    );

    let deleted = store.prune_sessions_listed(age, None).unwrap();
    assert_eq!(deleted, candidates);
    assert!(store.get_session("b_old").unwrap().is_none());
    assert!(store.get_session("live_old").unwrap().is_some());
    assert!(store.prune_candidates(age, None).unwrap().is_empty());
}

#[test]
fn delete_chain_removes_every_session_of_the_chain_and_detaches_the_rest() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    common::session(&store, "root");
    child(&store, "tip", "root");
    child(&store, "sub", "root");
    set_times(&path, "root", 1000.0, Some(1100.0), Some("compression"));
    set_times(&path, "sub", 1050.0, Some(1060.0), Some("done"));
    set_times(&path, "tip", 1100.0, None, None);
    store.append_messages("tip", &[Message::user("x")]).unwrap();

    assert_eq!(store.delete_chain("tip").unwrap(), ["root", "tip"]);
    assert!(store.get_session("root").unwrap().is_none());
    assert!(store.get_session("tip").unwrap().is_none());
    let sub = store.get_session("sub").unwrap().unwrap();
    assert_eq!(sub.parent_session_id, None);
    assert!(store.delete_chain("nope").unwrap().is_empty());
}
