//! On Chinese and Japanese conversations, one calibration step (one provider-reported prompt
//! count) brings the rough estimate within 5% of the exact count for the rest of the file.
//!
//! The "provider" here is the exact o200k_base count of the first request, which is what an
//! OpenAI endpoint reports as `prompt_tokens` for that request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::formats::load_file;
use baton_core::tokens::{
    Calibration, CalibrationOutcome, Encoding, RoughCounter, estimate_conversation,
};
use std::path::Path;

struct Measured {
    rough_error: f64,
    calibrated_error: f64,
}

/// Calibrates on the first conversation, then compares estimates of all the others against the
/// exact count.
fn calibrate_on_first(path: &Path) -> Measured {
    let doc = load_file(path, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        doc.conversations.len() >= 2,
        "{} needs two conversations",
        path.display()
    );
    let exact = Encoding::O200k.counter();
    let (first, rest) = doc.conversations.split_first().unwrap();

    let mut calibration = Calibration::new();
    let reported = estimate_conversation(exact, first).total() as u64;
    let estimated = estimate_conversation(&RoughCounter, first).total();
    assert_eq!(
        calibration.observe("gpt-4o", reported, estimated),
        CalibrationOutcome::Accepted
    );

    let exact_rest: usize = rest
        .iter()
        .map(|c| estimate_conversation(exact, c).total())
        .sum();
    let rough_rest: usize = rest
        .iter()
        .map(|c| estimate_conversation(&RoughCounter, c).total())
        .sum();
    let calibrated_rest = calibration.apply("gpt-4o", rough_rest);
    let err = |x: usize| (x as f64 - exact_rest as f64).abs() / exact_rest as f64;
    let m = Measured {
        rough_error: err(rough_rest),
        calibrated_error: err(calibrated_rest),
    };
    eprintln!(
        "{}: exact {exact_rest}, rough {rough_rest} ({:.1}% off), calibrated {calibrated_rest} ({:.1}% off)",
        path.display(),
        m.rough_error * 100.0,
        m.calibrated_error * 100.0
    );
    m
}

/// The way a session calibrates: the provider reports the prompt tokens of the request made
/// halfway through a conversation (one observation), and the calibrated estimate of the full
/// conversation is compared with its exact count. Returns the size-weighted mean absolute error
/// of the rough and of the calibrated estimates over all conversations of the file.
fn calibrate_within_sessions(path: &Path, cjk_only: bool) -> Measured {
    let doc = load_file(path, None).unwrap_or_else(|e| panic!("{e}"));
    let exact = Encoding::O200k.counter();
    let (mut exact_sum, mut rough_abs, mut calibrated_abs) = (0.0, 0.0, 0.0);
    let mut sessions = 0;
    for conv in &doc.conversations {
        if conv.messages.len() < 4 || (cjk_only && !is_cjk_conversation(conv)) {
            continue;
        }
        let mut prefix = conv.clone();
        prefix.messages.truncate(conv.messages.len() / 2);
        let mut calibration = Calibration::new();
        let outcome = calibration.observe(
            "gpt-4o",
            estimate_conversation(exact, &prefix).total() as u64,
            estimate_conversation(&RoughCounter, &prefix).total(),
        );
        if outcome != CalibrationOutcome::Accepted {
            continue;
        }
        let truth = estimate_conversation(exact, conv).total() as f64;
        let rough = estimate_conversation(&RoughCounter, conv).total();
        exact_sum += truth;
        rough_abs += (rough as f64 - truth).abs();
        calibrated_abs += (calibration.apply("gpt-4o", rough) as f64 - truth).abs();
        sessions += 1;
    }
    assert!(
        sessions > 0,
        "{}: no conversation long enough",
        path.display()
    );
    let m = Measured {
        rough_error: rough_abs / exact_sum,
        calibrated_error: calibrated_abs / exact_sum,
    };
    eprintln!(
        "{} ({sessions} sessions): rough {:.1}% off, calibrated {:.1}% off",
        path.display(),
        m.rough_error * 100.0,
        m.calibrated_error * 100.0
    );
    m
}

/// A conversation where at least a tenth of the text is CJK.
fn is_cjk_conversation(conv: &baton_core::Conversation) -> bool {
    let text: String = conv.messages.iter().map(|m| m.text()).collect();
    let cjk = text
        .chars()
        .filter(|c| ('\u{3040}'..='\u{9fff}').contains(c))
        .count();
    cjk * 10 >= text.chars().count()
}

fn assert_within_5_percent(m: &Measured, what: &str) {
    assert!(
        m.calibrated_error <= 0.05,
        "{what}: calibrated error {:.3}",
        m.calibrated_error
    );
}

#[test]
fn japanese_sample_within_5_percent_after_calibrating_on_another_conversation() {
    let m = calibrate_on_first(&common::samples_dir().join("tielec-ja.jsonl"));
    assert_within_5_percent(&m, "tielec-ja sample");
    assert!(
        m.rough_error > 0.10,
        "the uncalibrated estimate is far off on this file"
    );
}

#[test]
fn japanese_sample_within_5_percent_after_one_in_session_calibration() {
    let m = calibrate_within_sessions(&common::samples_dir().join("tielec-ja.jsonl"), false);
    assert_within_5_percent(&m, "tielec-ja sample");
    assert!(m.calibrated_error < m.rough_error);
}

#[test]
fn chinese_sample_within_5_percent_after_one_in_session_calibration() {
    let m = calibrate_within_sessions(
        &common::samples_dir().join("glaive-toolcall-zh.json"),
        false,
    );
    assert_within_5_percent(&m, "glaive zh sample");
}

#[test]
fn shared_cjk_files_within_5_percent_after_calibration() {
    let Some(dir) = common::shared_normalized() else {
        return;
    };
    let ja = dir.join("tielec-ai-workflow-ja.jsonl");
    assert_within_5_percent(&calibrate_on_first(&ja), "tielec-ja (cross-conversation)");
    assert_within_5_percent(
        &calibrate_within_sessions(&ja, false),
        "tielec-ja (in-session)",
    );
    let mixed = dir.join("llamafactory-glaive-toolcall.jsonl");
    // Half of this file is English; the Chinese half is the CJK data.
    assert_within_5_percent(
        &calibrate_within_sessions(&mixed, true),
        "glaive zh half (in-session)",
    );
    let Some(corpus) = common::shared_corpus() else {
        return;
    };
    let zh = corpus.join("llamafactory-glaive-toolcall/glaive_toolcall_zh_demo.json");
    assert_within_5_percent(
        &calibrate_within_sessions(&zh, false),
        "glaive zh (in-session)",
    );
}
