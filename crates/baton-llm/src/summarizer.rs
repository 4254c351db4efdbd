//! The LLM-backed summarizer: `baton-core`'s [`Summarizer`] over a [`Provider`].
//!
//! It sends the compressor's prompt as one user message with no output cap (thinking models
//! burn a cap on reasoning and return truncated summaries) to the auxiliary model when one is
//! configured, else to the session's main model. A separate auxiliary model that fails falls
//! back once to the main model for the rest of the session, so a wrong `auxiliary.compression`
//! setting costs one failed call, not every compaction. Failures start a [`Cooldown`] by kind.
//!
//! Failures are typed ([`SummaryFailure`]): auth, quota and network failures say so, so the
//! caller can leave the conversation unchanged rather than install a degraded summary and
//! throw the original turns out of the live context.

use crate::config::{ProviderConfig, ProviderKind};
use crate::cooldown::{Cooldown, CooldownReason};
use crate::errors::{ErrorKind, LlmError};
use crate::provider::Provider;
use crate::redact_key::ApiKey;
use crate::request::ChatRequest;
use crate::transport::HttpSettings;
use baton_core::message::Message;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A provider and the model to ask on it.
#[derive(Clone)]
pub struct ModelRoute {
    pub provider: Arc<dyn Provider>,
    pub model: String,
}

impl ModelRoute {
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> ModelRoute {
        ModelRoute {
            provider,
            model: model.into(),
        }
    }

    fn same_as(&self, other: &ModelRoute) -> bool {
        self.model == other.model
            && self.provider.name() == other.provider.name()
            && self.provider.base_url() == other.provider.base_url()
    }
}

impl fmt::Debug for ModelRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}@{}",
            self.provider.name(),
            self.model,
            self.provider.base_url()
        )
    }
}

/// The `[auxiliary.compression]` settings: a separate (usually cheaper) model for summaries.
/// Unset fields default to the main model's.
#[derive(Debug, Clone, Default)]
pub struct AuxiliaryConfig {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Environment variable holding the key; defaults to the provider's usual one.
    pub api_key_env: Option<String>,
    pub http: Option<HttpSettings>,
}

impl AuxiliaryConfig {
    pub fn is_configured(&self) -> bool {
        self.provider.is_some() || self.model.is_some() || self.base_url.is_some()
    }

    /// The auxiliary route, `None` when not configured. A model must be known (given here or
    /// taken from `main`).
    pub fn route(&self, main: Option<&ModelRoute>) -> Result<Option<ModelRoute>, LlmError> {
        if !self.is_configured() {
            return Ok(None);
        }
        let main_kind = main.and_then(|m| ProviderKind::parse(m.provider.name()));
        let kind = self.provider.or(main_kind).unwrap_or(ProviderKind::OpenAi);
        let model = self
            .model
            .clone()
            .or_else(|| main.map(|m| m.model.clone()))
            .ok_or_else(|| LlmError::InvalidRequest {
                message:
                    "auxiliary compression model: no model configured and no main model to borrow"
                        .into(),
            })?;
        let base_url = self.base_url.clone().or_else(|| {
            main.filter(|_| Some(kind) == main_kind)
                .map(|m| m.provider.base_url().to_string())
        });
        let key_env = self.api_key_env.as_deref().or(kind.default_key_env());
        let mut config = ProviderConfig::new(kind).api_key(key_env.and_then(ApiKey::from_env));
        config.base_url = base_url;
        if let Some(http) = self.http {
            config.http = http;
        }
        Ok(Some(ModelRoute::new(config.build()?, model)))
    }
}

/// Why a summary could not be produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryFailureKind {
    /// The key is missing or rejected.
    Auth,
    /// Out of credits or quota.
    Quota,
    /// The server could not be reached, or the connection broke mid-answer.
    Network,
    Timeout,
    RateLimited,
    Server,
    /// The answer was empty or not what the API documents.
    MalformedOutput,
    /// No model to ask.
    NoProvider,
    /// Resting after an earlier failure; nothing was sent.
    CoolingDown,
    Other,
}

