//! The preflight estimate of the next request: system prompt + messages + tool schemas,
//! counted incrementally (only what was appended since the last call) and corrected by the
//! provider's reported prompt size as soon as one response has come back.

use baton_core::Message;
use baton_core::tokens::{
    Calibration, REPLY_PRIMING, RoughCounter, RunningCount, TokenCounter, rough_text_tokens,
    tools_tokens,
};
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct RequestEstimator {
    model: String,
    running: RunningCount,
    system_tokens: usize,
    tools_tokens: usize,
    calibration: Calibration,
    /// The raw (uncalibrated) estimate of the last request sent, to calibrate against.
    last_raw: usize,
    /// The calibrated estimate of the last request sent, to measure the estimate's error.
    last_calibrated: u64,
    accuracy: EstimateAccuracy,
}

/// How far the calibrated estimate was from the provider's count, over this agent's calls
/// (what `/usage` reports): a signed last error and the mean absolute error, in percent of
/// the reported prompt size.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EstimateAccuracy {
    pub samples: u32,
    pub last_error_percent: f64,
    pub mean_abs_error_percent: f64,
}

impl EstimateAccuracy {
    fn record(&mut self, estimated: u64, reported: u64) {
        let error = (estimated as f64 - reported as f64) / reported as f64 * 100.0;
        let n = f64::from(self.samples);
        self.mean_abs_error_percent = (self.mean_abs_error_percent * n + error.abs()) / (n + 1.0);
        self.last_error_percent = error;
        self.samples += 1;
    }
}

impl RequestEstimator {
    pub fn new(model: &str, system_prompt: &str, tools: &[Value]) -> Self {
        RequestEstimator {
            model: model.to_string(),
            running: RunningCount::new(),
            system_tokens: rough_text_tokens(system_prompt),
            tools_tokens: tools_tokens(&RoughCounter, tools),
            calibration: Calibration::new(),
            last_raw: 0,
            last_calibrated: 0,
            accuracy: EstimateAccuracy::default(),
        }
    }

    /// The system prompt changed (a compaction rebuilt it).
    pub fn set_system_prompt(&mut self, system_prompt: &str) {
        self.system_tokens = rough_text_tokens(system_prompt);
    }

    pub fn set_model(&mut self, model: &str) {
        self.model = model.to_string();
    }

    /// The calibrated estimate of a request carrying `messages`. Cost: the messages appended
    /// or changed since the last call, not the whole history.
    pub fn estimate(&mut self, messages: &[Message]) -> u64 {
        let raw = self.raw(messages);
        self.last_raw = raw;
        self.last_calibrated = self.calibration.apply(&self.model, raw) as u64;
        self.last_calibrated
    }

    /// The calibrated estimate of `messages` without remembering it as the request sent (for
    /// a host's display: it must not shift what the next usage report is compared with).
    pub fn peek(&mut self, messages: &[Message]) -> u64 {
        let raw = self.raw(messages);
        self.calibration.apply(&self.model, raw) as u64
    }

    /// The estimate without calibration (the rough count the reference's hygiene uses).
    pub fn raw(&mut self, messages: &[Message]) -> usize {
        let counted = self.running.sync(&RoughCounter, messages);
        counted + self.system_tokens + self.tools_tokens + REPLY_PRIMING
    }

    /// Tokens of the parts every request carries whatever its messages: system prompt and
    /// tool schemas.
    pub fn fixed_tokens(&self) -> usize {
        self.system_tokens + self.tools_tokens
    }

    /// The provider reported the real prompt size of the last request estimated.
    pub fn observe(&mut self, reported_prompt_tokens: u64) {
        if self.last_calibrated > 0 && reported_prompt_tokens > 0 {
            self.accuracy
                .record(self.last_calibrated, reported_prompt_tokens);
        }
        if self.last_raw > 0 && reported_prompt_tokens > 0 {
            self.calibration
                .observe(&self.model, reported_prompt_tokens, self.last_raw);
        }
    }

    /// The estimate's error so far (no samples before the first reported usage).
    pub fn accuracy(&self) -> EstimateAccuracy {
        self.accuracy
    }

    /// Counts one message as the estimator would (for budgets of inserted messages).
    pub fn message_tokens(message: &Message) -> usize {
        RoughCounter.count_message(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_reports_the_signed_last_error_and_the_mean_absolute_error() {
        let mut a = EstimateAccuracy::default();
        a.record(1_100, 1_000);
        a.record(900, 1_000);
        assert_eq!(a.samples, 2);
        assert!((a.last_error_percent + 10.0).abs() < 1e-9);
        assert!((a.mean_abs_error_percent - 10.0).abs() < 1e-9);
    }

    #[test]
    fn the_estimator_measures_its_calibrated_estimate_against_the_report() {
        let mut e = RequestEstimator::new("gpt-5", "You are helpful.", &[]);
        let messages = vec![Message::user("hello there, how are you today?".repeat(40))];
        let estimated = e.estimate(&messages);
        e.observe(estimated * 2);
        let a = e.accuracy();
        assert_eq!(a.samples, 1);
        assert!((a.last_error_percent + 50.0).abs() < 1e-9, "{a:?}");
    }
}
