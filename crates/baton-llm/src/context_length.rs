//! How big a model's context window is.
//!
//! Order: a value the user configured; else what the server's model listing reports; else a
//! table of well-known model families (longest matching name fragment wins); else a
//! conservative fallback. A limit the provider *stated* in an overflow error lowers the known
//! value for that model — and only a stated one: guessing a smaller window from a vague error
//! would shrink a correctly configured 1M window to nothing on the first hiccup.

use crate::errors::LlmError;
use crate::provider::Provider;
use std::collections::HashMap;
use std::sync::Mutex;

/// Used when nothing else is known. Small enough that compaction starts before most real
/// windows overflow.
pub const DEFAULT_FALLBACK_CONTEXT: u64 = 128_000;

/// Name fragment → window, for models whose server does not say.
const KNOWN_FAMILIES: [(&str, u64); 18] = [
    ("claude", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("llama", 131_072),
    ("qwen", 131_072),
    ("mistral", 128_000),
    ("mixtral", 32_768),
    ("kimi", 262_144),
    ("glm", 128_000),
];

/// Where a window figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextSource {
    Configured,
    /// Stated by the provider in an overflow error.
    ProviderError,
    /// The server's model listing.
    Server,
    Table,
    Fallback,
}

/// The table's window for `model`: the entry with the longest fragment contained in the
/// lowercased name (`gpt-4o-mini` matches `gpt-4o`, not `gpt-4`).
pub fn table_context_length(model: &str) -> Option<u64> {
    let lower = model.to_lowercase();
    KNOWN_FAMILIES
        .iter()
        .filter(|(fragment, _)| lower.contains(fragment))
        .max_by_key(|(fragment, _)| fragment.len())
        .map(|(_, n)| *n)
}

/// Known windows per `model@base_url`, shared by a session's calls.
#[derive(Debug, Default)]
pub struct ContextLengths {
    configured: HashMap<String, u64>,
    known: Mutex<HashMap<String, (u64, ContextSource)>>,
}

fn key(model: &str, base_url: &str) -> String {
    format!("{model}@{base_url}")
}

impl ContextLengths {
    pub fn new() -> ContextLengths {
        ContextLengths::default()
    }

    /// The user's value for `model` (any server).
    pub fn configure(&mut self, model: &str, tokens: u64) {
        self.configured.insert(model.to_string(), tokens);
    }

    /// The window for `model` on `provider`, asking the server only the first time.
    pub async fn resolve(&self, provider: &dyn Provider, model: &str) -> (u64, ContextSource) {
        let k = key(model, provider.base_url());
        if let Some(found) = self.cached(&k, ContextSource::ProviderError) {
            return found;
        }
        if let Some(n) = self.configured.get(model) {
            return (*n, ContextSource::Configured);
        }
        if let Some(found) = self.cached(&k, ContextSource::Server) {
            return found;
        }
        let listed = match provider.list_models().await {
            Ok(models) => models
                .into_iter()
                .find(|m| m.id == model)
                .and_then(|m| m.context_length),
            Err(e) => {
                tracing::debug!(error = %e, "model listing failed; using the built-in table");
                None
            }
        };
        let found = match (listed, table_context_length(model)) {
            (Some(n), _) => (n, ContextSource::Server),
            (None, Some(n)) => (n, ContextSource::Table),
            (None, None) => {
                tracing::warn!(
                    model,
                    base_url = provider.base_url(),
                    "unknown context length; using {DEFAULT_FALLBACK_CONTEXT} tokens"
                );
                (DEFAULT_FALLBACK_CONTEXT, ContextSource::Fallback)
            }
        };
        if let Ok(mut known) = self.known.lock() {
            known.insert(k, found);
        }
        found
    }

    fn cached(&self, k: &str, only: ContextSource) -> Option<(u64, ContextSource)> {
        let known = self.known.lock().ok()?;
        known.get(k).copied().filter(|(_, s)| {
            (*s == ContextSource::ProviderError) == (only == ContextSource::ProviderError)
        })
    }

    /// Learns from a failed call: when `error` is an overflow that states a limit below the
    /// window known for `model`, that limit becomes the window. Returns the new window.
    pub fn record_error(
        &self,
        provider: &dyn Provider,
        model: &str,
        error: &LlmError,
    ) -> Option<u64> {
        let stated = error.stated_context_limit()?;
        let k = key(model, provider.base_url());
        let mut known = self.known.lock().ok()?;
        let current = known
            .get(&k)
            .map(|(n, _)| *n)
            .or_else(|| self.configured.get(model).copied())
            .or_else(|| table_context_length(model))
            .unwrap_or(DEFAULT_FALLBACK_CONTEXT);
        (stated < current).then(|| {
            known.insert(k, (stated, ContextSource::ProviderError));
            stated
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_fragment_wins() {
        assert_eq!(table_context_length("gpt-4o-mini"), Some(128_000));
        assert_eq!(table_context_length("gpt-4-0613"), Some(8_192));
        assert_eq!(
            table_context_length("anthropic/claude-sonnet-4"),
            Some(200_000)
        );
        assert_eq!(table_context_length("totally-unknown"), None);
    }
}
