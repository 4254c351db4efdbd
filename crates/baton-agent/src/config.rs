//! What one agent runs with. Built by the host from `config.toml` and flags; every field has
//! the reference design's default so an embedder can start from [`AgentConfig::new`].

use baton_core::caching::CacheTtl;
use std::path::PathBuf;
use std::time::Duration;

/// The model calls one turn may make before it stops with `iteration_limit`.
pub const DEFAULT_MAX_ITERATIONS: u32 = 90;
/// Compactions one turn may attempt to recover from overflow (`compression.max_attempts`).
pub const DEFAULT_MAX_COMPRESSION_ATTEMPTS: u32 = 3;
/// The most `compression.max_attempts` may be set to.
pub const MAX_COMPRESSION_ATTEMPTS_CAP: u32 = 10;
/// Passes the preflight check may run before the first call of a turn.
pub const PREFLIGHT_PASSES: u32 = 3;
/// A resumed session whose rough estimate is over this share of the window is compacted
/// before its first turn (the reference's gateway hygiene).
pub const RESUME_HYGIENE_RATIO: f64 = 0.85;
/// Calls ahead the cost policy prices by default.
pub const DEFAULT_COST_HORIZON: u32 = 10;

#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub model: String,
    /// The model's window in tokens.
    pub context_length: u64,
    /// Output cap sent with each request (`None`: the provider's default).
    pub max_output_tokens: Option<u32>,
    pub max_iterations: u32,
    /// `compression.enabled`: when false the runtime never compacts on its own (overflow
    /// recovery included) and says so when the window is exceeded.
    pub compression_enabled: bool,
    pub max_compression_attempts: u32,
    /// Prompt-cache markers for routes that take them.
    pub cache_ttl: Option<CacheTtl>,
    /// Where tools run and file tools are confined.
    pub workdir: PathBuf,
    /// `$BATON_HOME`: tool-result spills live under it.
    pub baton_home: PathBuf,
    pub allow_outside_workdir: bool,
    /// Default timeout of the `terminal` tool.
    pub command_timeout: Duration,
    /// The `source` stored with each session (`cli`, `gateway`, …).
    pub source: String,
    /// Token budget for pinned messages re-inserted after a compaction (share of the window).
    pub pin_budget_ratio: f64,
    /// `[compression] policy`: compact at the threshold only, or earlier when cheaper.
    pub policy: crate::economics::CompactionPolicy,
    /// Calls ahead the cost policy prices (`[compression] cost_horizon_turns`).
    pub cost_horizon: u32,
    /// Whether summaries cost money (an LLM summarizer); the extractive one is free.
    pub summarizer_priced: bool,
}

impl AgentConfig {
    pub fn new(
        model: impl Into<String>,
        context_length: u64,
        workdir: PathBuf,
        baton_home: PathBuf,
    ) -> Self {
        AgentConfig {
            model: model.into(),
            context_length,
            max_output_tokens: None,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            compression_enabled: true,
            max_compression_attempts: DEFAULT_MAX_COMPRESSION_ATTEMPTS,
            cache_ttl: Some(CacheTtl::FiveMinutes),
            workdir,
            baton_home,
            allow_outside_workdir: false,
            command_timeout: Duration::from_secs(180),
            source: "cli".into(),
            pin_budget_ratio: 0.1,
            policy: crate::economics::CompactionPolicy::Threshold,
            cost_horizon: DEFAULT_COST_HORIZON,
            summarizer_priced: true,
        }
    }

    /// `max_compression_attempts` within 1..=10.
    pub fn compression_attempts(&self) -> u32 {
        self.max_compression_attempts
            .clamp(1, MAX_COMPRESSION_ATTEMPTS_CAP)
    }
}
