//! Classifying failed provider requests, with the context-overflow cases told apart.
//!
//! The recovery for a failed call depends on *why* it failed, and the wrong guess is costly:
//! an output-cap rejection ("max_tokens too large") treated as a context overflow sends the
//! compactor into a loop that can never succeed, because the same `max_tokens` is rejected
//! again after every compaction; a rate limit treated as an overflow throws away history for
//! nothing. So this module answers one question per error — compact, shrink the output cap,
//! wait and retry, or give up — and extracts the numbers the recovery needs (the stated
//! context limit, the size of the rejected request, the output room left, the wait time).
//!
//! Providers phrase the same failure many ways and servers wrap each other's errors (OpenRouter
//! forwards the upstream body as a string in `error.metadata.raw`), so the body is read as
//! JSON where possible, every message it carries is gathered, and the decision is made on that
//! lowercased text plus the machine-readable codes. The status code goes first where it is
//! unambiguous.

use regex::Regex;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::LazyLock;
use std::time::Duration;

/// What a failed request means for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The prompt does not fit the context window: compact and retry. `limit` is the window
    /// the server stated and `requested` the size it measured, when the error says so.
    ContextOverflow {
        limit: Option<u64>,
        requested: Option<u64>,
    },
    /// The prompt fits but the requested output cap does not: retry with a smaller
    /// `max_tokens` (at most `available`, when known). Compacting cannot fix this.
    OutputCapTooLarge { available: Option<u64> },
    /// The HTTP body is too large for a proxy or server limit; compacting usually helps.
    PayloadTooLarge,
    /// Throttled; retry the same request after `retry_after` (or the caller's backoff).
    RateLimited { retry_after: Option<Duration> },
    /// The key is missing, wrong, or lacks permission; retrying cannot help.
    Auth,
    /// The server failed or is overloaded; retrying the same request may succeed.
    ServerError,
    /// Anything else (bad parameters, billing, unknown model): not retryable as is.
    Other,
}

impl ErrorClass {
    /// Whether sending the *identical* request again may succeed. Overflow and output-cap
    /// errors need a changed request first, so they are not retryable in this sense.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimited { .. } | ErrorClass::ServerError
        )
    }

    /// Whether shrinking the conversation is the fix.
    pub fn should_compact(&self) -> bool {
        matches!(
            self,
            ErrorClass::ContextOverflow { .. } | ErrorClass::PayloadTooLarge
        )
    }

    /// A one-line description for logs and status lines.
    pub fn describe(&self) -> String {
        match self {
            ErrorClass::ContextOverflow { limit, requested } => {
                let mut text = String::from("context window exceeded");
                match (limit, requested) {
                    (Some(limit), Some(requested)) => {
                        text.push_str(&format!(" ({requested} tokens > {limit} limit)"));
                    }
                    (Some(limit), None) => text.push_str(&format!(" (limit {limit} tokens)")),
                    (None, Some(requested)) => {
                        text.push_str(&format!(" (request was {requested} tokens)"));
                    }
                    (None, None) => {}
                }
                text
            }
            ErrorClass::OutputCapTooLarge {
                available: Some(available),
            } => format!("output cap too large ({available} tokens of room left)"),
            ErrorClass::OutputCapTooLarge { available: None } => {
                String::from("output cap too large")
            }
            ErrorClass::PayloadTooLarge => String::from("request payload too large"),
            ErrorClass::RateLimited {
                retry_after: Some(wait),
            } => format!("rate limited (retry in {:.1}s)", wait.as_secs_f64()),
            ErrorClass::RateLimited { retry_after: None } => String::from("rate limited"),
            ErrorClass::Auth => String::from("authentication or permission failure"),
            ErrorClass::ServerError => String::from("server error or overload"),
            ErrorClass::Other => String::from("request rejected"),
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// How big the conversation was when a request failed.
///
/// Only needed for one case: Anthropic sometimes answers an oversized prompt with a bare
/// `400 "Error"`. A near-empty 400 on a large session is then far more likely an overflow
/// than a malformed request, while on a small session it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionSize {
    pub approx_prompt_tokens: u64,
    pub context_window: u64,
    pub messages: usize,
}

impl SessionSize {
    /// Over 40 % of the window, or (for windows up to 256K) over 80K tokens or 80 messages.
    fn is_large_enough_to_explain_a_bare_400(&self) -> bool {
        let tokens = self.approx_prompt_tokens;
        let window = self.context_window;
        tokens.saturating_mul(10) > window.saturating_mul(4)
            || (window <= 256_000 && (tokens > 80_000 || self.messages > 80))
    }
}

/// Everything known about a failed request. `body` is the raw response body (JSON or text).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailedRequest<'a> {
    pub status: Option<u16>,
    pub body: &'a str,
    /// The `Retry-After` header value, if any.
    pub retry_after_header: Option<&'a str>,
    pub session: Option<SessionSize>,
}

/// Classifies a failed request from its status, body and `Retry-After` header.
pub fn classify_error(
    status: Option<u16>,
    body: &str,
    headers_retry_after: Option<&str>,
) -> ErrorClass {
    FailedRequest {
        status,
        body,
        retry_after_header: headers_retry_after,
        session: None,
    }
    .classify()
}

