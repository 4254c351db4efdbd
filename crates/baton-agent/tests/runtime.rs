//! The turn loop end to end against the scripted model server: continuation sessions,
//! overflow and output-cap recovery, parallel tools, spills read back, byte-stable prompts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_agent::{AgentEvent, StopReason};
use baton_core::Role;
use baton_scripted::{Api, Reply, Script, ScriptedServer};
use baton_store::SessionStore;
use common::{Harness, compactions, turn};
use serde_json::{Value, json};

/// A turn: one `fetch` of `n` characters, then a long answer naming the step (long enough
/// that pruning old tool output alone cannot bring the session under its threshold).
fn step_replies(step: usize, n: usize) -> [Reply; 2] {
    let analysis = format!("Analysis of step {step}: ").repeat(60);
    [
        Reply::tool_call("fetch", json!({"n": n, "tag": format!("step-{step}")})),
        Reply::text(format!(
            "Step {step} done: recorded fact-{step}. {analysis}"
        )),
    ]
}

#[tokio::test]
async fn a_long_session_continues_in_three_sessions_and_keeps_every_message_stored() {
    let h = Harness::new();
    let mut replies = Vec::new();
    for step in 0..60 {
        replies.extend(step_replies(step, 6_000));
    }
    let server = common::serve(replies).await;
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 20_000);
    let root = agent.session_id().to_string();
    let mut total = 0;
    let mut step = 0;
    let mut notices = Vec::new();
    while total < 3 {
        assert!(step < 60, "three compactions within 60 steps");
        let text = if step == 0 {
            "Migrate the billing module to the new API; record every fact you fetch.".to_string()
        } else {
            format!("Continue with step {step}.")
        };
        let (outcome, events) = turn(&mut agent, &text).await;
        assert_eq!(outcome.reason, StopReason::FinalAnswer, "{outcome:?}");
        total += compactions(&events);
        notices.extend(events.into_iter().filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message),
            _ => None,
        }));
        step += 1;
    }
    // From the second compaction on, the user is told detail may be lost and how to recall it.
    let loss: Vec<&String> = notices.iter().filter(|n| n.contains("compacted")).collect();
    assert_eq!(loss.len(), 2, "{notices:?}");
    assert!(
        loss[0].contains("2 times") && loss[0].contains("history_search"),
        "{}",
        loss[0]
    );
    let chain = h.store.compression_chain(agent.session_id()).unwrap();
    assert_eq!(chain.len(), 4, "root + three continuations: {chain:?}");
    assert_eq!(chain[0], root);
    for (parent, child) in chain.iter().zip(chain.iter().skip(1)) {
        let p = h.store.get_session(parent).unwrap().unwrap();
        let c = h.store.get_session(child).unwrap().unwrap();
        assert_eq!(p.end_reason.as_deref(), Some("compression"));
        assert_eq!(c.parent_session_id.as_deref(), Some(parent.as_str()));
    }
    // Nothing lost: every step's answer is stored somewhere in the chain.
    let stored: String = chain
        .iter()
        .flat_map(|id| h.store.messages(id).unwrap())
        .map(|m| m.text())
        .collect::<Vec<_>>()
        .join("\n");
    for s in 0..step {
        assert!(
            stored.contains(&format!("recorded fact-{s}.")),
            "fact-{s} stored"
        );
    }
    // The live view starts with a summary that carries the first request and a ledger.
    let live = &agent.session().messages;
    let summary = live
        .iter()
        .find(|m| baton_core::compress::markers::is_summary_message(m))
        .expect("a summary in the live view");
    let text = summary.text();
    assert!(
        text.contains("Migrate the billing module"),
        "goal survives three compactions"
    );
    assert!(text.contains("Task Ledger"), "ledger present");
    // The live messages equal the tip's stored rows.
    assert_eq!(
        h.store.messages(agent.session_id()).unwrap(),
        live.as_slice()
    );
    // The model was told about detail loss once the lineage passed two compactions.
    assert_eq!(agent.totals().compactions, 3);
}

