//! What a call cost, or why that is not known.
//!
//! A [`PriceTable`] maps model names to [`ModelPrice`]s (US dollars per million tokens for
//! uncached input, output, cache reads and cache writes): the built-in list
//! ([`builtin`], with the month it was taken) plus overrides from `config.toml`
//! (`[pricing."<model>"]`, see [`PriceTable::with_overrides`]). Pricing a usage gives a
//! [`Cost`] or an [`UnknownCost`] that says why; callers print "unknown" then, never `$0`,
//! because a zero that means "we do not know" reads as "it was free".
//!
//! Model names are matched the way providers and routers spell them: case-insensitively,
//! without a provider prefix (`anthropic/`, `openrouter/openai/`), a Bedrock or Vertex wrapper
//! (`us.anthropic.…-v1:0`, `…@20250929`), a release date (`-20250929`, `-2024-08-06`) or a
//! `-latest` / preview suffix. A dated name that has its own price (`gpt-4o-2024-05-13`) is
//! matched exactly first. Anything else stays unknown: a near miss is never priced as its
//! neighbour.

pub mod builtin;

use crate::usage::CanonicalUsage;
use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

/// Prices of one model, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelPrice {
    /// Uncached input.
    pub input: f64,
    pub output: f64,
    /// Cached input read; `None` when the provider publishes no such price.
    pub cache_read: Option<f64>,
    /// Input written to the cache; `None` when unknown.
    pub cache_write: Option<f64>,
}

/// One `[pricing."<model>"]` table of `config.toml`: any subset of the four prices, in US
/// dollars per million tokens. Fields left out keep the built-in price of the model the name
/// resolves to; a model the built-in list does not know needs `input` and `output`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PriceOverride {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

/// Where a price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceSource {
    /// The built-in list ([`builtin::PRICES_AS_OF`]).
    Builtin,
    /// `[pricing]` in `config.toml`.
    Config,
}

/// A bad `[pricing]` entry, naming the model and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PricingError {
    #[error(
        "pricing.\"{model}\".{field}: {value} is not a price (expected a finite number >= 0, US dollars per million tokens)"
    )]
    Invalid {
        model: String,
        field: &'static str,
        value: f64,
    },
    #[error(
        "pricing.\"{model}\": `{field}` is required for a model the built-in price list does not know"
    )]
    Missing { model: String, field: &'static str },
    #[error("pricing: a model name must not be empty")]
    EmptyName,
}

/// The price of a call, in US dollars.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    pub usd: f64,
    /// The price-list entry used (`claude-sonnet-4-5` for `anthropic/claude-sonnet-4-5-20250929`).
    pub priced_as: String,
    pub source: PriceSource,
    /// When the price was taken: the built-in list's month, or `config.toml`.
    pub prices_as_of: String,
}

/// Why a cost is not known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", content = "model", rename_all = "snake_case")]
pub enum UnknownCost {
    /// No model was recorded for the usage.
    NoModel,
    /// The model is in neither the built-in list nor `[pricing]`.
    UnpricedModel(String),
    /// Cached tokens were reported, but the model has no price for them.
    NoCachePrice(String),
}

impl fmt::Display for UnknownCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownCost::NoModel => f.write_str("no model recorded"),
            UnknownCost::UnpricedModel(m) => write!(
                f,
                "no price for model `{m}` (add [pricing.\"{m}\"] to config.toml)"
            ),
            UnknownCost::NoCachePrice(m) => {
                write!(f, "model `{m}` has no price for cached tokens")
            }
        }
    }
}

/// A resolved price-list entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolved<'a> {
    pub name: &'a str,
    pub price: ModelPrice,
    pub source: PriceSource,
}

/// Model prices by canonical name.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: BTreeMap<String, (ModelPrice, PriceSource)>,
    aliases: BTreeMap<String, String>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
}

impl PriceTable {
    /// The built-in list only.
    pub fn builtin() -> PriceTable {
        PriceTable {
            entries: builtin::BUILTIN
                .iter()
                .map(|(name, price)| (name.to_string(), (*price, PriceSource::Builtin)))
                .collect(),
            aliases: builtin::ALIASES
                .iter()
                .map(|(a, c)| (a.to_string(), c.to_string()))
                .collect(),
        }
    }

