//! Anthropic Messages client.

mod convert;
mod stream;

pub use convert::DEFAULT_MAX_TOKENS;

use crate::errors::LlmError;
use crate::models::{self, Listing, ModelInfo};
use crate::provider::{BoxFuture, EventSink, Provider};
use crate::request::ChatRequest;
use crate::response::ChatResponse;
use crate::transport::Transport;
use stream::AnthropicAssembler;

/// The API version this client speaks (sent as `anthropic-version`).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

const MESSAGES_PATH: &str = "/v1/messages";

/// An Anthropic Messages endpoint (api.anthropic.com or a compatible gateway).
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    pub(crate) fn new(transport: Transport) -> AnthropicClient {
        AnthropicClient { transport }
    }

    async fn complete_inner(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        request.validate()?;
        let body = convert::request_body(request, false);
        let url = self.transport.url(MESSAGES_PATH);
        let (response, attempts) = self.transport.post(MESSAGES_PATH, &body).await?;
        let json = self.transport.read_json(response, &url).await?;
        convert::parse_response(&self.transport.provider, json, attempts)
    }

    async fn stream_inner(
        &self,
        request: &ChatRequest,
        sink: &mut EventSink<'_>,
    ) -> Result<ChatResponse, LlmError> {
        request.validate()?;
        let body = convert::request_body(request, true);
        let (response, attempts) = self.transport.post(MESSAGES_PATH, &body).await?;
        if crate::sse::answered_whole(&response) {
            let url = self.transport.url(MESSAGES_PATH);
            let json = self.transport.read_json(response, &url).await?;
            let whole = convert::parse_response(&self.transport.provider, json, attempts)?;
            crate::sse::replay(&whole, sink);
            return Ok(whole);
        }
        let mut assembler = AnthropicAssembler::default();
        let read = self
            .transport
            .read_sse(response, |event| {
                assembler.on_event(event.event.as_deref(), &event.data, sink)
            })
            .await;
        let provider = self.transport.provider.clone();
        let error = assembler.error.take();
        let response = assembler.finish(&provider, attempts);
        crate::sse::finish_stream(
            provider,
            read,
            error,
            assembler.done,
            "`message_stop`",
            response,
        )
    }
}

impl Provider for AnthropicClient {
    fn name(&self) -> &str {
        &self.transport.provider
    }

    fn base_url(&self) -> &str {
        &self.transport.base_url
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.complete_inner(request))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.stream_inner(request, on_event))
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>> {
        Box::pin(models::list(&self.transport, Listing::Anthropic))
    }
}
