//! The one error type of this crate, and the mapping of HTTP failures into it.
//!
//! Every HTTP error goes through `baton-core`'s overflow classification, so the caller decides
//! on a class (compact, shrink the output cap, wait, give up) rather than on provider wording.
//! Messages stored here are already scrubbed of the API key and bounded in length: errors are
//! printed, logged and reported.

use crate::redact_key::{ApiKey, scrub};
use crate::response::ChatResponse;
use baton_core::overflow::{ErrorClass, FailedRequest};
use serde_json::Value;
use std::time::Duration;

/// Longest provider message kept in an error.
const MAX_MESSAGE_CHARS: usize = 500;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Establishing the connection.
    Connect,
    /// Waiting for the next bytes of the response (headers or body).
    Read,
}

/// A coarse kind, for callers that branch on the failure (the summarizer's cooldowns, the
/// CLI's exit codes) without matching every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    ContextOverflow,
    OutputCapTooLarge,
    PayloadTooLarge,
    RateLimited,
    Auth,
    Quota,
    Server,
    Other,
    Connect,
    Timeout,
    Interrupted,
    InvalidResponse,
    InvalidRequest,
}

/// Why a provider call failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The prompt does not fit the window; `limit` is the window the provider stated.
    #[error("{provider}: context window exceeded{}: {message}", limit_note(*limit, *requested))]
    ContextOverflow {
        provider: String,
        limit: Option<u64>,
        requested: Option<u64>,
        message: String,
    },
    /// The requested output cap does not fit; retry with at most `available`.
    #[error("{provider}: max output tokens too large{}: {message}", available.map(|a| format!(" ({a} available)")).unwrap_or_default())]
    OutputCapTooLarge {
        provider: String,
        available: Option<u64>,
        message: String,
    },
    #[error("{provider}: request payload too large (HTTP {status}): {message}")]
    PayloadTooLarge {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("{provider}: rate limited (HTTP {status}){}: {message}", retry_after.map(|d| format!(", retry after {:.1} s", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        provider: String,
        status: u16,
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("{provider}: authentication failed (HTTP {status}): {message}")]
    Auth {
        provider: String,
        status: u16,
        message: String,
    },
    /// Billing: out of credits or quota. Waiting does not help.
    #[error("{provider}: quota or billing problem (HTTP {status}): {message}")]
    Quota {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("{provider}: server error (HTTP {status}): {message}")]
    Server {
        provider: String,
        status: u16,
        message: String,
    },
    /// Any other rejection (bad parameters, unknown model).
    #[error("{provider}: request rejected (HTTP {status}): {message}")]
    Api {
        provider: String,
        status: u16,
        message: String,
    },
    /// The server could not be reached or went away mid-answer. `message` is one plain reason
    /// (connection refused, host name not found, TLS failure…), not reqwest's error chain.
    #[error("{provider}: cannot connect to {host}: {message}", host = host_of(url))]
    Connect {
        provider: String,
        url: String,
        message: String,
    },
    #[error("{provider}: no answer from {host} within {seconds:.1} s ({phase} timeout)", host = host_of(url), phase = phase_name(*phase))]
    Timeout {
        provider: String,
        url: String,
        phase: TimeoutPhase,
        seconds: f64,
    },
    /// The stream stopped before the provider said it was done. `partial` holds what arrived.
    #[error("{provider}: stream interrupted after {} chars of text: {message}", partial.message.text().chars().count())]
    Interrupted {
        provider: String,
        partial: Box<ChatResponse>,
        message: String,
    },
    /// A 2xx answer that is not what the API documents.
    #[error("{provider}: unexpected response: {message}")]
    InvalidResponse { provider: String, message: String },
    /// The request could not be built (bad URL, bad configuration); nothing was sent.
    #[error("invalid request: {message}")]
    InvalidRequest { message: String },
    /// The server needs an API key and none was found: `variable` is the environment variable
    /// to set. Reported before any request when the server is known to need a key, or after a
    /// 401/403 answer (`status`) to a request that carried none.
    #[error("{provider}: no API key for {host}{}: set the environment variable {variable}", status.map(|s| format!(" (it answered HTTP {s})")).unwrap_or_default(), host = host_of(url))]
    MissingApiKey {
        provider: String,
        url: String,
        variable: String,
        status: Option<u16>,
    },
}

/// `host[:port]` of `url`, or the URL itself when it does not parse: errors name the server
/// the user configured, not an endpoint path.
pub(crate) fn host_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => url.to_string(),
        },
        Err(_) => url.to_string(),
    }
}