    /// The built-in list with `config.toml`'s `[pricing."<model>"]` tables applied: what the
    /// CLI uses. Keys are model names, matched like any model name (case-insensitive, provider
    /// prefix ignored); a key that names a known model changes only the fields it sets.
    pub fn with_overrides<I, K>(overrides: I) -> Result<PriceTable, PricingError>
    where
        I: IntoIterator<Item = (K, PriceOverride)>,
        K: AsRef<str>,
    {
        let mut table = PriceTable::builtin();
        for (name, o) in overrides {
            table.apply_override(name.as_ref(), &o)?;
        }
        Ok(table)
    }

    fn apply_override(&mut self, name: &str, o: &PriceOverride) -> Result<(), PricingError> {
        let key = strip_prefix(&name.trim().to_ascii_lowercase()).to_string();
        if key.is_empty() {
            return Err(PricingError::EmptyName);
        }
        let fields = [
            ("input", o.input),
            ("output", o.output),
            ("cache_read", o.cache_read),
            ("cache_write", o.cache_write),
        ];
        for (field, value) in fields {
            if let Some(v) = value.filter(|v| !v.is_finite() || *v < 0.0) {
                return Err(PricingError::Invalid {
                    model: name.to_string(),
                    field,
                    value: v,
                });
            }
        }
        let base = self.resolve(&key).map(|r| r.price);
        let missing = |field| PricingError::Missing {
            model: name.to_string(),
            field,
        };
        let price = ModelPrice {
            input: o
                .input
                .or(base.map(|b| b.input))
                .ok_or_else(|| missing("input"))?,
            output: o
                .output
                .or(base.map(|b| b.output))
                .ok_or_else(|| missing("output"))?,
            cache_read: o.cache_read.or(base.and_then(|b| b.cache_read)),
            cache_write: o.cache_write.or(base.and_then(|b| b.cache_write)),
        };
        self.entries.insert(key, (price, PriceSource::Config));
        Ok(())
    }

    /// The entry `model` resolves to, if any (see the module docs for the matching rules).
    pub fn resolve(&self, model: &str) -> Option<Resolved<'_>> {
        candidates(model).into_iter().find_map(|name| {
            let name = self.aliases.get(&name).cloned().unwrap_or(name);
            self.entries
                .get_key_value(&name)
                .map(|(name, (price, source))| Resolved {
                    name,
                    price: *price,
                    source: *source,
                })
        })
    }

    /// What `usage` cost on `model`. Reasoning tokens are part of output and not added again.
    pub fn cost(&self, model: Option<&str>, usage: &CanonicalUsage) -> Result<Cost, UnknownCost> {
        let model = model
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .ok_or(UnknownCost::NoModel)?;
        let r = self
            .resolve(model)
            .ok_or_else(|| UnknownCost::UnpricedModel(model.to_string()))?;
        let per_token = |tokens: u64, price: Option<f64>| match (tokens, price) {
            (0, _) => Ok(0.0),
            (n, Some(p)) => Ok(n as f64 * p),
            (_, None) => Err(UnknownCost::NoCachePrice(model.to_string())),
        };
        let micro = per_token(usage.input, Some(r.price.input))?
            + per_token(usage.output, Some(r.price.output))?
            + per_token(usage.cache_read, r.price.cache_read)?
            + per_token(usage.cache_write, r.price.cache_write)?;
        Ok(Cost {
            usd: micro / 1_000_000.0,
            priced_as: r.name.to_string(),
            source: r.source,
            prices_as_of: match r.source {
                PriceSource::Builtin => builtin::PRICES_AS_OF.to_string(),
                PriceSource::Config => "config.toml".to_string(),
            },
        })
    }
}

/// A dollar amount for people: cents for a dollar or more, four decimals below that, and two
/// significant digits for amounts under a hundredth of a cent, so a real cost never prints
/// as `$0.0000`.
pub fn format_usd(usd: f64) -> String {
    if usd == 0.0 {
        return "$0.00".to_string();
    }
    if usd >= 1.0 {
        return format!("${usd:.2}");
    }
    if usd >= 0.0001 {
        return format!("${usd:.4}");
    }
    if usd < 1e-9 {
        return "<$0.000000001".to_string();
    }
    let decimals = (-usd.log10()).ceil() as usize + 1;
    format!("${usd:.decimals$}")
}

