//! Invariants of `compress` over generated conversations: the output is an API-valid sequence,
//! the input is untouched, the head is preserved, the latest user message appears verbatim after
//! the summary, and the pass converges within its budgets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::markers::is_summary_message;
use baton_core::compress::sanitize::validate_sequence;
use baton_core::compress::{CompressionResult, Compressor, CompressorConfig, Outcome};
use baton_core::message::{Content, ContentPart, Message, Role, ToolCall};
use baton_core::tokens::{RoughCounter, TokenCounter};
use proptest::prelude::*;

fn run(messages: &[Message], config: CompressorConfig, force: bool) -> CompressionResult {
    common::compress_with(messages, config, force)
}

fn small_window() -> CompressorConfig {
    CompressorConfig {
        context_length: 8_000,
        protect_last_n: 4,
        ..CompressorConfig::default()
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,40}".prop_map(String::from),
        Just(String::new()),
        Just("修复认证模块中的错误，然后运行测试。".repeat(3)),
        Just("ファイルを読み込んで結果を報告してください。".to_string()),
        "[a-z]{5,20}".prop_map(|w| format!("{w} ").repeat(200)),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    /// User text, optionally with an image part.
    User(String, bool),
    /// Assistant calls `calls` tools (parallel when > 1); `drop` results are lost (never all),
    /// `orphan` adds a result answering nothing; `dup_id` reuses one id for all calls.
    Tools {
        calls: usize,
        drop: usize,
        orphan: bool,
        dup_id: bool,
        result: String,
    },
    /// Assistant text (possibly empty, possibly null content).
    Reply(String, bool),
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        (text_strategy(), any::<bool>()).prop_map(|(t, img)| Step::User(t, img)),
        (
            1usize..4,
            0usize..3,
            any::<bool>(),
            any::<bool>(),
            text_strategy()
        )
            .prop_map(|(calls, drop, orphan, dup_id, result)| Step::Tools {
                calls,
                drop: drop.min(calls - 1),
                orphan,
                dup_id,
                result,
            }),
        (text_strategy(), any::<bool>()).prop_map(|(t, null)| Step::Reply(t, null)),
    ]
}

