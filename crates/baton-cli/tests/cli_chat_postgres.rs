//! `baton chat` on a PostgreSQL store (`--db postgres://…`): turns, resume, compaction into
//! a continuation and the recall tools all run on the shared store, as on the SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../baton-pg/tests/pg/mod.rs"]
mod pg;

use baton_pg::PgStore;
use baton_scripted::{Api, Reply, Script, ScriptedServer};
use baton_store::SessionStore;
use serde_json::json;
use std::path::Path;

fn chat(server: &ScriptedServer, home: &Path, db: &str, window: u32) -> assert_cmd::Command {
    let mut cmd = common::baton();
    cmd.env("BATON_HOME", home)
        .env("OPENAI_API_KEY", "sk-cli-test-key")
        .current_dir(home)
        .args([
            "chat",
            "--db",
            db,
            "--model",
            "scripted-model",
            "--context-length",
            &window.to_string(),
            "--base-url",
            &server.base_url(Api::ChatCompletions),
            "--summarizer",
            "extractive",
        ]);
    cmd
}

#[test]
fn a_conversation_on_postgres_compacts_and_recalls_its_compacted_turns() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let filler = "log line with some details about the build; ".repeat(100);
    let mut replies: Vec<Reply> = (0..12).map(|_| Reply::text(filler.clone())).collect();
    replies.push(Reply::tool_call(
        "history_search",
        json!({"query": "PELICAN"}),
    ));
    replies.push(Reply::text("The codeword was PELICAN-42."));
    let server = ScriptedServer::start_background(Script::replies(replies)).unwrap();
    for i in 0..12 {
        let mut cmd = chat(&server, home.path(), &url, 200_000);
        if i > 0 {
            cmd.arg("--continue");
        }
        let codeword = if i == 0 {
            "the deploy codeword is PELICAN-42. "
        } else {
            ""
        };
        cmd.args(["-q", &format!("question {i}: {codeword}{filler}")])
            .assert()
            .success();
    }
    // Resumed with a 32K window, the ~55K-token session is compacted into a continuation
    // before the first call; the model then searches what was compacted away.
    let out = chat(&server, home.path(), &url, 32_000)
        .args(["--continue", "-q", "what was the deploy codeword?"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("compacted (resume)"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "The codeword was PELICAN-42."
    );
    let last = server.requests().last().unwrap().body.clone();
    let tool_result = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .expect("the history_search result went back to the model")
        .to_string();
    assert!(
        tool_result.contains("the deploy codeword is >>>PELICAN<<<-42"),
        "{tool_result}"
    );

    // Everything is in PostgreSQL: the chain of two sessions, every turn of the first.
    let store = PgStore::connect(&url).unwrap();
    let listed = store.list_sessions(&Default::default()).unwrap();
    assert_eq!(listed.len(), 1, "one conversation, shown as its tip");
    let chain = store.compression_chain(&listed[0].session.id).unwrap();
    assert_eq!(chain.len(), 2, "{chain:?}");
    assert!(store.messages(&chain[0]).unwrap().len() >= 24);
    // And the SQLite default was never touched.
    assert!(!home.path().join("state.db").exists());
}
