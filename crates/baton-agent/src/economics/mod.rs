//! Cache-aware compaction timing. With prompt caching a long stable prefix costs a fraction
//! of the input price, and a compaction rewrites it: the summarizer call, then a fresh cache
//! write of the new prefix. Below the hard threshold, `[compression] policy = "cost"` compacts
//! only when the projected cost of the next turns is lower after compacting than on the warm
//! cache (`policy.rs`), from the price table and the hit rate measured on this session's real
//! usage (`cache_stats.rs`). Every compaction records its economics from real usage — the calls
//! before and after it, and the projection it was decided on (`record.rs`) — so the policy can be
//! checked against what was billed.

pub mod cache_stats;
pub mod policy;
pub mod record;

pub use cache_stats::{CacheStats, CallCost};
pub use policy::{CompactionPolicy, Decision, PolicyInputs, Prices, decide};
pub use record::CompactionEconomics;