fn limit_note(limit: Option<u64>, requested: Option<u64>) -> String {
    match (limit, requested) {
        (Some(l), Some(r)) => format!(" ({r} tokens > {l} limit)"),
        (Some(l), None) => format!(" (limit {l} tokens)"),
        (None, Some(r)) => format!(" (request was {r} tokens)"),
        (None, None) => String::new(),
    }
}

fn phase_name(phase: TimeoutPhase) -> &'static str {
    match phase {
        TimeoutPhase::Connect => "connect",
        TimeoutPhase::Read => "read",
    }
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::ContextOverflow { .. } => ErrorKind::ContextOverflow,
            LlmError::OutputCapTooLarge { .. } => ErrorKind::OutputCapTooLarge,
            LlmError::PayloadTooLarge { .. } => ErrorKind::PayloadTooLarge,
            LlmError::RateLimited { .. } => ErrorKind::RateLimited,
            LlmError::Auth { .. } => ErrorKind::Auth,
            LlmError::Quota { .. } => ErrorKind::Quota,
            LlmError::Server { .. } => ErrorKind::Server,
            LlmError::Api { .. } => ErrorKind::Other,
            LlmError::Connect { .. } => ErrorKind::Connect,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Interrupted { .. } => ErrorKind::Interrupted,
            LlmError::InvalidResponse { .. } => ErrorKind::InvalidResponse,
            LlmError::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            LlmError::MissingApiKey { .. } => ErrorKind::Auth,
        }
    }

    /// Whether sending the identical request again may succeed: throttling, server trouble
    /// and transport failures. Auth and bad requests never are; overflow needs a smaller
    /// request first.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::RateLimited | ErrorKind::Server | ErrorKind::Connect | ErrorKind::Timeout
        )
    }

    /// The wait the server asked for, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The context window the provider stated in an overflow error. Only this (never a guess)
    /// may lower a model's known window.
    pub fn stated_context_limit(&self) -> Option<u64> {
        match self {
            LlmError::ContextOverflow { limit, .. } => *limit,
            _ => None,
        }
    }

    /// The partial response of an interrupted stream.
    pub fn partial(&self) -> Option<&ChatResponse> {
        match self {
            LlmError::Interrupted { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// Maps a non-2xx answer through `baton-core`'s classification. `body` and the message
    /// kept from it are scrubbed of `key`.
    pub(crate) fn from_http(
        provider: &str,
        status: u16,
        body: &str,
        retry_after_header: Option<&str>,
        key: Option<&ApiKey>,
    ) -> LlmError {
        let body = scrub(body, key);
        let class = FailedRequest {
            status: Some(status),
            body: &body,
            retry_after_header,
            session: None,
        }
        .classify();
        let message = provider_message(&body);
        let provider = provider.to_string();
        match class {
            ErrorClass::ContextOverflow { limit, requested } => LlmError::ContextOverflow {
                provider,
                limit,
                requested,
                message,
            },
            ErrorClass::OutputCapTooLarge { available } => LlmError::OutputCapTooLarge {
                provider,
                available,
                message,
            },
            ErrorClass::PayloadTooLarge => LlmError::PayloadTooLarge {
                provider,
                status,
                message,
            },
            ErrorClass::RateLimited { retry_after } => LlmError::RateLimited {
                provider,
                status,
                retry_after,
                message,
            },
            ErrorClass::Auth if mentions_quota(&body) => LlmError::Quota {
                provider,
                status,
                message,
            },
            ErrorClass::Auth => LlmError::Auth {
                provider,
                status,
                message,
            },
            ErrorClass::ServerError => LlmError::Server {
                provider,
                status,
                message,
            },
            ErrorClass::Other if status == 402 || mentions_quota(&body) => LlmError::Quota {
                provider,
                status,
                message,
            },
            ErrorClass::Other => LlmError::Api {
                provider,
                status,
                message,
            },
        }
    }

    /// Maps a transport failure. reqwest's message names the URL, never a header.
    pub(crate) fn from_transport(
        provider: &str,
        url: &str,
        error: &reqwest::Error,
        timeouts: (Duration, Duration),
        key: Option<&ApiKey>,
    ) -> LlmError {
        let provider = provider.to_string();
        let url = scrub(url, key);
        if error.is_timeout() {
            let (phase, limit) = if error.is_connect() {
                (TimeoutPhase::Connect, timeouts.0)
            } else {
                (TimeoutPhase::Read, timeouts.1)
            };
            return LlmError::Timeout {
                provider,
                url,
                phase,
                seconds: limit.as_secs_f64(),
            };
        }
        let message = scrub(&transport_reason(error), key);
        if error.is_connect() {
            LlmError::Connect {
                provider,
                url,
                message,
            }
        } else if error.is_decode() {
            LlmError::InvalidResponse { provider, message }
        } else {
            // Body errors, resets and other mid-request failures: the server went away.
            LlmError::Connect {
                provider,
                url,
                message,
            }
        }
    }
}

/// One plain reason for a transport failure. reqwest's chain ("error sending request for url
/// (…): client error (Connect): tcp connect error: Connection refused (os error 111)") repeats
/// the URL and names library layers; users need the cause, so the chain is searched for the
/// common ones and otherwise reduced to its innermost message.
pub(crate) fn transport_reason(error: &reqwest::Error) -> String {
    let mut innermost: &dyn std::error::Error = error;
    let mut io_kind = None;
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            io_kind = io_kind.or(Some(io.kind()));
        }
        innermost = e;
        source = e.source();
    }
    let chain = error_chain(error).to_lowercase();
    use std::io::ErrorKind as Io;
    let reason = match io_kind {
        Some(Io::ConnectionRefused) => "connection refused (is the server running on that port?)",
        Some(Io::ConnectionReset) => "the connection was reset by the server",
        Some(Io::ConnectionAborted) => "the connection was aborted",
        Some(Io::NetworkUnreachable | Io::HostUnreachable) => "the network or host is unreachable",
        _ if chain.contains("dns error") || chain.contains("failed to lookup address") => {
            "the host name could not be resolved (DNS lookup failed)"
        }
        _ if chain.contains("certificate") || chain.contains("tls") => {
            return format!("TLS handshake failed: {}", innermost_text(innermost));
        }
        _ if error.is_body() || chain.contains("connection closed") => {
            "the server closed the connection before the answer was complete"
        }
        _ => return innermost_text(innermost),
    };
    reason.to_string()
}