impl SummaryFailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryFailureKind::Auth => "auth",
            SummaryFailureKind::Quota => "quota",
            SummaryFailureKind::Network => "network",
            SummaryFailureKind::Timeout => "timeout",
            SummaryFailureKind::RateLimited => "rate limited",
            SummaryFailureKind::Server => "server error",
            SummaryFailureKind::MalformedOutput => "malformed output",
            SummaryFailureKind::NoProvider => "no provider",
            SummaryFailureKind::CoolingDown => "cooling down",
            SummaryFailureKind::Other => "failed",
        }
    }

    fn from_error(error: &LlmError) -> SummaryFailureKind {
        match error.kind() {
            ErrorKind::Auth => SummaryFailureKind::Auth,
            ErrorKind::Quota => SummaryFailureKind::Quota,
            ErrorKind::Connect | ErrorKind::Interrupted => SummaryFailureKind::Network,
            ErrorKind::Timeout => SummaryFailureKind::Timeout,
            ErrorKind::RateLimited => SummaryFailureKind::RateLimited,
            ErrorKind::Server => SummaryFailureKind::Server,
            ErrorKind::InvalidResponse => SummaryFailureKind::MalformedOutput,
            _ => SummaryFailureKind::Other,
        }
    }

    fn cooldown(self) -> Option<CooldownReason> {
        match self {
            SummaryFailureKind::Timeout | SummaryFailureKind::RateLimited => {
                Some(CooldownReason::Timeout)
            }
            SummaryFailureKind::MalformedOutput => Some(CooldownReason::MalformedOutput),
            SummaryFailureKind::NoProvider => Some(CooldownReason::NoProvider),
            SummaryFailureKind::CoolingDown => None,
            _ => Some(CooldownReason::Other),
        }
    }
}

/// A typed summarizer failure. `message` never contains the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryFailure {
    pub kind: SummaryFailureKind,
    /// The model that failed (empty for `NoProvider`).
    pub model: String,
    pub message: String,
    /// For timeouts: the limit that ran out, in whole seconds.
    pub timeout_seconds: Option<u64>,
}

impl SummaryFailure {
    /// Failures after which the caller should keep the conversation as it is: nothing about
    /// the turns is wrong, the summarizer just cannot be reached or paid for.
    pub fn leaves_conversation_unchanged(&self) -> bool {
        matches!(
            self.kind,
            SummaryFailureKind::Auth
                | SummaryFailureKind::Quota
                | SummaryFailureKind::Network
                | SummaryFailureKind::NoProvider
        )
    }
}

impl fmt::Display for SummaryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.model.is_empty() {
            write!(f, "{}: {}", self.kind.as_str(), self.message)
        } else {
            write!(
                f,
                "{} ({}): {}",
                self.kind.as_str(),
                self.model,
                self.message
            )
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// The auxiliary model failed once; the main model is used from now on.
    fallen_back: bool,
    cooldown: Cooldown,
    last_failure: Option<SummaryFailure>,
    auxiliary_failure: Option<SummaryFailure>,
}

/// Summaries from a model.
pub struct LlmSummarizer {
    main: Option<ModelRoute>,
    auxiliary: Option<ModelRoute>,
    state: Mutex<State>,
}

impl LlmSummarizer {
    /// `main` is the session's model; `auxiliary` the configured compression model, if any.
    pub fn new(main: Option<ModelRoute>, auxiliary: Option<ModelRoute>) -> LlmSummarizer {
        LlmSummarizer {
            main,
            auxiliary,
            state: Mutex::new(State::default()),
        }
    }

    /// The last failure, typed (cleared by a success).
    pub fn last_failure(&self) -> Option<SummaryFailure> {
        self.state.lock().ok()?.last_failure.clone()
    }

    /// Why the auxiliary model was abandoned for the main one, if it was.
    pub fn auxiliary_failure(&self) -> Option<SummaryFailure> {
        self.state.lock().ok()?.auxiliary_failure.clone()
    }

    /// Time left in the cooldown at `now`.
    pub fn cooldown_remaining(&self, now: Instant) -> Option<Duration> {
        self.state.lock().ok()?.cooldown.remaining(now)
    }

