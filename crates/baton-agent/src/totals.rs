//! What the agent has spent since it started: the numbers of the final usage line and of
//! `/usage`.

use baton_core::usage::CanonicalUsage;
use serde::Serialize;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionTotals {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub reasoning_tokens: u64,
    /// Sum of the priced calls; `unpriced_calls` says how many could not be priced.
    pub cost_usd: f64,
    pub unpriced_calls: u32,
    pub compactions: u32,
}

impl SessionTotals {
    pub fn add(&mut self, usage: &CanonicalUsage, cost: Option<f64>) {
        self.calls += 1;
        self.input_tokens += usage.input;
        self.output_tokens += usage.output;
        self.cache_read_tokens += usage.cache_read;
        self.cache_write_tokens += usage.cache_write;
        self.reasoning_tokens += usage.reasoning;
        match cost {
            Some(c) => self.cost_usd += c,
            None => self.unpriced_calls += 1,
        }
    }
}