fn innermost_text(e: &dyn std::error::Error) -> String {
    let text = e.to_string();
    // io errors end in "(os error N)", which says nothing to a user.
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The error and its sources on one line: reqwest's top-level message alone ("error sending
/// request") does not say what went wrong.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The human-readable message of an error body: `error.message` (OpenAI, Anthropic), a string
/// `error`, or `message`; else the body text. Bounded to [`MAX_MESSAGE_CHARS`].
fn provider_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = found.unwrap_or_else(|| body.trim().to_string());
    bound(&text)
}

pub(crate) fn bound(text: &str) -> String {
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    out.push('…');
    out
}

fn mentions_quota(body: &str) -> bool {
    let lower = body.to_lowercase();
    [
        "insufficient_quota",
        "quota exceeded",
        "exceeded your current quota",
        "out of credits",
        "out of funds",
        "credit balance",
        "billing",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

impl LlmError {
    /// A response body that does not have the shape the API documents.
    pub(crate) fn invalid_response(provider: &str, message: impl Into<String>) -> Self {
        LlmError::InvalidResponse {
            provider: provider.to_string(),
            message: message.into(),
        }
    }
}

/// The body of a response as a JSON object, which every API's response is.
pub(crate) fn response_object(
    provider: &str,
    body: serde_json::Value,
) -> Result<serde_json::Map<String, serde_json::Value>, LlmError> {
    match body {
        serde_json::Value::Object(obj) => Ok(obj),
        _ => Err(LlmError::invalid_response(
            provider,
            "the body is not a JSON object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_overflow_keeps_the_stated_limit() {
        let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let e = LlmError::from_http("openai", 400, body, None, None);
        assert_eq!(e.kind(), ErrorKind::ContextOverflow);
        assert_eq!(e.stated_context_limit(), Some(128_000));
        assert!(!e.is_retryable());
    }

    #[test]
    fn quota_429_is_not_a_rate_limit() {
        let body = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        let e = LlmError::from_http("openai", 429, body, None, None);
        assert_eq!(e.kind(), ErrorKind::Quota, "{e}");
        assert!(!e.is_retryable());
    }

    #[test]
    fn hosts_are_named_without_the_endpoint_path() {
        assert_eq!(
            host_of("http://127.0.0.1:9/v1/chat/completions"),
            "127.0.0.1:9"
        );
        assert_eq!(
            host_of("https://api.openai.com/v1/models"),
            "api.openai.com"
        );
        assert_eq!(host_of("not a url"), "not a url");
        let e = LlmError::MissingApiKey {
            provider: "openai".into(),
            url: "https://api.openai.com/v1".into(),
            variable: "OPENAI_API_KEY".into(),
            status: None,
        };
        assert_eq!(
            e.to_string(),
            "openai: no API key for api.openai.com: set the environment variable OPENAI_API_KEY"
        );
        assert_eq!(e.kind(), ErrorKind::Auth);
    }

    #[test]
    fn long_bodies_are_bounded() {
        let body = "x".repeat(5000);
        let e = LlmError::from_http("p", 500, &body, None, None);
        assert!(e.to_string().chars().count() < 700);
    }
}
