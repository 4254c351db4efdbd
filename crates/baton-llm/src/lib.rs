//! Baton's provider clients: OpenAI Chat Completions (and the many servers that copy it),
//! Anthropic Messages and OpenAI Responses, behind one object-safe [`Provider`] trait.
//!
//! What this crate adds over a bare HTTP call is what context management needs from it:
//! usage normalized into `baton-core`'s [`CanonicalUsage`](baton_core::usage::CanonicalUsage)
//! (cached tokens counted, not lost), every HTTP failure mapped through `baton-core`'s overflow
//! classification (so "context too long" is told apart from "max_tokens too large" and from a
//! rate limit), bounded retries, streams that hand back what arrived when they break, context
//! windows discovered from the server, and an LLM-backed [`Summarizer`](baton_core::summary::Summarizer).
//! Keys never reach an error message or a log line.

pub mod anthropic;
pub mod config;
pub mod context_length;
pub mod cooldown;
pub mod errors;
pub mod models;
pub mod openai;
pub mod provider;
pub mod reasoning_models;
pub mod redact_key;
pub mod request;
pub mod response;
pub mod responses;
pub mod retry;
pub mod sse;
pub mod summarizer;
pub mod transport;

pub use config::{ProviderConfig, ProviderKind};
pub use errors::{ErrorKind, LlmError, TimeoutPhase};
pub use models::ModelInfo;
pub use provider::{EventSink, Provider};
pub use redact_key::ApiKey;
pub use request::ChatRequest;
pub use response::{ChatResponse, FinishReason, StreamEvent};
pub use retry::RetryPolicy;
pub use summarizer::{AuxiliaryConfig, LlmSummarizer, SummaryFailure, SummaryFailureKind};
pub use transport::HttpSettings;
