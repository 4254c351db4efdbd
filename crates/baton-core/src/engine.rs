//! The `ContextEngine` contract between an agent host and whatever keeps its context in budget.
//!
//! The host reads token state, reports provider usage after each response, asks whether to
//! compress (cheaply before a request, exactly after one), and calls `compress`. Engines are
//! chosen by name (`[context] engine` in config) through [`EngineRegistry`]; `compressor` is
//! the default.

use crate::compress::{CompressionResult, Compressor, CompressorConfig};
use crate::message::Message;
use crate::summary::BoxFuture;
use crate::usage::CanonicalUsage;
use serde::Serialize;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Token counters the host displays and decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TokenState {
    pub last_prompt_tokens: u64,
    pub last_completion_tokens: u64,
    pub last_total_tokens: u64,
    pub threshold_tokens: u64,
    pub context_length: u64,
    pub compression_count: u32,
}

/// What `status()` reports: token state plus the engine's own view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineStatus {
    pub engine: String,
    #[serde(flatten)]
    pub tokens: TokenState,
    /// `last_prompt_tokens / context_length`, in percent, capped at 100.
    pub usage_percent: f64,
    /// Why automatic compaction is currently blocked, if it is.
    pub blocked: Option<String>,
}

/// One `compress` call.
#[derive(Debug, Clone)]
pub struct CompressRequest<'a> {
    /// The conversation: lent (`Cow::Borrowed`), the result's messages are copied from it;
    /// handed over (`Cow::Owned`), they are moved out of it and it is consumed. A host that
    /// replaces its conversation with the result hands it over (`baton compress` does): a
    /// compaction keeps most of a real session, and copying it was a tenth of the pass.
    pub messages: Cow<'a, [Message]>,
    /// The real prompt size, when the host has one (provider usage); estimated otherwise.
    pub current_tokens: Option<u64>,
    /// What the user asked to keep in full detail (`/compress <topic>`).
    pub focus_topic: Option<&'a str>,
    /// A manual compaction: compress even under the threshold, and never blocked by the guard.
    pub force: bool,
}

/// Errors an engine reports to its host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("unknown context engine `{name}`; known engines: {}", known.join(", "))]
    UnknownEngine { name: String, known: Vec<String> },
    #[error("invalid engine configuration: {0}")]
    Config(String),
}

/// The contract. Object-safe: hosts hold a `Box<dyn ContextEngine>`.
pub trait ContextEngine: Send {
    fn name(&self) -> &str;

    /// Current token state.
    fn tokens(&self) -> TokenState;

    /// Records the usage of a provider response (the real prompt size).
    fn update_from_response(&mut self, usage: &CanonicalUsage);

    /// Whether a prompt of `prompt_tokens` (or the last reported one) should be compressed now.
    fn should_compress(&self, prompt_tokens: Option<u64>) -> bool;

    /// Cheap check before a request, on an estimate of `messages` (+ tool schemas).
    fn should_compress_preflight(&mut self, messages: &[Message], tools: Option<&[Value]>) -> bool;

    /// Whether there is anything between the protected head and tail to compress.
    fn has_content_to_compress(&self, messages: &[Message]) -> bool;

    /// Compacts `request.messages` (never mutating them) and reports what happened.
    fn compress<'a>(&'a mut self, request: CompressRequest<'a>)
    -> BoxFuture<'a, CompressionResult>;

    fn on_session_start(&mut self, _session_id: &str) {}

    /// Only at real session boundaries (exit, reset, expiry), never per turn.
    fn on_session_end(&mut self, _session_id: &str) {
        self.on_session_reset();
    }

    /// Zeroes token state and compaction history.
    fn on_session_reset(&mut self);

    /// Tools the engine offers the model (none by default).
    fn tool_schemas(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Handles a call to one of [`ContextEngine::tool_schemas`]; the result is the tool message
    /// content.
    fn handle_tool_call(&mut self, name: &str, _arguments: &Value) -> Value {
        json!({ "error": format!("unknown context engine tool: {name}") })
    }

    fn status(&self) -> EngineStatus;

    /// The model changed: recompute thresholds for its window.
    fn update_model(&mut self, model: &str, context_length: u64);
}

type Factory = Box<dyn Fn(&CompressorConfig) -> Box<dyn ContextEngine> + Send + Sync>;

/// Resolves engine names to constructors.
pub struct EngineRegistry {
    factories: BTreeMap<String, Factory>,
}

/// The default engine's name.
pub const DEFAULT_ENGINE: &str = "compressor";

impl EngineRegistry {
    /// A registry with the built-in engines.
    pub fn with_builtin() -> Self {
        let mut r = EngineRegistry {
            factories: BTreeMap::new(),
        };
        r.register(DEFAULT_ENGINE, |config| {
            Box::new(Compressor::new(config.clone())) as Box<dyn ContextEngine>
        });
        r
    }

    /// Adds (or replaces) an engine.
    pub fn register(
        &mut self,
        name: &str,
        factory: impl Fn(&CompressorConfig) -> Box<dyn ContextEngine> + Send + Sync + 'static,
    ) {
        self.factories.insert(name.to_string(), Box::new(factory));
    }

    /// Known engine names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.factories.keys().cloned().collect()
    }

    /// Builds the engine called `name` (empty = the default).
    pub fn create(
        &self,
        name: &str,
        config: &CompressorConfig,
    ) -> Result<Box<dyn ContextEngine>, EngineError> {
        let name = if name.trim().is_empty() {
            DEFAULT_ENGINE
        } else {
            name.trim()
        };
        self.factories
            .get(name)
            .map(|f| f(config))
            .ok_or_else(|| EngineError::UnknownEngine {
                name: name.to_string(),
                known: self.names(),
            })
    }
}

impl Default for EngineRegistry {
    fn default() -> Self {
        Self::with_builtin()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn default_engine_is_the_compressor() {
        let r = EngineRegistry::with_builtin();
        let e = r.create("", &CompressorConfig::default()).unwrap();
        assert_eq!(e.name(), "compressor");
    }

    #[test]
    fn unknown_engine_lists_the_known_ones() {
        let r = EngineRegistry::with_builtin();
        let err = r.create("lcm", &CompressorConfig::default()).err().unwrap();
        let text = err.to_string();
        assert!(
            text.contains("`lcm`") && text.contains("compressor"),
            "{text}"
        );
    }

    #[test]
    fn registered_engines_are_resolvable() {
        let mut r = EngineRegistry::with_builtin();
        r.register("other", |c| Box::new(Compressor::new(c.clone())));
        assert_eq!(
            r.names(),
            vec!["compressor".to_string(), "other".to_string()]
        );
        assert!(r.create("other", &CompressorConfig::default()).is_ok());
    }
}