impl FailedRequest<'_> {
    /// Status first where it decides alone (401/403, 429, 413, 5xx), the wording otherwise.
    pub fn classify(&self) -> ErrorClass {
        let error = ErrorText::parse(self.body);
        match self.status {
            Some(401 | 403) => ErrorClass::Auth,
            Some(413) => error.overflow_or(ErrorClass::PayloadTooLarge),
            Some(429) => self.classify_throttled(&error),
            Some(status) if status >= 500 => error.overflow_or(ErrorClass::ServerError),
            Some(status) if status >= 400 => self.classify_rejected(&error),
            _ => self.classify_by_wording(&error),
        }
    }

    fn retry_after(&self, error: &ErrorText) -> Option<Duration> {
        self.retry_after_header
            .and_then(parse_retry_after)
            .or(error.retry_after)
            .or_else(|| parse_retry_hint_in_text(&error.text))
    }

    /// A 429 is a rate limit, except two cases a wait cannot fix: Anthropic's long-context
    /// tier refusal (the prompt is over the tier's window, so compacting fixes it) and an
    /// exhausted quota (billing).
    fn classify_throttled(&self, error: &ErrorText) -> ErrorClass {
        if error.mentions_all(&["extra usage", "long context"]) {
            error.overflow()
        } else if error.is_billing_problem() {
            ErrorClass::Other
        } else {
            ErrorClass::RateLimited {
                retry_after: self.retry_after(error),
            }
        }
    }

    /// A 4xx other than 401/403/413/429. Parameter errors are checked before overflow because
    /// "Unsupported parameter: 'max_tokens'" names `max_tokens`; the output cap is checked
    /// before overflow because its wording overlaps overflow wording.
    fn classify_rejected(&self, error: &ErrorText) -> ErrorClass {
        if error.is_unsupported_parameter() {
            return ErrorClass::Other;
        }
        if let Some(cap) = error.output_cap() {
            return cap;
        }
        if error.states_overflow() {
            return error.overflow();
        }
        if error.states_payload_too_large() {
            return ErrorClass::PayloadTooLarge;
        }
        if error.states_rate_limit() {
            return ErrorClass::RateLimited {
                retry_after: self.retry_after(error),
            };
        }
        if self.status == Some(400) && self.is_bare_400_on_large_session(error) {
            return error.overflow();
        }
        ErrorClass::Other
    }

    fn is_bare_400_on_large_session(&self, error: &ErrorText) -> bool {
        error.is_bare()
            && self
                .session
                .is_some_and(|session| session.is_large_enough_to_explain_a_bare_400())
    }

    /// No status (a stream error event, a transport message): decide on wording alone.
    fn classify_by_wording(&self, error: &ErrorText) -> ErrorClass {
        if error.states_payload_too_large() {
            ErrorClass::PayloadTooLarge
        } else if error.states_overload() {
            ErrorClass::ServerError
        } else if error.states_rate_limit() {
            ErrorClass::RateLimited {
                retry_after: self.retry_after(error),
            }
        } else if let Some(cap) = error.output_cap() {
            cap
        } else if error.states_overflow() {
            error.overflow()
        } else if error.states_auth_failure() {
            ErrorClass::Auth
        } else {
            ErrorClass::Other
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the body
// ---------------------------------------------------------------------------------------------

/// How deep `error.metadata.raw` wrappers are followed; one level is all OpenRouter uses.
const MAX_WRAP_DEPTH: u8 = 3;

/// What a response body says, gathered from wherever the server put it.
#[derive(Debug, Default)]
struct ErrorText {
    /// Lowercased messages, deduplicated, joined by newlines.
    text: String,
    /// Lowercased string codes and types (`context_length_exceeded`, `rate_limit_error`).
    codes: Vec<String>,
    /// llama.cpp's `n_prompt_tokens`.
    prompt_tokens: Option<u64>,
    /// llama.cpp's `n_ctx`.
    context_size: Option<u64>,
    /// A wait stated in the body (`retry_after`, `retry_after_ms`).
    retry_after: Option<Duration>,
}

impl ErrorText {
    fn parse(body: &str) -> ErrorText {
        let mut error = ErrorText::default();
        let mut messages = Vec::new();
        match find_json_object(body) {
            Some((prefix, json)) => {
                push_message(&mut messages, prefix);
                error.collect(&json, &mut messages, 0);
            }
            None => push_message(&mut messages, body),
        }
        error.text = messages.join("\n");
        error
    }

    /// Reads the places error bodies keep their text: `error` (string or object),
    /// `message`, `detail` (string or FastAPI's list of `{msg}`), codes and types.
    fn collect(&mut self, value: &Value, messages: &mut Vec<String>, depth: u8) {
        let Some(object) = value.as_object() else {
            return;
        };
        match object.get("error") {
            Some(Value::String(text)) => push_message(messages, text),
            Some(Value::Object(inner)) => self.collect_error_object(inner, messages, depth),
            _ => {}
        }
        push_message_value(messages, object.get("message"));
        push_detail(messages, object.get("detail"));
        self.push_code(object.get("code"));
        self.push_code(object.get("type"));
        self.read_numbers(object);
    }

    fn collect_error_object(
        &mut self,
        error: &Map<String, Value>,
        messages: &mut Vec<String>,
        depth: u8,
    ) {
        push_message_value(messages, error.get("message"));
        push_detail(messages, error.get("detail"));
        for key in ["code", "type", "status"] {
            self.push_code(error.get(key));
        }
        self.read_numbers(error);
        if let Some(raw) = error.get("metadata").and_then(|meta| meta.get("raw")) {
            self.collect_wrapped(raw, messages, depth + 1);
        }
    }

    /// An upstream error forwarded by a gateway: a JSON string, an object, or plain text.
    fn collect_wrapped(&mut self, raw: &Value, messages: &mut Vec<String>, depth: u8) {
        if depth > MAX_WRAP_DEPTH {
            return;
        }
        match raw {
            Value::String(text) => match find_json_object(text) {
                Some((prefix, inner)) => {
                    push_message(messages, prefix);
                    self.collect(&inner, messages, depth);
                }
                None => push_message(messages, text),
            },
            Value::Object(_) => self.collect(raw, messages, depth),
            _ => {}
        }
    }

    /// Numeric codes (`"code": 400`) say nothing the status did not, so only strings count;
    /// the envelope type `"error"` is dropped for the same reason.
    fn push_code(&mut self, value: Option<&Value>) {
        let Some(Value::String(code)) = value else {
            return;
        };
        let code = code.trim().to_lowercase();
        let meaningless = code.is_empty() || code == "error" || code.parse::<u64>().is_ok();
        if !meaningless && !self.codes.contains(&code) {
            self.codes.push(code);
        }
    }

    fn read_numbers(&mut self, object: &Map<String, Value>) {
        let count = |key: &str| object.get(key).and_then(Value::as_u64);
        self.prompt_tokens = self.prompt_tokens.or_else(|| count("n_prompt_tokens"));
        self.context_size = self.context_size.or_else(|| count("n_ctx"));
        self.retry_after = self.retry_after.or_else(|| retry_after_in_fields(object));
    }

    fn has_code(&self, codes: &[&str]) -> bool {
        self.codes.iter().any(|code| codes.contains(&code.as_str()))
    }

    fn mentions_any(&self, phrases: &[&str]) -> bool {
        phrases.iter().any(|phrase| self.text.contains(phrase))
    }

    fn mentions_all(&self, phrases: &[&str]) -> bool {
        phrases.iter().all(|phrase| self.text.contains(phrase))
    }

    /// Empty, `"error"`, or too short to say anything specific.
    fn is_bare(&self) -> bool {
        let text = self.text.trim();
        text.is_empty() || text == "error" || text.chars().count() < 30
    }

    fn states_overflow(&self) -> bool {
        self.has_code(OVERFLOW_CODES) || self.mentions_any(OVERFLOW_PHRASES)
    }

    fn states_payload_too_large(&self) -> bool {
        self.has_code(&["request_too_large"]) || self.mentions_any(PAYLOAD_PHRASES)
    }

    fn states_rate_limit(&self) -> bool {
        self.has_code(RATE_LIMIT_CODES)
            || self.mentions_any(RATE_LIMIT_PHRASES)
            || (self.mentions_any(USAGE_LIMIT_PHRASES) && self.mentions_any(TRANSIENT_PHRASES))
    }

    fn states_overload(&self) -> bool {
        self.has_code(&["overloaded_error"]) || self.mentions_any(&["overloaded"])
    }

    fn states_auth_failure(&self) -> bool {
        self.has_code(AUTH_CODES) || self.mentions_any(AUTH_PHRASES)
    }

    fn is_billing_problem(&self) -> bool {
        self.has_code(&["insufficient_quota", "billing_hard_limit_reached"])
            || self.mentions_any(&["exceeded your current quota", "credit balance is too low"])
    }

    fn is_unsupported_parameter(&self) -> bool {
        self.has_code(&["unknown_parameter", "unsupported_parameter"])
            || self.mentions_any(&[
                "unknown parameter",
                "unsupported parameter",
                "unrecognized request argument",
            ])
    }

    fn output_cap(&self) -> Option<ErrorClass> {
        if let Some(available) = parse_available_output_tokens(&self.text) {
            return Some(ErrorClass::OutputCapTooLarge {
                available: Some(available),
            });
        }
        is_output_cap_error(&self.text).then_some(ErrorClass::OutputCapTooLarge { available: None })
    }

    /// Structured numbers (llama.cpp) win over numbers parsed from prose.
    fn overflow(&self) -> ErrorClass {
        ErrorClass::ContextOverflow {
            limit: self
                .context_size
                .or_else(|| parse_context_limit(&self.text)),
            requested: self
                .prompt_tokens
                .or_else(|| parse_requested_tokens(&self.text)),
        }
    }

    fn overflow_or(&self, fallback: ErrorClass) -> ErrorClass {
        if self.states_overflow() {
            self.overflow()
        } else {
            fallback
        }
    }
}

/// The JSON object in `text`: the whole text, or one embedded after a prefix as SDKs print
/// it (`Error code: 400 - {...}`). Returns the prefix too, since it can carry meaning.
fn find_json_object(text: &str) -> Option<(&str, Value)> {
    let trimmed = text.trim();
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(trimmed) {
        return Some(("", value));
    }
    let start = trimmed.find('{')?;
    let end = trimmed.rfind('}')?;
    let candidate = trimmed.get(start..=end)?;
    match serde_json::from_str::<Value>(candidate) {
        Ok(value @ Value::Object(_)) => Some((trimmed.get(..start).unwrap_or_default(), value)),
        _ => None,
    }
}

fn push_message(messages: &mut Vec<String>, text: &str) {
    let text = text.trim().to_lowercase();
    if !text.is_empty() && !messages.contains(&text) {
        messages.push(text);
    }
}

fn push_message_value(messages: &mut Vec<String>, value: Option<&Value>) {
    if let Some(Value::String(text)) = value {
        push_message(messages, text);
    }
}

fn push_detail(messages: &mut Vec<String>, value: Option<&Value>) {
    match value {
        Some(Value::String(text)) => push_message(messages, text),
        Some(Value::Array(items)) => {
            for item in items {
                push_message_value(messages, item.get("msg"));
            }
        }
        Some(Value::Object(object)) => push_message_value(messages, object.get("message")),
        _ => {}
    }
}

/// `retry_after` (seconds) or `retry_after_ms` / `retry-after-ms` (milliseconds) in a body.
fn retry_after_in_fields(object: &Map<String, Value>) -> Option<Duration> {
    let seconds = object.get("retry_after").and_then(number_or_numeric_string);
    let millis = ["retry_after_ms", "retry-after-ms"]
        .iter()
        .find_map(|key| object.get(*key).and_then(number_or_numeric_string));
    seconds
        .and_then(duration_from_secs)
        .or_else(|| millis.and_then(|ms| duration_from_secs(ms / 1000.0)))
}

fn number_or_numeric_string(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// Rounded to whole milliseconds: finer precision means nothing for a wait, and rounding keeps
/// "4.42s" exactly 4,420 ms instead of a float artefact.
fn duration_from_secs(seconds: f64) -> Option<Duration> {
    let millis = (seconds * 1000.0).round();
    let representable = millis.is_finite() && millis >= 0.0 && millis < u64::MAX as f64;
    representable.then(|| Duration::from_millis(millis as u64))
}

// ---------------------------------------------------------------------------------------------
// Wording tables
// ---------------------------------------------------------------------------------------------

const OVERFLOW_CODES: &[&str] = &[
    "context_length_exceeded",
    "max_tokens_exceeded",
    "exceed_context_size_error",
];

/// Phrases that mean the prompt does not fit, across OpenAI, Anthropic, vLLM, llama.cpp,
/// LM Studio, Ollama, Gemini, Z.AI and Chinese-language providers.
const OVERFLOW_PHRASES: &[&str] = &[
    "context length",
    "context size",
    "maximum context",
    "token limit",
    "too many tokens",
    "reduce the length",
    "exceeds the limit",
    "context window",
    "prompt is too long",
    "prompt exceeds max length",
    "max_tokens",
    "maximum number of tokens",
    "exceeds the max_model_len",
    "max_model_len",
    "prompt length",
    "input is too long",
    "maximum model length",
    "context length exceeded",
    "truncating input",
    "slot context",
    "n_ctx_slot",
    "超过最大长度",
    "上下文长度",
    "max input token",
    "input token",
    "exceeds the maximum number of input tokens",
];

const PAYLOAD_PHRASES: &[&str] = &[
    "request entity too large",
    "payload too large",
    "error code: 413",
];

const RATE_LIMIT_CODES: &[&str] = &[
    "rate_limit_exceeded",
    "rate_limit_error",
    "too_many_requests",
];

const RATE_LIMIT_PHRASES: &[&str] = &["rate limit", "too many requests", "rate_limit"];

/// A usage cap counts as a rate limit only when the text says it resets.
const USAGE_LIMIT_PHRASES: &[&str] = &["usage limit", "quota", "limit exceeded"];
const TRANSIENT_PHRASES: &[&str] = &[
    "try again",
    "retry",
    "resets at",
    "reset in",
    "wait",
    "requests remaining",
    "periodic",
    "window",
];

const AUTH_CODES: &[&str] = &[
    "authentication_error",
    "invalid_api_key",
    "permission_error",
];

const AUTH_PHRASES: &[&str] = &[
    "invalid api key",
    "incorrect api key",
    "invalid x-api-key",
    "unauthorized",
    "authentication",
];

// ---------------------------------------------------------------------------------------------
// Numbers in prose
// ---------------------------------------------------------------------------------------------

fn compile_all(patterns: &[&str]) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| Regex::new(pattern).ok())
        .collect()
}

fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

/// Stated context limits, most specific first. The reference list, then wordings it misses
/// (LM Studio's "context length of only N", llama.cpp's "context size (N tokens)", Gemini's
/// "tokens allowed (N)").
static CONTEXT_LIMIT_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile_all(&[
        r"max_model_len\s*(?:is\s*)?[:=(]?\s*(\d{4,})",
        r"maximum model length\s*(?:is\s*)?[:=(]?\s*(\d{4,})",
        r"(?:max(?:imum)?|limit)\s*(?:context\s*)?(?:length|size|window)?\s*(?:is|of|:)?\s*(\d{4,})",
        r"context\s*(?:length|size|window)\s*(?:is|of|:)?\s*(\d{4,})",
        r"(\d{4,})\s*(?:token)?\s*(?:context|limit)",
        r">\s*(\d{4,})\s*(?:max|limit|token)",
        r"(\d{4,})\s*(?:max(?:imum)?)\b",
        r"supports?\s+(?:only\s+)?up\s+to\s+(\d{4,})",
        r"context length of only\s+(\d{4,})",
        r"context size\s*\(\s*(\d{4,})\s*tokens?\s*\)",
        r"tokens allowed\s*\(\s*(\d{4,})\s*\)",
    ])
});

