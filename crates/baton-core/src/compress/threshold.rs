//! When to compress, and how much room each part of the compacted prompt gets.
//!
//! Follows the reference's latest formula (it went through four versions; each fixed a failure
//! the previous one caused): the trigger is a fraction of the window left after reserving the
//! output budget, raised to at least 75% for windows under 512K (small windows compacted far too
//! early at 50%), floored at 64K tokens, and, when that floor would swallow the whole window,
//! 85% of it instead (a threshold at or above the window can never fire).

/// Windows smaller than this get at least [`SMALL_WINDOW_MIN_FRACTION`].
pub const SMALL_WINDOW: u64 = 512_000;
/// The trigger fraction for windows under [`SMALL_WINDOW`].
pub const SMALL_WINDOW_MIN_FRACTION: f64 = 0.75;
/// No threshold goes below this many tokens (unless the window itself is smaller).
pub const MINIMUM_THRESHOLD: u64 = 64_000;
/// Used when the floor would reach the window.
pub const DEGENERATE_WINDOW_FRACTION: f64 = 0.85;
/// Summaries never get more than this many tokens...
pub const SUMMARY_TOKENS_CEILING: u64 = 10_000;
/// ...nor more than this fraction of the window.
pub const SUMMARY_WINDOW_FRACTION: f64 = 0.05;
/// A summary gets at least this many tokens, when its span is larger than that.
pub const MIN_SUMMARY_TOKENS: u64 = 2_000;
/// Share of the span a summary may take.
pub const SUMMARY_SPAN_FRACTION: f64 = 0.20;

/// The inputs of the threshold math.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdConfig {
    /// Fraction of the effective window at which compression triggers (config `threshold`).
    pub fraction: f64,
    /// Share of the threshold kept verbatim as the tail (config `target_ratio`), clamped to
    /// 0.10..=0.80.
    pub target_ratio: f64,
    /// The model's context window.
    pub context_length: u64,
    /// Tokens reserved for the reply (`max_tokens`), if set.
    pub max_output_tokens: Option<u64>,
}

/// The budgets derived from a [`ThresholdConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Compress when the prompt reaches this many tokens.
    pub threshold_tokens: u64,
    /// Tokens of recent conversation kept verbatim.
    pub tail_tokens: u64,
    /// The most a summary may take.
    pub max_summary_tokens: u64,
}

impl ThresholdConfig {
    pub fn budgets(&self) -> Budgets {
        let threshold_tokens = self.threshold_tokens();
        let ratio = self.target_ratio.clamp(0.10, 0.80);
        Budgets {
            threshold_tokens,
            tail_tokens: (threshold_tokens as f64 * ratio) as u64,
            max_summary_tokens: ((self.context_length as f64 * SUMMARY_WINDOW_FRACTION) as u64)
                .min(SUMMARY_TOKENS_CEILING),
        }
    }

    /// How the configured values became the budgets, so a report can state every value that
    /// was raised, floored or clamped instead of changing it silently.
    pub fn explain(&self) -> ThresholdExplanation {
        let usable_window = self.effective_window().max(1);
        let fraction_used = self.trigger_fraction();
        let by_fraction = (usable_window as f64 * fraction_used) as u64;
        let degenerate = by_fraction.max(MINIMUM_THRESHOLD) >= usable_window;
        ThresholdExplanation {
            usable_window,
            reserved_output: self.context_length.saturating_sub(self.effective_window()),
            fraction_requested: self.fraction,
            fraction_used,
            raised_for_small_window: self.context_length < SMALL_WINDOW
                && self.fraction < SMALL_WINDOW_MIN_FRACTION,
            floored: !degenerate && by_fraction < MINIMUM_THRESHOLD,
            degenerate,
            target_ratio_requested: self.target_ratio,
            target_ratio_used: self.target_ratio.clamp(0.10, 0.80),
            budgets: self.budgets(),
        }
    }

    fn effective_window(&self) -> u64 {
        match self.max_output_tokens {
            Some(out) if out > 0 && out < self.context_length => self.context_length - out,
            _ => self.context_length,
        }
    }

    fn trigger_fraction(&self) -> f64 {
        let f = self.fraction.clamp(0.01, 1.0);
        if self.context_length < SMALL_WINDOW {
            f.max(SMALL_WINDOW_MIN_FRACTION)
        } else {
            f
        }
    }

    fn threshold_tokens(&self) -> u64 {
        let window = self.effective_window().max(1);
        let floored = ((window as f64 * self.trigger_fraction()) as u64).max(MINIMUM_THRESHOLD);
        if floored >= window {
            ((window as f64 * DEGENERATE_WINDOW_FRACTION) as u64)
                .clamp(1, window.saturating_sub(1).max(1))
        } else {
            floored
        }
    }
}

