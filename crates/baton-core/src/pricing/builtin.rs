//! The built-in price list: public list prices in US dollars per million tokens.
//!
//! Taken from the providers' published pricing pages as they stood in November 2025 (written
//! down from those public list prices, not fetched at run time; the shared reference material
//! has no price figures). Prices change: `[pricing."<model>"]` in `config.toml` overrides any
//! entry or adds a model. Rules behind the figures:
//!
//! - **Standard tier, short prompts.** Long-context surcharges (Gemini 2.5 Pro and Claude
//!   Sonnet 4/4.5 above 200K prompt tokens), batch and flex discounts are not modelled.
//! - **Cache write** is Anthropic's 5-minute write (1.25× input; the 1-hour write is 2×).
//!   OpenAI, Gemini and DeepSeek bill a cache miss at the input price, so their write price is
//!   the input price. Gemini's hourly cache storage fee is not modelled.
//! - **Cache read** is `None` where the provider publishes no cached-input price; a call that
//!   reports cached tokens for such a model is priced "unknown" rather than guessed.

use super::ModelPrice;

/// The month the built-in prices were taken.
pub const PRICES_AS_OF: &str = "2025-11";

const fn p(
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
) -> ModelPrice {
    ModelPrice {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// OpenAI-style pricing: cached input at `read`, a cache miss billed as input.
const fn openai(input: f64, output: f64, read: f64) -> ModelPrice {
    p(input, output, Some(read), Some(input))
}

/// Anthropic pricing: reads at 0.1× input, 5-minute writes at 1.25× input.
const fn anthropic(input: f64, output: f64) -> ModelPrice {
    p(input, output, Some(input * 0.1), Some(input * 1.25))
}

/// Canonical model names (lower case, no provider prefix, no date suffix) and their prices.
pub const BUILTIN: &[(&str, ModelPrice)] = &[
    // OpenAI, GPT-4o / 4.1 / 5 families.
    ("gpt-4o", openai(2.50, 10.00, 1.25)),
    ("gpt-4o-2024-05-13", p(5.00, 15.00, None, Some(5.00))),
    ("gpt-4o-mini", openai(0.15, 0.60, 0.075)),
    ("chatgpt-4o-latest", p(5.00, 15.00, None, Some(5.00))),
    ("gpt-4.1", openai(2.00, 8.00, 0.50)),
    ("gpt-4.1-mini", openai(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", openai(0.10, 0.40, 0.025)),
    ("gpt-5", openai(1.25, 10.00, 0.125)),
    ("gpt-5-chat-latest", openai(1.25, 10.00, 0.125)),
    ("gpt-5-codex", openai(1.25, 10.00, 0.125)),
    ("gpt-5-mini", openai(0.25, 2.00, 0.025)),
    ("gpt-5-nano", openai(0.05, 0.40, 0.005)),
    ("gpt-5-pro", p(15.00, 120.00, None, Some(15.00))),
    ("gpt-5.1", openai(1.25, 10.00, 0.125)),
    ("gpt-5.1-chat-latest", openai(1.25, 10.00, 0.125)),
    ("gpt-5.1-codex", openai(1.25, 10.00, 0.125)),
    ("gpt-5.1-codex-mini", openai(0.25, 2.00, 0.025)),
    ("gpt-4-turbo", p(10.00, 30.00, None, Some(10.00))),
    ("gpt-3.5-turbo", p(0.50, 1.50, None, Some(0.50))),
    // OpenAI o-series.
    ("o1", openai(15.00, 60.00, 7.50)),
    ("o1-mini", openai(1.10, 4.40, 0.55)),
    ("o1-pro", p(150.00, 600.00, None, Some(150.00))),
    ("o3", openai(2.00, 8.00, 0.50)),
    ("o3-mini", openai(1.10, 4.40, 0.55)),
    ("o3-pro", p(20.00, 80.00, None, Some(20.00))),
    ("o4-mini", openai(1.10, 4.40, 0.275)),
    // Anthropic Claude 3 / 3.5 / 3.7 / 4 / 4.5.
    ("claude-3-haiku", anthropic(0.25, 1.25)),
    ("claude-3-opus", anthropic(15.00, 75.00)),
    ("claude-3-5-haiku", anthropic(0.80, 4.00)),
    ("claude-3-5-sonnet", anthropic(3.00, 15.00)),
    ("claude-3-7-sonnet", anthropic(3.00, 15.00)),
    ("claude-sonnet-4", anthropic(3.00, 15.00)),
    ("claude-opus-4", anthropic(15.00, 75.00)),
    ("claude-opus-4-1", anthropic(15.00, 75.00)),
    ("claude-sonnet-4-5", anthropic(3.00, 15.00)),
    ("claude-haiku-4-5", anthropic(1.00, 5.00)),
    ("claude-opus-4-5", anthropic(5.00, 25.00)),
    // Google Gemini 2.0 / 2.5 (prompts up to 200K tokens).
    ("gemini-2.0-flash", openai(0.10, 0.40, 0.025)),
    ("gemini-2.0-flash-lite", p(0.075, 0.30, None, Some(0.075))),
    ("gemini-2.5-pro", openai(1.25, 10.00, 0.31)),
    ("gemini-2.5-flash", openai(0.30, 2.50, 0.075)),
    ("gemini-2.5-flash-lite", openai(0.10, 0.40, 0.025)),
    // DeepSeek (V3.2 prices since 2025-09-29; both names serve the same model).
    ("deepseek-chat", openai(0.28, 0.42, 0.028)),
    ("deepseek-reasoner", openai(0.28, 0.42, 0.028)),
];

/// Other names of the same models: `(alias, canonical)`.
pub const ALIASES: &[(&str, &str)] = &[
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
    ("claude-3-opus-latest", "claude-3-opus"),
    ("claude-sonnet-4-0", "claude-sonnet-4"),
    ("claude-opus-4-0", "claude-opus-4"),
    ("claude-4-sonnet", "claude-sonnet-4"),
    ("claude-4-opus", "claude-opus-4"),
    ("o1-preview", "o1"),
];