/// A stated limit outside this range is some other number (a price, a date, an id).
const PLAUSIBLE_CONTEXT_LIMIT: std::ops::RangeInclusive<u64> = 1_024..=10_000_000;

/// The context limit an error message states, if any.
pub fn parse_context_limit(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    CONTEXT_LIMIT_PATTERNS
        .iter()
        .filter_map(|pattern| first_capture(pattern, &lower))
        .find(|limit| PLAUSIBLE_CONTEXT_LIMIT.contains(limit))
}

/// How big the rejected request was, in the servers' own words.
static REQUESTED_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile_all(&[
        r"for a total of (?:at least )?(\d+)\s*tokens",
        r"requested (?:about |at least )?(\d+)\s*tokens",
        r"resulted in (?:over )?(\d+)\s*tokens",
        r"prompt is too long:\s*(\d+)\s*tokens",
        r"request has (\d+)\s*(?:input )?tokens",
        r"request \(\s*(\d+)\s*tokens\s*\)",
        r"keep the first (\d+)\s*tokens",
        r"input token count(?: is|:)?\s*\(?\s*(\d+)",
        r"prompt has (\d+)\s*tokens",
        r"(\d+)\s*tokens\s*>\s*\d+",
    ])
});

/// The request size an error message states, if any.
pub fn parse_requested_tokens(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    REQUESTED_PATTERNS
        .iter()
        .find_map(|pattern| first_capture(pattern, &lower))
}

