//! Lossless recall through the runtime: after three compactions, a fact that exists only in
//! the root session is found by `history_search` (English and Chinese) and its originals are
//! returned by `history_expand`, cut honestly at a small cap; other sessions stay out of reach.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_agent::StopReason;
use baton_core::Role;
use baton_scripted::{Api, Reply, Script, ScriptedServer};
use baton_store::SessionStore;
use common::{Harness, compactions, turn};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

fn step(step: usize) -> [Reply; 2] {
    let analysis = format!("Analysis of step {step}: ").repeat(60);
    [
        Reply::tool_call("fetch", json!({"n": 6_000, "tag": format!("step-{step}")})),
        Reply::text(format!("Step {step} done. {analysis}")),
    ]
}

/// The `history_expand("…")` reference in the live view's summary note.
fn summary_ref(agent: &baton_agent::Agent) -> String {
    let text: String = agent
        .session()
        .messages
        .iter()
        .map(|m| m.text())
        .find(|t| t.contains("history_expand(\""))
        .expect("a summary with its span note");
    let start = text.find("history_expand(\"").unwrap() + "history_expand(\"".len();
    let end = start + text[start..].find('"').unwrap();
    text[start..end].to_string()
}

#[tokio::test]
async fn facts_summarized_away_are_found_and_expanded_in_any_language() {
    let h = Harness::new();
    // Steps answer by what the request ends with; the recall phase plays `later` in order.
    let later: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
    let queue = later.clone();
    let server = ScriptedServer::start(Script::responder(move |request| {
        let question = request.last_user_text();
        let last_role = request.last_role();
        if question.starts_with("Where was") {
            return queue
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| Reply::text("out of script"));
        }
        if question.starts_with("Remember") {
            return Reply::text("Noted the deploy key location and the config path.");
        }
        let n: usize = question
            .trim_start_matches("Continue with step ")
            .trim_end_matches('.')
            .parse()
            .unwrap_or(0);
        let [call, answer] = step(n);
        if last_role == "tool" { answer } else { call }
    }))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 20_000);
    turn(
        &mut agent,
        "Remember: the deploy key is in vault path secret/zebra-42. 配置文件在 /etc/baton/设置.toml",
    )
    .await;
    let mut total = 0;
    let mut s = 0;
    while total < 3 {
        assert!(s < 60);
        let (_, events) = turn(&mut agent, &format!("Continue with step {s}.")).await;
        total += compactions(&events);
        s += 1;
    }
    let live_text: String = agent.session().messages.iter().map(|m| m.text()).collect();
    assert!(
        !live_text.contains("zebra-42 ") || live_text.contains("history_expand"),
        "sanity"
    );
    let span = summary_ref(&agent);
    // The summary names the span it replaced, in the parent session.
    let lineage = agent.session().lineage.clone();
    assert!(
        span.starts_with(&lineage[lineage.len() - 2]),
        "{span} in {lineage:?}"
    );

    // Now the model searches and expands.
    let server_replies = [
        Reply::tool_call("history_search", json!({"query": "zebra-42"})),
        Reply::tool_call("history_search", json!({"query": "配置文件"})),
        Reply::tool_call(
            "history_expand",
            json!({"ref": format!("{}/0-1", lineage[0]), "max_tokens": 2000}),
        ),
        Reply::tool_call(
            "history_expand",
            json!({"ref": format!("{}/0-30", lineage[0]), "max_tokens": 300}),
        ),
        Reply::tool_call("history_expand", json!({"ref": "some-other-session/0-3"})),
        Reply::text("The deploy key is at secret/zebra-42."),
    ];
    later.lock().unwrap().extend(server_replies);
    let (outcome, _) = turn(&mut agent, "Where was the deploy key again?").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    // Compactions may run inside this turn too, so read its tool results from the store
    // (every session of the chain, each call's result once, in order).
    let chain = h.store.compression_chain(agent.session_id()).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut after_question = false;
    let mut results = Vec::new();
    for id in &chain {
        for m in h.store.messages(id).unwrap() {
            if m.role == Role::User && m.text() == "Where was the deploy key again?" {
                after_question = true;
            }
            if after_question
                && m.role == Role::Tool
                && seen.insert(m.tool_call_id.clone().unwrap_or_default())
            {
                results.push(m.text());
            }
        }
    }
    assert_eq!(results.len(), 5, "{results:#?}");
    let root_ref = format!("[{}/0]", lineage[0]);
    assert!(
        results[0].contains(&root_ref) && results[0].contains("zebra-42"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains(&root_ref),
        "CJK search finds the root message: {}",
        results[1]
    );
    assert!(
        results[2].contains("secret/zebra-42") && results[2].contains("Noted the deploy key"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("[cut at the token cap:"),
        "{}",
        results[3]
    );
    assert!(
        results[3].contains(&format!("continue with history_expand(\"{}/", lineage[0])),
        "{}",
        results[3]
    );
    assert!(
        results[4].contains("not part of this conversation"),
        "{}",
        results[4]
    );
}

#[tokio::test]
async fn before_any_compaction_history_search_says_everything_is_in_view() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::replies([
        Reply::tool_call("history_search", json!({"query": "anything"})),
        Reply::text("ok"),
    ]))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 200_000);
    turn(&mut agent, "search").await;
    let result = agent
        .session()
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap()
        .text();
    assert!(result.contains("Nothing has been compacted"), "{result}");
}
