//! [`Config`]: every setting with its default, the value each layer gave it, and the
//! effective value with where it came from.

use crate::error::{ConfigError, Warning};
use crate::file::FileValues;
use crate::pricing::PriceOverride;
use crate::schema::{self, KEYS};
use crate::source::{Setting, Source};
use crate::suggest;
use crate::value::Value;
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Built-in defaults (the reference design's, as `baton-core`'s `CompressorConfig` has them).
pub mod defaults {
    pub const PROVIDER: &str = "openai";
    pub const ENABLED: bool = true;
    pub const THRESHOLD: f64 = 0.50;
    pub const TARGET_RATIO: f64 = 0.20;
    /// `baton-core`'s `DEFAULT_PROTECT_LAST_N`. The reference design says 20 but caps it at 8
    /// as a message floor; ours is uncapped (the last N stay verbatim), so 8 keeps its behaviour.
    pub const PROTECT_LAST_N: u64 = 8;
    pub const MAX_ATTEMPTS: u64 = 3;
    /// `auto`: summaries are written by the main model's provider.
    pub const AUXILIARY_PROVIDER: &str = "auto";
    pub const ENGINE: &str = "compressor";
    pub const CACHE_TTL: &str = "5m";
    /// `baton-memory`'s limits (2,200 / 1,375 characters).
    pub const MEMORY_CHAR_LIMIT: u64 = 2_200;
    pub const USER_CHAR_LIMIT: u64 = 1_375;
    /// Compact at the threshold only; `cost` also compacts earlier when cheaper.
    pub const POLICY: &str = "threshold";
    pub const COST_HORIZON_TURNS: u64 = 10;
    /// Model calls one agent turn may make.
    pub const MAX_ITERATIONS: u64 = 90;
    pub const ALLOW_OUTSIDE_WORKDIR: bool = false;
    /// Seconds a `terminal` command may run when the model gives no timeout.
    pub const COMMAND_TIMEOUT: u64 = 180;
}

/// Environment variables that set a key. `OPENAI_BASE_URL` counts only while the provider
/// speaks OpenAI's API; the other two are the reference design's early overrides.
pub const ENV_KEYS: &[(&str, &str)] = &[
    ("OPENAI_BASE_URL", "model.base_url"),
    ("CONTEXT_COMPRESSION_THRESHOLD", "compression.threshold"),
    ("CONTEXT_COMPRESSION_ENABLED", "compression.enabled"),
];

/// Providers whose base URL `OPENAI_BASE_URL` sets.
const OPENAI_FAMILY: [&str; 2] = ["openai", "responses"];

/// `[model]`
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    /// The model requests go to.
    pub default: Setting<String>,
    pub provider: Setting<String>,
    pub base_url: Setting<String>,
    /// The window in tokens; unset means "ask the server, else the command's default".
    pub context_length: Setting<u64>,
}

/// `[compression]`
#[derive(Debug, Clone, PartialEq)]
pub struct CompressionSettings {
    pub enabled: Setting<bool>,
    pub threshold: Setting<f64>,
    pub target_ratio: Setting<f64>,
    pub protect_last_n: Setting<u64>,
    pub max_attempts: Setting<u64>,
    pub policy: Setting<String>,
    pub cost_horizon_turns: Setting<u64>,
}

/// `[agent]` and `[tools]`: the agent runtime's limits.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    pub max_iterations: Setting<u64>,
    pub allow_outside_workdir: Setting<bool>,
    pub command_timeout: Setting<u64>,
    pub allow_destructive: Setting<String>,
}

/// `[auxiliary.compression]`: the model that writes summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct AuxiliarySettings {
    pub provider: Setting<String>,
    pub model: Setting<String>,
    pub base_url: Setting<String>,
}