/// Each group matches when all its phrases are present. These are the wordings from which a
/// number of available output tokens can be read: the reference's list plus Anthropic's
/// "exceed context limit" / "maximum allowed number of output tokens", OpenAI's "supports at
/// most N completion tokens" and vLLM's "is too large: N … (N > W - I)".
const PARSEABLE_OUTPUT_CAP_GROUPS: &[&[&str]] = &[
    &["max_tokens", "available_tokens"],
    &["max_tokens", "available tokens"],
    &["in the output", "maximum context length"],
    &["maximum context length", "requested", "output tokens"],
    &["range of max_tokens should be"],
    &["exceeds model", "maximum output tokens"],
    &["max_tokens", "maximum allowed number of output tokens"],
    &["max_tokens", "exceed context limit"],
    &["max_tokens is too large", "supports at most"],
    &["max_tokens", "is too large"],
];

/// Wordings that name the output cap as the problem, parseable or not.
const OUTPUT_CAP_GROUPS: &[&[&str]] = &[
    &["range of max_tokens should be"],
    &["available_tokens"],
    &["available tokens"],
    &["in the output", "maximum context length"],
    &["requested", "output tokens"],
    &["should be"],
    &["less than or equal"],
    &["must be"],
    &["exceeds model", "maximum output tokens"],
    &["output limit"],
    &["maximum allowed number of output tokens"],
    &["exceed context limit"],
    &["is too large"],
];

