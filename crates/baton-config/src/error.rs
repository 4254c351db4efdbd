//! What can go wrong reading the configuration, and the warnings that do not stop a command.

use std::fmt;
use std::path::PathBuf;

/// A configuration that cannot be used. Every variant names where the bad value is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read the configuration: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}:{line}:{column}: invalid TOML: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}:{line}: `{key}` must be {expected}, found {found}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        key: String,
        expected: String,
        found: String,
    },
    #[error("{flag} {key}: {message}")]
    Flag {
        flag: String,
        key: String,
        message: String,
    },
    #[error("environment variable {var} (for `{key}`) must be {expected}, found {found:?}")]
    Env {
        var: String,
        key: String,
        expected: String,
        found: String,
    },
}

/// Something in the file that was ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub line: usize,
    /// The unknown key's dotted path, or the unknown table's name.
    pub key: String,
    pub is_section: bool,
    /// The nearest known key (or table).
    pub suggestion: Option<String>,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, key) = if self.is_section {
            ("table", format!("[{}]", self.key))
        } else {
            ("key", format!("`{}`", self.key))
        };
        write!(
            f,
            "{}:{}: unknown {what} {key}, ignored",
            self.path.display(),
            self.line
        )?;
        match (&self.suggestion, self.is_section) {
            (Some(s), true) => write!(f, " (nearest known table: [{s}])"),
            (Some(s), false) => write!(f, " (nearest known key: `{s}`)"),
            (None, _) => Ok(()),
        }
    }
}