/// The effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file this was read from (it may not exist).
    pub path: PathBuf,
    pub file_exists: bool,
    pub model: ModelSettings,
    pub compression: CompressionSettings,
    pub auxiliary_compression: AuxiliarySettings,
    /// `[agent]` and `[tools]`.
    pub agent: AgentSettings,
    /// `[context] engine`
    pub engine: Setting<String>,
    /// `[prompt_caching] cache_ttl`
    pub cache_ttl: Setting<String>,
    /// `[memory] memory_char_limit`
    pub memory_char_limit: Setting<u64>,
    /// `[memory] user_char_limit`
    pub user_char_limit: Setting<u64>,
    /// `[store] url`: the session store (a SQLite path or a `postgres://` URL); unset means
    /// `$BATON_HOME/state.db`.
    pub store_url: Setting<String>,
    /// `[pricing."<model>"]`, by model name.
    pub pricing: BTreeMap<String, PriceOverride>,
}

/// A setting of any kind, to set it by its dotted key.
enum Slot<'a> {
    Bool(&'a mut Setting<bool>),
    Float(&'a mut Setting<f64>),
    Count(&'a mut Setting<u64>),
    Text(&'a mut Setting<String>),
}

impl Config {
    /// Built-in defaults only.
    pub fn defaults(path: PathBuf) -> Config {
        use defaults as d;
        Config {
            path,
            file_exists: false,
            model: ModelSettings {
                default: Setting::unset(),
                provider: Setting::with_default(d::PROVIDER.into()),
                base_url: Setting::unset(),
                context_length: Setting::unset(),
            },
            compression: CompressionSettings {
                enabled: Setting::with_default(d::ENABLED),
                threshold: Setting::with_default(d::THRESHOLD),
                target_ratio: Setting::with_default(d::TARGET_RATIO),
                protect_last_n: Setting::with_default(d::PROTECT_LAST_N),
                max_attempts: Setting::with_default(d::MAX_ATTEMPTS),
                policy: Setting::with_default(d::POLICY.into()),
                cost_horizon_turns: Setting::with_default(d::COST_HORIZON_TURNS),
            },
            agent: AgentSettings {
                max_iterations: Setting::with_default(d::MAX_ITERATIONS),
                allow_outside_workdir: Setting::with_default(d::ALLOW_OUTSIDE_WORKDIR),
                command_timeout: Setting::with_default(d::COMMAND_TIMEOUT),
                allow_destructive: Setting::unset(),
            },
            auxiliary_compression: AuxiliarySettings {
                provider: Setting::with_default(d::AUXILIARY_PROVIDER.into()),
                model: Setting::unset(),
                base_url: Setting::unset(),
            },
            engine: Setting::with_default(d::ENGINE.into()),
            cache_ttl: Setting::with_default(d::CACHE_TTL.into()),
            memory_char_limit: Setting::with_default(d::MEMORY_CHAR_LIMIT),
            user_char_limit: Setting::with_default(d::USER_CHAR_LIMIT),
            store_url: Setting::unset(),
            pricing: BTreeMap::new(),
        }
    }

    fn slot(&mut self, key: &str) -> Option<Slot<'_>> {
        Some(match key {
            "model.default" => Slot::Text(&mut self.model.default),
            "model.provider" => Slot::Text(&mut self.model.provider),
            "model.base_url" => Slot::Text(&mut self.model.base_url),
            "model.context_length" => Slot::Count(&mut self.model.context_length),
            "compression.enabled" => Slot::Bool(&mut self.compression.enabled),
            "compression.threshold" => Slot::Float(&mut self.compression.threshold),
            "compression.target_ratio" => Slot::Float(&mut self.compression.target_ratio),
            "compression.protect_last_n" => Slot::Count(&mut self.compression.protect_last_n),
            "compression.max_attempts" => Slot::Count(&mut self.compression.max_attempts),
            "compression.policy" => Slot::Text(&mut self.compression.policy),
            "compression.cost_horizon_turns" => {
                Slot::Count(&mut self.compression.cost_horizon_turns)
            }
            "agent.max_iterations" => Slot::Count(&mut self.agent.max_iterations),
            "tools.allow_outside_workdir" => Slot::Bool(&mut self.agent.allow_outside_workdir),
            "tools.command_timeout" => Slot::Count(&mut self.agent.command_timeout),
            "tools.allow_destructive" => Slot::Text(&mut self.agent.allow_destructive),
            "auxiliary.compression.provider" => {
                Slot::Text(&mut self.auxiliary_compression.provider)
            }
            "auxiliary.compression.model" => Slot::Text(&mut self.auxiliary_compression.model),
            "auxiliary.compression.base_url" => {
                Slot::Text(&mut self.auxiliary_compression.base_url)
            }
            "context.engine" => Slot::Text(&mut self.engine),
            "prompt_caching.cache_ttl" => Slot::Text(&mut self.cache_ttl),
            "memory.memory_char_limit" => Slot::Count(&mut self.memory_char_limit),
            "memory.user_char_limit" => Slot::Count(&mut self.user_char_limit),
            "store.url" => Slot::Text(&mut self.store_url),
            _ => return None,
        })
    }

    /// Records an already checked `value` for `key`. Returns false for an unknown key.
    fn store(&mut self, key: &str, value: Value, source: Source) -> bool {
        match (self.slot(key), value) {
            (Some(Slot::Bool(s)), Value::Bool(b)) => s.set(b, source),
            (Some(Slot::Float(s)), Value::Float(f)) => s.set(f, source),
            (Some(Slot::Count(s)), Value::Integer(i)) => s.set(i.max(0) as u64, source),
            (Some(Slot::Text(s)), Value::Text(t)) => s.set(t, source),
            _ => return false,
        }
        true
    }

    /// Applies what the file gave; returns its warnings.
    pub fn apply_file(&mut self, file: FileValues) -> Vec<Warning> {
        self.file_exists = true;
        for v in file.values {
            self.store(&v.key, v.value, Source::File { line: v.line });
        }
        self.pricing = file.pricing;
        file.warnings
    }

    /// Applies the environment variables of [`ENV_KEYS`] that `lookup` finds (empty values
    /// are ignored).
    pub fn apply_env(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        for (var, key) in ENV_KEYS {
            let Some(text) = lookup(var).filter(|t| !t.trim().is_empty()) else {
                continue;
            };
            let Some(spec) = schema::find(key) else {
                continue;
            };
            let raw = match (spec.kind, text.trim()) {
                (schema::Kind::Text, t) => Value::Text(t.to_string()),
                (schema::Kind::Bool, "1" | "yes" | "on") => Value::Bool(true),
                (schema::Kind::Bool, "0" | "no" | "off") => Value::Bool(false),
                (_, t) => Value::from_flag_text(t),
            };
            let value = spec.kind.check(&raw).ok_or_else(|| ConfigError::Env {
                var: var.to_string(),
                key: key.to_string(),
                expected: spec.kind.expected(),
                found: text.clone(),
            })?;
            self.store(
                key,
                value,
                Source::Env {
                    var: var.to_string(),
                },
            );
        }
        Ok(())
    }

    /// Sets `key` from a command-line flag, checked like a file value.
    pub fn set_flag(&mut self, key: &str, value: Value, flag: &str) -> Result<(), ConfigError> {
        let bad = |message: String| ConfigError::Flag {
            flag: flag.to_string(),
            key: key.to_string(),
            message,
        };
        let spec = schema::find(key).ok_or_else(|| {
            let hint = suggest::nearest_key(key)
                .map(|s| format!(" (nearest known key: `{s}`)"))
                .unwrap_or_default();
            bad(format!("unknown key{hint}"))
        })?;
        let checked = spec.kind.check(&value).ok_or_else(|| {
            bad(format!(
                "must be {}, found {} {value}",
                spec.kind.expected(),
                value.type_name()
            ))
        })?;
        self.store(
            key,
            checked,
            Source::Flag {
                flag: flag.to_string(),
            },
        );
        Ok(())
    }

    /// `--set KEY=VALUE`.
    pub fn set_override(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(ConfigError::Flag {
                flag: "--set".into(),
                key: assignment.to_string(),
                message: "expected KEY=VALUE, e.g. compression.threshold=0.6".into(),
            });
        };
        self.set_flag(key.trim(), Value::from_flag_text(value), "--set")
    }

    /// The effective provider of `[model]`.
    pub fn provider(&self) -> (String, Source) {
        self.model
            .provider
            .get()
            .map_or((defaults::PROVIDER.into(), Source::Default), |(v, s)| {
                (v.clone(), s)
            })
    }

    /// The effective `[model] base_url`: `OPENAI_BASE_URL` counts only for providers that
    /// speak OpenAI's API. Empty strings are unset.
    pub fn base_url(&self) -> Option<(String, Source)> {
        let openai =
            OPENAI_FAMILY.contains(&self.provider().0.trim().to_ascii_lowercase().as_str());
        self.model
            .base_url
            .get_where(|s| openai || s.kind() != "env")
            .filter(|(v, _)| !v.trim().is_empty())
            .map(|(v, s)| (v.trim().to_string(), s))
    }

    /// A text setting's effective value, `None` when unset or empty.
    pub fn text(setting: &Setting<String>) -> Option<(String, Source)> {
        setting
            .get()
            .filter(|(v, _)| !v.trim().is_empty())
            .map(|(v, s)| (v.trim().to_string(), s))
    }

    /// The effective value of `key` and its source, as `config show` prints it.
    pub fn lookup(&self, key: &str) -> Option<(Option<Value>, Source)> {
        let text = |s: &Setting<String>| {
            Some(match Config::text(s) {
                Some((v, src)) => (Some(Value::Text(v)), src),
                None => (None, s.source()),
            })
        };
        let count = |s: &Setting<u64>| {
            Some(match s.get() {
                Some((v, src)) => (Some(Value::Integer(*v as i64)), src),
                None => (None, Source::Default),
            })
        };
        let float = |s: &Setting<f64>| {
            s.get()
                .map(|(v, src)| (Some(Value::Float(*v)), src))
                .or(Some((None, Source::Default)))
        };
        match key {
            "model.default" => text(&self.model.default),
            "model.provider" => {
                let (p, s) = self.provider();
                Some((Some(Value::Text(p)), s))
            }
            "model.base_url" => Some(match self.base_url() {
                Some((v, s)) => (Some(Value::Text(v)), s),
                None => (None, Source::Default),
            }),
            "model.context_length" => count(&self.model.context_length),
            "compression.enabled" => self
                .compression
                .enabled
                .get()
                .map(|(v, s)| (Some(Value::Bool(*v)), s)),
            "compression.threshold" => float(&self.compression.threshold),
            "compression.target_ratio" => float(&self.compression.target_ratio),
            "compression.protect_last_n" => count(&self.compression.protect_last_n),
            "compression.max_attempts" => count(&self.compression.max_attempts),
            "compression.policy" => text(&self.compression.policy),
            "compression.cost_horizon_turns" => count(&self.compression.cost_horizon_turns),
            "agent.max_iterations" => count(&self.agent.max_iterations),
            "tools.allow_outside_workdir" => self
                .agent
                .allow_outside_workdir
                .get()
                .map(|(v, s)| (Some(Value::Bool(*v)), s)),
            "tools.command_timeout" => count(&self.agent.command_timeout),
            "tools.allow_destructive" => text(&self.agent.allow_destructive),
            "auxiliary.compression.provider" => text(&self.auxiliary_compression.provider),
            "auxiliary.compression.model" => text(&self.auxiliary_compression.model),
            "auxiliary.compression.base_url" => text(&self.auxiliary_compression.base_url),
            "context.engine" => text(&self.engine),
            "prompt_caching.cache_ttl" => text(&self.cache_ttl),
            "memory.memory_char_limit" => count(&self.memory_char_limit),
            "memory.user_char_limit" => count(&self.user_char_limit),
            "store.url" => text(&self.store_url),
            _ => None,
        }
    }

    /// Every key with its effective value and source, in [`KEYS`] order.
    pub fn entries(&self) -> Vec<(String, Option<Value>, Source)> {
        KEYS.iter()
            .filter_map(|k| {
                let path = k.path();
                self.lookup(&path).map(|(v, s)| (path, v, s))
            })
            .collect()
    }

    /// `config show --json`: `{"path", "exists", "settings": {section: {key: {value, source…}}},
    /// "pricing": {model: {…}}}`.
    pub fn to_json(&self) -> Json {
        let mut settings = Map::new();
        for spec in KEYS {
            let Some((value, source)) = self.lookup(&spec.path()) else {
                continue;
            };
            let mut entry = source.to_json();
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("value".into(), value.map_or(Json::Null, |v| v.to_json()));
            }
            let section = settings
                .entry(spec.section.to_string())
                .or_insert_with(|| Json::Object(Map::new()));
            if let Some(obj) = section.as_object_mut() {
                obj.insert(spec.key.to_string(), entry);
            }
        }
        let pricing: Map<String, Json> = self
            .pricing
            .iter()
            .map(|(m, p)| (m.clone(), p.to_json()))
            .collect();
        json!({
            "path": self.path.display().to_string(),
            "exists": self.file_exists,
            "settings": settings,
            "pricing": pricing,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::file::parse;
    use std::path::Path;

    fn config(text: &str) -> Config {
        let mut c = Config::defaults("c.toml".into());
        c.apply_file(parse(Path::new("c.toml"), text).unwrap());
        c
    }

    #[test]
    fn file_values_override_defaults_with_their_line() {
        let c = config("[compression]\nthreshold = 0.7\n");
        assert_eq!(c.compression.threshold.value(), Some(0.7));
        assert_eq!(c.compression.threshold.source(), Source::File { line: 2 });
        assert!(c.compression.target_ratio.source().is_default());
    }

    #[test]
    fn openai_base_url_applies_only_to_openai_providers() {
        let env = |v: &str| (v == "OPENAI_BASE_URL").then(|| "http://env/v1".to_string());
        let mut c = config("[model]\nbase_url = \"http://file/v1\"\n");
        c.apply_env(&env).unwrap();
        assert_eq!(c.base_url().unwrap().0, "http://env/v1");
        c.set_flag("model.provider", Value::Text("ollama".into()), "--provider")
            .unwrap();
        let (url, source) = c.base_url().unwrap();
        assert_eq!(url, "http://file/v1");
        assert_eq!(source, Source::File { line: 2 });
    }

    #[test]
    fn bad_environment_values_name_the_variable() {
        let env = |v: &str| (v == "CONTEXT_COMPRESSION_THRESHOLD").then(|| "lots".to_string());
        let err = Config::defaults("c".into()).apply_env(&env).unwrap_err();
        assert!(
            err.to_string()
                .contains("CONTEXT_COMPRESSION_THRESHOLD (for `compression.threshold`)"),
            "{err}"
        );
    }

    #[test]
    fn set_overrides_are_checked_and_unknown_keys_suggested() {
        let mut c = Config::defaults("c".into());
        c.set_override("compression.threshold=0.9").unwrap();
        assert_eq!(c.compression.threshold.value(), Some(0.9));
        let err = c.set_override("compression.treshold=0.9").unwrap_err();
        assert!(err.to_string().contains("`compression.threshold`"), "{err}");
        let err = c.set_override("compression.threshold=2").unwrap_err();
        assert!(err.to_string().contains("at most 1"), "{err}");
    }

    #[test]
    fn every_key_is_listed_with_a_source() {
        let c = Config::defaults("c".into());
        assert_eq!(c.entries().len(), KEYS.len());
        let j = c.to_json();
        assert_eq!(j["settings"]["compression"]["threshold"]["value"], 0.5);
        assert_eq!(
            j["settings"]["compression"]["threshold"]["source"],
            "default"
        );
        assert_eq!(
            j["settings"]["model"]["context_length"]["value"],
            Json::Null
        );
    }
}
