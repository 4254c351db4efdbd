//! The streaming pipeline: order kept under concurrency, a bounded window (measured by the
//! pipeline's own live-record counter, not RSS), metrics rows, on-error modes with line
//! numbers, and stop + resume giving exactly the uninterrupted output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::summary::extractive::summarize_extractively;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use baton_core::tokens::Encoding;
use baton_core::trajectory::{
    Action, OnError, Pipeline, PipelineError, PipelineOptions, PlanConfig, RunSummary, StopSignal,
    TrajectoryCompressor, TrajectoryConfig, TrajectoryMetrics, find_resume_point,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Extractive output after a delay that varies by span, so later records often finish first.
struct Jittery;

impl Summarizer for Jittery {
    fn name(&self) -> String {
        "jittery".into()
    }
    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            let first = input.turns.first().map(|m| m.text()).unwrap_or_default();
            let ms = (first.len() * 7919) % 23;
            tokio::time::sleep(Duration::from_millis(ms as u64)).await;
            Ok(summarize_extractively(&input))
        })
    }
    fn needs_prompt(&self) -> bool {
        false
    }
}

/// Record `i`: small ones pass through, every third one is long enough to compress.
fn record(i: usize) -> String {
    let rounds = if i.is_multiple_of(3) { 12 } else { 1 };
    let mut messages = vec![
        json!({"role": "system", "content": "sys"}),
        json!({"role": "user", "content": format!("task {i}")}),
    ];
    for r in 0..rounds {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{r}"), "type": "function", "function": {"name": "run", "arguments": format!("{{\"n\":{r}}}")}}]}));
        let body: String = (0..120).map(|k| format!("r{i}x{r}y{k} ")).collect();
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{r}"), "content": body}));
        messages.push(json!({"role": "assistant", "content": format!("step {r}")}));
    }
    json!({"id": i, "messages": messages}).to_string()
}

fn input(n: usize) -> String {
    (0..n).map(|i| record(i) + "\n").collect()
}

fn pipeline(options: PipelineOptions) -> Pipeline {
    let compressor = TrajectoryCompressor::new(
        TrajectoryConfig {
            plan: PlanConfig {
                target_max_tokens: 1_500,
                summary_target_tokens: 200,
                ..PlanConfig::default()
            },
            ..TrajectoryConfig::default()
        },
        Encoding::O200k.counter(),
        Arc::new(Jittery),
    );
    Pipeline::new(compressor, options).unwrap()
}

struct Run {
    out: Vec<u8>,
    metrics: Vec<u8>,
    result: Result<RunSummary, PipelineError>,
}

async fn run_with(
    options: PipelineOptions,
    text: &str,
    stop: &StopSignal,
    observe: &mut dyn FnMut(&TrajectoryMetrics, u64),
) -> Run {
    let mut out = Vec::new();
    let mut metrics = Vec::new();
    let result = pipeline(options)
        .run(text.as_bytes(), &mut out, Some(&mut metrics), stop, observe)
        .await;
    Run {
        out,
        metrics,
        result,
    }
}

async fn run(options: PipelineOptions, text: &str) -> Run {
    run_with(options, text, &StopSignal::new(), &mut |_, _| {}).await
}

