//! What a compaction really cost and saved: the calls just before it and just after it, as
//! billed, next to the projection it was decided on. Stored with the session, shown by
//! `/usage`, so the cost policy can be judged against real bills.

use crate::economics::cache_stats::CallCost;
use crate::economics::policy::Decision;
use serde::{Deserialize, Serialize};

/// Calls recorded after a compaction.
pub const CALLS_AFTER: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionEconomics {
    pub from_session: String,
    pub to_session: String,
    pub trigger: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The decision of the cost policy, when it was consulted.
    pub decision: Option<Decision>,
    /// The last calls before the compaction, oldest first.
    pub before: Vec<CallCost>,
    /// The first calls after it (filled in as they arrive).
    pub after: Vec<CallCost>,
}

impl CompactionEconomics {
    pub fn is_complete(&self) -> bool {
        self.after.len() >= CALLS_AFTER
    }

    /// Adds a call made after the compaction; `false` once the record is complete.
    pub fn observe_after(&mut self, call: CallCost) -> bool {
        if self.is_complete() {
            return false;
        }
        self.after.push(call);
        true
    }

    /// Readable lines for `/usage`.
    pub fn render(&self) -> String {
        let avg = |calls: &[CallCost]| -> String {
            let priced: Vec<f64> = calls.iter().filter_map(|c| c.cost_usd).collect();
            if calls.is_empty() {
                return "no calls yet".into();
            }
            let tokens = calls.iter().map(|c| c.prompt_tokens).sum::<u64>() / calls.len() as u64;
            let cached =
                calls.iter().map(|c| c.cache_read_tokens).sum::<u64>() / calls.len() as u64;
            if priced.len() == calls.len() {
                format!(
                    "{tokens} prompt tokens ({cached} cached), ${:.4} per call",
                    priced.iter().sum::<f64>() / priced.len() as f64
                )
            } else {
                format!("{tokens} prompt tokens ({cached} cached), cost unknown")
            }
        };
        let mut out = format!(
            "compaction ({}) {} → {}: ~{} → ~{} tokens\n  before: {}\n  after:  {}",
            self.trigger,
            self.from_session,
            self.to_session,
            self.tokens_before,
            self.tokens_after,
            avg(&self.before),
            avg(&self.after)
        );
        if let Some(decision) = &self.decision {
            let line = match decision {
                Decision::Compact { reason, .. } | Decision::Defer { reason, .. } => reason,
            };
            out.push_str(&format!("\n  decided: {line}"));
        }
        out
    }
}
