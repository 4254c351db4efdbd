//! The quality gate can reject: a summary that is mostly the prompt echoed back, or that lacks
//! the required headings and most ledger facts, escalates (one re-summary, then the extractive
//! summarizer) instead of being patched, and the result says so. A good summary is installed
//! as written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::{CompressionResult, CompressorConfig, Outcome};
use baton_core::formats::load_file;
use baton_core::message::Message;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use std::sync::{Arc, Mutex};

/// Answers each call with the next scripted reply (the last one repeats); `Echo` returns the
/// start of the prompt, as a model that parrots its instructions does.
#[derive(Clone)]
enum Reply {
    Echo,
    Text(&'static str),
    /// A complete summary naming the ledger's task, with the ledger block copied from the
    /// prompt.
    Good,
}

struct Scripted {
    replies: Vec<Reply>,
    /// What each call returned.
    produced: Arc<Mutex<Vec<String>>>,
}

impl Summarizer for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        let mut produced = self.produced.lock().unwrap();
        let reply = self.replies[produced.len().min(self.replies.len() - 1)].clone();
        let body = match reply {
            Reply::Echo => input.prompt.chars().take(400).collect(),
            Reply::Text(t) => t.to_string(),
            Reply::Good => good_summary(&input),
        };
        produced.push(body.clone());
        Box::pin(std::future::ready(Ok(body)))
    }
}

fn good_summary(input: &SummaryInput<'_>) -> String {
    format!(
        "## Active Task\nUser asked: {}\n\n## Goal\nEnd-to-end tracing.\n\n## Completed Actions\n1. Added OpenTelemetry spans to the hook controllers.\n\n## Active State\n- The test suite passes.\n\n## Relevant Files\n- lib/spotter_web/controllers/otel_trace_helpers.ex\n\n{}",
        input.ledger.active_task.as_deref().unwrap_or("None."),
        input.ledger.render()
    )
}

/// Compacts the README's sample with `replies`; returns the result and what the summarizer
/// returned on each call.
fn run(replies: Vec<Reply>) -> (CompressionResult, Vec<String>) {
    let produced = Arc::new(Mutex::new(Vec::new()));
    let doc = load_file(
        &common::samples_dir().join("claude-code-session.jsonl"),
        None,
    )
    .unwrap();
    let config = CompressorConfig {
        context_length: 64_000,
        summarizer: Arc::new(Scripted {
            replies,
            produced: produced.clone(),
        }),
        ..CompressorConfig::default()
    };
    let messages: &[Message] = &doc.conversations[0].messages;
    let result = common::compress_with(messages, config, true);
    assert_eq!(result.outcome, Outcome::Compressed, "{result:?}");
    let produced = produced.lock().unwrap().clone();
    (result, produced)
}

#[test]
fn an_echoed_prompt_is_rejected_twice_then_the_extractive_summary_is_installed() {
    let (result, calls) = run(vec![Reply::Echo]);
    assert_eq!(calls.len(), 2, "one summary and one re-summary");
    assert_eq!(result.summarizer.as_deref(), Some("extractive"));
    assert!(result.fallback_used);
    assert_eq!(
        result.gate_rejections.len(),
        2,
        "{:?}",
        result.gate_rejections
    );
    assert!(
        result.gate_rejections[0].contains("repeats the summarization prompt's instructions"),
        "{:?}",
        result.gate_rejections
    );
    assert!(
        result.escalations.iter().any(|e| e
            .starts_with("the quality gate rejected scripted's summary")
            && e.ends_with("; used the extractive summary")),
        "{:?}",
        result.escalations
    );
    let summary = result.summary.unwrap();
    assert!(!summary.contains("context checkpoint"), "{summary}");
    assert!(summary.starts_with("## Active Task\nUser asked: continue implementation"));
}

#[test]
fn a_headingless_reply_is_rejected_and_a_good_re_summary_is_installed() {
    let (result, calls) = run(vec![
        Reply::Text("Sure! The agent added tracing and everything went fine."),
        Reply::Good,
    ]);
    assert_eq!(calls.len(), 2);
    assert_eq!(result.summarizer.as_deref(), Some("scripted"));
    assert!(!result.fallback_used);
    assert_eq!(result.gate_rejections.len(), 1);
    assert!(
        result.gate_rejections[0].starts_with("scripted: it lacks 4 of the 4 required headings"),
        "{:?}",
        result.gate_rejections
    );
    assert!(
        result.escalations[0].ends_with("; asked again"),
        "{:?}",
        result.escalations
    );
    assert!(
        result
            .summary
            .unwrap()
            .contains("Added OpenTelemetry spans")
    );
}

#[test]
fn a_good_summary_is_accepted_unchanged() {
    let (result, calls) = run(vec![Reply::Good]);
    assert_eq!(calls.len(), 1);
    assert!(result.gate_rejections.is_empty());
    assert!(result.escalations.is_empty(), "{:?}", result.escalations);
    assert_eq!(result.gate_added, 0);
    assert_eq!(result.summary.as_deref(), Some(calls[0].as_str()));
    assert!(calls[0].starts_with("## Active Task\nUser asked: continue implementation\n"));
}

#[test]
fn real_extractive_summaries_would_never_be_rejected() {
    // Guards the thresholds against false rejections: every summary the extractive summarizer
    // writes for the shared corpus's agent sessions passes the verdict against its own ledger.
    use baton_core::summary::ledger::TaskLedger;
    use baton_core::summary::reject;
    let Some(normalized) = common::shared_normalized() else {
        return;
    };
    let mut judged = 0;
    for source in [
        "spotter-claude-code",
        "codemie-code",
        "tielec-ai-workflow-ja",
    ] {
        let doc = load_file(&normalized.join(format!("{source}.jsonl")), None).unwrap();
        for (i, conv) in doc.conversations.iter().enumerate() {
            let config = CompressorConfig {
                context_length: 32_000,
                ..CompressorConfig::default()
            };
            let result = common::compress_with(&conv.messages, config, true);
            let Some(summary) = result.summary else {
                continue;
            };
            let ledger = summary
                .find("## Task Ledger")
                .and_then(|at| TaskLedger::parse(&summary[at..]))
                .unwrap_or_default();
            assert_eq!(
                reject::judge(&summary, &ledger),
                None,
                "{source}#{i}: {summary}"
            );
            judged += 1;
        }
    }
    eprintln!("{judged} extractive summaries judged, none rejected");
    assert!(judged >= 10);
}