#[tokio::test]
async fn an_overflow_mid_session_is_compacted_and_the_call_retried() {
    let h = Harness::new();
    let mut replies = Vec::new();
    for step in 0..8 {
        replies.extend(step_replies(step, 5_000));
    }
    replies.push(Reply::context_overflow(
        Api::ChatCompletions,
        24_000,
        26_000,
    ));
    replies.push(Reply::text("answered after the compaction"));
    let server = common::serve(replies).await;
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 40_000);
    for step in 0..8 {
        let (_, events) = turn(&mut agent, &format!("step {step}")).await;
        assert_eq!(
            compactions(&events),
            0,
            "under the threshold before the overflow"
        );
    }
    let before = agent.session_id().to_string();
    let (outcome, events) = turn(&mut agent, "one more step").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer, "{events:#?}");
    assert_eq!(outcome.final_text, "answered after the compaction");
    assert_eq!(compactions(&events), 1);
    let trigger = events.iter().find_map(|e| match e {
        AgentEvent::Compaction { trigger, .. } => Some(trigger.as_str()),
        _ => None,
    });
    assert_eq!(trigger, Some("overflow"));
    assert_ne!(agent.session_id(), before, "continued in a new session");
    assert_eq!(
        agent.config().context_length,
        24_000,
        "the stated window was adopted"
    );
    let requests = server.requests();
    let retried = requests.last().unwrap().body.to_string();
    assert!(
        retried.len() < requests[requests.len() - 2].body.to_string().len(),
        "smaller retry"
    );
    assert!(
        retried.contains("one more step"),
        "the user's message survives the compaction"
    );
}

#[tokio::test]
async fn a_persistent_overflow_stops_after_three_compactions_with_advice() {
    let h = Harness::new();
    let mut replies: Vec<Reply> = Vec::new();
    for _ in 0..10 {
        replies.push(Reply::payload_too_large());
    }
    let server = common::serve(replies).await;
    let config = h.config("scripted-model", 200_000);
    let earlier: Vec<baton_core::Message> = (0..6)
        .flat_map(|i| {
            [
                baton_core::Message::user(format!("earlier question {i}")),
                baton_core::Message::assistant(format!("earlier answer {i}")),
            ]
        })
        .collect();
    let id = h
        .store
        .create_session(baton_store::NewSession::new("cli"))
        .unwrap();
    h.store.append_messages(&id, &earlier).unwrap();
    let mut agent = h
        .builder(&server, Api::ChatCompletions, config)
        .engine(Box::new(common::DropOldest::default()))
        .resume(&id)
        .unwrap();
    let (outcome, events) = turn(&mut agent, "go").await;
    assert_eq!(outcome.reason, StopReason::Error);
    assert_eq!(compactions(&events), 3, "{events:#?}");
    let message = outcome.error.unwrap();
    assert!(message.contains("3 compression attempts"), "{message}");
    assert!(
        message.contains("/new") && message.contains("/compress"),
        "{message}"
    );
    assert_eq!(server.answered(), 4, "the first call and three retries");
    // The turn left a valid session: the user's message is stored and nothing is half-done.
    let stored = h.store.messages(agent.session_id()).unwrap();
    assert_eq!(stored.last().unwrap().text(), "go");
}

#[tokio::test]
async fn an_output_cap_error_retries_once_with_a_smaller_cap_and_no_compaction() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::replies([
        Reply::output_cap_too_large(Api::Messages, 64_000, 8_192),
        Reply::text("fits now"),
    ]))
    .await
    .unwrap();
    let mut config = h.config("claude-sonnet-4", 200_000);
    config.max_output_tokens = Some(64_000);
    let mut agent = h.builder(&server, Api::Messages, config).start().unwrap();
    let session = agent.session_id().to_string();
    let (outcome, events) = turn(&mut agent, "hello").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    assert_eq!(outcome.final_text, "fits now");
    assert_eq!(compactions(&events), 0);
    assert_eq!(agent.session_id(), session);
    let requests = server.requests();
    assert_eq!(requests[0].body["max_tokens"], 64_000);
    assert_eq!(requests[1].body["max_tokens"], 8_192 - 64);
}

#[tokio::test]
async fn parallel_tool_calls_run_together_and_results_follow_call_order() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::replies([
        Reply::tool_calls(vec![
            ("terminal", json!({"command": "sleep 0.4; echo slow"})),
            ("fetch", json!({"n": 20, "tag": "fast"})),
            ("terminal", json!({"command": "echo quick"})),
        ]),
        Reply::text("all three done"),
    ]))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::Responses, "gpt-5", 200_000);
    let started = std::time::Instant::now();
    let (outcome, events) = turn(&mut agent, "run the three").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let results: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["terminal", "fetch", "terminal"]);
    let live = &agent.session().messages;
    let tools: Vec<String> = live
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text())
        .collect();
    assert!(
        tools[0].contains("slow") && tools[1].contains("fast record") && tools[2].contains("quick")
    );
    let ids: Vec<&str> = live[1].calls().iter().map(|c| c.id.as_str()).collect();
    let answered: Vec<&str> = live
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(ids, answered, "results in call order");
    // The second request carried all three results, each with its call id.
    let second = &server.requests()[1].body;
    let outputs: Vec<&Value> = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert_eq!(outputs.len(), 3);
}

