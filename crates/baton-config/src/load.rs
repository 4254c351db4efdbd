//! Finding and loading `config.toml`.

use crate::config::Config;
use crate::error::{ConfigError, Warning};
use crate::file;
use std::path::{Path, PathBuf};

/// `$BATON_HOME`, else `~/.baton`; `None` when neither `BATON_HOME` nor `HOME` is set.
pub fn baton_home() -> Option<PathBuf> {
    std::env::var_os("BATON_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".baton")))
}

/// `<baton home>/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    baton_home().map(|h| h.join("config.toml"))
}

/// A loaded configuration and what was ignored in it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Warning>,
}

/// Reads `path` (a missing file is the defaults) and applies the environment from `env`.
pub fn load(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigError> {
    let mut config = Config::defaults(path.to_path_buf());
    let warnings = match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| ConfigError::Io {
                path: path.to_path_buf(),
                message: format!(
                    "not UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            })?;
            config.apply_file(file::parse(path, &text)?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(ConfigError::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    config.apply_env(env)?;
    Ok(Loaded { config, warnings })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load(&dir.path().join("config.toml"), &|_| None).unwrap();
        assert!(!loaded.config.file_exists);
        assert!(loaded.warnings.is_empty());
    }

    #[test]
    fn a_directory_in_place_of_the_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = load(dir.path(), &|_| None).unwrap_err();
        assert!(err.to_string().contains(&dir.path().display().to_string()));
    }
}
