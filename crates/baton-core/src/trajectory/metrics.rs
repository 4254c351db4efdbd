//! What happened to each trajectory, and to the batch.
//!
//! Per-trajectory rows go to the `--metrics` JSONL file, one per input record, so a dataset
//! builder can join them back to records by line (or `id`). The aggregate keeps only counters
//! and a fixed-size histogram of ratios, so it costs the same memory for ten records or ten
//! million.

use crate::trajectory::plan::Blocked;
use crate::trajectory::record::RecordFormat;
use crate::truncate::group_digits;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the pipeline did with one input record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A span was replaced by a summary turn.
    Compressed,
    /// Written back byte for byte (under the target, or nothing could be summarized).
    Unchanged,
    /// Malformed, copied through unchanged (`--on-error copy`).
    CopiedMalformed,
    /// Malformed, left out of the output (`--on-error skip`).
    SkippedMalformed,
}

/// Why a trajectory is still over the target after processing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverLimitReason {
    /// The protected head and tail cover everything that could be summarized.
    NothingBetweenProtectedTurns,
    /// The only span available is no bigger than a summary.
    SpanNotLargerThanSummary,
    /// A span was summarized, but the protected turns plus the summary still exceed the target.
    ProtectedTurnsTooLarge,
    /// The summary would not have been smaller than what it replaced, so it was not installed.
    SummaryNotSmaller,
}

impl From<Blocked> for OverLimitReason {
    fn from(b: Blocked) -> Self {
        match b {
            Blocked::NothingBetweenProtectedTurns => OverLimitReason::NothingBetweenProtectedTurns,
            Blocked::SpanNotLargerThanSummary => OverLimitReason::SpanNotLargerThanSummary,
        }
    }
}

/// One row of the metrics file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryMetrics {
    /// 1-based line number in the input file (for a JSON array input: the element's
    /// position in the array).
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<RecordFormat>,
    pub original_tokens: usize,
    pub compressed_tokens: usize,
    /// `original_tokens` and `compressed_tokens` are an upper bound (the record's UTF-8 bytes
    /// plus message framing), not a count: the record was proven under the target by it and
    /// copied through without running the tokenizer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokens_bound: bool,
    /// `original_tokens` is an upper bound (`compressed_tokens` is a count): turns inside the
    /// summarized span, far from its cut, were not counted, since neither the cut nor the
    /// output depends on them. Each is bounded by its UTF-8 length.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub span_not_counted: bool,
    pub original_turns: usize,
    pub compressed_turns: usize,
    /// Turns replaced by the summary (0 when nothing was summarized).
    pub turns_summarized: usize,
    /// `[start, end)` of the replaced turns, as message indices of the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarized_range: Option<[usize; 2]>,
    /// compressed / original tokens, rounded to 4 decimals (1.0 when unchanged).
    pub compression_ratio: f64,
    pub skipped_under_target: bool,
    pub still_over_limit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_limit_reason: Option<OverLimitReason>,
    /// The chosen summarizer failed and the extractive summary was used instead.
    pub summarizer_failed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer_error: Option<String>,
    /// Why the record is malformed, for `copied_malformed` / `skipped_malformed` rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TrajectoryMetrics {
    /// A row for a record that could not be read.
    pub fn malformed(line: u64, action: Action, error: String) -> Self {
        TrajectoryMetrics {
            line,
            id: None,
            action,
            format: None,
            original_tokens: 0,
            compressed_tokens: 0,
            original_turns: 0,
            compressed_turns: 0,
            turns_summarized: 0,
            summarized_range: None,
            compression_ratio: 1.0,
            skipped_under_target: false,
            still_over_limit: false,
            over_limit_reason: None,
            summarizer_failed: false,
            summarizer_error: None,
            error: Some(error),
            tokens_bound: false,
            span_not_counted: false,
        }
    }

    /// A row for a record written back unchanged because it is under the target.
    pub fn unchanged(
        line: u64,
        id: Option<String>,
        format: RecordFormat,
        turns: usize,
        tokens: usize,
    ) -> Self {
        TrajectoryMetrics {
            line,
            id,
            action: Action::Unchanged,
            format: Some(format),
            original_tokens: tokens,
            compressed_tokens: tokens,
            original_turns: turns,
            compressed_turns: turns,
            turns_summarized: 0,
            summarized_range: None,
            compression_ratio: 1.0,
            skipped_under_target: true,
            still_over_limit: false,
            over_limit_reason: None,
            summarizer_failed: false,
            summarizer_error: None,
            error: None,
            tokens_bound: false,
            span_not_counted: false,
        }
    }

    pub fn tokens_saved(&self) -> usize {
        self.original_tokens.saturating_sub(self.compressed_tokens)
    }
}

/// `compressed / original`, rounded to 4 decimals.
pub fn ratio(original: usize, compressed: usize) -> f64 {
    let r = compressed as f64 / original.max(1) as f64;
    (r * 10_000.0).round() / 10_000.0
}

/// Histogram resolution: ratios are kept to the nearest 0.001 for percentiles.
const BUCKETS: usize = 1_001;

