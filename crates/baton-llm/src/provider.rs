//! The provider trait: one model call, plain or streamed.

use crate::errors::LlmError;
use crate::models::ModelInfo;
use crate::request::ChatRequest;
use crate::response::{ChatResponse, StreamEvent};
pub use baton_core::summary::BoxFuture;

/// Receives stream events as they arrive. `Send` so a provider future stays `Send`.
pub type EventSink<'a> = dyn FnMut(StreamEvent) + Send + 'a;

/// A model endpoint. Object-safe (boxed futures) so a session can hold `Arc<dyn Provider>`
/// and switch providers at runtime.
pub trait Provider: Send + Sync {
    /// Short id of the wire family (`openai`, `anthropic`, `responses`, `ollama`, `lmstudio`).
    fn name(&self) -> &str;

    /// The base URL requests go to.
    fn base_url(&self) -> &str;

    /// One call, answer in one piece.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;

    /// One call, streamed: `on_event` sees text, reasoning and tool-call deltas as they
    /// arrive, and the result is the same assembled message `complete` would return. A stream
    /// that breaks off yields [`LlmError::Interrupted`] holding what arrived.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;

    /// The models the server offers, with their context lengths where it reports them.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>>;
}