/// What [`ThresholdConfig::explain`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdExplanation {
    /// The window minus the reserved output (the whole window when no reservation fits).
    pub usable_window: u64,
    /// Output tokens actually reserved (0 when none was asked or it did not fit the window).
    pub reserved_output: u64,
    pub fraction_requested: f64,
    /// The fraction applied: clamped to 0.01..=1, raised to [`SMALL_WINDOW_MIN_FRACTION`] for
    /// windows under [`SMALL_WINDOW`].
    pub fraction_used: f64,
    pub raised_for_small_window: bool,
    /// The fraction gave less than [`MINIMUM_THRESHOLD`]: the floor is the threshold.
    pub floored: bool,
    /// The floor reached the usable window: [`DEGENERATE_WINDOW_FRACTION`] of it is used.
    pub degenerate: bool,
    pub target_ratio_requested: f64,
    /// Clamped to 0.10..=0.80.
    pub target_ratio_used: f64,
    pub budgets: Budgets,
}

/// Summary budget for a span of `span_tokens`: a fifth of it, at least [`MIN_SUMMARY_TOKENS`],
/// at most `max_summary_tokens`, and never more than the span itself (a summary larger than
/// what it replaces frees nothing).
pub fn summary_budget(span_tokens: u64, max_summary_tokens: u64) -> u64 {
    let scaled = ((span_tokens as f64 * SUMMARY_SPAN_FRACTION) as u64).max(MIN_SUMMARY_TOKENS);
    scaled.min(max_summary_tokens).min(span_tokens.max(1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn cfg(context_length: u64, fraction: f64, max_out: Option<u64>) -> ThresholdConfig {
        ThresholdConfig {
            fraction,
            target_ratio: 0.20,
            context_length,
            max_output_tokens: max_out,
        }
    }

    #[test]
    fn large_windows_use_the_configured_fraction() {
        let b = cfg(1_000_000, 0.50, None).budgets();
        assert_eq!(b.threshold_tokens, 500_000);
        assert_eq!(b.tail_tokens, 100_000);
        assert_eq!(b.max_summary_tokens, 10_000);
    }

    #[test]
    fn small_windows_trigger_at_no_less_than_75_percent() {
        assert_eq!(cfg(200_000, 0.50, None).budgets().threshold_tokens, 150_000);
        assert_eq!(cfg(200_000, 0.90, None).budgets().threshold_tokens, 180_000);
    }

    #[test]
    fn output_budget_is_reserved_before_the_fraction() {
        assert_eq!(
            cfg(200_000, 0.50, Some(40_000)).budgets().threshold_tokens,
            120_000
        );
        // A reservation as large as the window is ignored rather than making it negative.
        assert_eq!(
            cfg(200_000, 0.50, Some(300_000)).budgets().threshold_tokens,
            150_000
        );
    }

    #[test]
    fn floor_is_64k_and_degenerate_windows_use_85_percent() {
        assert_eq!(cfg(80_000, 0.50, None).budgets().threshold_tokens, 64_000);
        // 64K floor >= a 32K window: 85% of the window instead.
        assert_eq!(cfg(32_000, 0.50, None).budgets().threshold_tokens, 27_200);
        assert!(cfg(1, 0.5, None).budgets().threshold_tokens >= 1);
    }

    #[test]
    fn target_ratio_is_clamped() {
        let mut c = cfg(1_000_000, 0.5, None);
        c.target_ratio = 5.0;
        assert_eq!(c.budgets().tail_tokens, 400_000);
        c.target_ratio = 0.0;
        assert_eq!(c.budgets().tail_tokens, 50_000);
    }

    #[test]
    fn explanation_names_every_adjustment() {
        let e = cfg(200_000, 0.50, Some(40_000)).explain();
        assert_eq!(e.usable_window, 160_000);
        assert_eq!(e.reserved_output, 40_000);
        assert!(e.raised_for_small_window && !e.floored && !e.degenerate);
        assert_eq!(e.fraction_used, 0.75);
        assert_eq!(e.budgets.threshold_tokens, 120_000);
        let e = cfg(80_000, 0.75, None).explain();
        assert!(e.floored && !e.raised_for_small_window);
        let e = cfg(32_000, 0.50, None).explain();
        assert!(e.degenerate && !e.floored);
        let mut c = cfg(1_000_000, 0.5, Some(2_000_000));
        c.target_ratio = 0.05;
        let e = c.explain();
        assert_eq!((e.reserved_output, e.usable_window), (0, 1_000_000));
        assert!(!e.raised_for_small_window);
        assert_eq!(e.target_ratio_used, 0.10);
    }

    #[test]
    fn summary_budget_scales_with_the_span_within_bounds() {
        assert_eq!(summary_budget(100_000, 10_000), 10_000);
        assert_eq!(summary_budget(30_000, 10_000), 6_000);
        assert_eq!(summary_budget(5_000, 10_000), 2_000);
        assert_eq!(
            summary_budget(800, 10_000),
            800,
            "never larger than the span"
        );
    }
}