/// Batch totals, built one row at a time in constant memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    pub records: u64,
    pub compressed: u64,
    pub unchanged: u64,
    pub skipped_under_target: u64,
    pub malformed_copied: u64,
    pub malformed_skipped: u64,
    pub still_over_limit: u64,
    pub over_limit_reasons: BTreeMap<OverLimitReason, u64>,
    pub summarizer_failures: u64,
    /// Records copied through as provably under the target by their byte length, without
    /// being counted; their tokens are not in `tokens_before` / `tokens_after`.
    pub not_counted: u64,
    /// Compressed records whose summarized span was not counted in full
    /// ([`TrajectoryMetrics::span_not_counted`]); their tokens are not in `tokens_before` /
    /// `tokens_after`, nor their ratios in the ratio statistics.
    pub span_not_counted: u64,
    /// Tokens of the counted records (exact with a BPE counter).
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub turns_before: u64,
    pub turns_after: u64,
    /// Sum of ratios over compressed records (for the mean).
    ratio_sum: f64,
    /// Ratios of compressed records, bucketed to 0.001 (values above 1 land in the last one).
    ratio_histogram: Vec<u64>,
}

impl Default for Aggregate {
    fn default() -> Self {
        Aggregate {
            records: 0,
            compressed: 0,
            unchanged: 0,
            skipped_under_target: 0,
            malformed_copied: 0,
            malformed_skipped: 0,
            still_over_limit: 0,
            over_limit_reasons: BTreeMap::new(),
            summarizer_failures: 0,
            not_counted: 0,
            span_not_counted: 0,
            tokens_before: 0,
            tokens_after: 0,
            turns_before: 0,
            turns_after: 0,
            ratio_sum: 0.0,
            ratio_histogram: vec![0; BUCKETS],
        }
    }
}

impl Aggregate {
    pub fn add(&mut self, m: &TrajectoryMetrics) {
        self.records += 1;
        match m.action {
            Action::Compressed if m.span_not_counted => {
                self.compressed += 1;
                self.span_not_counted += 1;
            }
            Action::Compressed => {
                self.compressed += 1;
                self.ratio_sum += m.compression_ratio;
                let bucket =
                    ((m.compression_ratio * 1_000.0).round().max(0.0) as usize).min(BUCKETS - 1);
                self.ratio_histogram[bucket] += 1;
            }
            Action::Unchanged => self.unchanged += 1,
            Action::CopiedMalformed => self.malformed_copied += 1,
            Action::SkippedMalformed => self.malformed_skipped += 1,
        }
        self.skipped_under_target += u64::from(m.skipped_under_target);
        if m.still_over_limit {
            self.still_over_limit += 1;
            if let Some(reason) = m.over_limit_reason {
                *self.over_limit_reasons.entry(reason).or_insert(0) += 1;
            }
        }
        self.summarizer_failures += u64::from(m.summarizer_failed);
        if m.tokens_bound {
            self.not_counted += 1;
        } else if !m.span_not_counted {
            self.tokens_before += m.original_tokens as u64;
            self.tokens_after += m.compressed_tokens as u64;
        }
        self.turns_before += m.original_turns as u64;
        self.turns_after += m.compressed_turns as u64;
    }

    pub fn tokens_saved(&self) -> u64 {
        self.tokens_before.saturating_sub(self.tokens_after)
    }

    /// Compressed records whose ratio is exact (in the ratio statistics).
    fn ratios(&self) -> u64 {
        self.compressed - self.span_not_counted
    }

    /// Mean ratio over compressed records; 1.0 when none was compressed.
    pub fn mean_ratio(&self) -> f64 {
        if self.ratios() == 0 {
            1.0
        } else {
            self.ratio_sum / self.ratios() as f64
        }
    }

