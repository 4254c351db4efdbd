//! Several processes writing one PostgreSQL store: four writers filling sessions of their own
//! and two racing to continue one shared lineage lose and duplicate nothing; a writer killed
//! (SIGKILL) in the middle of a continuation leaves no half-written one.
//!
//! The writers are this test binary run again (`writer_process`, ignored unless
//! `BATON_PG_WRITER` names a role), so they are real processes with their own connections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::continuation::ChildSettings;
use baton_store::{NewSession, SessionStore, StoreError, end_reason};
use std::process::{Child, Command};
use std::time::Duration;

const WRITERS: usize = 4;
const SESSIONS_PER_WRITER: usize = 12;
const APPENDS_PER_SESSION: usize = 5;
const MESSAGES_PER_APPEND: usize = 4;
const CONTINUATIONS_PER_RACER: usize = 10;
/// Messages in each continuation the killed writer writes (large, so a kill lands inside one).
const BIG_CONTINUATION: usize = 3_000;

fn spawn(url: &str, role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "writer_process", "--ignored", "--nocapture"])
        .env("BATON_PG_WRITER", role)
        .env("BATON_PG_WRITER_URL", url)
        .spawn()
        .unwrap()
}

/// One writer process: `own:N` fills sessions `wN-*`; `race` continues the shared lineage;
/// `big` continues its own lineage with large batches until killed.
#[test]
#[ignore = "run as a child process by the tests of this file"]
fn writer_process() {
    let (Ok(role), Ok(url)) = (
        std::env::var("BATON_PG_WRITER"),
        std::env::var("BATON_PG_WRITER_URL"),
    ) else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    if let Some(n) = role.strip_prefix("own:") {
        for s in 0..SESSIONS_PER_WRITER {
            let id = format!("w{n}-{s}");
            store
                .create_session(NewSession {
                    id: Some(id.clone()),
                    ..NewSession::new("cli")
                })
                .unwrap();
            for a in 0..APPENDS_PER_SESSION {
                let batch: Vec<Message> = (0..MESSAGES_PER_APPEND)
                    .map(|m| Message::user(format!("{id} append {a} message {m}")))
                    .collect();
                store.append_messages(&id, &batch).unwrap();
            }
        }
    } else if role == "race" {
        let mut won = 0;
        while won < CONTINUATIONS_PER_RACER {
            let tip = store.compression_tip("shared").unwrap();
            match store.start_continuation_with(
                &tip,
                &[Message::user(format!("continuation from {tip}"))],
                &ChildSettings::default(),
            ) {
                Ok(_) => won += 1,
                Err(StoreError::AlreadyContinued { .. }) => {}
                Err(e) => panic!("{e}"),
            }
        }
    } else if role == "big" {
        let batch: Vec<Message> = (0..BIG_CONTINUATION)
            .map(|m| Message::assistant(format!("summary line {m} {}", "x".repeat(200))))
            .collect();
        loop {
            let tip = store.compression_tip("doomed").unwrap();
            store
                .start_continuation_with(&tip, &batch, &ChildSettings::default())
                .unwrap();
        }
    }
}

#[test]
fn four_writers_and_two_racing_continuers_lose_and_duplicate_nothing() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    store
        .create_session(NewSession {
            id: Some("shared".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    let mut children: Vec<Child> = (0..WRITERS)
        .map(|n| spawn(&url, &format!("own:{n}")))
        .collect();
    children.push(spawn(&url, "race"));
    children.push(spawn(&url, "race"));
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer failed");
    }
    for n in 0..WRITERS {
        for s in 0..SESSIONS_PER_WRITER {
            let id = format!("w{n}-{s}");
            let messages = store.messages(&id).unwrap();
            let expected: Vec<Message> = (0..APPENDS_PER_SESSION)
                .flat_map(|a| {
                    let id = id.clone();
                    (0..MESSAGES_PER_APPEND)
                        .map(move |m| Message::user(format!("{id} append {a} message {m}")))
                })
                .collect();
            assert_eq!(messages, expected, "session {id}");
            let row = store.get_session(&id).unwrap().unwrap();
            assert_eq!(row.message_count as usize, expected.len());
        }
    }
    // The shared lineage: one chain, each session continued exactly once.
    let chain = store.compression_chain("shared").unwrap();
    assert_eq!(chain.len(), 1 + 2 * CONTINUATIONS_PER_RACER, "{chain:?}");
    for pair in chain.windows(2) {
        let parent = store.get_session(&pair[0]).unwrap().unwrap();
        assert_eq!(parent.end_reason.as_deref(), Some(end_reason::COMPRESSION));
        let child = store.export_session(&pair[1]).unwrap().unwrap();
        assert_eq!(
            child.session.parent_session_id.as_deref(),
            Some(pair[0].as_str())
        );
        assert_eq!(
            child.messages,
            vec![Message::user(format!("continuation from {}", pair[0]))]
        );
    }
    let continuations = store
        .session_ids()
        .unwrap()
        .into_iter()
        .filter(|id| !id.starts_with('w') && id != "shared")
        .count();
    assert_eq!(
        continuations,
        2 * CONTINUATIONS_PER_RACER,
        "no orphan continuation"
    );
}

#[test]
fn a_writer_killed_mid_continuation_leaves_no_half_written_one() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    store
        .create_session(NewSession {
            id: Some("doomed".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    let mut writer = spawn(&url, "big");
    // Let it complete at least one continuation and be inside another.
    let started = std::time::Instant::now();
    while store.compression_chain("doomed").unwrap().len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no continuation written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(150));
    writer.kill().unwrap();
    writer.wait().unwrap();
    // The server notices the dead connection and rolls its transaction back.
    std::thread::sleep(Duration::from_millis(300));
    let chain = store.compression_chain("doomed").unwrap();
    for (i, id) in chain.iter().enumerate() {
        let session = store.export_session(id).unwrap().unwrap();
        if i + 1 < chain.len() {
            assert_eq!(
                session.session.end_reason.as_deref(),
                Some(end_reason::COMPRESSION)
            );
        } else {
            assert_eq!(session.session.end_reason, None, "the tip is open: {id}");
        }
        if i > 0 {
            assert_eq!(session.messages.len(), BIG_CONTINUATION, "{id} is whole");
            assert_eq!(session.session.message_count as usize, BIG_CONTINUATION);
        }
    }
    // Every session is on the chain: nothing half-created beside it.
    assert_eq!(store.session_ids().unwrap().len(), chain.len());
    // And the tip can be continued: no lock or half state was left behind.
    let tip = chain.last().unwrap();
    store
        .start_continuation_with(
            tip,
            &[Message::user("after the crash")],
            &ChildSettings::default(),
        )
        .unwrap();
}
