//! How long the LLM summarizer rests after a failure, by kind of failure.
//!
//! Hammering a summarizer that just failed wastes a call per turn and delays the user each
//! time. The wait depends on why it failed: timeouts (and throttling) escalate 60 s → 300 s →
//! 900 s because a slow or overloaded model tends to stay so; malformed output (an HTML error
//! page, a cut stream, an empty summary) rests 30 s because the next answer is usually fine;
//! no provider at all rests 600 s because nothing will change until the user configures one;
//! anything else rests 60 s. A success clears the wait and the timeout ladder.

use std::time::{Duration, Instant};

/// Why the summarizer is resting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CooldownReason {
    Timeout,
    MalformedOutput,
    NoProvider,
    Other,
}

pub const TIMEOUT_LADDER: [Duration; 3] = [
    Duration::from_secs(60),
    Duration::from_secs(300),
    Duration::from_secs(900),
];
pub const MALFORMED_OUTPUT_COOLDOWN: Duration = Duration::from_secs(30);
pub const NO_PROVIDER_COOLDOWN: Duration = Duration::from_secs(600);
pub const OTHER_FAILURE_COOLDOWN: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Default)]
pub struct Cooldown {
    until: Option<Instant>,
    consecutive_timeouts: u32,
}

impl Cooldown {
    /// Records a failure at `now`; returns the wait it started.
    pub fn record(&mut self, reason: CooldownReason, now: Instant) -> Duration {
        let wait = match reason {
            CooldownReason::Timeout => {
                self.consecutive_timeouts = self.consecutive_timeouts.saturating_add(1);
                let step = (self.consecutive_timeouts as usize).min(TIMEOUT_LADDER.len()) - 1;
                TIMEOUT_LADDER
                    .get(step)
                    .copied()
                    .unwrap_or(OTHER_FAILURE_COOLDOWN)
            }
            CooldownReason::MalformedOutput => MALFORMED_OUTPUT_COOLDOWN,
            CooldownReason::NoProvider => NO_PROVIDER_COOLDOWN,
            CooldownReason::Other => OTHER_FAILURE_COOLDOWN,
        };
        self.until = Some(now + wait);
        wait
    }

    /// Time left at `now`, if resting.
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        self.until.filter(|u| *u > now).map(|u| u - now)
    }

    /// A success (or the user asking explicitly): no wait, ladder reset.
    pub fn clear(&mut self) {
        *self = Cooldown::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_escalate_and_success_resets() {
        let mut c = Cooldown::default();
        let t = Instant::now();
        assert_eq!(
            c.record(CooldownReason::Timeout, t),
            Duration::from_secs(60)
        );
        assert_eq!(
            c.record(CooldownReason::Timeout, t),
            Duration::from_secs(300)
        );
        assert_eq!(
            c.record(CooldownReason::Timeout, t),
            Duration::from_secs(900)
        );
        assert_eq!(
            c.record(CooldownReason::Timeout, t),
            Duration::from_secs(900)
        );
        assert!(c.remaining(t).is_some());
        c.clear();
        assert_eq!(c.remaining(t), None);
        assert_eq!(
            c.record(CooldownReason::Timeout, t),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn kinds_have_their_own_waits() {
        let mut c = Cooldown::default();
        let t = Instant::now();
        assert_eq!(
            c.record(CooldownReason::MalformedOutput, t),
            Duration::from_secs(30)
        );
        assert_eq!(
            c.record(CooldownReason::NoProvider, t),
            Duration::from_secs(600)
        );
        assert_eq!(c.record(CooldownReason::Other, t), Duration::from_secs(60));
        assert_eq!(c.remaining(t + Duration::from_secs(61)), None);
    }
}
