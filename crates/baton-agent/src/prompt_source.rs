//! Where a session's system prompt comes from. The runtime asks once when a session starts and
//! once at each compaction (so memory is re-read at every boundary), never per turn: the
//! prompt is the head of the cached prefix and must stay byte-stable between boundaries.

/// Builds the system prompt for a new session or a continuation.
pub trait SystemPromptSource: Send + Sync {
    fn build(&self) -> String;
}

impl<F> SystemPromptSource for F
where
    F: Fn() -> String + Send + Sync,
{
    fn build(&self) -> String {
        self()
    }
}

/// A fixed prompt (tests, embedders with their own prompt).
#[derive(Debug, Clone)]
pub struct FixedPrompt(pub String);

impl SystemPromptSource for FixedPrompt {
    fn build(&self) -> String {
        self.0.clone()
    }
}