/// If any of these appear the input itself is too long, and compaction is the right fix even
/// when `max_tokens` is also mentioned.
const INPUT_OVERFLOW_SIGNALS: &[&str] = &[
    "prompt is too long",
    "prompt too long",
    "input is too long",
    "input token",
    "prompt length",
    "prompt contains",
    "reduce the length",
];

const OUTPUT_CAP_PARAMETERS: &[&str] =
    &["max_tokens", "max_output_tokens", "max_completion_tokens"];

fn any_group(text: &str, groups: &[&[&str]]) -> bool {
    groups
        .iter()
        .any(|group| group.iter().all(|phrase| text.contains(phrase)))
}

/// Direct statements of the room left or of the model's output ceiling, most specific first.
static AVAILABLE_OUTPUT_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile_all(&[
        r"exceeds model(?:'s)? maximum output tokens\s*\(?\s*(\d+)",
        r"range of max_tokens should be\s*\[\s*\d+\s*,\s*(\d+)\s*\]",
        r"available_tokens[:\s]+(\d+)",
        r"available\s+tokens[:\s]+(\d+)",
        r"=\s*(\d+)\s*$",
        r">\s*(\d+),\s*which is the maximum allowed number of output tokens",
        r"supports at most (\d+) completion tokens",
    ])
});

static CONTEXT_LENGTH_IS: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"maximum context length is (\d+)"));
static CONTEXT_LENGTH_IS_TOKENS: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"maximum context length is (\d+)\s*token"));
static OPENROUTER_SPLIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"\((\d+)\s+of text input,\s*(?:(\d+)\s+of tool input,\s*)?(\d+)\s+in the output\)")
});
static PROMPT_CHARACTERS: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"prompt contains (\d+)\s*character"));
static PROMPT_INPUT_TOKENS: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"prompt contains (?:at least )?(\d+)\s*input tokens"));
static REQUESTED_OUTPUT: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"requested (\d+)\s*output tokens"));
static INPUT_PLUS_OUTPUT_OVER_LIMIT: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)"));
static OUTPUT_OVER_WINDOW_MINUS_INPUT: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"\(\s*(\d+)\s*>\s*(\d+)\s*-\s*(\d+)\s*\)"));

/// How many output tokens would fit, when an error says `max_tokens` is too large in a
/// wording that allows computing it. `None` when the input alone does not fit, so that the
/// caller compacts instead of shrinking the cap forever.
pub fn parse_available_output_tokens(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    if !any_group(&lower, PARSEABLE_OUTPUT_CAP_GROUPS) {
        return None;
    }
    AVAILABLE_OUTPUT_PATTERNS
        .iter()
        .filter_map(|pattern| first_capture(pattern, &lower))
        .find(|&available| available >= 1)
        .or_else(|| openrouter_output_room(&lower))
        .or_else(|| lmstudio_output_room(&lower))
        .or_else(|| vllm_output_room(&lower))
        .or_else(|| anthropic_output_room(&lower))
        .or_else(|| vllm_max_tokens_room(&lower))
}

/// Whether an error is about the output cap rather than the input, even when no number can
/// be read from it. An error that also describes an oversized input is an overflow.
pub fn is_output_cap_error(message: &str) -> bool {
    let lower = message.to_lowercase();
    OUTPUT_CAP_PARAMETERS
        .iter()
        .any(|name| lower.contains(name))
        && any_group(&lower, OUTPUT_CAP_GROUPS)
        && !INPUT_OVERFLOW_SIGNALS
            .iter()
            .any(|signal| lower.contains(signal))
}

/// OpenRouter: "maximum context length is N … (A of text input, B of tool input, C in the
/// output)" leaves N − A − B for output.
fn openrouter_output_room(lower: &str) -> Option<u64> {
    let window = capture_u64(CONTEXT_LENGTH_IS.as_ref()?, lower, 1)?;
    let split = OPENROUTER_SPLIT.as_ref()?.captures(lower)?;
    let text_input = capture_group(&split, 1)?;
    let tool_input = capture_group(&split, 2).unwrap_or(0);
    positive(window.checked_sub(text_input)?.checked_sub(tool_input)?)
}

