//! One turn: the user's message in, events out, until a final answer, the iteration budget, an
//! interrupt or an error that recovery cannot fix. Every exit leaves a valid, resumable
//! session: each tool call has its result and the stored rows equal what the model saw.

use crate::agent::Agent;
use crate::compaction::Trigger;
use crate::config::PREFLIGHT_PASSES;
use crate::error::AgentError;
use crate::event::AgentEvent;
use crate::interrupt::Interrupt;
use crate::recovery::{Recovery, RecoveryState, decide_recovery};
use crate::tool_exec::run_tool_calls;
use baton_core::Message;
use baton_llm::{ChatRequest, ChatResponse, LlmError, StreamEvent};
use serde::Serialize;

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    FinalAnswer,
    IterationLimit,
    Interrupted,
    Error,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::FinalAnswer => "final_answer",
            StopReason::IterationLimit => "iteration_limit",
            StopReason::Interrupted => "interrupted",
            StopReason::Error => "error",
        }
    }
}

/// What a turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    pub reason: StopReason,
    /// The last assistant text of the turn (the answer, when `reason` is `FinalAnswer`).
    pub final_text: String,
    /// The error message when `reason` is `Error`.
    pub error: Option<String>,
    /// Model calls made in this turn.
    pub calls: u32,
}

/// The text stored in place of an answer cut off by the user.
const INTERRUPTED_ANSWER: &str = "[interrupted by the user]";

impl Agent {
    /// Runs one turn for `user_text`. Store failures are errors; everything else (a refused
    /// request, an exhausted recovery, an interrupt) ends the turn with an outcome and events.
    pub async fn run_turn(
        &mut self,
        user_text: &str,
        interrupt: &Interrupt,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        sink(AgentEvent::TurnStarted {
            session_id: self.session.id.clone(),
        });
        if let Some(memory) = &self.memory {
            memory.on_turn_start(u64::from(self.totals.calls), user_text);
        }
        self.append(vec![Message::user(user_text)])?;
        self.note_first_request();
        let outcome = self.drive(interrupt, sink).await?;
        sink(AgentEvent::TurnFinished {
            session_id: self.session.id.clone(),
            reason: outcome.reason.as_str().into(),
        });
        Ok(outcome)
    }

    async fn drive(
        &mut self,
        interrupt: &Interrupt,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        let mut recovery = RecoveryState::default();
        let mut calls = 0u32;
        let mut last_text = String::new();
        let mut preflight_done = false;
        while calls < self.config.max_iterations {
            if interrupt.is_raised() {
                return Ok(outcome(StopReason::Interrupted, last_text, None, calls));
            }
            if !preflight_done {
                self.preflight(sink).await?;
                preflight_done = true;
            }
            let request = self.build_request();
            calls += 1;
            // Remember what this request was estimated at, to calibrate on its usage.
            self.estimator.estimate(&self.session.messages);
            let answer = self.call_model(&request, interrupt, sink).await;
            let sent_output_cap = request.max_output_tokens;
            // The request shares the history; dropping it lets appends extend it in place.
            drop(request);
            let response = match answer {
                Ok(response) => response,
                Err(CallFailure::Interrupted(partial)) => {
                    let text = if partial.is_empty() {
                        INTERRUPTED_ANSWER.to_string()
                    } else {
                        format!("{partial}\n{INTERRUPTED_ANSWER}")
                    };
                    self.append(vec![Message::assistant(text)])?;
                    return Ok(outcome(StopReason::Interrupted, partial, None, calls));
                }
                Err(CallFailure::Llm(error)) => {
                    match decide_recovery(
                        &error,
                        &mut recovery,
                        self.config.compression_attempts(),
                        self.config.context_length,
                        sent_output_cap,
                        self.config.compression_enabled,
                    ) {
                        Recovery::RetryWithOutputCap(cap) => {
                            sink(AgentEvent::Retry {
                                reason: format!("{error}; retrying with max output {cap} tokens"),
                                attempt: 1,
                            });
                            self.pending_output_cap = Some(cap);
                            continue;
                        }
                        Recovery::CompactAndRetry { new_window } => {
                            if let Some(window) = new_window {
                                let model = self.config.model.clone();
                                self.switch_model(&model, window);
                            }
                            sink(AgentEvent::Retry {
                                reason: format!(
                                    "{error}; compacting ({}/{})",
                                    recovery.compression_attempts,
                                    self.config.compression_attempts()
                                ),
                                attempt: recovery.compression_attempts,
                            });
                            let rough = self.rough_prompt_tokens();
                            let done = self
                                .compact(Trigger::Overflow, None, true, Some(rough), sink)
                                .await?;
                            if done.is_none() {
                                let message = format!(
                                    "Context window exceeded (~{rough} tokens) and the conversation \
                                     cannot be compacted further. Start a fresh session with /new, \
                                     or run /compress <focus> to keep only what matters."
                                );
                                sink(AgentEvent::Error {
                                    message: message.clone(),
                                });
                                return Ok(outcome(
                                    StopReason::Error,
                                    last_text,
                                    Some(message),
                                    calls,
                                ));
                            }
                            continue;
                        }
                        Recovery::Stop(message) => {
                            sink(AgentEvent::Error {
                                message: message.clone(),
                            });
                            return Ok(outcome(StopReason::Error, last_text, Some(message), calls));
                        }
                    }
                }
            };
            let cost = self.account(&response, sink);
            last_text = response.message.text();
            let wants_tools = response.message.has_tool_calls();
            let assistant = response.message.clone();
            self.append_answer(assistant.clone(), &response.usage, cost)?;
            if wants_tools {
                let ctx = self.tool_context(interrupt);
                let results =
                    run_tool_calls(&assistant, &self.tools, &ctx, &self.tool_results, sink).await;
                self.append(results)?;
            }
            self.post_response_check(response.usage.prompt(), sink)
                .await?;
            if interrupt.is_raised() {
                return Ok(outcome(StopReason::Interrupted, last_text, None, calls));
            }
            if !wants_tools {
                return Ok(outcome(StopReason::FinalAnswer, last_text, None, calls));
            }
        }
        sink(AgentEvent::Notice {
            message: format!(
                "stopped after {} model calls in one turn (max_iterations); send another message to continue",
                self.config.max_iterations
            ),
        });
        Ok(outcome(StopReason::IterationLimit, last_text, None, calls))
    }