fn rows(metrics: &[u8]) -> Vec<TrajectoryMetrics> {
    metrics
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn opts(threads: usize, concurrency: usize, window: usize) -> PipelineOptions {
    PipelineOptions {
        threads,
        concurrency,
        window,
        ..PipelineOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_order_equals_input_order_under_concurrency() {
    let text = input(60);
    let serial = run(opts(1, 1, 1), &text).await;
    let parallel = run(opts(4, 8, 16), &text).await;
    assert_eq!(
        serial.out, parallel.out,
        "parallel output differs from the serial one"
    );
    let ids: Vec<u64> = parallel
        .out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<serde_json::Value>(l).unwrap()["id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ids, (0..60).collect::<Vec<_>>());
    let summary = parallel.result.unwrap();
    assert_eq!(summary.aggregate.compressed, 20);
    assert_eq!(summary.lines_written, 60);
}

#[tokio::test]
async fn the_pipeline_never_holds_more_records_than_its_window() {
    let text = input(300);
    let summary = run(opts(2, 4, 5), &text).await.result.unwrap();
    assert_eq!(summary.window, 5);
    assert_eq!(summary.lines_written, 300);
    assert!(
        summary.peak_in_flight <= 5,
        "peak {} > window",
        summary.peak_in_flight
    );
    assert!(
        summary.peak_in_flight >= 2,
        "the window was never used in parallel"
    );
}

#[tokio::test]
async fn metrics_rows_describe_each_record() {
    let text = input(6);
    let r = run(opts(2, 2, 4), &text).await;
    let rows = rows(&r.metrics);
    assert_eq!(rows.len(), 6);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.line, i as u64 + 1);
        assert_eq!(row.id.as_deref(), Some(i.to_string().as_str()));
        if i.is_multiple_of(3) {
            assert_eq!(row.action, Action::Compressed);
            assert!(row.original_tokens > 1_500);
            assert!(row.compressed_tokens < row.original_tokens);
            assert!(row.turns_summarized > 0);
            assert_eq!(
                row.compressed_turns,
                row.original_turns - row.turns_summarized + 1
            );
            assert!(row.compression_ratio < 1.0);
            assert_eq!(row.still_over_limit, row.compressed_tokens > 1_500);
            assert!(!row.summarizer_failed);
        } else {
            assert_eq!(row.action, Action::Unchanged);
            assert!(row.skipped_under_target);
            assert_eq!(row.compression_ratio, 1.0);
        }
    }
    let agg = r.result.unwrap().aggregate;
    assert_eq!(
        (agg.records, agg.compressed, agg.skipped_under_target),
        (6, 2, 4)
    );
    assert_eq!(
        agg.tokens_before - agg.tokens_after,
        rows.iter().map(|r| r.tokens_saved() as u64).sum::<u64>()
    );
}

fn with_bad_lines() -> String {
    format!(
        "{}\nnot json\n\n{{\"messages\":[{{\"role\":\"wizard\",\"content\":\"x\"}}]}}\n{{\"other\":1}}\n{}\n",
        record(1),
        record(2)
    )
}

#[tokio::test]
async fn on_error_copy_writes_malformed_lines_through_and_names_them() {
    let text = with_bad_lines();
    let r = run(opts(2, 2, 4), &text).await;
    let lines: Vec<&str> = std::str::from_utf8(&r.out).unwrap().lines().collect();
    let expected: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines, expected,
        "copy mode keeps every record, blank lines aside"
    );
    let bad: Vec<(u64, String)> = rows(&r.metrics)
        .into_iter()
        .filter(|m| m.action == Action::CopiedMalformed)
        .map(|m| (m.line, m.error.unwrap()))
        .collect();
    assert_eq!(bad.iter().map(|b| b.0).collect::<Vec<_>>(), [2, 4, 5]);
    assert!(bad[0].1.contains("JSON"), "{}", bad[0].1);
    assert!(bad[1].1.contains("wizard"), "{}", bad[1].1);
    assert!(bad[2].1.contains("messages"), "{}", bad[2].1);
    assert_eq!(r.result.unwrap().aggregate.malformed_copied, 3);
}

#[tokio::test]
async fn on_error_skip_leaves_malformed_lines_out() {
    let text = with_bad_lines();
    let options = PipelineOptions {
        on_error: OnError::Skip,
        ..opts(2, 2, 4)
    };
    let r = run(options, &text).await;
    assert_eq!(
        r.out,
        format!("{}\n{}\n", record(1), record(2)).into_bytes()
    );
    assert_eq!(
        rows(&r.metrics).len(),
        5,
        "skipped records still get a metrics row"
    );
    assert_eq!(r.result.unwrap().aggregate.malformed_skipped, 3);
}

#[tokio::test]
async fn on_error_fail_stops_at_the_first_bad_line_with_its_number() {
    let text = with_bad_lines();
    let options = PipelineOptions {
        on_error: OnError::Fail,
        ..opts(2, 2, 4)
    };
    let r = run(options, &text).await;
    match r.result {
        Err(PipelineError::Malformed { line, message }) => {
            assert_eq!(line, 2);
            assert!(message.contains("JSON"), "{message}");
        }
        other => panic!("expected a malformed-record error, got {other:?}"),
    }
    assert_eq!(
        r.out,
        format!("{}\n", record(1)).into_bytes(),
        "only records before it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_then_resume_reproduces_the_uninterrupted_output() {
    let text = input(90);
    let full = run(opts(2, 4, 8), &text).await;
    let full_out = full.out.clone();

    // Stop after 25 records were written.
    let stop = StopSignal::new();
    let trigger = stop.clone();
    let mut seen = 0;
    let first = run_with(opts(2, 4, 8), &text, &stop, &mut |_, _| {
        seen += 1;
        if seen == 25 {
            trigger.stop();
        }
    })
    .await;
    let summary = first.result.unwrap();
    assert!(summary.interrupted);
    assert_eq!(summary.lines_written, 25);
    assert!(first.out.ends_with(b"\n"));
    assert!(
        full_out.starts_with(&first.out),
        "the partial output is a prefix of the full one"
    );

    // Resume from what the output holds.
    let done = first.out.iter().filter(|&&b| b == b'\n').count() as u64;
    let point = find_resume_point(text.as_bytes(), done, OnError::Copy).unwrap();
    let options = PipelineOptions {
        skip_lines: point.lines_to_skip,
        ..opts(2, 4, 8)
    };
    let second = run(options, &text).await;
    let mut combined = first.out.clone();
    combined.extend_from_slice(&second.out);
    assert_eq!(combined, full_out);
    let mut metrics = first.metrics.clone();
    metrics.extend_from_slice(&second.metrics);
    assert_eq!(metrics, full.metrics, "metrics rows line up too");
}

/// A record whose UTF-8 length is within the target cannot count more tokens than that, so
/// it is copied through without running the tokenizer and its metrics say the figure is a
/// bound; a record over the target by bytes but not by tokens is counted exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_under_the_target_by_their_bytes_are_not_counted_and_say_so() {
    use baton_core::trajectory::Record;
    let short = json!({"id": "short", "messages": [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "a.txt b.txt"},
    ]})
    .to_string();
    // ~2,400 bytes of CJK text, well under 1,500 tokens.
    let wide = json!({"id": "wide", "messages": [
        {"role": "user", "content": "配置文件迁移到数据库".repeat(80)},
        {"role": "assistant", "content": "完成"},
    ]})
    .to_string();
    assert!(wide.len() > 1_500);
    let text = format!("{short}\n{wide}\n");
    let r = run(opts(1, 1, 4), &text).await;
    assert_eq!(r.out, text.as_bytes(), "both copied through byte for byte");
    let rows = rows(&r.metrics);
    let exact = |line: &str| -> usize {
        Record::parse(line.as_bytes())
            .unwrap()
            .conversation
            .messages
            .iter()
            .map(|m| Encoding::O200k.counter().count_message(m))
            .sum()
    };
    assert!(rows[0].tokens_bound && rows[0].skipped_under_target);
    assert!(rows[0].original_tokens >= exact(&short));
    assert!(!rows[1].tokens_bound && rows[1].skipped_under_target);
    assert_eq!(rows[1].original_tokens, exact(&wide));
    let metrics_text = String::from_utf8(r.metrics.clone()).unwrap();
    assert_eq!(metrics_text.matches("\"tokens_bound\":true").count(), 1);
    let agg = r.result.unwrap().aggregate;
    assert_eq!(agg.not_counted, 1);
    assert_eq!(agg.tokens_before, exact(&wide) as u64);
    assert!(agg.to_text().contains("not counted: 1 records"));
}
