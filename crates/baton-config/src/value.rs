//! A configuration value once read from TOML, the environment or a flag.

use serde_json::{Value as Json, json};
use std::fmt;

/// The scalar kinds `config.toml` keys take.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Value {
    /// The TOML type name, for "expected …, found …" messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "boolean",
            Value::Integer(_) => "integer",
            Value::Float(_) => "float",
            Value::Text(_) => "string",
        }
    }

    pub fn to_json(&self) -> Json {
        match self {
            Value::Bool(b) => json!(b),
            Value::Integer(i) => json!(i),
            Value::Float(f) => json!(f),
            Value::Text(s) => json!(s),
        }
    }

    /// Reads a command-line value: a TOML literal (`0.6`, `true`, `"x"`), else the bare text.
    pub fn from_flag_text(text: &str) -> Value {
        let trimmed = text.trim();
        match toml::de::DeValue::parse(trimmed) {
            Ok(v) => match v.into_inner() {
                toml::de::DeValue::Boolean(b) => Value::Bool(b),
                toml::de::DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                    .map_or_else(|_| Value::Text(trimmed.to_string()), Value::Integer),
                toml::de::DeValue::Float(f) => f
                    .as_str()
                    .parse()
                    .map_or_else(|_| Value::Text(trimmed.to_string()), Value::Float),
                toml::de::DeValue::String(s) => Value::Text(s.into_owned()),
                _ => Value::Text(trimmed.to_string()),
            },
            Err(_) => Value::Text(trimmed.to_string()),
        }
    }
}

/// TOML literal syntax, as `config show` prints it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Float(x) if x.fract() == 0.0 && x.is_finite() => write!(f, "{x:.1}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => write!(f, "{}", json!(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_text_is_read_as_a_toml_literal_or_bare_text() {
        assert_eq!(Value::from_flag_text("0.6"), Value::Float(0.6));
        assert_eq!(Value::from_flag_text("12_000"), Value::Integer(12_000));
        assert_eq!(Value::from_flag_text("false"), Value::Bool(false));
        assert_eq!(
            Value::from_flag_text("\"compressor\""),
            Value::Text("compressor".into())
        );
        assert_eq!(
            Value::from_flag_text("http://127.0.0.1:8080/v1"),
            Value::Text("http://127.0.0.1:8080/v1".into())
        );
    }

    #[test]
    fn display_is_toml_syntax() {
        assert_eq!(Value::Float(1.0).to_string(), "1.0");
        assert_eq!(Value::Float(0.5).to_string(), "0.5");
        assert_eq!(Value::Text("a\"b".into()).to_string(), "\"a\\\"b\"");
    }
}