#[tokio::test]
async fn a_500_kb_result_is_spilled_and_read_back_by_ranges() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::responder(|request| {
        let body = request.text();
        if body.contains("[lines 101-200 of") {
            return Reply::text("read both pieces");
        }
        if let Some(path) = spilled_path(&body) {
            let offset = if body.contains("[lines 1-100 of") { 101 } else { 1 };
            return Reply::tool_call("read_file", json!({"path": path, "offset": offset, "limit": 100}));
        }
        Reply::tool_call(
            "terminal",
            json!({"command": "for i in $(seq 1 10000); do echo \"row $i: $(printf 'x%.0s' $(seq 1 40))\"; done"}),
        )
    }))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 200_000);
    let (outcome, events) = turn(&mut agent, "dump the rows").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer, "{events:#?}");
    let spilled = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult {
            spilled_to: Some(p),
            chars,
            ..
        } => Some((p.clone(), *chars)),
        _ => None,
    });
    let (path, chars) = spilled.expect("the terminal output was spilled");
    assert!(chars > 450_000, "{chars}");
    assert!(std::path::Path::new(&path).starts_with(h.dir.path().join("tool-results")));
    let reads: Vec<String> = agent
        .session()
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text())
        .filter(|t| t.contains("read on with offset"))
        .collect();
    assert_eq!(reads.len(), 2, "two pieces read back");
    assert!(reads[0].contains("row 1:") || reads[0].contains("exit code"));
    assert!(reads[1].contains("[lines 101-200 of"), "{}", reads[1]);
    let largest = agent
        .session()
        .messages
        .iter()
        .map(|m| m.text().len())
        .max()
        .unwrap();
    assert!(
        largest < 60_000,
        "no 500 KB message reached the model: {largest}"
    );
}

fn spilled_path(body: &str) -> Option<String> {
    let start = body.find("/tool-results/")?;
    let before = body[..start].rfind(['"', ' ', '\n', '`', '\''])? + 1;
    let end = start + body[start..].find(['"', ' ', '\\', '`', '\''])?;
    Some(body[before..end].to_string())
}

#[tokio::test]
async fn the_system_prompt_is_byte_stable_across_turns_until_a_compaction() {
    let h = Harness::new();
    let mut replies = Vec::new();
    for step in 0..40 {
        replies.extend(step_replies(step, 6_000));
    }
    let server = common::serve(replies).await;
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = counter.clone();
    let prompt = move || {
        format!(
            "You are a test agent. Memory snapshot #{}",
            c.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        )
    };
    let mut agent = h
        .builder(&server, Api::Messages, h.config("claude-sonnet-4", 20_000))
        .system_prompt(std::sync::Arc::new(prompt))
        .start()
        .unwrap();
    let mut step = 0;
    loop {
        let (_, events) = turn(&mut agent, &format!("step {step}")).await;
        step += 1;
        if compactions(&events) > 0 || step == 40 {
            break;
        }
    }
    // One more turn in the continuation.
    turn(&mut agent, "after the compaction").await;
    let systems: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["system"].to_string())
        .collect();
    let first = &systems[0];
    let changed = systems
        .iter()
        .position(|s| s != first)
        .expect("changed at the compaction");
    assert!(
        changed >= 4,
        "stable for several calls before the compaction"
    );
    assert!(systems[..changed].iter().all(|s| s == first));
    assert!(
        systems[changed].contains("Memory snapshot #1"),
        "rebuilt with a fresh snapshot"
    );
    assert!(
        first.contains("cache_control"),
        "the system prompt carries a cache marker"
    );
    // Pretty JSON text: `arbitrary_precision` numbers would show as private maps otherwise.
    insta::assert_snapshot!(
        "anthropic_request_turn_2",
        serde_json::to_string_pretty(&normalized(&server.requests()[2].body)).unwrap()
    );
}

/// A request with its long tool output shortened, for a readable snapshot.
fn normalized(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(messages) = body["messages"].as_array_mut() {
        for m in messages {
            if let Some(parts) = m["content"].as_array_mut() {
                for p in parts {
                    for key in ["text", "content"] {
                        if let Some(t) = p[key].as_str()
                            && t.len() > 120
                        {
                            p[key] = json!(format!("{}… ({} chars)", &t[..60], t.len()));
                        }
                    }
                }
            }
        }
    }
    body
}

#[tokio::test]
async fn switching_to_a_smaller_window_compacts_before_the_first_call() {
    let h = Harness::new();
    let mut replies = Vec::new();
    for step in 0..6 {
        replies.extend(step_replies(step, 6_000));
    }
    replies.push(Reply::text("answered on the small model"));
    let server = common::serve(replies).await;
    let mut agent = h.agent(&server, Api::ChatCompletions, "big-model", 200_000);
    for step in 0..6 {
        turn(&mut agent, &format!("step {step}")).await;
    }
    let calls_before = server.requests().len();
    agent.switch_model("small-model", 12_000);
    let (outcome, events) = turn(&mut agent, "continue on the small model").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    let first = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Compaction { trigger, .. } if trigger == "preflight"))
        .expect("a preflight compaction");
    let usage = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Usage { .. }))
        .unwrap();
    assert!(first < usage, "compacted before the first call");
    let sent = &server.requests()[calls_before];
    assert_eq!(sent.body["model"], "small-model");
    assert!(
        sent.body.to_string().len() / 4 < 12_000,
        "the first call fits the small window"
    );
}

