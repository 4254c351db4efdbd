//! Span selection and assembly on hand-built ShareGPT and OpenAI records: protected head and
//! tail, tool pairs never split, savings that cover the overshoot plus the summary, under-target
//! records untouched, every other field kept.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::message::{Message, Role};
use baton_core::summary::extractive::ExtractiveSummarizer;
use baton_core::tokens::Encoding;
use baton_core::trajectory::{
    Action, Plan, PlanConfig, ProtectFirst, Record, TrajectoryCompressor, TrajectoryConfig, plan,
};
use serde_json::{Value, json};
use std::sync::Arc;

fn filler(tag: &str, words: usize) -> String {
    (0..words).map(|i| format!("{tag}{i} ")).collect()
}

/// An OpenAI record: system, task, then `rounds` of call → result → reply, with big results.
fn openai_record(rounds: usize) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a careful agent."}),
        json!({"role": "user", "content": "Please audit the repository.", "weight": 1}),
    ];
    for r in 0..rounds {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("c{r}a"), "type": "function", "function": {"name": "read", "arguments": format!("{{\"file\":\"f{r}.rs\"}}")}},
            {"id": format!("c{r}b"), "type": "function", "function": {"name": "grep", "arguments": "{\"q\":\"x\"}"}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{r}a"), "content": filler("out", 300)}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{r}b"), "content": filler("hit", 100)}));
        messages.push(json!({"role": "assistant", "content": format!("Round {r} done.")}));
    }
    json!({"id": "traj-1", "messages": messages, "tools": [{"type": "function", "function": {"name": "read"}}], "meta": {"reward": 1}})
}

/// A ShareGPT record in the LLaMA-Factory tool dialect, with extra record and turn fields.
fn sharegpt_record(rounds: usize) -> Value {
    let mut turns = vec![
        json!({"from": "system", "value": "Tools are available."}),
        json!({"from": "human", "value": "Find the invoices.", "lang": "en"}),
    ];
    for r in 0..rounds {
        turns.push(json!({"from": "function_call", "value": format!("{{\"name\": \"search\", \"arguments\": {{\"page\": {r}}}}}")}));
        turns.push(json!({"from": "observation", "value": filler("row", 250)}));
        turns.push(json!({"from": "gpt", "value": format!("Page {r} read.")}));
    }
    json!({"conversations": turns, "tools": "[]", "source": "unit", "score": 0.5})
}

fn counts(messages: &[Message]) -> Vec<usize> {
    let c = Encoding::O200k.counter();
    messages.iter().map(|m| c.count_message(m)).collect()
}

fn config(target: usize) -> PlanConfig {
    PlanConfig {
        target_max_tokens: target,
        summary_target_tokens: 200,
        protect_first: ProtectFirst::default(),
        protect_last_n: 4,
    }
}

fn compressor(target: usize) -> TrajectoryCompressor {
    TrajectoryCompressor::new(
        TrajectoryConfig {
            plan: config(target),
            ..TrajectoryConfig::default()
        },
        Encoding::O200k.counter(),
        Arc::new(ExtractiveSummarizer),
    )
}

/// Checks every invariant of a plan against its messages.
fn check_plan(messages: &[Message], target: usize) -> bool {
    let counts = counts(messages);
    let total: usize = counts.iter().sum();
    let cfg = config(target);
    match plan(messages, &counts, &cfg) {
        Plan::UnderTarget => assert!(total <= target),
        Plan::Blocked(_) => assert!(total > target),
        Plan::Summarize {
            start,
            end,
            span_tokens,
        } => {
            let n = messages.len();
            // Head: the first system, user, assistant and tool turns all sit before the span.
            for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
                let first = messages.iter().position(|m| m.role == role).unwrap();
                if first < n / 2 {
                    assert!(
                        first < start,
                        "first {role:?} at {first} is inside {start}..{end}"
                    );
                }
            }
            // Tail: the last four turns are kept.
            assert!(
                end <= n - 4,
                "span {start}..{end} reaches the protected tail of {n}"
            );
            // Pairs: the span neither starts on a result nor leaves results of its calls behind.
            assert_ne!(messages[start].role, Role::Tool);
            assert!(
                end == n || messages[end].role != Role::Tool,
                "span ends inside a call group"
            );
            assert_eq!(span_tokens, counts[start..end].iter().sum::<usize>());
            let need = total - target + cfg.summary_target_tokens;
            // Savings cover the overshoot plus the summary, unless the region ran out; and the
            // span is minimal: without its last group it would not.
            let last_group_start = (start..end)
                .rev()
                .find(|&i| messages[i].role != Role::Tool)
                .unwrap();
            let without_last: usize = counts[start..last_group_start].iter().sum();
            assert!(
                without_last < need,
                "span {start}..{end} is longer than needed"
            );
            if span_tokens < need {
                // Only allowed when the next turn is protected or the region is exhausted.
                assert!(end >= n - 4 || messages[end].role == Role::Tool);
            }
            return true;
        }
    }
    false
}

#[test]
fn openai_plans_respect_head_tail_pairs_and_savings_for_every_target() {
    let record = Record::parse(openai_record(12).to_string().as_bytes()).unwrap();
    let messages = &record.conversation.messages;
    let total: usize = counts(messages).iter().sum();
    let summarized = (200..total + 100)
        .step_by(97)
        .filter(|&t| check_plan(messages, t))
        .count();
    assert!(summarized > 5, "only {summarized} targets produced a span");
}