/// LM Studio states the window in tokens but the prompt in characters; three characters per
/// token over-reserves the input so the retried cap stays inside the window.
fn lmstudio_output_room(lower: &str) -> Option<u64> {
    let window = capture_u64(CONTEXT_LENGTH_IS_TOKENS.as_ref()?, lower, 1)?;
    let characters = capture_u64(PROMPT_CHARACTERS.as_ref()?, lower, 1)?;
    positive(window.checked_sub(characters.div_ceil(3))?)
}

/// vLLM states window and input in tokens. When it says "at least N input tokens" with N
/// derived from the rejected cap, window − N is always requested − 1 and would walk the cap
/// down one token per retry; halving the requested cap converges instead.
fn vllm_output_room(lower: &str) -> Option<u64> {
    let window = capture_u64(CONTEXT_LENGTH_IS_TOKENS.as_ref()?, lower, 1)?;
    let input = capture_u64(PROMPT_INPUT_TOKENS.as_ref()?, lower, 1)?;
    let available = window.checked_sub(input);
    let requested_output = REQUESTED_OUTPUT
        .as_ref()
        .and_then(|pattern| capture_u64(pattern, lower, 1));
    if let (Some(available), Some(requested), true) =
        (available, requested_output, lower.contains("at least"))
        && available.saturating_add(1) >= requested
    {
        return Some((requested / 2).max(1));
    }
    positive(available?)
}

/// Anthropic: "input length and `max_tokens` exceed context limit: I + M > W".
fn anthropic_output_room(lower: &str) -> Option<u64> {
    let found = INPUT_PLUS_OUTPUT_OVER_LIMIT.as_ref()?.captures(lower)?;
    let input = capture_group(&found, 1)?;
    let window = capture_group(&found, 3)?;
    positive(window.checked_sub(input)?)
}

/// vLLM: "'max_tokens' … is too large: M. … (M > W - I)".
fn vllm_max_tokens_room(lower: &str) -> Option<u64> {
    let found = OUTPUT_OVER_WINDOW_MINUS_INPUT.as_ref()?.captures(lower)?;
    let window = capture_group(&found, 2)?;
    let input = capture_group(&found, 3)?;
    positive(window.checked_sub(input)?)
}

fn positive(value: u64) -> Option<u64> {
    (value >= 1).then_some(value)
}

fn first_capture(pattern: &Regex, text: &str) -> Option<u64> {
    capture_u64(pattern, text, 1)
}

fn capture_u64(pattern: &Regex, text: &str, group: usize) -> Option<u64> {
    capture_group(&pattern.captures(text)?, group)
}

fn capture_group(captures: &regex::Captures<'_>, group: usize) -> Option<u64> {
    captures.get(group)?.as_str().parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Waiting
// ---------------------------------------------------------------------------------------------

/// A `Retry-After` value in seconds (integer or decimal). HTTP-dates are not parsed — that
/// needs a date library this crate does without — and yield `None`, leaving the caller's own
/// backoff in charge.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    duration_from_secs(seconds)
}

static RETRY_HINT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)?\b",
    )
});

