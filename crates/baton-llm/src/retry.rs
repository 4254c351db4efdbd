//! Retries with exponential backoff and jitter, bounded in count and in total time.
//!
//! Only failures where the identical request may succeed are retried (throttling, server
//! errors, connection failures and timeouts); auth errors and bad requests fail at once. A
//! `Retry-After` the server sent wins over the computed backoff, because sending earlier just
//! earns another 429.

use crate::errors::LlmError;
use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retries).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles after each.
    pub base_delay: Duration,
    /// Longest single wait, computed or asked for by `Retry-After`.
    pub max_delay: Duration,
    /// No retry starts once this much time has passed since the first attempt, or would pass
    /// during the wait.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_total: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A single attempt.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (1-based) after `error`: the server's
    /// `Retry-After` when given, else `base × 2^(retry-1)` scaled by a random factor in
    /// [0.5, 1.0) so clients that failed together do not retry together. Capped at
    /// `max_delay`.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Duration {
        if let Some(asked) = error.retry_after() {
            return asked.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        exp.mul_f64(0.5 + jitter() / 2.0).min(self.max_delay)
    }

    /// Runs `attempt` until it succeeds, fails for good, or the policy is spent. Returns the
    /// result and the number of attempts made.
    pub async fn run<T, F, Fut>(&self, mut attempt: F) -> (Result<T, LlmError>, u32)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, LlmError>>,
    {
        let started = Instant::now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let error = match attempt().await {
                Ok(value) => return (Ok(value), attempts),
                Err(e) => e,
            };
            if !error.is_retryable() || attempts >= self.max_attempts.max(1) {
                return (Err(error), attempts);
            }
            let wait = self.delay(attempts, &error);
            if started.elapsed() + wait > self.max_total {
                return (Err(error), attempts);
            }
            tracing::warn!(attempt = attempts, wait_ms = wait.as_millis() as u64, error = %error, "retrying provider call");
            tokio::time::sleep(wait).await;
        }
    }
}

/// A number in [0, 1) from the standard library's per-process random hasher keys, enough for
/// spreading retries without a random-number dependency.
fn jitter() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let h = RandomState::new().hash_one(nanos);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error() -> LlmError {
        LlmError::Server {
            provider: "p".into(),
            status: 503,
            message: String::new(),
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        let d1 = p.delay(1, &server_error());
        let d2 = p.delay(2, &server_error());
        let d5 = p.delay(5, &server_error());
        assert!(d1 >= Duration::from_millis(50) && d1 < Duration::from_millis(100));
        assert!(d2 >= Duration::from_millis(100) && d2 < Duration::from_millis(200));
        assert_eq!(d5, Duration::from_millis(350));
    }

    #[test]
    fn retry_after_wins() {
        let e = LlmError::RateLimited {
            provider: "p".into(),
            status: 429,
            retry_after: Some(Duration::from_secs(3)),
            message: String::new(),
        };
        assert_eq!(RetryPolicy::default().delay(1, &e), Duration::from_secs(3));
    }

    #[tokio::test]
    async fn auth_errors_are_not_retried_and_attempts_are_bounded() {
        let policy = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        };
        let (r, n) = policy
            .run(|| async {
                Err::<(), _>(LlmError::Auth {
                    provider: "p".into(),
                    status: 401,
                    message: String::new(),
                })
            })
            .await;
        assert!(r.is_err());
        assert_eq!(n, 1);
        let (r, n) = policy.run(|| async { Err::<(), _>(server_error()) }).await;
        assert!(r.is_err());
        assert_eq!(n, 3);
    }
}
