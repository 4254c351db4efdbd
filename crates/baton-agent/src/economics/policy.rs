//! The decision: compact now, or keep the warm cache.
//!
//! Both paths are priced over the same horizon of `horizon` calls, with the prompt growing by
//! `growth` tokens per call:
//! - **continue**: each call reads its prefix at the measured hit rate (cached part at the cache
//!   read price, the rest at the input price) and writes what is new; if the prompt reaches the
//!   threshold inside the horizon, the compaction happens there anyway, with a larger span to
//!   summarize, and the remaining calls run on the compacted prefix;
//! - **compact now**: the summarizer reads the span and writes the summary, the next call writes
//!   the whole new (smaller) prefix to the cache, and the calls after it run warm at the same
//!   hit rate.
//!
//! Compacting wins when its total is lower. At or over the threshold it always compacts (the
//! window must not overflow, whatever it costs); with unknown prices the threshold rule is used
//! and the reason says so.

use baton_core::pricing::ModelPrice;
use serde::{Deserialize, Serialize};

/// `[compression] policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionPolicy {
    /// Compact when the prompt reaches the threshold (the reference's rule).
    #[default]
    Threshold,
    /// Also compact earlier when that is projected to cost less.
    Cost,
}

impl CompactionPolicy {
    pub fn parse(text: &str) -> Option<CompactionPolicy> {
        match text {
            "threshold" => Some(CompactionPolicy::Threshold),
            "cost" => Some(CompactionPolicy::Cost),
            _ => None,
        }
    }
}

/// Prices in USD per token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Prices {
    /// From a price-list entry (USD per million tokens). A missing cache-read price means the
    /// provider does not discount cached reads; a missing cache-write price, that writes cost
    /// the input price.
    pub fn from_model(price: &ModelPrice) -> Prices {
        let per = |usd_per_million: f64| usd_per_million / 1_000_000.0;
        Prices {
            input: per(price.input),
            output: per(price.output),
            cache_read: per(price.cache_read.unwrap_or(price.input)),
            cache_write: per(price.cache_write.unwrap_or(price.input)),
        }
    }
}

/// Everything the decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PolicyInputs {
    /// The real prompt size of the last call.
    pub prompt_tokens: u64,
    pub threshold_tokens: u64,
    /// The prompt size right after a compaction now (summary + kept tail + system + tools).
    pub compacted_tokens: u64,
    /// Output tokens of one summary.
    pub summary_tokens: u64,
    /// Tokens added to the prompt per call.
    pub growth_per_call: f64,
    /// Measured share of the prompt read from the cache.
    pub hit_rate: f64,
    /// Calls ahead to price.
    pub horizon: u32,
    /// The session model's prices (`None`: not priced).
    pub prices: Option<Prices>,
    /// The summarizer's prices (`None`: same as the session model's; zero for an offline one).
    pub summarizer_prices: Option<Prices>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Externally tagged: an internally tagged enum buffers its fields, and with serde_json's
// `arbitrary_precision` buffered numbers no longer read back as `f64`.
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Compact {
        reason: String,
        continue_usd: Option<f64>,
        compact_usd: Option<f64>,
    },
    Defer {
        reason: String,
        continue_usd: f64,
        compact_usd: f64,
    },
}

impl Decision {
    pub fn compacts(&self) -> bool {
        matches!(self, Decision::Compact { .. })
    }
}

pub fn decide(policy: CompactionPolicy, inputs: &PolicyInputs) -> Decision {
    if inputs.prompt_tokens >= inputs.threshold_tokens {
        return Decision::Compact {
            reason: format!(
                "the prompt ({} tokens) reached the threshold ({})",
                inputs.prompt_tokens, inputs.threshold_tokens
            ),
            continue_usd: None,
            compact_usd: None,
        };
    }
    if policy == CompactionPolicy::Threshold {
        return Decision::Defer {
            reason: "under the threshold".into(),
            continue_usd: 0.0,
            compact_usd: 0.0,
        };
    }
    let Some(prices) = inputs.prices else {
        return Decision::Defer {
            reason: "the model has no known prices, so only the threshold decides".into(),
            continue_usd: 0.0,
            compact_usd: 0.0,
        };
    };
    let summarizer = inputs.summarizer_prices.unwrap_or(prices);
    let continue_usd = continue_cost(inputs, &prices, &summarizer);
    let compact_usd = compaction_cost(inputs.prompt_tokens, inputs, &prices, &summarizer)
        + warm_calls(
            inputs.compacted_tokens as f64,
            inputs.horizon.saturating_sub(1),
            inputs,
            &prices,
        );
    if compact_usd < continue_usd {
        Decision::Compact {
            reason: format!(
                "compacting now is projected to cost ${compact_usd:.4} over the next {} calls, \
                 against ${continue_usd:.4} on the current cache (hit rate {:.0}%)",
                inputs.horizon,
                inputs.hit_rate * 100.0
            ),
            continue_usd: Some(continue_usd),
            compact_usd: Some(compact_usd),
        }
    } else {
        Decision::Defer {
            reason: format!(
                "the warm cache is cheaper: ${continue_usd:.4} over the next {} calls against \
                 ${compact_usd:.4} after compacting (hit rate {:.0}%)",
                inputs.horizon,
                inputs.hit_rate * 100.0
            ),
            continue_usd,
            compact_usd,
        }
    }
}