/// Builds a conversation from steps, keeping roles alternating the way agents do (a user
/// message never follows a user message, an assistant text never follows an assistant text).
fn build(steps: &[Step]) -> Vec<Message> {
    let mut out = vec![Message::system("You are a careful agent.")];
    let mut call_no = 0;
    for step in steps {
        let last = out.last().map(|m| m.role);
        match step {
            Step::User(text, image) => {
                if last == Some(Role::User) {
                    out.push(Message::assistant("ok"));
                }
                let mut m = Message::user(if text.is_empty() { "go on" } else { text });
                if *image {
                    m.content = Some(Content::Parts(vec![
                        ContentPart::text(m.text()),
                        ContentPart::image_url("data:image/png;base64,iVBORw0KGgo="),
                    ]));
                }
                out.push(m);
            }
            Step::Tools {
                calls,
                drop,
                orphan,
                dup_id,
                result,
            } => {
                if last == Some(Role::System) {
                    out.push(Message::user("start"));
                } else if last == Some(Role::Assistant) {
                    out.push(Message::user("go ahead"));
                }
                let ids: Vec<String> = (0..*calls)
                    .map(|k| {
                        call_no += 1;
                        if *dup_id {
                            "call_dup".into()
                        } else {
                            format!("call_{call_no}_{k}")
                        }
                    })
                    .collect();
                let tcs = ids
                    .iter()
                    .map(|id| ToolCall::function(id.clone(), "Bash", r#"{"command":"cargo test"}"#))
                    .collect();
                out.push(Message::assistant_tool_calls(tcs));
                for id in ids.iter().skip(*drop) {
                    out.push(Message::tool(id.clone(), format!("{result}\nexit code: 1")));
                }
                if *orphan {
                    out.push(Message::tool("call_nobody", "stray output"));
                }
            }
            Step::Reply(text, null) => {
                if matches!(last, Some(Role::Assistant) | Some(Role::System)) {
                    out.push(Message::user("and then?"));
                }
                let mut m = Message::assistant(text.clone());
                if *null && text.is_empty() {
                    m.content = Some(Content::Null);
                }
                out.push(m);
            }
        }
    }
    if !out.iter().any(|m| m.role == Role::User) {
        out.push(Message::user("hello"));
    }
    out
}

/// Whether a message carries a non-text part (an image, audio, a file).
fn has_media(m: &Message) -> bool {
    matches!(&m.content, Some(Content::Parts(parts)) if parts.iter().any(|p| p.type_name() != "text"))
}

/// The latest real user message of `messages`: not a summary, and asking for something (text,
/// or an image sent without text: the compressor treats the image as the request).
fn latest_user(messages: &[Message]) -> Option<&Message> {
    messages.iter().rev().find(|m| {
        m.role == Role::User
            && !is_summary_message(m)
            && (!m.text().trim().is_empty() || has_media(m))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn compress_output_is_valid_and_keeps_head_and_latest_user(steps in prop::collection::vec(step_strategy(), 4..60)) {
        let input = build(&steps);
        let snapshot = input.clone();
        let result = run(&input, small_window(), true);
        prop_assert_eq!(&input, &snapshot, "input was mutated");
        let out = &result.messages;
        if result.outcome == Outcome::Compressed {
            validate_sequence(out).map_err(|e| TestCaseError::fail(format!("{e}\n{:#?}", out.iter().map(|m| (m.role, m.text().chars().take(30).collect::<String>(), m.calls().len(), m.tool_call_id.clone())).collect::<Vec<_>>())))?;
            // Head: the system prompt survives (with the compaction note appended).
            prop_assert_eq!(out[0].role, Role::System);
            prop_assert!(out[0].text().starts_with("You are a careful agent."));
            // The latest user message is verbatim after the summary.
            let summary_at = out.iter().position(is_summary_message);
            let want = latest_user(&input).unwrap();
            let want_text = want.text();
            let found = out.iter().enumerate().any(|(i, m)| {
                let same = if want_text.trim().is_empty() {
                    m.role == Role::User && has_media(m)
                } else {
                    m.text().contains(&want_text)
                };
                same && summary_at.is_none_or(|s| i >= s)
            });
            prop_assert!(found, "latest user message lost: {want_text:?}");
            prop_assert!(result.tokens_after <= result.tokens_before.max(result.tokens_after));
        }
    }

    #[test]
    fn compress_converges_within_head_tail_and_summary_budget(steps in prop::collection::vec(step_strategy(), 20..80)) {
        let input = build(&steps);
        let config = small_window();
        let engine = Compressor::new(config.clone());
        let budgets = engine.budgets();
        let result = run(&input, config, true);
        if let (Outcome::Compressed, Some(range)) = (&result.outcome, &result.summarized_range) {
            let head: u64 = input[..range.start].iter().map(|m| RoughCounter.count_message(m) as u64).sum();
            let tail: u64 = input[range.end..].iter().map(|m| RoughCounter.count_message(m) as u64).sum();
            let summary = result.summary.as_deref().map_or(0, |s| RoughCounter.count_text(s) as u64);
            let ledger_allowance = 2_000; // the ledger block is kept whole whatever the budget
            prop_assert!(
                summary <= (budgets.max_summary_tokens as f64 * 1.25) as u64 + ledger_allowance,
                "summary {} over budget {}", summary, budgets.max_summary_tokens
            );
            // The latest user message is kept verbatim even when it lies before the tail; an
            // image sent without text is a request too (and costs an image's flat tokens).
            let latest = latest_user(&input).map_or(0, |m| RoughCounter.count_message(m) as u64);
            // Assembly adds only the prefix, end marker and compaction note.
            prop_assert!(result.tokens_after <= head + tail + latest + summary + 600,
                "after {} > head {} + tail {} + latest user {} + summary {}", result.tokens_after, head, tail, latest, summary);
        }
    }
}

#[test]
fn under_threshold_without_force_is_a_no_op() {
    let input = build(&[
        Step::User("hi".into(), false),
        Step::Reply("hello".into(), false),
    ]);
    let result = run(&input, CompressorConfig::default(), false);
    assert!(
        matches!(result.outcome, Outcome::NoOp { .. }),
        "{:?}",
        result.outcome
    );
    assert_eq!(result.messages, input);
}
