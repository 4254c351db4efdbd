//! The guard that keeps automatic compaction from running away.
//!
//! Every anchor system has a story of compaction loops: 211 compactions in one session, three
//! hours of re-summarizing, a compressor firing every turn because the incompressible floor
//! (system prompt + tool schemas) alone exceeded the threshold. The guard blocks automatic
//! compaction when:
//! - a summarizer failed recently (cooldown: 60 s, or 60 → 300 → 900 s for repeated timeouts);
//! - two completed compactions in a row left the real prompt (as the provider reported it) at
//!   or above the threshold, or two in a row needed the fallback summary;
//! - this user turn already had its maximum passes, or already had a compaction that did not
//!   bring the prompt under the threshold (a second one would summarize a summary and free
//!   nothing).
//!
//! A manual compaction (`force`) clears the cooldown and is never blocked: the user asked.

use std::fmt;
use std::time::{Duration, Instant};

/// Identifies one user turn: a hash of the latest user message, which compaction keeps
/// verbatim, so it is stable across the compactions of that turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TurnKey(pub u64);

/// Why automatic compaction is blocked right now. `Display` is the explanation shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Cooldown { remaining: Duration },
    Ineffective { strikes: u32, fallbacks: u32 },
    TurnPassLimit { passes: u32 },
    TurnAlreadyCompacted { tokens_after: u64, threshold: u64 },
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Block::Cooldown { remaining } => write!(
                f,
                "the summarizer failed recently; automatic compaction resumes in {} s (run a manual compaction to retry now)",
                remaining.as_secs().max(1)
            ),
            Block::Ineffective { strikes, fallbacks } => write!(
                f,
                "the last compactions did not bring the prompt under the threshold ({strikes} ineffective, {fallbacks} fallback summaries in a row); the fixed part of the prompt (system prompt, tool schemas) may be too large for this window — start a new session or compact manually with a focus topic"
            ),
            Block::TurnPassLimit { passes } => write!(
                f,
                "this turn has already been compacted {passes} times; not compacting again until the next user message"
            ),
            Block::TurnAlreadyCompacted {
                tokens_after,
                threshold,
            } => write!(
                f,
                "this turn was already compacted and the prompt is still ~{tokens_after} tokens (threshold {threshold}); a second compaction would only summarize the summary. Start a new session, or compact manually with a focus topic"
            ),
        }
    }
}

/// Kinds of summarizer failure, for the cooldown ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Timeout,
    Other,
}

const TIMEOUT_LADDER: [Duration; 3] = [
    Duration::from_secs(60),
    Duration::from_secs(300),
    Duration::from_secs(900),
];
const OTHER_FAILURE_COOLDOWN: Duration = Duration::from_secs(60);
/// Strikes (ineffective compactions, or fallback summaries in a row) that block automation.
pub const STRIKE_LIMIT: u32 = 2;

/// State of the guard. Cheap to clone; `reset` at session boundaries.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    ineffective_strikes: u32,
    fallback_streak: u32,
    cooldown_until: Option<Instant>,
    consecutive_timeouts: u32,
    /// Armed by a completed compaction: the next real prompt count judges it.
    verify_pending: bool,
    turn: Option<TurnState>,
}

#[derive(Debug, Clone, Copy)]
struct TurnState {
    key: TurnKey,
    passes: u32,
    last_tokens_after: u64,
}

impl Guard {
    /// Why an automatic compaction of `turn` must not run now, if it must not.
    pub fn check(
        &self,
        now: Instant,
        turn: TurnKey,
        threshold: u64,
        max_passes: u32,
    ) -> Option<Block> {
        if let Some(until) = self.cooldown_until.filter(|u| *u > now) {
            return Some(Block::Cooldown {
                remaining: until - now,
            });
        }
        if self.ineffective_strikes >= STRIKE_LIMIT || self.fallback_streak >= STRIKE_LIMIT {
            return Some(Block::Ineffective {
                strikes: self.ineffective_strikes,
                fallbacks: self.fallback_streak,
            });
        }
        let state = self.turn.filter(|t| t.key == turn)?;
        if state.passes >= max_passes {
            return Some(Block::TurnPassLimit {
                passes: state.passes,
            });
        }
        (state.last_tokens_after >= threshold).then_some(Block::TurnAlreadyCompacted {
            tokens_after: state.last_tokens_after,
            threshold,
        })
    }

    /// A compaction of `turn` completed, leaving an estimated `tokens_after`.
    pub fn record_compaction(&mut self, turn: TurnKey, fallback_used: bool, tokens_after: u64) {
        self.fallback_streak = if fallback_used {
            self.fallback_streak + 1
        } else {
            0
        };
        self.verify_pending = true;
        let passes = self.turn.filter(|t| t.key == turn).map_or(0, |t| t.passes) + 1;
        self.turn = Some(TurnState {
            key: turn,
            passes,
            last_tokens_after: tokens_after,
        });
    }

