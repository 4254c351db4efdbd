//! API keys that cannot leak through logs or error messages.
//!
//! A key is held in [`ApiKey`], whose `Debug` and `Display` print a placeholder, and every
//! string that came from the network (error bodies, transport errors) goes through
//! [`ApiKey::scrub`] before it is stored in an error: servers echo keys back ("Incorrect API key
//! provided: sk-…"), and an error message ends up in logs, terminals and bug reports.

use std::fmt;

/// What a scrubbed key is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest prefix of a key that is still treated as the key when echoed on its own (servers
/// often echo a truncated key).
const MIN_ECHOED_PREFIX: usize = 12;

/// A secret API key. Never printed: the only way to read it is [`ApiKey::expose`], used when
/// building the request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty or blank key, which would only produce a confusing 401.
    pub fn new(key: impl Into<String>) -> Option<ApiKey> {
        let key = key.into().trim().to_string();
        (!key.is_empty()).then_some(ApiKey(key))
    }

    /// Reads the key from environment variable `var`; `None` when unset or blank.
    pub fn from_env(var: &str) -> Option<ApiKey> {
        std::env::var(var).ok().and_then(ApiKey::new)
    }

    /// The key itself, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key (and of a long prefix of it, as servers echo
    /// truncated keys) replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.replace(&self.0, REDACTED);
        if self.0.len() > MIN_ECHOED_PREFIX
            && let Some(prefix) = self.0.get(..MIN_ECHOED_PREFIX)
        {
            out = out.replace(prefix, REDACTED);
        }
        out
    }
}

/// Scrubs `text` when a key is known; unchanged otherwise.
pub fn scrub(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(key) => key.scrub(text),
        None => text.to_string(),
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn debug_and_display_hide_the_key() {
        let key = ApiKey::new("sk-secret-123456789").unwrap();
        assert!(!format!("{key:?}").contains("secret"));
        assert!(!format!("{key}").contains("secret"));
    }

    #[test]
    fn scrub_removes_full_and_truncated_echoes() {
        let key = ApiKey::new("sk-proj-abcdefghijklmnop").unwrap();
        let text = "Incorrect API key provided: sk-proj-abcdefghijklmnop. Also sk-proj-abcd****";
        let out = key.scrub(text);
        assert!(!out.contains("abcdefgh"), "{out}");
        assert!(out.contains(REDACTED));
    }

    #[test]
    fn blank_keys_are_no_keys() {
        assert!(ApiKey::new("  ").is_none());
    }
}
