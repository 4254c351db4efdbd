//! `config.toml`: Baton's settings, with the reference design's section and key names
//! (`[model]`, `[compression]`, `[auxiliary.compression]`, `[context]`, `[prompt_caching]`,
//! `[memory]`) plus `[pricing."<model>"]` price overrides.
//!
//! Every value remembers where it came from (default, file line, environment variable, flag),
//! so `baton config show` can say why a setting is what it is, and errors can say which file,
//! line and key is wrong. Precedence: flags > environment > file > defaults. Unknown keys are
//! warnings naming the nearest known key, never silently ignored and never fatal (a newer
//! config must not break an older binary).
//!
//! This crate sits below every other Baton crate and depends on none of them; callers check
//! names against their own registries (engines, providers).

pub mod config;
pub mod error;
pub mod file;
pub mod load;
pub mod pricing;
pub mod schema;
pub mod source;
pub mod suggest;
pub mod value;

pub use config::{AgentSettings, AuxiliarySettings, CompressionSettings, Config, ModelSettings};
pub use error::{ConfigError, Warning};
pub use load::{Loaded, baton_home, config_path, load};
pub use pricing::PriceOverride;
pub use source::{Setting, Source};
pub use value::Value;
