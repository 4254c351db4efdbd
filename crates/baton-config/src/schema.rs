//! The keys `config.toml` knows: their sections, names (the reference design's, so its users
//! feel at home), kinds and the ranges a value must be in.

use crate::value::Value;

/// What a key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Bool,
    /// A number in (0, 1]; integers are accepted (`threshold = 1`).
    Fraction,
    /// A whole number in `min..=max`.
    Count {
        min: i64,
        max: i64,
    },
    /// Any string; an empty one means "unset".
    Text,
    /// One of these strings.
    Choice(&'static [&'static str]),
}

impl Kind {
    /// In words, for error messages.
    pub fn expected(&self) -> String {
        match self {
            Kind::Bool => "a boolean (true or false)".into(),
            Kind::Fraction => "a number greater than 0 and at most 1".into(),
            Kind::Count { min, max } if *max == i64::MAX => {
                format!("a whole number of at least {min}")
            }
            Kind::Count { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Text => "a string".into(),
            Kind::Choice(options) => format!(
                "one of {}",
                options
                    .iter()
                    .map(|o| format!("\"{o}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// `value` as this kind accepts it (integers widened to floats for fractions), or `None`.
    pub fn check(&self, value: &Value) -> Option<Value> {
        match (self, value) {
            (Kind::Bool, Value::Bool(_)) | (Kind::Text, Value::Text(_)) => Some(value.clone()),
            (Kind::Fraction, Value::Float(f)) if *f > 0.0 && *f <= 1.0 => Some(Value::Float(*f)),
            (Kind::Fraction, Value::Integer(1)) => Some(Value::Float(1.0)),
            (Kind::Count { min, max }, Value::Integer(i)) if (*min..=*max).contains(i) => {
                Some(Value::Integer(*i))
            }
            (Kind::Choice(options), Value::Text(s)) if options.contains(&s.as_str()) => {
                Some(value.clone())
            }
            _ => None,
        }
    }
}

/// One known key.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// Dotted table path: `model`, `auxiliary.compression`.
    pub section: &'static str,
    pub key: &'static str,
    pub kind: Kind,
}

impl KeySpec {
    /// `compression.threshold`.
    pub fn path(&self) -> String {
        format!("{}.{}", self.section, self.key)
    }
}

const POSITIVE: Kind = Kind::Count {
    min: 1,
    max: i64::MAX,
};

/// Every scalar key, in the order `config show` prints them.
pub const KEYS: &[KeySpec] = &[
    spec("model", "default", Kind::Text),
    spec("model", "provider", Kind::Text),
    spec("model", "base_url", Kind::Text),
    spec("model", "context_length", POSITIVE),
    spec("compression", "enabled", Kind::Bool),
    spec("compression", "threshold", Kind::Fraction),
    spec("compression", "target_ratio", Kind::Fraction),
    spec(
        "compression",
        "protect_last_n",
        Kind::Count {
            min: 0,
            max: i64::MAX,
        },
    ),
    // The reference validates at least 1 and caps at 10.
    spec(
        "compression",
        "max_attempts",
        Kind::Count { min: 1, max: 10 },
    ),
    spec(
        "compression",
        "policy",
        Kind::Choice(&["threshold", "cost"]),
    ),
    spec(
        "compression",
        "cost_horizon_turns",
        Kind::Count { min: 1, max: 1_000 },
    ),
    spec("auxiliary.compression", "provider", Kind::Text),
    spec("auxiliary.compression", "model", Kind::Text),
    spec("auxiliary.compression", "base_url", Kind::Text),
    spec("context", "engine", Kind::Text),
    spec("prompt_caching", "cache_ttl", Kind::Choice(&["5m", "1h"])),
    spec("memory", "memory_char_limit", POSITIVE),
    spec("memory", "user_char_limit", POSITIVE),
    spec("store", "url", Kind::Text),
    spec(
        "agent",
        "max_iterations",
        Kind::Count {
            min: 1,
            max: 10_000,
        },
    ),
    spec("tools", "allow_outside_workdir", Kind::Bool),
    spec(
        "tools",
        "command_timeout",
        Kind::Count { min: 1, max: 3_600 },
    ),
    // Comma-separated names of destructive-command patterns that need no confirmation.
    spec("tools", "allow_destructive", Kind::Text),
];

/// The table of per-model price overrides: `[pricing."<model>"]`.
pub const PRICING_SECTION: &str = "pricing";

/// The keys of one `[pricing."<model>"]` table (USD per million tokens).
pub const PRICE_KEYS: &[&str] = &["input", "output", "cache_read", "cache_write"];

const fn spec(section: &'static str, key: &'static str, kind: Kind) -> KeySpec {
    KeySpec { section, key, kind }
}

/// The spec of `path` (`compression.threshold`), if it is a known key.
pub fn find(path: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|k| k.path() == path)
}

/// Whether `path` is a known table (`model`, `auxiliary`, `auxiliary.compression`, `pricing`).
pub fn is_section(path: &str) -> bool {
    path == PRICING_SECTION
        || KEYS.iter().any(|k| {
            k.section == path
                || k.section
                    .strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_accept_numbers_in_range_only() {
        assert_eq!(
            Kind::Fraction.check(&Value::Float(0.5)),
            Some(Value::Float(0.5))
        );
        assert_eq!(
            Kind::Fraction.check(&Value::Integer(1)),
            Some(Value::Float(1.0))
        );
        assert_eq!(Kind::Fraction.check(&Value::Float(0.0)), None);
        assert_eq!(Kind::Fraction.check(&Value::Float(1.5)), None);
        assert_eq!(Kind::Fraction.check(&Value::Text("0.5".into())), None);
    }

    #[test]
    fn sections_include_parents_of_nested_tables() {
        assert!(is_section("auxiliary"));
        assert!(is_section("auxiliary.compression"));
        assert!(is_section("model"));
        assert!(!is_section("modle"));
        assert!(!is_section("aux"));
    }
}
