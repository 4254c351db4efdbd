//! Where a setting's value came from, and a setting that remembers every layer it was given.
//!
//! Each layer is kept rather than overwritten so the effective value can be chosen at read
//! time: `OPENAI_BASE_URL` only applies while the effective provider speaks OpenAI's API, which
//! a later flag may change.

use serde_json::{Value as Json, json};
use std::fmt;

/// One layer of configuration, lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Baton's built-in value.
    Default,
    /// `config.toml`, at this line.
    File { line: usize },
    /// An environment variable.
    Env { var: String },
    /// A command-line flag (`--threshold`, `--set compression.threshold=…`).
    Flag { flag: String },
}

impl Source {
    /// Precedence: flags > environment > file > defaults.
    pub fn rank(&self) -> u8 {
        match self {
            Source::Default => 0,
            Source::File { .. } => 1,
            Source::Env { .. } => 2,
            Source::Flag { .. } => 3,
        }
    }

    /// `default`, `file`, `env` or `flag`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File { .. } => "file",
            Source::Env { .. } => "env",
            Source::Flag { .. } => "flag",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Source::Default
    }

    /// The JSON form: `{"source": "file", "line": 3}` and so on.
    pub fn to_json(&self) -> Json {
        match self {
            Source::Default => json!({"source": "default"}),
            Source::File { line } => json!({"source": "file", "line": line}),
            Source::Env { var } => json!({"source": "env", "variable": var}),
            Source::Flag { flag } => json!({"source": "flag", "flag": flag}),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { line } => write!(f, "file, line {line}"),
            Source::Env { var } => write!(f, "env {var}"),
            Source::Flag { flag } => write!(f, "flag {flag}"),
        }
    }
}

/// A setting: its built-in default (if it has one) and every value given for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    default: Option<T>,
    given: Vec<(T, Source)>,
}

impl<T> Setting<T> {
    pub fn with_default(value: T) -> Self {
        Setting {
            default: Some(value),
            given: Vec::new(),
        }
    }

    /// A setting that is unset unless configured.
    pub fn unset() -> Self {
        Setting {
            default: None,
            given: Vec::new(),
        }
    }

    /// Records `value` from `source`; within one layer the last value wins.
    pub fn set(&mut self, value: T, source: Source) {
        self.given.push((value, source));
    }

    /// The effective value and where it came from (`None` when unset and without default).
    pub fn get(&self) -> Option<(&T, Source)> {
        self.get_where(|_| true)
    }

    /// Like [`Setting::get`], considering only the layers `keep` accepts (the default always
    /// counts).
    pub fn get_where(&self, keep: impl Fn(&Source) -> bool) -> Option<(&T, Source)> {
        let mut best: Option<&(T, Source)> = None;
        for entry in self.given.iter().filter(|(_, s)| keep(s)) {
            if best.is_none_or(|(_, b)| entry.1.rank() >= b.rank()) {
                best = Some(entry);
            }
        }
        match best {
            Some((v, s)) => Some((v, s.clone())),
            None => self.default.as_ref().map(|d| (d, Source::Default)),
        }
    }

    /// Where the effective value came from (`Default` when unset).
    pub fn source(&self) -> Source {
        self.get().map_or(Source::Default, |(_, s)| s)
    }

    /// The value a given layer holds, if any (the last one given in that layer).
    pub fn layer(&self, kind: &str) -> Option<&T> {
        self.given
            .iter()
            .rev()
            .find(|(_, s)| s.kind() == kind)
            .map(|(v, _)| v)
    }
}

impl<T: Clone> Setting<T> {
    /// The effective value, if any.
    pub fn value(&self) -> Option<T> {
        self.get().map(|(v, _)| v.clone())
    }
}

impl<T: Clone + Default> Setting<T> {
    /// The effective value, or `T::default()` for a setting without default.
    pub fn value_or_default(&self) -> T {
        self.value().unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_env_beat_file_beat_default_whatever_the_order_given() {
        let mut s = Setting::with_default(1);
        s.set(4, Source::Flag { flag: "--x".into() });
        s.set(2, Source::File { line: 3 });
        s.set(3, Source::Env { var: "X".into() });
        assert_eq!(s.value(), Some(4));
        let no_flag = s.get_where(|s| s.kind() != "flag").unwrap();
        assert_eq!(*no_flag.0, 3);
        assert_eq!(no_flag.1.kind(), "env");
    }

    #[test]
    fn unset_settings_report_the_default_source() {
        let s: Setting<String> = Setting::unset();
        assert!(s.get().is_none());
        assert!(s.source().is_default());
    }
}