    /// Lifts the cooldown (a manual compaction: the user asked).
    pub fn clear_cooldown(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.cooldown.clear();
        }
    }

    fn current_route(&self) -> Option<(ModelRoute, bool)> {
        let fallen_back = self.state.lock().map(|s| s.fallen_back).unwrap_or(true);
        match (&self.auxiliary, &self.main) {
            (Some(aux), main) if !fallen_back => {
                let separate = main.as_ref().is_some_and(|m| !m.same_as(aux));
                Some((aux.clone(), separate))
            }
            (_, Some(main)) => Some((main.clone(), false)),
            (Some(aux), None) => Some((aux.clone(), false)),
            (None, None) => None,
        }
    }

    /// Summarizes `prompt`, with fallback and cooldown; the typed core of the trait method.
    pub async fn summarize_prompt(&self, prompt: &str) -> Result<String, SummaryFailure> {
        let now = Instant::now();
        if let Some(left) = self.cooldown_remaining(now) {
            return Err(SummaryFailure {
                kind: SummaryFailureKind::CoolingDown,
                model: String::new(),
                message: format!("resting {} s after a failure", left.as_secs()),
                timeout_seconds: None,
            });
        }
        let result = match self.current_route() {
            None => Err(SummaryFailure {
                kind: SummaryFailureKind::NoProvider,
                model: String::new(),
                message: "no LLM provider configured for summaries".into(),
                timeout_seconds: None,
            }),
            Some((route, separate)) => match ask(&route, prompt).await {
                Err(failure) if separate => {
                    tracing::warn!(%failure, "auxiliary summary model failed; falling back to the main model");
                    if let Ok(mut s) = self.state.lock() {
                        s.fallen_back = true;
                        s.auxiliary_failure = Some(failure);
                    }
                    match &self.main {
                        Some(main) => ask(main, prompt).await,
                        None => Err(SummaryFailure {
                            kind: SummaryFailureKind::NoProvider,
                            model: String::new(),
                            message: "no main model to fall back to".into(),
                            timeout_seconds: None,
                        }),
                    }
                }
                other => other,
            },
        };
        if let Ok(mut s) = self.state.lock() {
            match &result {
                Ok(_) => {
                    s.cooldown.clear();
                    s.last_failure = None;
                }
                Err(failure) => {
                    if let Some(reason) = failure.kind.cooldown() {
                        s.cooldown.record(reason, Instant::now());
                    }
                    s.last_failure = Some(failure.clone());
                }
            }
        }
        result
    }
}

/// One call to one model; the body with thinking blocks removed.
async fn ask(route: &ModelRoute, prompt: &str) -> Result<String, SummaryFailure> {
    let request = ChatRequest::new(route.model.clone(), vec![Message::user(prompt)]);
    let failure = |kind, message: String| SummaryFailure {
        kind,
        model: route.model.clone(),
        message,
        timeout_seconds: None,
    };
    let response = route.provider.complete(&request).await.map_err(|e| {
        let mut f = failure(SummaryFailureKind::from_error(&e), e.to_string());
        if let LlmError::Timeout { seconds, .. } = e {
            f.timeout_seconds = Some(seconds.ceil() as u64);
        }
        f
    })?;
    let text = strip_think_blocks(&response.message.text());
    if text.trim().is_empty() {
        return Err(failure(
            SummaryFailureKind::MalformedOutput,
            format!("{} returned an empty summary", route.provider.name()),
        ));
    }
    Ok(text.trim().to_string())
}

/// Removes `<think>…</think>`-style blocks some models put in their text. Returns the input
/// unchanged when removing them would leave nothing.
pub fn strip_think_blocks(text: &str) -> String {
    let mut out = text.to_string();
    for tag in ["think", "thinking", "reasoning"] {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            match out[start..].find(&close) {
                Some(end) => out.replace_range(start..start + end + close.len(), ""),
                None => break,
            }
        }
    }
    if out.trim().is_empty() {
        text.to_string()
    } else {
        out
    }
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> String {
        match self.current_route() {
            Some((route, _)) => format!("llm:{}", route.model),
            None => "llm".into(),
        }
    }

    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            let name = self.name();
            self.summarize_prompt(input.prompt)
                .await
                .map_err(|failure| match failure.kind {
                    _ if failure.leaves_conversation_unchanged() => SummaryError::Unavailable {
                        summarizer: name,
                        reason: failure.kind.as_str().to_string(),
                        message: failure.to_string(),
                    },
                    SummaryFailureKind::Timeout => SummaryError::Timeout {
                        summarizer: name,
                        seconds: 0,
                    },
                    SummaryFailureKind::MalformedOutput
                        if failure.message.contains("empty summary") =>
                    {
                        SummaryError::Empty { summarizer: name }
                    }
                    _ => SummaryError::Failed {
                        summarizer: name,
                        message: failure.to_string(),
                    },
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_blocks_are_removed_unless_that_empties_the_text() {
        assert_eq!(
            strip_think_blocks("<think>x</think>## Goal\ny").trim(),
            "## Goal\ny"
        );
        assert_eq!(
            strip_think_blocks("<think>only</think>"),
            "<think>only</think>"
        );
    }
}