/// One call on a prefix of `prefix` tokens: the cached share at the read price, the rest at
/// the input price, the growth written to the cache.
fn call_cost(prefix: f64, inputs: &PolicyInputs, prices: &Prices) -> f64 {
    let h = inputs.hit_rate.clamp(0.0, 1.0);
    prefix * (h * prices.cache_read + (1.0 - h) * prices.input)
        + inputs.growth_per_call * prices.cache_write
}

/// `calls` warm calls starting from a prefix of `start` tokens.
fn warm_calls(start: f64, calls: u32, inputs: &PolicyInputs, prices: &Prices) -> f64 {
    (0..calls)
        .map(|k| {
            call_cost(
                start + f64::from(k) * inputs.growth_per_call,
                inputs,
                prices,
            )
        })
        .sum()
}

/// Compacting a prompt of `prompt` tokens: the summarizer reads the span and writes the
/// summary; the next call writes the whole new prefix to the cache.
fn compaction_cost(
    prompt: u64,
    inputs: &PolicyInputs,
    prices: &Prices,
    summarizer: &Prices,
) -> f64 {
    let span = prompt.saturating_sub(inputs.compacted_tokens) as f64;
    span * summarizer.input
        + inputs.summary_tokens as f64 * summarizer.output
        + inputs.compacted_tokens as f64 * prices.cache_write
}

fn continue_cost(inputs: &PolicyInputs, prices: &Prices, summarizer: &Prices) -> f64 {
    let p = inputs.prompt_tokens as f64;
    let g = inputs.growth_per_call;
    let room = inputs.threshold_tokens.saturating_sub(inputs.prompt_tokens) as f64;
    let calls_to_threshold = if g > 0.0 {
        (room / g).ceil() as u32
    } else {
        u32::MAX
    };
    if calls_to_threshold >= inputs.horizon {
        return warm_calls(p, inputs.horizon, inputs, prices);
    }
    let before = warm_calls(p, calls_to_threshold, inputs, prices);
    let at = (p + f64::from(calls_to_threshold) * g) as u64;
    let after_calls = inputs.horizon - calls_to_threshold;
    before
        + compaction_cost(at, inputs, prices, summarizer)
        + warm_calls(
            inputs.compacted_tokens as f64,
            after_calls.saturating_sub(1),
            inputs,
            prices,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Sonnet-like prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write.
    fn sonnet() -> Prices {
        Prices::from_model(&ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        })
    }

    fn inputs(prompt: u64, hit_rate: f64) -> PolicyInputs {
        PolicyInputs {
            prompt_tokens: prompt,
            threshold_tokens: 150_000,
            compacted_tokens: 30_000,
            summary_tokens: 4_000,
            growth_per_call: 2_000.0,
            hit_rate,
            horizon: 10,
            prices: Some(sonnet()),
            summarizer_prices: None,
        }
    }

    #[test]
    fn a_warm_cache_defers_compaction() {
        let d = decide(CompactionPolicy::Cost, &inputs(80_000, 0.95));
        let Decision::Defer {
            continue_usd,
            compact_usd,
            ..
        } = d
        else {
            panic!("{d:?}");
        };
        assert!(
            continue_usd < compact_usd,
            "{continue_usd} vs {compact_usd}"
        );
    }

    #[test]
    fn a_large_cold_prefix_compacts_early() {
        let d = decide(CompactionPolicy::Cost, &inputs(140_000, 0.0));
        assert!(d.compacts(), "{d:?}");
        let Decision::Compact {
            continue_usd: Some(c),
            compact_usd: Some(k),
            ..
        } = d
        else {
            panic!("{d:?}");
        };
        assert!(k < c);
    }

    #[test]
    fn at_the_threshold_it_compacts_whatever_the_cache() {
        assert!(decide(CompactionPolicy::Cost, &inputs(150_000, 1.0)).compacts());
        assert!(decide(CompactionPolicy::Threshold, &inputs(150_000, 1.0)).compacts());
        assert!(!decide(CompactionPolicy::Threshold, &inputs(140_000, 0.0)).compacts());
    }

    #[test]
    fn unknown_prices_fall_back_to_the_threshold_with_the_reason() {
        let mut i = inputs(140_000, 0.0);
        i.prices = None;
        let d = decide(CompactionPolicy::Cost, &i);
        let Decision::Defer { reason, .. } = d else {
            panic!("{d:?}");
        };
        assert!(reason.contains("no known prices"), "{reason}");
    }
}