    /// Before the first call of a turn: compress while the estimate of the request is over the
    /// threshold, up to [`PREFLIGHT_PASSES`] passes, stopping when a pass cannot shrink it.
    pub(crate) async fn preflight(
        &mut self,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<(), AgentError> {
        if !self.config.compression_enabled {
            return Ok(());
        }
        for _ in 0..PREFLIGHT_PASSES {
            let estimate = self.estimator.estimate(&self.session.messages);
            if !self.engine.should_compress(Some(estimate)) {
                return Ok(());
            }
            let before = self.session.messages.len();
            let done = self
                .compact(Trigger::Preflight, None, false, Some(estimate), sink)
                .await?;
            if done.is_none() || self.session.messages.len() >= before {
                return Ok(());
            }
        }
        Ok(())
    }

    /// After a response: compact when the provider's real prompt size is over the threshold.
    async fn post_response_check(
        &mut self,
        prompt_tokens: u64,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<(), AgentError> {
        if !self.config.compression_enabled || prompt_tokens == 0 {
            return Ok(());
        }
        if self.engine.should_compress(Some(prompt_tokens)) {
            self.compact(
                Trigger::PostResponse,
                None,
                false,
                Some(prompt_tokens),
                sink,
            )
            .await?;
            return Ok(());
        }
        if let Some(decision) = self.cost_decision(prompt_tokens)
            && decision.compacts()
        {
            self.pending_decision = Some(decision);
            let done = self
                .compact(Trigger::Cost, None, true, Some(prompt_tokens), sink)
                .await?;
            if done.is_none() {
                self.pending_decision = None;
            }
        }
        Ok(())
    }

    /// The request for the current session: the byte-stable system prompt, the messages as
    /// stored, the tool schemas in registration order, the cache layout for the route.
    pub fn build_request(&mut self) -> ChatRequest {
        let mut request =
            ChatRequest::shared(self.config.model.clone(), self.session.messages.clone());
        request.system = Some(self.session.system_prompt.clone()).filter(|s| !s.is_empty());
        request.tools = self.tools.schemas();
        request.max_output_tokens = self
            .pending_output_cap
            .take()
            .or(self.config.max_output_tokens);
        request.cache = self.config.cache_ttl;
        request
    }

    /// One streamed call, raced against the interrupt.
    async fn call_model(
        &mut self,
        request: &ChatRequest,
        interrupt: &Interrupt,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<ChatResponse, CallFailure> {
        let mut partial = String::new();
        let provider = self.provider.clone();
        let result = {
            let mut on_event = |event: StreamEvent| match event {
                StreamEvent::TextDelta(text) => {
                    partial.push_str(&text);
                    sink(AgentEvent::TextDelta { text });
                }
                StreamEvent::ReasoningDelta(text) => sink(AgentEvent::ReasoningDelta { text }),
                StreamEvent::ToolCallDelta { .. } | StreamEvent::Usage(_) => {}
            };
            tokio::select! {
                result = provider.stream(request, &mut on_event) => Some(result),
                () = interrupt.raised() => None,
            }
        };
        match result {
            None => Err(CallFailure::Interrupted(partial)),
            Some(Ok(response)) => Ok(response),
            Some(Err(LlmError::Interrupted { .. })) if interrupt.is_raised() => {
                Err(CallFailure::Interrupted(partial))
            }
            Some(Err(error)) => Err(CallFailure::Llm(error)),
        }
    }

    /// Feeds one response's usage to the engine, the estimator's calibration, the totals and
    /// the host; returns its cost (stored with the answer).
    fn account(
        &mut self,
        response: &ChatResponse,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Option<f64> {
        let usage = response.usage;
        self.engine.update_from_response(&usage);
        self.estimator.observe(usage.prompt());
        let model = response
            .model
            .clone()
            .unwrap_or_else(|| self.config.model.clone());
        let cost = self
            .prices
            .cost(Some(&self.config.model), &usage)
            .ok()
            .map(|c| c.usd);
        self.totals.add(&usage, cost);
        self.observe_call(&usage, cost);
        sink(AgentEvent::Usage {
            model,
            usage,
            cost_usd: cost,
        });
        cost
    }
}

enum CallFailure {
    /// The user interrupted; holds the text that had arrived.
    Interrupted(String),
    Llm(LlmError),
}

fn outcome(
    reason: StopReason,
    final_text: String,
    error: Option<String>,
    calls: u32,
) -> TurnOutcome {
    TurnOutcome {
        reason,
        final_text,
        error,
        calls,
    }
}
