//! The compacted tail (issue #12, "tail collapse"): it never drops below its floors, the newest
//! reply to the latest request stays verbatim, an over-ceiling tail is cut inside itself,
//! `protect_last_n` is honoured uncapped, and chained compactions keep the latest request
//! verbatim after the summary and carry every earlier summary's ledger. Checked on the shared
//! real transcripts (skipped when absent) and on generated agent sessions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::markers::{END_MARKER, is_summary_message, with_summary_prefix};
use baton_core::compress::sanitize::validate_sequence;
use baton_core::compress::{CompressionResult, CompressorConfig, Outcome};
use baton_core::formats::load_file;
use baton_core::message::{Message, Role, ToolCall};
use baton_core::summary::ledger::TaskLedger;
use proptest::prelude::*;

fn window(context_length: u64) -> CompressorConfig {
    CompressorConfig {
        context_length,
        ..CompressorConfig::default()
    }
}

fn force(messages: &[Message], config: CompressorConfig) -> CompressionResult {
    common::compress_with(messages, config, true)
}

/// The user's own words of a message (a request merged into a summary carrier included).
fn own_text(m: &Message) -> String {
    baton_core::compress::boundary::own_words(m).text()
}

/// Index of the latest user request and of the newest assistant reply after it (the pair the
/// issue requires verbatim), by the compressor's own definitions.
fn last_exchange(messages: &[Message]) -> (Option<usize>, Option<usize>) {
    use baton_core::compress::boundary::{last_actionable_user, last_visible_assistant};
    let user = last_actionable_user(messages, 0);
    let reply = user.and_then(|u| last_visible_assistant(messages, u + 1));
    (user, reply)
}

/// Every rule of the issue for one compaction of `input` into `result`.
fn assert_tail_rules(name: &str, input: &[Message], result: &CompressionResult) {
    let out = &result.messages;
    if validate_sequence(input).is_ok() {
        validate_sequence(out).unwrap_or_else(|e| panic!("{name}: invalid output: {e}"));
    }
    if result.outcome != Outcome::Compressed {
        return;
    }
    let tail = result.tail.expect("a compaction reports its tail");
    assert!(
        !tail.below_floor(),
        "{name}: tail below its floor: {tail:?}"
    );
    let summary_at = out
        .iter()
        .position(is_summary_message)
        .expect("one summary");
    let (user, reply) = last_exchange(input);
    if let Some(u) = user {
        let words = own_text(&input[u]).trim().to_string();
        let after = &out[summary_at..];
        let verbatim = after
            .iter()
            .enumerate()
            .any(|(k, m)| own_text(m).contains(&words) && (k > 0 || merged_after_end(m)));
        assert!(
            verbatim,
            "{name}: the latest request is not verbatim after the summary"
        );
    }
    if let Some(a) = reply {
        let kept = out[summary_at + 1..]
            .iter()
            .any(|m| m.role == Role::Assistant && m == &input[a]);
        assert!(
            kept,
            "{name}: the reply to the latest request is not verbatim"
        );
    }
}

/// Whether a carrier holds its own words after the summary's end marker.
fn merged_after_end(m: &Message) -> bool {
    let text = m.text();
    text.find(END_MARKER)
        .is_some_and(|i| !text[i + END_MARKER.len()..].trim().is_empty())
}

#[test]
fn spotter_sessions_keep_a_real_tail_and_the_final_reply_at_200k() {
    let Some(dir) = common::shared_normalized() else {
        return;
    };
    let doc = load_file(&dir.join("spotter-claude-code.jsonl"), None).unwrap();
    let mut long = 0;
    for (i, conv) in doc.conversations.iter().enumerate() {
        let result = force(&conv.messages, window(200_000));
        assert_tail_rules(&format!("spotter {i}"), &conv.messages, &result);
        if conv.messages.len() >= 300 {
            long += 1;
            // Today's main compacted 344 → 7 and 323 → 6 here.
            assert!(
                result.messages.len() >= 20,
                "spotter {i}: {} → {} messages",
                conv.messages.len(),
                result.messages.len()
            );
        }
    }
    assert!(
        long >= 2,
        "the two long sessions of the issue are in the file"
    );
}

#[test]
fn every_shared_conversation_keeps_its_tail_rules_at_32k_64k_and_200k() {
    let Some(files) = common::shared_normalized_files() else {
        return;
    };
    let mut compacted = 0;
    for path in files {
        let doc = load_file(&path, None).unwrap();
        for (i, conv) in doc.conversations.iter().enumerate() {
            for context_length in [32_000, 64_000, 200_000] {
                let result = force(&conv.messages, window(context_length));
                let name = format!("{} #{i} at {context_length}", path.display());
                assert_tail_rules(&name, &conv.messages, &result);
                compacted += usize::from(result.outcome == Outcome::Compressed);
            }
        }
    }
    assert!(compacted > 10, "only {compacted} compactions");
}

#[test]
fn protect_last_n_keeps_that_many_messages_verbatim_uncapped() {
    let messages = agent_session(60, 3_000, false);
    for protect in [8, 20, 40] {
        let config = CompressorConfig {
            context_length: 32_000,
            protect_last_n: protect,
            ..CompressorConfig::default()
        };
        let result = force(&messages, config);
        assert_eq!(result.outcome, Outcome::Compressed, "protect {protect}");
        let n = messages.len();
        let out = &result.messages;
        assert!(out.len() >= protect);
        assert_eq!(
            &out[out.len() - protect..],
            &messages[n - protect..],
            "the last {protect} messages are verbatim (not summarized, not pruned)"
        );
    }
}

