//! What the last calls of a session really used and cost: the measured cache hit rate and how
//! fast the prompt grows per call.

use baton_core::usage::CanonicalUsage;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Calls remembered.
pub const WINDOW: usize = 8;

/// One model call, as billed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    /// `None` when the model is not priced.
    pub cost_usd: Option<f64>,
}

impl CallCost {
    pub fn of(usage: &CanonicalUsage, cost_usd: Option<f64>) -> CallCost {
        CallCost {
            prompt_tokens: usage.prompt(),
            cache_read_tokens: usage.cache_read,
            cache_write_tokens: usage.cache_write,
            output_tokens: usage.output,
            cost_usd,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct CacheStats {
    calls: VecDeque<CallCost>,
}

impl CacheStats {
    pub fn observe(&mut self, call: CallCost) {
        if self.calls.len() == WINDOW {
            self.calls.pop_front();
        }
        self.calls.push_back(call);
    }

    /// The last calls, oldest first.
    pub fn recent(&self) -> Vec<CallCost> {
        self.calls.iter().copied().collect()
    }

    /// Share of prompt tokens read from the cache over the window (0 with no calls).
    pub fn hit_rate(&self) -> f64 {
        let prompt: u64 = self.calls.iter().map(|c| c.prompt_tokens).sum();
        let read: u64 = self.calls.iter().map(|c| c.cache_read_tokens).sum();
        if prompt == 0 {
            0.0
        } else {
            (read as f64 / prompt as f64).clamp(0.0, 1.0)
        }
    }

    /// Average prompt growth per call over the window (0 with fewer than two calls, or when
    /// the prompt shrank — a compaction inside the window).
    pub fn growth_per_call(&self) -> f64 {
        let (Some(first), Some(last)) = (self.calls.front(), self.calls.back()) else {
            return 0.0;
        };
        if self.calls.len() < 2 || last.prompt_tokens < first.prompt_tokens {
            return 0.0;
        }
        (last.prompt_tokens - first.prompt_tokens) as f64 / (self.calls.len() - 1) as f64
    }

    /// After a compaction the old prefix's numbers say nothing about the new one.
    pub fn clear(&mut self) {
        self.calls.clear();
    }
}
