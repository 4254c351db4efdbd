//! The configuration every command runs with: `config.toml`, the environment, `--set`
//! overrides and the command's own flags, in that order of precedence (lowest first).
//!
//! Commands keep their flags' built-in defaults for `--help`; whether a flag was actually typed
//! is read from clap's value source, so a default never overrides the file.

use crate::commands::Failure;
use crate::commands::summarizer_choice::LlmFlags;
use baton_config::{Config, Source, Value};
use clap::parser::ValueSource;
use clap::{ArgMatches, Command};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Shown as the file's path when there is no home to look in.
const NO_HOME: &str = "$BATON_HOME/config.toml (neither BATON_HOME nor HOME is set)";

/// The loaded configuration plus which flags the user typed.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config: Config,
    given: BTreeSet<String>,
}

/// A command flag that sets a configuration key when it is typed.
pub struct FlagValue<'a> {
    /// clap's argument id (the field name).
    pub id: &'a str,
    /// As the user writes it, for provenance: `--threshold`.
    pub flag: &'a str,
    /// The key it sets: `compression.threshold`.
    pub key: &'a str,
    pub value: Value,
}

impl Settings {
    /// Loads `$BATON_HOME/config.toml` (else `~/.baton/config.toml`), applies the environment
    /// and `--set` overrides, and prints the file's warnings to stderr.
    pub fn load(
        command: &Command,
        matches: &ArgMatches,
        overrides: &[String],
    ) -> Result<Settings, Failure> {
        let env = |var: &str| std::env::var(var).ok();
        let bad = |e: baton_config::ConfigError| Failure::BadInput(e.to_string());
        let mut config = match baton_config::config_path() {
            Some(path) => {
                let loaded = baton_config::load(&path, &env).map_err(bad)?;
                for warning in &loaded.warnings {
                    errln!("baton: warning: {warning}");
                }
                loaded.config
            }
            // Neither BATON_HOME nor HOME: no file to read (never one in the working folder).
            None => {
                let mut config = Config::defaults(PathBuf::from(NO_HOME));
                config.apply_env(&env).map_err(bad)?;
                config
            }
        };
        for assignment in overrides {
            config
                .set_override(assignment)
                .map_err(|e| Failure::BadInput(e.to_string()))?;
        }
        Ok(Settings {
            config,
            given: typed_flags(command, matches),
        })
    }

    /// Defaults only (tests, and `config path`, which must work with a broken file).
    pub fn defaults(command: &Command, matches: &ArgMatches) -> Settings {
        let path = baton_config::config_path().unwrap_or_else(|| PathBuf::from(NO_HOME));
        Settings {
            config: Config::defaults(path),
            given: typed_flags(command, matches),
        }
    }

    /// Whether the flag with clap id `id` was typed on the command line.
    pub fn given(&self, id: &str) -> bool {
        self.given.contains(id)
    }

    /// The configuration with the typed ones of `flags` applied.
    pub fn with_flags(&self, flags: Vec<FlagValue<'_>>) -> Result<Config, Failure> {
        let mut config = self.config.clone();
        for f in flags.into_iter().filter(|f| self.given(f.id)) {
            config
                .set_flag(f.key, f.value, f.flag)
                .map_err(|e| Failure::BadInput(e.to_string()))?;
        }
        Ok(config)
    }
}

impl Settings {
    /// The summarizer a command uses, and the `--llm-*` settings for it: typed flags first,
    /// then `[auxiliary.compression]` (whose `provider = "auto"` means the `[model]` provider
    /// and base URL). A configured auxiliary model makes `llm` the default summarizer.
    pub fn summarizer(&self, spec: &str, id: &str, llm: &LlmFlags) -> (String, LlmFlags) {
        let c = &self.config;
        let aux = &c.auxiliary_compression;
        let aux_model = Config::text(&aux.model).map(|(m, _)| m);
        let spec = if self.given(id) || aux_model.is_none() {
            spec.to_string()
        } else {
            "llm".to_string()
        };
        let aux_provider = Config::text(&aux.provider)
            .map(|(p, _)| p)
            .filter(|p| !p.eq_ignore_ascii_case("auto"));
        let (provider, base_url) = match aux_provider {
            Some(p) => (p, Config::text(&aux.base_url).map(|(u, _)| u)),
            None => (
                c.provider().0,
                Config::text(&aux.base_url)
                    .or_else(|| c.base_url())
                    .map(|(u, _)| u),
            ),
        };
        let effective = LlmFlags {
            llm_model: if self.given("llm_model") {
                llm.llm_model.clone()
            } else {
                aux_model.or_else(|| llm.llm_model.clone())
            },
            llm_base_url: if self.given("llm_base_url") {
                llm.llm_base_url.clone()
            } else {
                base_url.or_else(|| llm.llm_base_url.clone())
            },
            llm_provider: if self.given("llm_provider") {
                llm.llm_provider.clone()
            } else {
                provider
            },
            llm_api_key_env: llm.llm_api_key_env.clone(),
        };
        (spec, effective)
    }
}

/// Where a value came from, in words for reports and errors: `--threshold`,
/// `/home/u/.baton/config.toml line 3`, `environment variable OPENAI_BASE_URL`, `default`.
pub fn origin(config: &Config, source: &Source) -> String {
    match source {
        Source::Default => "default".into(),
        Source::File { line } => format!("{} line {line}", config.path.display()),
        Source::Env { var } => format!("environment variable {var}"),
        Source::Flag { flag } => flag.clone(),
    }
}

/// Ids of every argument typed on the command line, at every subcommand level. Each level is
/// asked only about the arguments it defines (clap rejects questions about others, and a global
/// typed after a subcommand is propagated up to the level that defines it).
fn typed_flags(command: &Command, matches: &ArgMatches) -> BTreeSet<String> {
    let mut typed = BTreeSet::new();
    let mut level = Some((command, matches));
    while let Some((cmd, m)) = level {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if m.value_source(id) == Some(ValueSource::CommandLine) {
                typed.insert(id.to_string());
            }
        }
        level = m
            .subcommand()
            .and_then(|(name, sub)| cmd.find_subcommand(name).map(|c| (c, sub)));
    }
    typed
}
