//! The compaction every compress benchmark times: one forced pass of the default engine
//! (extractive summarizer: ledger, redaction and bounded views included) for a 200K window.

use baton_core::compress::{Compressor, CompressorConfig};
use baton_core::engine::{CompressRequest, ContextEngine};
use baton_core::message::Message;

/// Compacts `messages` once; returns how many messages the result has.
pub fn compress_once(runtime: &tokio::runtime::Runtime, messages: &[Message]) -> usize {
    let mut engine = Compressor::new(CompressorConfig {
        context_length: 200_000,
        ..CompressorConfig::default()
    });
    let result = runtime.block_on(engine.compress(CompressRequest {
        messages: messages.into(),
        current_tokens: None,
        focus_topic: None,
        force: true,
    }));
    result.messages.len()
}
