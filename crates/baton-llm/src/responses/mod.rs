//! OpenAI Responses client.

mod convert;
mod stream;

use crate::errors::LlmError;
use crate::models::{self, Listing, ModelInfo};
use crate::provider::{BoxFuture, EventSink, Provider};
use crate::request::ChatRequest;
use crate::response::ChatResponse;
use crate::transport::Transport;
use stream::ResponsesAssembler;

const RESPONSES_PATH: &str = "/responses";

/// An OpenAI Responses endpoint.
#[derive(Debug, Clone)]
pub struct ResponsesClient {
    transport: Transport,
}

impl ResponsesClient {
    pub(crate) fn new(transport: Transport) -> ResponsesClient {
        ResponsesClient { transport }
    }

    async fn complete_inner(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        request.validate()?;
        let body = convert::request_body(request, false);
        let url = self.transport.url(RESPONSES_PATH);
        let (response, attempts) = self.transport.post(RESPONSES_PATH, &body).await?;
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
        let (response, attempts) = self.transport.post(RESPONSES_PATH, &body).await?;
        if crate::sse::answered_whole(&response) {
            let url = self.transport.url(RESPONSES_PATH);
            let json = self.transport.read_json(response, &url).await?;
            let whole = convert::parse_response(&self.transport.provider, json, attempts)?;
            crate::sse::replay(&whole, sink);
            return Ok(whole);
        }
        let mut assembler = ResponsesAssembler::default();
        let read = self
            .transport
            .read_sse(response, |event| assembler.on_event(&event.data, sink))
            .await;
        let provider = self.transport.provider.clone();
        let error = assembler.error.take();
        let complete = assembler.done();
        let response = assembler.finish(&provider, attempts);
        crate::sse::finish_stream(
            provider,
            read,
            error,
            complete,
            "`response.completed`",
            response,
        )
    }
}

impl Provider for ResponsesClient {
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
        Box::pin(models::list(&self.transport, Listing::OpenAi))
    }
}