    /// The `p`-th percentile (0-100) of ratios over compressed records, to 0.001.
    pub fn ratio_percentile(&self, p: f64) -> Option<f64> {
        if self.ratios() == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.ratios() as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.ratio_histogram.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(i as f64 / 1_000.0);
            }
        }
        None
    }

    /// The report as JSON (what `--summary-json` writes).
    pub fn to_json(&self) -> serde_json::Value {
        let reasons: serde_json::Map<String, serde_json::Value> = self
            .over_limit_reasons
            .iter()
            .map(|(k, v)| {
                let key = serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                (key, serde_json::Value::from(*v))
            })
            .collect();
        serde_json::json!({
            "records": {
                "total": self.records,
                "compressed": self.compressed,
                "unchanged": self.unchanged,
                "skipped_under_target": self.skipped_under_target,
                "still_over_limit": self.still_over_limit,
                "over_limit_reasons": reasons,
                "malformed_copied": self.malformed_copied,
                "malformed_skipped": self.malformed_skipped,
                "summarizer_failures": self.summarizer_failures,
                "not_counted_under_byte_bound": self.not_counted,
                "span_not_counted": self.span_not_counted,
            },
            "tokens": {
                "before": self.tokens_before,
                "after": self.tokens_after,
                "saved": self.tokens_saved(),
                "overall_ratio": ratio(self.tokens_before as usize, self.tokens_after as usize),
            },
            "turns": {
                "before": self.turns_before,
                "after": self.turns_after,
                "removed": self.turns_before.saturating_sub(self.turns_after),
            },
            "ratio_of_compressed": {
                "mean": (self.mean_ratio() * 10_000.0).round() / 10_000.0,
                "p50": self.ratio_percentile(50.0),
                "p90": self.ratio_percentile(90.0),
                "p99": self.ratio_percentile(99.0),
            },
        })
    }

    /// The human-readable report printed at the end of a run.
    pub fn to_text(&self) -> String {
        let pct = |p: f64| {
            self.ratio_percentile(p)
                .map_or_else(|| "-".to_string(), |r| format!("{r:.3}"))
        };
        let mut out = format!(
            "{} records: {} compressed, {} unchanged ({} under the target), {} malformed ({} copied, {} skipped)\n\
             tokens: {} → {} ({} saved, overall ratio {:.4})\n\
             turns: {} → {}\n\
             ratio of compressed records: mean {:.4}, p50 {}, p90 {}, p99 {}\n\
             still over the limit: {}",
            group_digits(self.records),
            group_digits(self.compressed),
            group_digits(self.unchanged),
            group_digits(self.skipped_under_target),
            group_digits(self.malformed_copied + self.malformed_skipped),
            group_digits(self.malformed_copied),
            group_digits(self.malformed_skipped),
            group_digits(self.tokens_before),
            group_digits(self.tokens_after),
            group_digits(self.tokens_saved()),
            ratio(self.tokens_before as usize, self.tokens_after as usize),
            group_digits(self.turns_before),
            group_digits(self.turns_after),
            self.mean_ratio(),
            pct(50.0),
            pct(90.0),
            pct(99.0),
            group_digits(self.still_over_limit),
        );
        for (reason, n) in &self.over_limit_reasons {
            out.push_str(&format!(
                "\n  {}: {}",
                group_digits(*n),
                describe_reason(*reason)
            ));
        }
        if self.not_counted > 0 {
            out.push_str(&format!(
                "\nnot counted: {} records under the target by their byte length alone \
                 (copied through; the token figures above are of the other records)",
                group_digits(self.not_counted)
            ));
        }
        if self.span_not_counted > 0 {
            out.push_str(&format!(
                "\nspan not counted: {} compressed records whose summarized turns far from the \
                 cut were not counted (the cut does not depend on them; their tokens and ratios \
                 are not in the figures above)",
                group_digits(self.span_not_counted)
            ));
        }
        if self.summarizer_failures > 0 {
            out.push_str(&format!(
                "\nsummarizer failures (extractive summary used instead): {}",
                group_digits(self.summarizer_failures)
            ));
        }
        out
    }
}

fn describe_reason(r: OverLimitReason) -> &'static str {
    match r {
        OverLimitReason::NothingBetweenProtectedTurns => {
            "the protected head and tail leave nothing to summarize"
        }
        OverLimitReason::SpanNotLargerThanSummary => {
            "what could be summarized is no bigger than a summary"
        }
        OverLimitReason::ProtectedTurnsTooLarge => {
            "summarized, but the protected turns and the summary still exceed the target"
        }
        OverLimitReason::SummaryNotSmaller => {
            "the summary was not smaller than the turns it would replace, so it was not used"
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A row whose original figure is a bound stays out of the token totals and the ratios,
    /// and is counted apart.
    #[test]
    fn rows_with_an_uncounted_span_are_kept_out_of_totals_and_ratios() {
        let mut agg = Aggregate::default();
        for (ratio, bounded) in [(0.5, false), (0.1, true)] {
            let mut m = TrajectoryMetrics::malformed(1, Action::Compressed, String::new());
            m.error = None;
            m.original_tokens = 1_000;
            m.compressed_tokens = (1_000.0 * ratio) as usize;
            m.compression_ratio = ratio;
            m.span_not_counted = bounded;
            agg.add(&m);
        }
        assert_eq!((agg.compressed, agg.span_not_counted), (2, 1));
        assert_eq!((agg.tokens_before, agg.tokens_after), (1_000, 500));
        assert_eq!(agg.mean_ratio(), 0.5);
        assert_eq!(agg.ratio_percentile(99.0), Some(0.5));
        assert!(
            agg.to_text().contains("span not counted: 1"),
            "{}",
            agg.to_text()
        );
        assert_eq!(agg.to_json()["records"]["span_not_counted"], 1);
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut agg = Aggregate::default();
        for r in [0.1, 0.2, 0.3, 0.4] {
            let mut m = TrajectoryMetrics::malformed(1, Action::Compressed, String::new());
            m.error = None;
            m.compression_ratio = r;
            agg.add(&m);
        }
        assert_eq!(agg.ratio_percentile(50.0), Some(0.2));
        assert_eq!(agg.ratio_percentile(100.0), Some(0.4));
        assert!((agg.mean_ratio() - 0.25).abs() < 1e-9);
    }
}