#[test]
fn a_long_latest_request_stays_verbatim_after_the_summary_on_every_pass() {
    let mut messages = chat(30);
    let request = format!(
        "Now refactor the parser. {}",
        "Details of the plan. ".repeat(150)
    );
    assert!(request.len() > 1_400);
    messages.push(Message::user(request.clone()));
    let mut current = messages;
    for pass in 0..5 {
        // The agent keeps working on the same request between compactions.
        current.extend(work_steps(pass, 12));
        let result = force(&current, window(32_000));
        assert_eq!(result.outcome, Outcome::Compressed, "pass {pass}");
        assert_tail_rules(&format!("pass {pass}"), &current, &result);
        let out = &result.messages;
        let summary_at = out.iter().position(is_summary_message).expect("summary");
        let after = out[summary_at..]
            .iter()
            .enumerate()
            .any(|(k, m)| own_text(m).contains(request.trim()) && (k > 0 || merged_after_end(m)));
        assert!(
            after,
            "pass {pass}: the request is not verbatim after the summary"
        );
        current = result.messages;
    }
}

/// `[sys, u0, a0, …]`: `turns` exchanges of a few hundred words each.
fn chat(turns: usize) -> Vec<Message> {
    let mut v = vec![Message::system("be brief")];
    for k in 0..turns {
        v.push(Message::user(format!(
            "question {k} {}",
            "detail ".repeat(300)
        )));
        v.push(Message::assistant(format!(
            "answer {k} {}",
            "words ".repeat(300)
        )));
    }
    v
}

/// `steps` agent steps of round `round`: an explained tool call and its result.
fn work_steps(round: usize, steps: usize) -> Vec<Message> {
    let mut v = Vec::new();
    for k in 0..steps {
        let id = format!("toolu_{round}_{k}");
        let mut call = Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            "Read",
            format!(r#"{{"file_path":"src/parser/part_{round}_{k}.rs"}}"#),
        )]);
        call.content = Some(baton_core::message::Content::Text(format!(
            "Reading part {k}: {}",
            "because the parser needs it ".repeat(40)
        )));
        v.push(call);
        v.push(Message::tool(id, "fn parse() {}\n".repeat(100)));
    }
    v.push(Message::assistant(format!("Round {round} done.")));
    v
}

#[test]
fn a_previous_summary_in_the_kept_tail_has_its_ledger_carried() {
    let ledger = TaskLedger {
        files_read: vec!["src/old/kept_in_tail.rs".into()],
        files_modified: vec!["src/old/changed_in_tail.rs".into()],
        ..TaskLedger::default()
    };
    let old_summary = format!(
        "{}\n\n{END_MARKER}",
        with_summary_prefix(&format!("## Goal\nearlier work\n\n{}", ledger.render()))
    );
    let mut messages = chat(30);
    // An earlier summary sitting near the end (an imported compacted session).
    messages.push(Message::user(old_summary));
    messages.push(Message::assistant("noted"));
    messages.push(Message::user("continue with the parser"));
    messages.push(Message::assistant("on it"));
    let result = force(&messages, window(32_000));
    assert_eq!(result.outcome, Outcome::Compressed);
    let summary = result.summary.expect("summary");
    for path in ["src/old/kept_in_tail.rs", "src/old/changed_in_tail.rs"] {
        assert!(
            summary.contains(path),
            "{path} lost from the ledger:\n{summary}"
        );
    }
    assert_eq!(
        result
            .messages
            .iter()
            .filter(|m| is_summary_message(m))
            .count(),
        1,
        "the old summary is replaced, not kept beside the new one"
    );
}

/// A Claude Code–like session: one request, `steps` tool calls with results of about `size`
/// characters, a final report, then (optionally) a task notification and a last question.
fn agent_session(steps: usize, size: usize, notification: bool) -> Vec<Message> {
    let mut v = vec![
        Message::system("You are a coding agent."),
        Message::user("Implement the epic."),
    ];
    for k in 0..steps {
        let id = format!("toolu_{k}");
        v.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            "Bash",
            format!(r#"{{"command":"step {k}"}}"#),
        )]));
        v.push(Message::tool(
            id,
            format!("out{k} ").repeat(size / 5 + k % 7),
        ));
    }
    v.push(Message::assistant("All done. Everything is implemented."));
    if notification {
        v.push(Message::user(
            "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>",
        ));
        v.push(Message::assistant("That was a stale background task."));
        v.push(Message::user("did you push?"));
        v.push(Message::assistant("Yes — everything is pushed and clean."));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_agent_sessions_keep_the_tail_rules(
        steps in 5usize..160,
        size in 50usize..6_000,
        notification in any::<bool>(),
        context_length in prop::sample::select(vec![8_000u64, 32_000, 64_000, 200_000]),
        protect_last_n in prop::sample::select(vec![0usize, 3, 8, 20]),
    ) {
        let messages = agent_session(steps, size, notification);
        let config = CompressorConfig { context_length, protect_last_n, ..CompressorConfig::default() };
        let result = force(&messages, config.clone());
        assert_tail_rules("generated", &messages, &result);
        // A second pass on the output keeps the same rules.
        let again = force(&result.messages, config);
        assert_tail_rules("generated, second pass", &result.messages, &again);
    }
}