    /// The provider reported the real prompt size of a request. Judges the last compaction, if
    /// one is awaiting judgement; any reading under the threshold clears the strikes.
    pub fn record_real_prompt(&mut self, prompt_tokens: u64, threshold: u64) {
        if prompt_tokens == 0 {
            return;
        }
        if self.verify_pending {
            // The first real reading after a compaction is what it actually left; later
            // readings of the same turn include new tool output and say nothing about it.
            if let Some(t) = self.turn.as_mut() {
                t.last_tokens_after = prompt_tokens;
            }
        }
        if prompt_tokens < threshold {
            self.ineffective_strikes = 0;
        } else if self.verify_pending {
            self.ineffective_strikes += 1;
        }
        self.verify_pending = false;
    }

    /// A summarizer failed: start (or extend) the cooldown.
    pub fn record_failure(&mut self, kind: FailureKind, now: Instant) {
        let wait = match kind {
            FailureKind::Timeout => {
                self.consecutive_timeouts += 1;
                let step = (self.consecutive_timeouts as usize).min(TIMEOUT_LADDER.len()) - 1;
                TIMEOUT_LADDER[step]
            }
            FailureKind::Other => OTHER_FAILURE_COOLDOWN,
        };
        self.cooldown_until = Some(now + wait);
    }

    /// A summarizer succeeded: failures are forgiven.
    pub fn record_success(&mut self) {
        self.cooldown_until = None;
        self.consecutive_timeouts = 0;
    }

    /// Whether the configured summarizer is cooling down (the compressor then goes straight to
    /// the extractive summary instead of waiting).
    pub fn in_cooldown(&self, now: Instant) -> bool {
        self.cooldown_until.is_some_and(|u| u > now)
    }

    /// A manual compaction: the user asked, so the cooldown is lifted.
    pub fn clear_cooldown(&mut self) {
        self.cooldown_until = None;
    }

    pub fn strikes(&self) -> (u32, u32) {
        (self.ineffective_strikes, self.fallback_streak)
    }

    /// Session boundary: nothing carries over.
    pub fn reset(&mut self) {
        *self = Guard::default();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const T: TurnKey = TurnKey(1);

    #[test]
    fn two_ineffective_compactions_block_automation_until_a_reading_fits() {
        let mut g = Guard::default();
        let now = Instant::now();
        for _ in 0..2 {
            g.record_compaction(TurnKey(rand_turn()), false, 90);
            g.record_real_prompt(120, 100);
        }
        assert!(matches!(
            g.check(now, T, 100, 3),
            Some(Block::Ineffective { strikes: 2, .. })
        ));
        g.record_real_prompt(80, 100);
        assert_eq!(g.check(now, T, 100, 3), None);
    }

    fn rand_turn() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(100);
        N.fetch_add(1, Ordering::Relaxed)
    }

    #[test]
    fn second_compaction_in_a_turn_is_refused_when_the_first_did_not_free_enough() {
        let mut g = Guard::default();
        let now = Instant::now();
        g.record_compaction(T, false, 150);
        let block = g.check(now, T, 100, 3).unwrap();
        assert!(matches!(
            block,
            Block::TurnAlreadyCompacted {
                tokens_after: 150,
                ..
            }
        ));
        assert!(block.to_string().contains("already compacted"));
        // A new user turn is judged afresh.
        assert_eq!(g.check(now, TurnKey(2), 100, 3), None);
    }

    #[test]
    fn pass_limit_per_turn_applies_even_when_each_pass_helped() {
        let mut g = Guard::default();
        let now = Instant::now();
        for _ in 0..3 {
            g.record_compaction(T, false, 50);
        }
        assert!(matches!(
            g.check(now, T, 100, 3),
            Some(Block::TurnPassLimit { passes: 3 })
        ));
    }

    #[test]
    fn timeouts_climb_the_cooldown_ladder_and_success_resets_it() {
        let mut g = Guard::default();
        let now = Instant::now();
        g.record_failure(FailureKind::Timeout, now);
        g.record_failure(FailureKind::Timeout, now);
        match g.check(now, T, 100, 3) {
            Some(Block::Cooldown { remaining }) => assert_eq!(remaining, Duration::from_secs(300)),
            other => panic!("expected cooldown, got {other:?}"),
        }
        assert!(g.check(now + Duration::from_secs(301), T, 100, 3).is_none());
        g.record_success();
        g.record_failure(FailureKind::Timeout, now);
        assert!(
            matches!(g.check(now, T, 100, 3), Some(Block::Cooldown { remaining }) if remaining == Duration::from_secs(60))
        );
    }

    #[test]
    fn fallback_streak_blocks_and_a_healthy_summary_clears_it() {
        let mut g = Guard::default();
        let now = Instant::now();
        g.record_compaction(TurnKey(10), true, 10);
        g.record_compaction(TurnKey(11), true, 10);
        assert!(matches!(
            g.check(now, TurnKey(12), 100, 3),
            Some(Block::Ineffective { fallbacks: 2, .. })
        ));
        g.record_compaction(TurnKey(13), false, 10);
        assert_eq!(g.check(now, TurnKey(14), 100, 3), None);
    }

    #[test]
    fn reset_forgets_everything() {
        let mut g = Guard::default();
        g.record_failure(FailureKind::Other, Instant::now());
        g.record_compaction(T, true, 500);
        g.reset();
        assert_eq!(g.check(Instant::now(), T, 100, 3), None);
    }
}
