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
        if self.last_raw > 0 && reported_prompt_tokens > 0 {
            self.calibration
                .observe(&self.model, reported_prompt_tokens, self.last_raw);
        }
    }

    /// Counts one message as the estimator would (for budgets of inserted messages).
    pub fn message_tokens(message: &Message) -> usize {
        RoughCounter.count_message(message)
    }
}
