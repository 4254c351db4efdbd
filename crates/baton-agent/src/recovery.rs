//! What a turn does after a failed model call: the reference's overflow recovery, decided from
//! the error's class alone so it can be tested without a server.
//!
//! - output cap too large → retry once with the room the provider said is left (less a
//!   margin), without compacting — compacting cannot fix an output cap;
//! - context overflow or payload too large → compact and retry, at most
//!   `compression.max_attempts` per turn; the known window is lowered only when the provider
//!   stated its limit (a vague error must not invent a smaller window);
//! - everything else (rate limits and server errors were already retried by the client under
//!   its own rules) → stop the turn with the error.

use baton_llm::LlmError;

/// Tokens kept free under the provider's stated output room, for the reply's framing.
pub const OUTPUT_CAP_MARGIN: u64 = 64;

/// The next step after a failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// Send the same conversation again with this output cap.
    RetryWithOutputCap(u32),
    /// Compact, then retry. `new_window` is set when the provider stated a smaller window.
    CompactAndRetry { new_window: Option<u64> },
    /// Give up on this turn with a message telling the user what to do.
    Stop(String),
}

/// State one turn keeps across failed calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecoveryState {
    /// Compactions attempted for overflow in this turn.
    pub compression_attempts: u32,
    /// Whether the output cap was already lowered in this turn.
    pub output_cap_retried: bool,
}

/// Decides the recovery for `error`, updating `state`.
pub fn decide_recovery(
    error: &LlmError,
    state: &mut RecoveryState,
    max_attempts: u32,
    context_length: u64,
    current_output_cap: Option<u32>,
    compression_enabled: bool,
) -> Recovery {
    match error {
        LlmError::OutputCapTooLarge { available, .. } => {
            if state.output_cap_retried {
                return Recovery::Stop(format!(
                    "{error}. The smaller output cap was refused too; lower `max_output_tokens` in config.toml."
                ));
            }
            state.output_cap_retried = true;
            let room = available
                .map(|a| a.saturating_sub(OUTPUT_CAP_MARGIN).max(1))
                .or_else(|| current_output_cap.map(|c| u64::from(c / 2).max(1)))
                .unwrap_or(4096);
            Recovery::RetryWithOutputCap(u32::try_from(room).unwrap_or(u32::MAX))
        }
        LlmError::ContextOverflow { .. } | LlmError::PayloadTooLarge { .. } => {
            if !compression_enabled {
                return Recovery::Stop(format!(
                    "{error}. Compression is disabled (compression.enabled = false), so the \
                     conversation cannot be shortened: start a new session with /new, or enable \
                     compression."
                ));
            }
            state.compression_attempts += 1;
            if state.compression_attempts > max_attempts {
                return Recovery::Stop(format!(
                    "Context window exceeded: {max_attempts} compression attempts in this turn \
                     did not make the request fit. Start a fresh session with /new, or run \
                     /compress <focus> to keep only what matters for your next step."
                ));
            }
            let new_window = match error {
                LlmError::ContextOverflow {
                    limit: Some(stated),
                    ..
                } if *stated < context_length => Some(*stated),
                _ => None,
            };
            Recovery::CompactAndRetry { new_window }
        }
        other => Recovery::Stop(other.to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn overflow(limit: Option<u64>) -> LlmError {
        LlmError::ContextOverflow {
            provider: "openai".into(),
            limit,
            requested: Some(210_000),
            message: "maximum context length".into(),
        }
    }

    #[test]
    fn output_cap_error_retries_once_with_the_stated_room_and_never_compacts() {
        let mut state = RecoveryState::default();
        let error = LlmError::OutputCapTooLarge {
            provider: "anthropic".into(),
            available: Some(1000),
            message: "max_tokens too large".into(),
        };
        let first = decide_recovery(&error, &mut state, 3, 200_000, Some(8000), true);
        assert_eq!(first, Recovery::RetryWithOutputCap(936));
        assert_eq!(state.compression_attempts, 0);
        let second = decide_recovery(&error, &mut state, 3, 200_000, Some(936), true);
        assert!(matches!(second, Recovery::Stop(_)), "{second:?}");
    }

    #[test]
    fn overflow_compacts_at_most_max_attempts_then_tells_the_user_what_to_do() {
        let mut state = RecoveryState::default();
        for _ in 0..3 {
            assert_eq!(
                decide_recovery(&overflow(None), &mut state, 3, 200_000, None, true),
                Recovery::CompactAndRetry { new_window: None }
            );
        }
        let Recovery::Stop(message) =
            decide_recovery(&overflow(None), &mut state, 3, 200_000, None, true)
        else {
            panic!("a fourth overflow must stop");
        };
        assert!(
            message.contains("/new") && message.contains("/compress"),
            "{message}"
        );
    }

    #[test]
    fn the_window_is_lowered_only_when_the_provider_stated_a_smaller_limit() {
        let mut state = RecoveryState::default();
        assert_eq!(
            decide_recovery(&overflow(Some(128_000)), &mut state, 3, 200_000, None, true),
            Recovery::CompactAndRetry {
                new_window: Some(128_000)
            }
        );
        assert_eq!(
            decide_recovery(&overflow(Some(400_000)), &mut state, 3, 200_000, None, true),
            Recovery::CompactAndRetry { new_window: None }
        );
    }

    #[test]
    fn disabled_compression_stops_with_the_reason() {
        let mut state = RecoveryState::default();
        let Recovery::Stop(message) =
            decide_recovery(&overflow(None), &mut state, 3, 200_000, None, false)
        else {
            panic!("must stop");
        };
        assert!(message.contains("compression.enabled = false"), "{message}");
    }
}