/// `openai/gpt-4o` → `gpt-4o`; `openrouter/anthropic/claude-sonnet-4` → `claude-sonnet-4`.
fn strip_prefix(name: &str) -> &str {
    match name.rsplit('/').next() {
        Some(last) if !last.is_empty() => last,
        _ => name,
    }
}

/// A Bedrock id's region and vendor (`us.anthropic.`), and its version (`-v2:0`).
static BEDROCK_VENDOR: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(?:[a-z]{2}\.)?(?:anthropic|openai|google|deepseek|meta|mistral)\.").ok()
});
static BEDROCK_VERSION: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"-v\d+:\d+$").ok());
/// Suffixes that name a release of the same model at the same price.
static SUFFIXES: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?:-v\d+|@\d{8}|@latest|-\d{8}|-\d{4}-\d{2}-\d{2}|-latest|-preview(?:-\d{2}-\d{2})?|-\d{3})$",
    )
    .ok()
});

fn strip_re(re: &LazyLock<Option<Regex>>, text: &str) -> String {
    match re.as_ref() {
        Some(re) => re.replace(text, "").into_owned(),
        None => text.to_string(),
    }
}

/// Names to look `model` up under, most specific first.
fn candidates(model: &str) -> Vec<String> {
    let lower = model.trim().to_ascii_lowercase();
    let mut out = vec![lower.clone()];
    let mut name = strip_prefix(&lower).to_string();
    out.push(name.clone());
    name = strip_re(&BEDROCK_VERSION, &strip_re(&BEDROCK_VENDOR, &name));
    // OpenRouter variants: `:thinking` / `:beta` / `:extended` are the same model at the same
    // price; `:free` and any other tag (Ollama's `:8b`) are not, and stay unknown.
    if let Some((base, variant)) = name.split_once(':') {
        if ["thinking", "beta", "extended"].contains(&variant) {
            name = base.to_string();
        } else {
            out.dedup();
            return out;
        }
    }
    if name.starts_with("claude") {
        name = name.replace('.', "-");
    }
    out.push(name.clone());
    // Suffixes can stack (`-v2@20241022`, `-preview-05-20`); strip until none is left.
    loop {
        let stripped = strip_re(&SUFFIXES, &name);
        if stripped == name || stripped.is_empty() {
            break;
        }
        name = stripped;
        out.push(name.clone());
    }
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> CanonicalUsage {
        CanonicalUsage {
            input,
            output,
            cache_read,
            cache_write,
            reasoning: 0,
        }
    }

    #[test]
    fn dated_prefixed_and_wrapped_names_resolve_to_their_model() {
        let t = PriceTable::builtin();
        for (name, expected) in [
            ("anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
            ("CLAUDE-3-5-SONNET-LATEST", "claude-3-5-sonnet"),
            ("anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet"),
            (
                "openrouter/anthropic/claude-sonnet-4.5",
                "claude-sonnet-4-5",
            ),
            (
                "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
                "claude-3-5-sonnet",
            ),
            ("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),
            ("openai/gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
            ("o3-mini-2025-01-31", "o3-mini"),
            ("gpt-5-2025-08-07", "gpt-5"),
            ("models/gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
            ("gemini-2.0-flash-001", "gemini-2.0-flash"),
            ("deepseek/deepseek-chat", "deepseek-chat"),
        ] {
            assert_eq!(t.resolve(name).map(|r| r.name), Some(expected), "{name}");
        }
    }

    #[test]
    fn unknown_and_near_miss_names_stay_unknown() {
        let t = PriceTable::builtin();
        for name in [
            "claude-opus-4-6",
            "gpt-4o-mini-tts",
            "llama3.1:8b",
            "qwen/qwen3-coder:free",
            "gpt-4",
            "my-model",
            "",
        ] {
            assert!(t.resolve(name).is_none(), "{name} resolved");
        }
        assert_eq!(
            t.cost(Some("claude-opus-4-6"), &usage(10, 10, 0, 0)),
            Err(UnknownCost::UnpricedModel("claude-opus-4-6".into()))
        );
        assert_eq!(
            t.cost(None, &usage(10, 10, 0, 0)),
            Err(UnknownCost::NoModel)
        );
        assert_eq!(
            t.cost(Some("  "), &usage(1, 1, 0, 0)),
            Err(UnknownCost::NoModel)
        );
    }

    #[test]
    fn cost_adds_the_four_buckets_at_their_prices() {
        let t = PriceTable::builtin();
        // Sonnet 4.5: 3 in, 15 out, 0.30 read, 3.75 write per million.
        let c = t
            .cost(
                Some("claude-sonnet-4-5-20250929"),
                &usage(1_000_000, 100_000, 2_000_000, 400_000),
            )
            .unwrap();
        assert!((c.usd - (3.0 + 1.5 + 0.6 + 1.5)).abs() < 1e-9, "{}", c.usd);
        assert_eq!(c.priced_as, "claude-sonnet-4-5");
        assert_eq!(c.source, PriceSource::Builtin);
        assert_eq!(c.prices_as_of, builtin::PRICES_AS_OF);
        // gpt-4o: cached input at half price.
        let c = t.cost(Some("gpt-4o"), &usage(1000, 100, 1000, 0)).unwrap();
        assert!(
            (c.usd - (0.0025 + 0.001 + 0.00125)).abs() < 1e-12,
            "{}",
            c.usd
        );
    }

    #[test]
    fn cached_tokens_without_a_cache_price_are_unknown_not_free() {
        let t = PriceTable::builtin();
        assert!(t.cost(Some("gpt-5-pro"), &usage(10, 10, 0, 0)).is_ok());
        assert_eq!(
            t.cost(Some("gpt-5-pro"), &usage(10, 10, 5, 0)),
            Err(UnknownCost::NoCachePrice("gpt-5-pro".into()))
        );
    }

    #[test]
    fn overrides_change_known_models_and_add_new_ones() {
        let t = PriceTable::with_overrides([
            (
                "claude-sonnet-4-5",
                PriceOverride {
                    input: Some(2.0),
                    ..PriceOverride::default()
                },
            ),
            (
                "openrouter/My-Local-Model",
                PriceOverride {
                    input: Some(0.0),
                    output: Some(0.0),
                    ..PriceOverride::default()
                },
            ),
        ])
        .unwrap();
        let r = t.resolve("anthropic/claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(r.source, PriceSource::Config);
        assert_eq!(r.price.input, 2.0);
        assert_eq!(
            r.price.output, 15.0,
            "fields not set keep the built-in price"
        );
        let c = t
            .cost(Some("my-local-model"), &usage(1000, 1000, 0, 0))
            .unwrap();
        assert_eq!(c.usd, 0.0);
        assert_eq!(c.prices_as_of, "config.toml");
        // The built-in list is untouched elsewhere.
        assert_eq!(
            t.resolve("claude-haiku-4-5").unwrap().source,
            PriceSource::Builtin
        );
    }

    #[test]
    fn bad_overrides_name_the_model_and_field() {
        let e = PriceTable::with_overrides([(
            "new-model",
            PriceOverride {
                input: Some(1.0),
                ..PriceOverride::default()
            },
        )])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "pricing.\"new-model\": `output` is required for a model the built-in price list does not know"
        );
        let e = PriceTable::with_overrides([(
            "gpt-4o",
            PriceOverride {
                cache_read: Some(-1.0),
                ..PriceOverride::default()
            },
        )])
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("pricing.\"gpt-4o\".cache_read: -1"),
            "{e}"
        );
        assert_eq!(
            PriceTable::with_overrides([(" ", PriceOverride::default())]).unwrap_err(),
            PricingError::EmptyName
        );
    }

    #[test]
    fn every_builtin_price_is_sane_and_aliases_point_at_entries() {
        let t = PriceTable::builtin();
        for (name, p) in builtin::BUILTIN {
            assert_eq!(t.resolve(name).map(|r| r.name), Some(*name), "{name}");
            assert!(p.input > 0.0 && p.output >= p.input, "{name}");
            assert!(p.cache_read.is_none_or(|r| r < p.input), "{name}");
        }
        for (alias, canonical) in builtin::ALIASES {
            assert_eq!(
                t.resolve(alias).map(|r| r.name),
                Some(*canonical),
                "{alias}"
            );
        }
    }

    #[test]
    fn small_amounts_never_print_as_zero() {
        assert_eq!(format_usd(0.0), "$0.00");
        assert_eq!(format_usd(12.345), "$12.35");
        assert_eq!(format_usd(0.0123), "$0.0123");
        assert_eq!(format_usd(0.000_012_3), "$0.000012");
        assert_eq!(format_usd(0.000_09), "$0.000090");
        assert_ne!(format_usd(0.000_000_5), "$0.0000");
    }
}
