//! Reading `config.toml`: syntax, types and ranges checked key by key with the line of each,
//! unknown keys collected as warnings with the nearest known key.
//!
//! The document is walked as `toml`'s spanned tree rather than deserialized into structs:
//! serde's type errors do not say which key they are about, and unknown keys must be reported,
//! not rejected.

use crate::error::{ConfigError, Warning};
use crate::pricing::{self, PriceOverride};
use crate::schema::{self, PRICING_SECTION};
use crate::suggest;
use crate::value::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One key read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileValue {
    /// Dotted path: `compression.threshold`.
    pub key: String,
    pub value: Value,
    pub line: usize,
}

/// Everything read from one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileValues {
    pub values: Vec<FileValue>,
    pub pricing: BTreeMap<String, PriceOverride>,
    pub warnings: Vec<Warning>,
}

/// Parses `text` (the contents of `path`).
pub fn parse(path: &Path, text: &str) -> Result<FileValues, ConfigError> {
    let doc = DeTable::parse(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_and_column(text, s.start));
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    let mut reader = Reader {
        path: path.to_path_buf(),
        text,
        out: FileValues::default(),
    };
    reader.table(doc.get_ref(), "")?;
    Ok(reader.out)
}

pub(crate) struct Reader<'t> {
    pub(crate) path: PathBuf,
    pub(crate) text: &'t str,
    pub(crate) out: FileValues,
}

impl Reader<'_> {
    fn table(&mut self, table: &DeTable<'_>, prefix: &str) -> Result<(), ConfigError> {
        for (key, value) in table.iter() {
            let path = if prefix.is_empty() {
                key.get_ref().to_string()
            } else {
                format!("{prefix}.{}", key.get_ref())
            };
            let line = self.line(key.span().start);
            if let Some(spec) = schema::find(&path) {
                let found = self.scalar(&path, value)?;
                let value = spec
                    .kind
                    .check(&found)
                    .ok_or_else(|| self.invalid(&path, line, &spec.kind.expected(), &found))?;
                self.out.values.push(FileValue {
                    key: path,
                    value,
                    line,
                });
            } else if path == PRICING_SECTION {
                let models = self.expect_table(&path, line, value, "a table of models")?;
                pricing::read(self, models)?;
            } else if schema::is_section(&path) {
                let inner = self.expect_table(&path, line, value, "a table")?;
                self.table(inner, &path)?;
            } else {
                let is_section = prefix.is_empty();
                let suggestion = if is_section {
                    suggest::nearest_section(&path)
                } else {
                    suggest::nearest_key(&path)
                };
                self.warn(path, line, is_section, suggestion);
            }
        }
        Ok(())
    }

    pub(crate) fn warn(
        &mut self,
        key: String,
        line: usize,
        is_section: bool,
        suggestion: Option<String>,
    ) {
        self.out.warnings.push(Warning {
            path: self.path.clone(),
            line,
            key,
            is_section,
            suggestion,
        });
    }

    pub(crate) fn expect_table<'a, 'i>(
        &self,
        path: &str,
        line: usize,
        value: &'a Spanned<DeValue<'i>>,
        expected: &str,
    ) -> Result<&'a DeTable<'i>, ConfigError> {
        value
            .get_ref()
            .as_table()
            .ok_or_else(|| ConfigError::Invalid {
                path: self.path.clone(),
                line,
                key: path.to_string(),
                expected: format!("{expected} ([{path}])"),
                found: describe(value.get_ref()),
            })
    }

    /// The scalar `value`, or an error naming `key` for tables, arrays and dates.
    pub(crate) fn scalar(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<Value, ConfigError> {
        let line = self.line(value.span().start);
        let bad = |expected: &str| ConfigError::Invalid {
            path: self.path.clone(),
            line,
            key: key.to_string(),
            expected: expected.to_string(),
            found: describe(value.get_ref()),
        };
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Value::Bool(*b)),
            DeValue::String(s) => Ok(Value::Text(s.to_string())),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(Value::Integer)
                .map_err(|_| bad("an integer that fits in 64 bits")),
            DeValue::Float(f) => f
                .as_str()
                .parse()
                .map(Value::Float)
                .map_err(|_| bad("a finite number")),
            DeValue::Datetime(_) | DeValue::Array(_) | DeValue::Table(_) => {
                let expected = schema::find(key)
                    .map_or_else(|| "a single value".to_string(), |spec| spec.kind.expected());
                Err(bad(&expected))
            }
        }
    }

    pub(crate) fn invalid(
        &self,
        key: &str,
        line: usize,
        expected: &str,
        found: &Value,
    ) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.clone(),
            line,
            key: key.to_string(),
            expected: expected.to_string(),
            found: format!("{} {found}", found.type_name()),
        }
    }

    pub(crate) fn line(&self, offset: usize) -> usize {
        line_and_column(self.text, offset).0
    }
}

/// A value's type (and the value, for scalars) for "found …".
fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("string {}", Value::Text(s.to_string())),
        DeValue::Integer(i) => format!("integer {i}"),
        DeValue::Float(f) => format!("float {f}"),
        DeValue::Boolean(b) => format!("boolean {b}"),
        DeValue::Datetime(d) => format!("datetime {d}"),
        DeValue::Array(_) => "an array".into(),
        DeValue::Table(_) => "a table".into(),
    }
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, column)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<FileValues, ConfigError> {
        parse(Path::new("config.toml"), text)
    }

    #[test]
    fn known_keys_are_read_with_their_lines() {
        let v = read(
            "# comment\n[compression]\nthreshold = 0.6\nprotect_last_n = 12\n\n[auxiliary.compression]\nmodel = \"m\"\n",
        )
        .unwrap();
        let mut keys: Vec<(&str, usize)> =
            v.values.iter().map(|v| (v.key.as_str(), v.line)).collect();
        keys.sort();
        assert_eq!(
            keys,
            vec![
                ("auxiliary.compression.model", 7),
                ("compression.protect_last_n", 4),
                ("compression.threshold", 3),
            ]
        );
        assert!(v.warnings.is_empty());
    }

    #[test]
    fn a_wrong_type_names_the_line_and_key() {
        let err = read("[compression]\nenabled = true\nthreshold = \"high\"\n").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("config.toml:3: `compression.threshold` must be a number"),
            "{text}"
        );
        assert!(text.contains("found string \"high\""), "{text}");
    }

    #[test]
    fn out_of_range_values_are_errors() {
        let err = read("[compression]\nmax_attempts = 11\n").unwrap_err();
        assert!(err.to_string().contains("from 1 to 10"), "{err}");
        let err = read("[prompt_caching]\ncache_ttl = \"2h\"\n").unwrap_err();
        assert!(err.to_string().contains("\"5m\", \"1h\""), "{err}");
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = read("[model]\ndefault = \"gpt\n").unwrap_err();
        match err {
            ConfigError::Syntax { line, .. } => assert_eq!(line, 2),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_section_given_as_a_value_is_a_type_error() {
        let err = read("model = \"gpt-4o\"\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("`model` must be a table ([model])"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_and_tables_are_warnings_with_the_nearest_known_one() {
        let v = read("[compression]\ntreshold = 0.6\n[modle]\ndefault = \"x\"\n").unwrap();
        let shown: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            shown.iter().any(
                |w| w.contains("config.toml:2: unknown key `compression.treshold`")
                    && w.contains("`compression.threshold`")
            ),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|w| w.contains("unknown table [modle]") && w.contains("[model]")),
            "{shown:?}"
        );
    }
}
