//! Snapshots of what a provider receives after compaction (roles, tool pairing, where the
//! summary sits), and the engine-level guard behaviour across calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::compress::{CompressionResult, Compressor, CompressorConfig, Outcome};
use baton_core::engine::{CompressRequest, ContextEngine};
use baton_core::message::{Message, ToolCall};
use baton_core::usage::CanonicalUsage;

fn transcript() -> Vec<Message> {
    let mut m = vec![
        Message::system("You are a coding agent."),
        Message::user("Fix the failing parser test in src/parser.rs"),
    ];
    for i in 0..12 {
        let id = format!("call_{i}");
        m.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            "Bash",
            format!(r#"{{"command":"cargo test parser_{i}"}}"#),
        )]));
        m.push(Message::tool(
            &id,
            format!(
                "test parser_{i} ... FAILED\n{}\nexit code: 101",
                "x".repeat(3_000)
            ),
        ));
        m.push(Message::assistant(format!(
            "Attempt {i} failed; adjusting the tokenizer. {}",
            "The lexer splits the input on whitespace before the parser sees it. ".repeat(8)
        )));
    }
    m.push(Message::user("Also update the README when done."));
    m.push(Message::assistant("Will do."));
    m
}

fn config() -> CompressorConfig {
    CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        ..CompressorConfig::default()
    }
}

/// One line per message: role, tool-call ids / tool_call_id, and the first words of content.
fn shape(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| {
            let calls: Vec<&str> = m.calls().iter().map(|c| c.id.as_str()).collect();
            let text: String = m
                .text()
                .chars()
                .take(60)
                .collect::<String>()
                .replace('\n', "⏎");
            format!(
                "{:<9} calls={:?} answers={:?} | {}",
                m.role.as_str(),
                calls,
                m.tool_call_id.as_deref().unwrap_or("-"),
                text
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compress(
    engine: &mut Compressor,
    messages: &[Message],
    force: bool,
    tokens: Option<u64>,
) -> CompressionResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(engine.compress(CompressRequest {
        messages: messages.into(),
        current_tokens: tokens,
        focus_topic: None,
        force,
    }))
}

#[test]
fn compacted_request_shape() {
    let mut engine = Compressor::new(config());
    let result = compress(&mut engine, &transcript(), true, None);
    assert_eq!(result.outcome, Outcome::Compressed);
    insta::assert_snapshot!("compacted_request_shape", shape(&result.messages));
}

#[test]
fn recompacting_updates_the_summary_in_place() {
    let mut engine = Compressor::new(config());
    let first = compress(&mut engine, &transcript(), true, None);
    let mut next = first.messages.clone();
    for i in 0..8 {
        let id = format!("later_{i}");
        next.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id,
            "Edit",
            r#"{"file_path":"README.md","old_string":"a","new_string":"b"}"#,
        )]));
        next.push(Message::tool(&id, "ok"));
        next.push(Message::assistant(format!(
            "Updated README section {i}: {}",
            "details ".repeat(80)
        )));
        next.push(Message::user(format!(
            "Section {i} looks good, keep going."
        )));
    }
    next.push(Message::user("Now run the full suite."));
    let second = compress(&mut engine, &next, true, None);
    assert_eq!(second.outcome, Outcome::Compressed);
    let summaries = second
        .messages
        .iter()
        .filter(|m| baton_core::compress::markers::is_summary_message(m))
        .count();
    assert_eq!(
        summaries, 1,
        "one summary, updated, not a summary of a summary"
    );
    insta::assert_snapshot!("recompacted_request_shape", shape(&second.messages));
    let summary = second.summary.unwrap();
    // Actions of the first span (parser_1) are carried forward next to the second span's.
    assert!(summary.contains("cargo test parser_1`"), "{summary}");
    assert!(summary.contains("cargo test parser_7`"), "{summary}");
}

#[test]
fn second_automatic_compaction_in_the_same_turn_is_refused_with_a_reason() {
    let mut engine = Compressor::new(config());
    let input = transcript();
    let first = compress(&mut engine, &input, false, Some(50_000));
    assert_eq!(first.outcome, Outcome::Compressed);
    // The provider's first reading after the compaction: still over the threshold (say the
    // system prompt and tool schemas alone are that large).
    engine.update_from_response(&CanonicalUsage {
        input: 50_000,
        ..CanonicalUsage::default()
    });
    let second = compress(&mut engine, &first.messages, false, Some(50_000));
    match second.outcome {
        Outcome::Blocked { reason } => assert!(reason.contains("already compacted"), "{reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A manual compaction is never refused.
    let forced = compress(&mut engine, &first.messages, true, Some(50_000));
    assert_ne!(
        std::mem::discriminant(&forced.outcome),
        std::mem::discriminant(&Outcome::Blocked {
            reason: String::new()
        })
    );
}

#[test]
fn ineffective_compactions_judged_by_real_usage_block_automation() {
    let mut engine = Compressor::new(config());
    let threshold = engine.budgets().threshold_tokens;
    let over = CanonicalUsage {
        input: threshold + 1_000,
        ..CanonicalUsage::default()
    };
    let mut input = transcript();
    for round in 0..2 {
        let r = compress(&mut engine, &input, false, Some(threshold + 1_000));
        assert_eq!(r.outcome, Outcome::Compressed, "round {round}");
        engine.update_from_response(&over);
        input = r.messages;
        input.push(Message::assistant(format!("reply {round}")));
        input.push(Message::user(format!("next request {round}")));
    }
    let blocked = compress(&mut engine, &input, false, Some(threshold + 1_000));
    assert!(
        matches!(blocked.outcome, Outcome::Blocked { .. }),
        "{:?}",
        blocked.outcome
    );
    assert!(engine.status().blocked.is_some());
    engine.update_from_response(&CanonicalUsage {
        input: 10,
        ..CanonicalUsage::default()
    });
    assert!(
        engine.status().blocked.is_none(),
        "a reading under the threshold clears strikes"
    );
}

#[test]
fn a_summary_that_would_grow_the_prompt_is_refused() {
    // Short turns: any summary (prefix, sections, ledger) costs more than they do.
    let mut input = vec![Message::system("You are terse.")];
    for i in 0..12 {
        input.push(Message::user(format!("q{i}")));
        input.push(Message::assistant(format!("a{i}")));
    }
    let mut engine = Compressor::new(config());
    let result = compress(&mut engine, &input, true, None);
    match &result.outcome {
        Outcome::NoOp { reason } => assert!(reason.contains("would not be smaller"), "{reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(result.messages, input, "nothing installed");
    assert_eq!(result.tokens_after, result.tokens_before);
}
