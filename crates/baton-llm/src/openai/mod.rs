//! OpenAI Chat Completions client, for every server that speaks it: OpenAI, OpenRouter, vLLM,
//! llama.cpp, Ollama and LM Studio (which differ only in where they list their models).

mod convert;
mod stream;

use crate::errors::LlmError;
use crate::models::{self, Listing, ModelInfo};
use crate::provider::{BoxFuture, EventSink, Provider};
use crate::request::ChatRequest;
use crate::response::ChatResponse;
use crate::transport::Transport;
use stream::ChatAssembler;

/// A Chat Completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    transport: Transport,
    listing: Listing,
    /// Path of the chat endpoint below the base URL.
    chat_path: &'static str,
    /// Provider id the prompt-cache layout decides on.
    cache_route: String,
}

impl OpenAiClient {
    pub(crate) fn new(transport: Transport, listing: Listing, cache_route: String) -> OpenAiClient {
        let chat_path = match listing {
            // Their base URL is the server root; the OpenAI-compatible API lives under /v1.
            Listing::Ollama | Listing::LmStudio => "/v1/chat/completions",
            _ => "/chat/completions",
        };
        OpenAiClient {
            transport,
            listing,
            chat_path,
            cache_route,
        }
    }

    async fn complete_inner(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        request.validate()?;
        let body = convert::request_body(request, &self.cache_route, false);
        let url = self.transport.url(self.chat_path);
        let (response, attempts) = self.transport.post(self.chat_path, &body).await?;
        let json = self.transport.read_json(response, &url).await?;
        convert::parse_response(&self.transport.provider, json, attempts)
    }

    async fn stream_inner(
        &self,
        request: &ChatRequest,
        sink: &mut EventSink<'_>,
    ) -> Result<ChatResponse, LlmError> {
        request.validate()?;
        let body = convert::request_body(request, &self.cache_route, true);
        let (response, attempts) = self.transport.post(self.chat_path, &body).await?;
        if crate::sse::answered_whole(&response) {
            let url = self.transport.url(self.chat_path);
            let json = self.transport.read_json(response, &url).await?;
            let whole = convert::parse_response(&self.transport.provider, json, attempts)?;
            crate::sse::replay(&whole, sink);
            return Ok(whole);
        }
        let mut assembler = ChatAssembler::default();
        let read = self
            .transport
            .read_sse(response, |event| assembler.on_data(&event.data, sink))
            .await;
        let provider = self.transport.provider.clone();
        let error = assembler.error.clone();
        let complete = assembler.is_complete();
        let response = Ok(assembler.finish(attempts));
        crate::sse::finish_stream(
            provider,
            read,
            error,
            complete,
            "the answer was complete",
            response,
        )
    }
}

impl Provider for OpenAiClient {
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
        Box::pin(models::list(&self.transport, self.listing))
    }
}