/// "Please try again in 4.42s", "retry after 30 seconds", "try again in 250ms".
fn parse_retry_hint_in_text(text: &str) -> Option<Duration> {
    let found = RETRY_HINT.as_ref()?.captures(text)?;
    let amount: f64 = found.get(1)?.as_str().parse().ok()?;
    let is_millis = found
        .get(2)
        .is_some_and(|unit| unit.as_str().starts_with("ms") || unit.as_str().starts_with("milli"));
    duration_from_secs(if is_millis { amount / 1000.0 } else { amount })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn overflow(limit: Option<u64>, requested: Option<u64>) -> ErrorClass {
        ErrorClass::ContextOverflow { limit, requested }
    }

    struct Case {
        fixture: &'static str,
        body: &'static str,
        status: Option<u16>,
        retry_after: Option<&'static str>,
        expected: ErrorClass,
    }

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../tests/fixtures/overflow/", $name))
        };
    }

    macro_rules! case {
        ($name:literal, $status:expr, $retry:expr, $expected:expr) => {
            Case {
                fixture: $name,
                body: fixture!($name),
                status: $status,
                retry_after: $retry,
                expected: $expected,
            }
        };
    }

    fn cases() -> Vec<Case> {
        vec![
            case!(
                "openai_context_length.json",
                Some(400),
                None,
                overflow(Some(128_000), Some(130_532))
            ),
            case!(
                "openai_responses_context_window.json",
                Some(400),
                None,
                overflow(None, None)
            ),
            case!(
                "openai_max_tokens_too_large.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(16_384)
                }
            ),
            case!(
                "openai_unsupported_max_tokens.json",
                Some(400),
                None,
                ErrorClass::Other
            ),
            case!(
                "anthropic_prompt_too_long.json",
                Some(400),
                None,
                overflow(Some(200_000), Some(208_310))
            ),
            case!(
                "anthropic_max_tokens_too_large.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(21_041)
                }
            ),
            case!(
                "anthropic_max_tokens_over_model_cap.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(4_096)
                }
            ),
            case!(
                "anthropic_request_too_large_413.json",
                Some(413),
                None,
                ErrorClass::PayloadTooLarge
            ),
            case!(
                "anthropic_long_context_429.json",
                Some(429),
                None,
                overflow(None, None)
            ),
            case!(
                "openrouter_context.json",
                Some(400),
                None,
                overflow(Some(200_000), Some(250_000))
            ),
            case!(
                "openrouter_output_room.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(45_000)
                }
            ),
            case!(
                "openrouter_wrapped_anthropic.json",
                Some(400),
                None,
                overflow(Some(200_000), Some(210_455))
            ),
            case!(
                "vllm_context.json",
                Some(400),
                None,
                overflow(Some(32_768), Some(33_000))
            ),
            case!(
                "vllm_request_has_input_tokens.json",
                Some(400),
                None,
                overflow(Some(131_072), Some(140_000))
            ),
            case!(
                "vllm_output_tokens_at_least.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(32_768)
                }
            ),
            case!(
                "vllm_max_tokens_too_large.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(2_768)
                }
            ),
            case!(
                "llamacpp_context.json",
                Some(400),
                None,
                overflow(Some(4_096), Some(5_000))
            ),
            case!(
                "llamacpp_context_sized.json",
                Some(400),
                None,
                overflow(Some(123_904), Some(124_071))
            ),
            case!("ollama_context.json", Some(400), None, overflow(None, None)),
            case!(
                "lmstudio_context.json",
                Some(400),
                None,
                overflow(Some(2_048), Some(14_538))
            ),
            case!(
                "gemini_input_token_count.json",
                Some(400),
                None,
                overflow(Some(1_048_576), Some(1_196_265))
            ),
            case!(
                "dashscope_max_tokens_range.json",
                Some(400),
                None,
                ErrorClass::OutputCapTooLarge {
                    available: Some(65_536)
                }
            ),
            case!(
                "generic_400_prompt_too_long.txt",
                Some(400),
                None,
                overflow(None, None)
            ),
            case!(
                "openai_rate_limit.json",
                Some(429),
                None,
                ErrorClass::RateLimited {
                    retry_after: Some(Duration::from_millis(4_420))
                }
            ),
            case!(
                "anthropic_rate_limit.json",
                Some(429),
                Some("23"),
                ErrorClass::RateLimited {
                    retry_after: Some(Duration::from_secs(23))
                }
            ),
            case!(
                "openai_insufficient_quota.json",
                Some(429),
                None,
                ErrorClass::Other
            ),
            case!(
                "anthropic_overloaded_529.json",
                Some(529),
                None,
                ErrorClass::ServerError
            ),
            case!(
                "groq_413_tpm.json",
                Some(413),
                None,
                ErrorClass::PayloadTooLarge
            ),
            case!(
                "nginx_413.html",
                Some(413),
                None,
                ErrorClass::PayloadTooLarge
            ),
            case!("auth_401.json", Some(401), None, ErrorClass::Auth),
            case!("anthropic_auth_401.json", Some(401), None, ErrorClass::Auth),
        ]
    }

    #[test]
    fn every_fixture_classifies_as_expected() {
        for case in cases() {
            let got = classify_error(case.status, case.body, case.retry_after);
            assert_eq!(got, case.expected, "{}", case.fixture);
        }
    }

    #[test]
    fn fixtures_without_status_keep_their_class_where_wording_is_enough() {
        // A stream error event has no status: the wording alone must carry the decision.
        for case in cases() {
            let wording_decides = matches!(
                case.expected,
                ErrorClass::ContextOverflow { .. }
                    | ErrorClass::OutputCapTooLarge { .. }
                    | ErrorClass::PayloadTooLarge
            ) && case.fixture != "anthropic_long_context_429.json"
                && case.fixture != "groq_413_tpm.json";
            if wording_decides {
                let got = classify_error(None, case.body, None);
                assert_eq!(got, case.expected, "{} without status", case.fixture);
            }
        }
    }

    #[test]
    fn overflow_stated_in_a_413_is_an_overflow() {
        let body = r#"{"error":{"message":"prompt is too long: 140000 tokens > 131072 maximum"}}"#;
        assert_eq!(
            classify_error(Some(413), body, None),
            overflow(Some(131_072), Some(140_000))
        );
    }

    #[test]
    fn overflow_wording_in_a_5xx_is_an_overflow() {
        let body = r#"{"error":{"message":"Internal error: context length exceeded"}}"#;
        assert_eq!(classify_error(Some(500), body, None), overflow(None, None));
        let plain = r#"{"error":{"message":"upstream connect error"}}"#;
        assert_eq!(
            classify_error(Some(502), plain, None),
            ErrorClass::ServerError
        );
    }

    #[test]
    fn bare_400_is_an_overflow_only_on_a_large_session() {
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Error"}}"#;
        let mut request = FailedRequest {
            status: Some(400),
            body,
            retry_after_header: None,
            session: Some(SessionSize {
                approx_prompt_tokens: 150_000,
                context_window: 200_000,
                messages: 40,
            }),
        };
        assert_eq!(request.classify(), overflow(None, None));
        request.session = Some(SessionSize {
            approx_prompt_tokens: 2_000,
            context_window: 200_000,
            messages: 4,
        });
        assert_eq!(request.classify(), ErrorClass::Other);
        request.session = None;
        assert_eq!(request.classify(), ErrorClass::Other);
    }

    #[test]
    fn retry_after_header_wins_over_body_hints() {
        let body = fixture!("openai_rate_limit.json");
        assert_eq!(
            classify_error(Some(429), body, Some("7")),
            ErrorClass::RateLimited {
                retry_after: Some(Duration::from_secs(7))
            }
        );
    }

    #[test]
    fn retry_after_in_body_json_is_read() {
        let seconds = r#"{"error":{"message":"slow down","retry_after":12}}"#;
        let millis = r#"{"error":{"message":"slow down"},"retry-after-ms":"1500"}"#;
        assert_eq!(
            classify_error(Some(429), seconds, None),
            ErrorClass::RateLimited {
                retry_after: Some(Duration::from_secs(12))
            }
        );
        assert_eq!(
            classify_error(Some(429), millis, None),
            ErrorClass::RateLimited {
                retry_after: Some(Duration::from_millis(1_500))
            }
        );
    }

    #[test]
    fn retry_after_header_accepts_seconds_and_ignores_dates() {
        assert_eq!(parse_retry_after(" 30 "), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1_500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }

    #[test]
    fn retry_hint_in_text_understands_units() {
        let hint = |text: &str| parse_retry_hint_in_text(text);
        assert_eq!(
            hint("please try again in 250ms."),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            hint("retry after 30 seconds"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(hint("try again in 1m30s"), None);
    }

    #[test]
    fn every_pattern_compiles() {
        // Patterns that fail to compile are dropped at runtime rather than panicking, so a
        // typo must be caught here.
        assert_eq!(CONTEXT_LIMIT_PATTERNS.len(), 11);
        assert_eq!(REQUESTED_PATTERNS.len(), 10);
        assert_eq!(AVAILABLE_OUTPUT_PATTERNS.len(), 7);
        for single in [
            &CONTEXT_LENGTH_IS,
            &CONTEXT_LENGTH_IS_TOKENS,
            &OPENROUTER_SPLIT,
            &PROMPT_CHARACTERS,
            &PROMPT_INPUT_TOKENS,
            &REQUESTED_OUTPUT,
            &INPUT_PLUS_OUTPUT_OVER_LIMIT,
            &OUTPUT_OVER_WINDOW_MINUS_INPUT,
            &RETRY_HINT,
        ] {
            assert!(single.is_some());
        }
    }

    #[test]
    fn llamacpp_prose_numbers_are_read_without_json_fields() {
        let message = "request (124071 tokens) exceeds the available context size (123904 tokens), \
                       try increasing it";
        assert_eq!(parse_context_limit(message), Some(123_904));
        assert_eq!(parse_requested_tokens(message), Some(124_071));
    }

    #[test]
    fn context_limit_patterns_follow_the_reference_order() {
        let limit = parse_context_limit;
        assert_eq!(limit("max_model_len=32768"), Some(32_768));
        assert_eq!(limit("the maximum model length is 131072"), Some(131_072));
        assert_eq!(limit("250000 tokens > 200000 maximum"), Some(200_000));
        assert_eq!(
            limit("input token count is 32825 but model only supports up to 32768"),
            Some(32_768)
        );
        assert_eq!(
            limit("context window of 65536 tokens exceeded"),
            Some(65_536)
        );
        // Implausible numbers are skipped rather than trusted.
        assert_eq!(limit("maximum context length is 512 tokens"), None);
        assert_eq!(limit("no numbers here"), None);
    }

    #[test]
    fn output_cap_mentioning_an_oversized_input_is_an_overflow() {
        let message = "prompt is too long; max_tokens must be reduced as well";
        assert!(!is_output_cap_error(message));
        assert!(is_output_cap_error(
            "max_tokens must be less than or equal to 8192"
        ));
    }

    #[test]
    fn vllm_at_least_wording_halves_the_cap_instead_of_creeping() {
        let message = "This model's maximum context length is 131072 tokens. However, you requested \
                       65536 output tokens and your prompt contains at least 65537 input tokens, \
                       for a total of at least 131073 tokens.";
        assert_eq!(parse_available_output_tokens(message), Some(32_768));
    }

    #[test]
    fn lmstudio_character_count_reserves_room_for_the_prompt() {
        let message = "The maximum context length is 8192 tokens, but the requested 4096 output \
                       tokens do not fit: the prompt contains 9000 characters.";
        assert_eq!(parse_available_output_tokens(message), Some(8_192 - 3_000));
    }

    #[test]
    fn openai_sdk_prefix_around_json_is_understood() {
        let text = "Error code: 400 - {\"error\": {\"message\": \"This model's maximum context \
                    length is 8192 tokens. However, your messages resulted in 9000 tokens.\", \
                    \"type\": \"invalid_request_error\", \"code\": \"context_length_exceeded\"}}";
        assert_eq!(
            classify_error(None, text, None),
            overflow(Some(8_192), Some(9_000))
        );
    }

    #[test]
    fn plain_text_without_status_is_classified_by_wording() {
        assert_eq!(
            classify_error(None, "413 Request Entity Too Large", None),
            ErrorClass::PayloadTooLarge
        );
        assert_eq!(
            classify_error(None, "Too Many Requests", None),
            ErrorClass::RateLimited { retry_after: None }
        );
        assert_eq!(
            classify_error(None, "Invalid API key", None),
            ErrorClass::Auth
        );
        assert_eq!(
            classify_error(None, "Overloaded", None),
            ErrorClass::ServerError
        );
        assert_eq!(
            classify_error(None, "model not found", None),
            ErrorClass::Other
        );
    }

    #[test]
    fn retryable_means_the_same_request_may_succeed() {
        assert!(ErrorClass::ServerError.is_retryable());
        assert!(ErrorClass::RateLimited { retry_after: None }.is_retryable());
        assert!(!overflow(None, None).is_retryable());
        assert!(!ErrorClass::OutputCapTooLarge { available: None }.is_retryable());
        assert!(!ErrorClass::Auth.is_retryable());
        assert!(overflow(None, None).should_compact());
        assert!(ErrorClass::PayloadTooLarge.should_compact());
        assert!(!ErrorClass::OutputCapTooLarge { available: None }.should_compact());
    }

    #[test]
    fn descriptions_carry_the_numbers() {
        assert_eq!(
            overflow(Some(128_000), Some(130_532)).describe(),
            "context window exceeded (130532 tokens > 128000 limit)"
        );
        assert_eq!(
            ErrorClass::RateLimited {
                retry_after: Some(Duration::from_millis(4_420))
            }
            .to_string(),
            "rate limited (retry in 4.4s)"
        );
        assert_eq!(
            ErrorClass::OutputCapTooLarge {
                available: Some(10)
            }
            .describe(),
            "output cap too large (10 tokens of room left)"
        );
    }
}
