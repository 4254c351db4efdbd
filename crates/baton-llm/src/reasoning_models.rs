//! Which OpenAI models are reasoning models, whose requests follow different rules.
//!
//! OpenAI's reasoning models (the o-series and the gpt-5 family) reject `max_tokens` (they take
//! `max_completion_tokens`, which also caps the hidden reasoning), reject a `temperature` other
//! than the default 1, and reject `stop`. Sending what they reject fails the whole call with a
//! 400, so the clients adapt the request instead: the cap goes under its other name, and the
//! sampling parameters are left out (logged at debug level).

/// Whether `model` (optionally behind a route prefix such as `openai/`) is an OpenAI reasoning
/// model: `o1`, `o3`, `o4-mini`… (an `o` followed by a digit) or `gpt-5…`.
pub fn is_openai_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).trim();
    let name = name.to_ascii_lowercase();
    let o_series = name
        .strip_prefix('o')
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit());
    o_series || name.starts_with("gpt-5")
}

/// Whether a `temperature` of `t` may be sent to `model`: always, except to a reasoning model,
/// which accepts only its default (1).
pub fn takes_sampling_params(model: &str, t: f64) -> bool {
    let ok = !is_openai_reasoning_model(model) || (t - 1.0).abs() < f64::EPSILON;
    if !ok {
        tracing::debug!(
            model,
            temperature = t,
            "temperature not sent: reasoning model"
        );
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o_series_and_gpt5_are_reasoning_models_and_others_are_not() {
        for m in [
            "o1",
            "o1-mini",
            "o3",
            "o3-mini-2025-01-31",
            "o4-mini",
            "O3-PRO",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1-codex",
            "openai/o3",
            "openai/gpt-5-nano",
        ] {
            assert!(is_openai_reasoning_model(m), "{m}");
        }
        for m in [
            "gpt-4o",
            "gpt-4.1-mini",
            "gpt-3.5-turbo",
            "omni-moderation-latest",
            "ollama",
            "claude-opus-4-5",
            "qwen3:8b",
            "",
        ] {
            assert!(!is_openai_reasoning_model(m), "{m}");
        }
    }

    #[test]
    fn reasoning_models_take_only_the_default_temperature() {
        assert!(takes_sampling_params("gpt-4o", 0.2));
        assert!(!takes_sampling_params("o3", 0.2));
        assert!(takes_sampling_params("o3", 1.0));
    }
}
