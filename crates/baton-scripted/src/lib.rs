//! A scripted model server for end-to-end tests: real HTTP on loopback, speaking the three
//! APIs Baton's clients use — OpenAI Chat Completions (`/v1/chat/completions`), Anthropic
//! Messages (`/v1/messages`) and OpenAI Responses (`/v1/responses`) — plain JSON or SSE as the
//! request asks, plus `/v1/models`.
//!
//! Each request takes the next [`Reply`] of the script (or asks a responder closure, for long
//! soak runs), and is recorded ([`Captured`], keys redacted) so tests can snapshot exactly what
//! Baton sent. Usage is scripted or derived from the request, with an optional simulated
//! prompt cache, so token accounting and cache-aware decisions see realistic numbers. When the
//! script runs out the server answers 500 "script exhausted", so a test that makes one call
//! too many fails loudly.

mod reply;
mod server;
mod usage;
mod wire;

pub use reply::{Reply, ReplyKind, ScriptedCall, Usage};
pub use server::{Api, Captured, Script, ScriptedServer};