#[test]
fn sharegpt_plans_respect_head_tail_pairs_and_savings_for_every_target() {
    let record = Record::parse(sharegpt_record(10).to_string().as_bytes()).unwrap();
    let messages = &record.conversation.messages;
    assert!(
        messages.iter().any(|m| m.role == Role::Tool),
        "observations read as tool turns"
    );
    let total: usize = counts(messages).iter().sum();
    let summarized = (200..total + 100)
        .step_by(89)
        .filter(|&t| check_plan(messages, t))
        .count();
    assert!(summarized > 5, "only {summarized} targets produced a span");
}

#[test]
fn protected_head_and_tail_covering_everything_blocks_compression() {
    let record = Record::parse(openai_record(1).to_string().as_bytes()).unwrap();
    let messages = &record.conversation.messages;
    let cfg = PlanConfig {
        protect_last_n: messages.len(),
        ..config(10)
    };
    assert!(matches!(
        plan(messages, &counts(messages), &cfg),
        Plan::Blocked(_)
    ));
}

#[tokio::test]
async fn under_target_records_pass_through_byte_for_byte() {
    // Odd spacing and key order that a re-serialization would change.
    let line = "{ \"messages\" : [ {\"content\":\"hi\", \"role\":\"user\"} ],  \"z\": 1.50 }";
    let done = compressor(10_000)
        .compress_line(1, line.as_bytes().to_vec())
        .await
        .unwrap();
    assert_eq!(done.output.as_deref(), Some(line.as_bytes()));
    assert!(done.metrics.skipped_under_target);
    assert_eq!(done.metrics.action, Action::Unchanged);
}

#[tokio::test]
async fn compressed_sharegpt_record_keeps_its_fields_and_gets_a_human_summary() {
    let input = sharegpt_record(10);
    let done = compressor(1_500)
        .compress_line(3, input.to_string().into_bytes())
        .await
        .unwrap();
    let m = &done.metrics;
    assert_eq!(m.action, Action::Compressed);
    assert_eq!(m.line, 3);
    assert!(m.compressed_tokens < m.original_tokens);
    let out: Value = serde_json::from_slice(done.output.as_deref().unwrap()).unwrap();
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["conversations", "tools", "source", "score"]);
    assert_eq!(out["source"], "unit");
    assert_eq!(out["score"], 0.5);
    let turns = out["conversations"].as_array().unwrap();
    assert_eq!(turns.len(), m.compressed_turns);
    let [start, end] = m.summarized_range.unwrap();
    let summary = &turns[start];
    assert_eq!(summary["from"], "human");
    assert!(
        summary["value"]
            .as_str()
            .unwrap()
            .starts_with("[CONTEXT SUMMARY]:")
    );
    // Head turns are the input's (the system turn carries the notice); turn fields survive.
    let original = input["conversations"].as_array().unwrap();
    assert!(
        turns[0]["value"]
            .as_str()
            .unwrap()
            .starts_with("Tools are available.")
    );
    assert_eq!(turns[1], original[1]);
    // Everything after the span is verbatim.
    assert_eq!(&turns[start + 1..], &original[end..]);
}

#[tokio::test]
async fn compressed_openai_record_gets_a_user_summary_and_keeps_valid_pairs() {
    let input = openai_record(12);
    let done = compressor(2_000)
        .compress_line(1, input.to_string().into_bytes())
        .await
        .unwrap();
    assert_eq!(done.metrics.action, Action::Compressed);
    let out: Value = serde_json::from_slice(done.output.as_deref().unwrap()).unwrap();
    assert_eq!(out["id"], "traj-1");
    assert_eq!(out["meta"], json!({"reward": 1}));
    assert_eq!(out["tools"], input["tools"]);
    let record = Record::parse(out.to_string().as_bytes()).unwrap();
    let msgs = &record.conversation.messages;
    let [start, _] = done.metrics.summarized_range.unwrap();
    assert_eq!(msgs[start].role, Role::User);
    // Every tool result still answers a call of the assistant turn before its run.
    for (i, m) in msgs.iter().enumerate() {
        if m.role == Role::Tool {
            let caller = msgs[..i]
                .iter()
                .rev()
                .find(|p| p.role != Role::Tool)
                .unwrap();
            let id = m.tool_call_id.as_deref().unwrap();
            assert!(
                caller.calls().iter().any(|c| c.id == id),
                "result {id} lost its call"
            );
        }
    }
    assert!(
        msgs[1].extra.get("weight").is_some(),
        "turn fields are kept"
    );
}

/// A long trajectory is cut without counting the middle of its span: its row says so, the
/// compressed figure is a count of what was written, the original one an upper bound of the
/// exact total, and the output is the one planning with every count gives.
#[tokio::test]
async fn a_long_span_is_summarized_without_counting_its_middle() {
    let input = openai_record(40);
    let done = compressor(2_000)
        .compress_line(1, input.to_string().into_bytes())
        .await
        .unwrap();
    assert_eq!(done.metrics.action, Action::Compressed);
    assert!(done.metrics.span_not_counted, "{:?}", done.metrics);
    let record = Record::parse(input.to_string().as_bytes()).unwrap();
    let exact = counts(&record.conversation.messages);
    let total: usize = exact.iter().sum();
    assert!(done.metrics.original_tokens >= total);
    let out = Record::parse(done.output.as_deref().unwrap()).unwrap();
    let written: usize = counts(&out.conversation.messages).iter().sum();
    assert_eq!(done.metrics.compressed_tokens, written);
    let Plan::Summarize { start, end, .. } =
        plan(&record.conversation.messages, &exact, &config(2_000))
    else {
        panic!("the full plan summarizes too")
    };
    assert_eq!(done.metrics.summarized_range, Some([start, end]));
}
