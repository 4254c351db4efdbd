//! Where the runtime meets the cost policy: each call's real usage goes into the cache
//! statistics and into the records of recent compactions; after a call under the threshold,
//! `policy = "cost"` asks whether compacting now is cheaper.

use crate::agent::Agent;
use crate::economics::{
    CallCost, CompactionEconomics, CompactionPolicy, Decision, PolicyInputs, Prices, decide,
};
use baton_core::usage::CanonicalUsage;

/// Share of the threshold the compacted tail is budgeted at (the compressor's default
/// `target_ratio`).
const TAIL_SHARE: f64 = 0.2;

impl Agent {
    /// Records one call's real usage.
    pub(crate) fn observe_call(&mut self, usage: &CanonicalUsage, cost: Option<f64>) {
        let call = CallCost::of(usage, cost);
        self.cache_stats.observe(call);
        let mut changed = Vec::new();
        for (i, record) in self.economics.iter_mut().enumerate() {
            if record.observe_after(call) {
                changed.push(i);
            }
        }
        for i in changed {
            self.save_economics(i);
        }
    }

    /// The cost policy's verdict after a call whose prompt was `prompt_tokens`.
    pub(crate) fn cost_decision(&self, prompt_tokens: u64) -> Option<Decision> {
        if self.config.policy != CompactionPolicy::Cost {
            return None;
        }
        let status = self.engine.status();
        let threshold = status.tokens.threshold_tokens;
        let summary_tokens = (self.config.context_length / 20).min(10_000);
        let compacted = (threshold as f64 * TAIL_SHARE) as u64
            + summary_tokens
            + self.estimator.fixed_tokens() as u64;
        if prompt_tokens < compacted.saturating_mul(3) / 2 {
            return None;
        }
        let prices = self
            .prices
            .resolve(&self.config.model)
            .map(|r| Prices::from_model(&r.price));
        let free = Prices {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
        };
        let inputs = PolicyInputs {
            prompt_tokens,
            threshold_tokens: threshold,
            compacted_tokens: compacted,
            summary_tokens,
            growth_per_call: self.cache_stats.growth_per_call(),
            hit_rate: self.cache_stats.hit_rate(),
            horizon: self.config.cost_horizon.max(1),
            prices,
            summarizer_prices: (!self.config.summarizer_priced).then_some(free),
        };
        Some(decide(CompactionPolicy::Cost, &inputs))
    }

    /// Starts the record of a compaction that just happened.
    pub(crate) fn record_compaction(
        &mut self,
        from: &str,
        to: &str,
        trigger: &str,
        tokens: (u64, u64),
    ) {
        self.economics.push(CompactionEconomics {
            from_session: from.to_string(),
            to_session: to.to_string(),
            trigger: trigger.to_string(),
            tokens_before: tokens.0,
            tokens_after: tokens.1,
            decision: self.pending_decision.take(),
            before: self.cache_stats.recent(),
            after: Vec::new(),
        });
        self.cache_stats.clear();
        self.save_economics(self.economics.len() - 1);
    }

    /// Stored with the continuation it created, as JSON in the store's metadata.
    fn save_economics(&self, index: usize) {
        let Some(record) = self.economics.get(index) else {
            return;
        };
        if let Ok(json) = serde_json::to_string(record) {
            // Economics are a report; failing to store one never stops the agent.
            let _ = self
                .store
                .set_meta(&format!("economics:{}", record.to_session), &json);
        }
    }
}
