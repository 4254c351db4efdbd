//! A compaction pass classifies each tool call once (issue #17): pruning's stubs, the task
//! ledger and the extractive summary read one table instead of each parsing the arguments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::compress::{CompressionResult, Compressor, CompressorConfig, Outcome};
use crate::engine::{CompressRequest, ContextEngine};
use crate::message::{Message, ToolCall};
use crate::tool_action::tests::CLASSIFIED;

/// An agent session of `exchanges` tool calls (commands and file reads, all distinct) whose
/// results are long enough to be stubbed.
fn session(exchanges: usize) -> Vec<Message> {
    let mut messages = vec![Message::user("Fix the failing tests in the parser crate.")];
    for i in 0..exchanges {
        let id = format!("call_{i}");
        let (name, arguments) = if i % 2 == 0 {
            (
                "Bash",
                format!(r#"{{"command":"cargo test -p parser_{i}"}}"#),
            )
        } else {
            ("Read", format!(r#"{{"file_path":"src/module_{i}.rs"}}"#))
        };
        messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &id, name, arguments,
        )]));
        let output: String = (0..120)
            .map(|line| format!("line {line} of the output of call {i}\n"))
            .collect();
        messages.push(Message::tool(&id, output));
    }
    messages.push(Message::user("Now run the whole suite once more."));
    messages.push(Message::assistant("Running it."));
    messages
}

/// One forced compaction of `messages` by the default engine for a window of `context_length`.
pub(super) fn compress_forced(messages: &[Message], context_length: u64) -> CompressionResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut engine = Compressor::new(CompressorConfig {
        context_length,
        ..CompressorConfig::default()
    });
    rt.block_on(engine.compress(CompressRequest {
        messages: messages.into(),
        current_tokens: None,
        focus_topic: None,
        force: true,
    }))
}

#[test]
fn a_pass_classifies_each_tool_call_once_for_stubs_ledger_and_summary() {
    let exchanges = 300;
    let messages = session(exchanges);
    CLASSIFIED.with(|n| n.set(0));
    let result = compress_forced(&messages, 20_000);
    let classified = CLASSIFIED.with(std::cell::Cell::get);

    assert_eq!(
        result.outcome,
        Outcome::Compressed,
        "{:?} {:?} {:?}",
        result.escalations,
        result.tokens_before,
        result.tokens_after
    );
    let span = result.summarized_range.clone().unwrap();
    let calls_in_span = messages[span].iter().filter(|m| m.has_tool_calls()).count();
    // The pass used every part that classifies: stubs, the ledger and the summary.
    assert!(result.pruned > 0, "nothing was stubbed");
    assert!(
        calls_in_span > exchanges / 2,
        "span of {calls_in_span} calls"
    );
    let summary = result.summary.as_deref().unwrap();
    // Both kinds of call reached the summary through their actions.
    assert!(summary.contains("`cargo test -p parser_"), "{summary}");
    assert!(summary.contains("src/module_"), "{summary}");
    // Each distinct call at most once: separately, stubs, ledger and summary classified the
    // span's calls three times over.
    assert!(
        classified <= exchanges && classified >= calls_in_span,
        "{classified} classifications for {exchanges} calls ({calls_in_span} in the span)"
    );
}

/// A conversation handed over (`Cow::Owned`) compacts to what the same conversation lent
/// compacts to, whatever the pass makes of it: a summary installed, only pruning kept (the
/// summary would not be smaller), or nothing changed.
#[test]
fn a_handed_over_conversation_compacts_as_a_lent_one() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let compress = |messages: std::borrow::Cow<'_, [Message]>, context_length: u64| {
        let mut engine = Compressor::new(CompressorConfig {
            context_length,
            ..CompressorConfig::default()
        });
        let mut result = rt.block_on(engine.compress(CompressRequest {
            messages,
            current_tokens: None,
            focus_topic: None,
            force: true,
        }));
        result.elapsed = std::time::Duration::ZERO;
        format!("{:?}\n{:?}", result.outcome, result)
    };
    let mut seen = Vec::new();
    for (messages, context_length) in [
        (session(120), 20_000),
        (session(6), 200_000),
        (session(1), 200_000),
    ] {
        let lent = compress(messages.as_slice().into(), context_length);
        let handed = compress(messages.clone().into(), context_length);
        assert_eq!(lent, handed);
        seen.push(lent.lines().next().unwrap_or_default().to_string());
    }
    assert!(seen.iter().any(|o| o == "Compressed"), "{seen:?}");
    assert!(
        seen.iter()
            .any(|o| o.starts_with("NoOp") || o == "PrunedOnly"),
        "{seen:?}"
    );
}
