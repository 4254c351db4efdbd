//! `[pricing."<model>"]`: the user's prices, overriding the built-in table for that model.

use crate::error::ConfigError;
use crate::file::Reader;
use crate::schema::{PRICE_KEYS, PRICING_SECTION};
use crate::suggest;
use crate::value::Value;
use serde_json::{Value as Json, json};
use toml::de::DeTable;

/// USD per million tokens; a price not given is left to the built-in table.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PriceOverride {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    /// Line of the model's table in the file.
    pub line: usize,
}

impl PriceOverride {
    pub fn to_json(&self) -> Json {
        json!({
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "line": self.line,
        })
    }

    fn set(&mut self, key: &str, usd: f64) {
        match key {
            "input" => self.input = Some(usd),
            "output" => self.output = Some(usd),
            "cache_read" => self.cache_read = Some(usd),
            _ => self.cache_write = Some(usd),
        }
    }
}

/// Reads the `[pricing]` table: one sub-table per model.
pub(crate) fn read(reader: &mut Reader<'_>, models: &DeTable<'_>) -> Result<(), ConfigError> {
    for (model, prices) in models.iter() {
        let section = format!(
            "{PRICING_SECTION}.{}",
            Value::Text(model.get_ref().to_string())
        );
        let line = reader.line(model.span().start);
        let table = reader.expect_table(&section, line, prices, "a table of prices")?;
        let mut price = PriceOverride {
            line,
            ..PriceOverride::default()
        };
        for (key, value) in table.iter() {
            let name = key.get_ref().as_ref();
            let key_line = reader.line(key.span().start);
            let path = format!("{section}.{name}");
            if !PRICE_KEYS.contains(&name) {
                let suggestion = suggest::nearest_key(&path);
                reader.warn(path, key_line, false, suggestion);
                continue;
            }
            let usd = match reader.scalar(&path, value)? {
                Value::Float(f) if f >= 0.0 && f.is_finite() => f,
                Value::Integer(i) if i >= 0 => i as f64,
                other => {
                    return Err(reader.invalid(
                        &path,
                        key_line,
                        "a non-negative number (USD per million tokens)",
                        &other,
                    ));
                }
            };
            price.set(name, usd);
        }
        reader
            .out
            .pricing
            .insert(model.get_ref().to_string(), price);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::file::parse;
    use std::path::Path;

    #[test]
    fn model_prices_are_read_as_overrides() {
        let v = parse(
            Path::new("c.toml"),
            "[pricing.\"gpt-4o\"]\ninput = 2.5\noutput = 10\n\n[pricing.\"my/model\"]\ncache_read = 0.1\n",
        )
        .unwrap();
        let p = &v.pricing["gpt-4o"];
        assert_eq!(
            (p.input, p.output, p.cache_read),
            (Some(2.5), Some(10.0), None)
        );
        assert_eq!(p.line, 1);
        assert_eq!(v.pricing["my/model"].cache_read, Some(0.1));
    }

    #[test]
    fn bad_prices_name_the_model_and_key() {
        let err = parse(Path::new("c.toml"), "[pricing.\"gpt-4o\"]\ninput = -1\n").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("c.toml:2: `pricing.\"gpt-4o\".input` must be a non-negative number"),
            "{text}"
        );
    }

    #[test]
    fn unknown_price_keys_are_warnings() {
        let v = parse(Path::new("c.toml"), "[pricing.m]\ncache_reads = 1\n").unwrap();
        assert_eq!(v.warnings.len(), 1);
        assert!(
            v.warnings[0].to_string().contains("cache_read`"),
            "{}",
            v.warnings[0]
        );
    }
}
