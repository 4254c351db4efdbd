//! Errors that stop an agent before or between turns. Failures inside a turn (a refused
//! request, an exhausted overflow recovery) are events and a turn outcome, not errors: the
//! session stays valid and resumable.

use baton_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("session store: {0}")]
    Store(#[from] StoreError),
    #[error("no session `{0}` in the store")]
    NoSuchSession(String),
    #[error("{0}")]
    Config(String),
    /// A pin that cannot be made or removed.
    #[error("{0}")]
    Pin(String),
}