#[tokio::test]
async fn soak_500_turns_with_tool_calls_stays_valid_and_bounded() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::responder(|request| {
        let last_is_tool = request.last_role() == "tool";
        if last_is_tool {
            Reply::text(format!("done: {}", request.last_user_text()))
        } else {
            Reply::tool_call(
                "fetch",
                json!({"n": 1_500, "tag": request.last_user_text()}),
            )
        }
    }))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 30_000);
    let mut compacted = 0;
    for i in 0..500 {
        let (outcome, events) = turn(&mut agent, &format!("task {i}")).await;
        assert_eq!(
            outcome.reason,
            StopReason::FinalAnswer,
            "turn {i}: {outcome:?}"
        );
        assert_eq!(outcome.final_text, format!("done: task {i}"));
        compacted += compactions(&events);
        // The live view never grows past the window.
        let estimate = agent.rough_prompt_tokens();
        assert!(estimate < 30_000, "turn {i}: ~{estimate} tokens in view");
    }
    assert!(
        compacted >= 5,
        "the soak crossed the threshold many times: {compacted}"
    );
    // Two calls per turn and nothing else: the extractive summarizer makes no model calls.
    assert_eq!(server.requests().len(), 1_000);
    // Every stored session of the chain is a valid conversation, and nothing was lost.
    let chain = h.store.compression_chain(agent.session_id()).unwrap();
    assert_eq!(chain.len(), compacted + 1);
    let mut answers = std::collections::HashSet::new();
    for id in &chain {
        let messages = h.store.messages(id).unwrap();
        baton_core::compress::sanitize::validate_sequence(&messages).unwrap();
        for m in messages {
            if m.role == Role::Assistant && m.text().starts_with("done: task ") {
                answers.insert(m.text());
            }
        }
    }
    assert_eq!(answers.len(), 500, "every answer is stored");
    assert_eq!(agent.totals().calls, 1_000);
}

#[tokio::test]
async fn the_first_request_and_pins_survive_every_compaction_and_a_resume() {
    let h = Harness::new();
    let server = ScriptedServer::start(Script::responder(|request| {
        let last_is_tool = request.last_role() == "tool";
        let asked = request.last_user_text();
        if asked.contains("constraint") {
            return Reply::text(
                "Understood: the API freeze starts on the 3rd; no schema changes after it.",
            );
        }
        if last_is_tool {
            Reply::text(format!(
                "{asked} finished. {}",
                "Notes on the work. ".repeat(60)
            ))
        } else {
            Reply::tool_call("fetch", json!({"n": 6_000, "tag": asked}))
        }
    }))
    .await
    .unwrap();
    let mut agent = h.agent(&server, Api::ChatCompletions, "scripted-model", 20_000);
    let first = "Port the invoice exporter to the new ledger API without changing its output.";
    turn(&mut agent, first).await;
    turn(
        &mut agent,
        "One constraint for the whole job: state it back.",
    )
    .await;
    let answer = agent
        .session()
        .messages
        .iter()
        .rposition(|m| m.text().starts_with("Understood: the API freeze"))
        .unwrap();
    agent.pin(answer).unwrap();
    let pinned = agent.session().messages[answer].text();
    assert!(
        agent.pin(1).is_err(),
        "a tool-call message without text cannot be pinned"
    );
    let mut seen = 0;
    let mut i = 0;
    while seen < 3 {
        let (_, events) = turn(&mut agent, &format!("Task {i}")).await;
        if compactions(&events) > 0 {
            seen += 1;
            let live = &agent.session().messages;
            let all: String = live.iter().map(|m| m.text()).collect();
            assert!(
                all.contains(first),
                "the first request is verbatim after compaction {seen}"
            );
            assert!(all.contains(&pinned), "the pin survives compaction {seen}");
        }
        i += 1;
        assert!(i < 80);
    }
    // Pins belong to the lineage: a resumed agent has them.
    let id = agent.session_id().to_string();
    drop(agent);
    let resumed = h
        .builder(
            &server,
            Api::ChatCompletions,
            h.config("scripted-model", 20_000),
        )
        .resume(&id)
        .unwrap();
    assert_eq!(resumed.pins().len(), 1);
    assert_eq!(resumed.pins()[0].text(), pinned);
}
