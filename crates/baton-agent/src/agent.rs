//! The agent: one live session and everything a turn needs. Hosts build it with
//! [`AgentBuilder`], start or resume a session, then call [`Agent::run_turn`] per user message.

use crate::approval::{Approver, RefuseAll};
use crate::config::{AgentConfig, RESUME_HYGIENE_RATIO};
use crate::error::AgentError;
use crate::estimate::RequestEstimator;
use crate::event::AgentEvent;
use crate::live_session::LiveSession;
use crate::prompt_source::{FixedPrompt, SystemPromptSource};
use crate::tool::{ToolContext, ToolRegistry};
use crate::totals::SessionTotals;
use baton_core::engine::{ContextEngine, EngineRegistry};
use baton_core::pricing::PriceTable;
use baton_core::tool_output::ToolResultStore;
use baton_llm::Provider;
use baton_memory::MemoryManager;
use baton_memory::provider::SessionSwitch;
use baton_store::{NewSession, SessionStore};
use std::sync::Arc;

/// Everything an [`Agent`] is made of; only the config, provider and store are required.
pub struct AgentBuilder {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    store: Arc<dyn SessionStore>,
    engine: Option<Box<dyn ContextEngine>>,
    tools: ToolRegistry,
    approver: Arc<dyn Approver>,
    prices: PriceTable,
    prompt: Arc<dyn SystemPromptSource>,
    memory: Option<Arc<MemoryManager>>,
    tool_results: Option<ToolResultStore>,
}

impl AgentBuilder {
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        store: Arc<dyn SessionStore>,
    ) -> Self {
        AgentBuilder {
            config,
            provider,
            store,
            engine: None,
            tools: ToolRegistry::new(),
            approver: Arc::new(RefuseAll {
                explanation: "no one is there to confirm it".into(),
            }),
            prices: PriceTable::builtin(),
            prompt: Arc::new(FixedPrompt(String::new())),
            memory: None,
            tool_results: None,
        }
    }

    /// The context engine (default: the built-in compressor with the extractive summarizer
    /// and the config's window).
    pub fn engine(mut self, engine: Box<dyn ContextEngine>) -> Self {
        self.engine = Some(engine);
        self
    }

    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    pub fn prices(mut self, prices: PriceTable) -> Self {
        self.prices = prices;
        self
    }

    pub fn system_prompt(mut self, source: Arc<dyn SystemPromptSource>) -> Self {
        self.prompt = source;
        self
    }

    pub fn memory(mut self, memory: Arc<MemoryManager>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Where oversized tool results go (default: `<baton_home>/tool-results` with the default
    /// budget).
    pub fn tool_results(mut self, store: ToolResultStore) -> Self {
        self.tool_results = Some(store);
        self
    }

    fn parts(self) -> Result<Parts, AgentError> {
        let engine = match self.engine {
            Some(engine) => engine,
            None => {
                let compressor = baton_core::compress::CompressorConfig {
                    model: self.config.model.clone(),
                    context_length: self.config.context_length,
                    max_output_tokens: self.config.max_output_tokens.map(u64::from),
                    ..Default::default()
                };
                EngineRegistry::with_builtin()
                    .create("", &compressor)
                    .map_err(|e| AgentError::Config(e.to_string()))?
            }
        };
        let tool_results = self
            .tool_results
            .unwrap_or_else(|| ToolResultStore::new(&self.config.baton_home));
        Ok(Parts {
            config: self.config,
            provider: self.provider,
            store: self.store,
            engine,
            tools: self.tools,
            approver: self.approver,
            prices: self.prices,
            prompt: self.prompt,
            memory: self.memory,
            tool_results,
        })
    }

    /// Starts a new session.
    pub fn start(self) -> Result<Agent, AgentError> {
        let parts = self.parts()?;
        let system_prompt = parts.prompt.build();
        let id = parts.store.create_session(NewSession {
            model: Some(parts.config.model.clone()),
            system_prompt: Some(system_prompt.clone()),
            ..NewSession::new(parts.config.source.clone())
        })?;
        let session = LiveSession {
            id: id.clone(),
            lineage: vec![id],
            messages: Arc::new(Vec::new()),
            system_prompt,
        };
        Ok(Agent::assemble(parts, session, "new"))
    }

    /// Continues the session `id` names (its newest continuation, if it was compacted), with
    /// the system prompt it was started with (so the provider's cache still matches).
    pub fn resume(self, id: &str) -> Result<Agent, AgentError> {
        let parts = self.parts()?;
        let tip = parts.store.compression_tip(id)?;
        let stored = parts
            .store
            .get_session(&tip)?
            .ok_or_else(|| AgentError::NoSuchSession(id.to_string()))?;
        let messages = parts.store.messages(&tip)?;
        let lineage = parts.store.compression_chain(&tip)?;
        let system_prompt = stored.system_prompt.unwrap_or_else(|| parts.prompt.build());
        let session = LiveSession {
            id: tip,
            lineage,
            messages: Arc::new(messages),
            system_prompt,
        };
        Ok(Agent::assemble(parts, session, "resume"))
    }
}

struct Parts {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    store: Arc<dyn SessionStore>,
    engine: Box<dyn ContextEngine>,
    tools: ToolRegistry,
    approver: Arc<dyn Approver>,
    prices: PriceTable,
    prompt: Arc<dyn SystemPromptSource>,
    memory: Option<Arc<MemoryManager>>,
    tool_results: ToolResultStore,
}

/// A live agent session.
pub struct Agent {
    pub(crate) config: AgentConfig,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) engine: Box<dyn ContextEngine>,
    pub(crate) tools: ToolRegistry,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) prices: PriceTable,
    pub(crate) prompt: Arc<dyn SystemPromptSource>,
    pub(crate) memory: Option<Arc<MemoryManager>>,
    pub(crate) tool_results: ToolResultStore,
    pub(crate) session: LiveSession,
    pub(crate) estimator: RequestEstimator,
    pub(crate) totals: SessionTotals,
    /// A one-shot output cap set by overflow recovery, consumed by the next request.
    pub(crate) pending_output_cap: Option<u32>,
    /// Messages the user pinned (kept verbatim through compactions), oldest first.
    pub(crate) pins: Vec<baton_core::Message>,
    /// The lineage's first user request, restored verbatim after each compaction.
    pub(crate) first_request: Option<baton_core::Message>,
    /// The last calls' real usage: hit rate and growth for the cost policy.
    pub(crate) cache_stats: crate::economics::CacheStats,
    /// Every compaction of this agent's run, with what it cost and saved.
    pub(crate) economics: Vec<crate::economics::CompactionEconomics>,
    /// The cost policy's decision for the compaction about to run.
    pub(crate) pending_decision: Option<crate::economics::Decision>,
}

impl Agent {
    fn assemble(parts: Parts, session: LiveSession, reason: &str) -> Agent {
        let tool_schemas = parts.tools.schemas();
        let estimator =
            RequestEstimator::new(&parts.config.model, &session.system_prompt, &tool_schemas);
        let mut agent = Agent {
            config: parts.config,
            provider: parts.provider,
            store: parts.store,
            engine: parts.engine,
            tools: parts.tools,
            approver: parts.approver,
            prices: parts.prices,
            prompt: parts.prompt,
            memory: parts.memory,
            tool_results: parts.tool_results,
            session,
            estimator,
            totals: SessionTotals::default(),
            pending_output_cap: None,
            pins: Vec::new(),
            first_request: None,
            cache_stats: Default::default(),
            economics: Vec::new(),
            pending_decision: None,
        };
        agent.pins = agent.load_pins();
        agent.first_request = agent.find_first_request();
        agent.engine.on_session_start(&agent.session.id);
        if let Some(memory) = &agent.memory {
            memory.on_session_switch(&SessionSwitch {
                new_session_id: agent.session.id.clone(),
                parent_session_id: None,
                reset: reason == "new",
                reason: reason.into(),
            });
        }
        agent
    }

    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    pub fn session(&self) -> &LiveSession {
        &self.session
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    pub fn totals(&self) -> &SessionTotals {
        &self.totals
    }

    pub fn engine_status(&self) -> baton_core::engine::EngineStatus {
        self.engine.status()
    }

    /// How far the calibrated request estimate was from the provider's counts.
    pub fn estimate_accuracy(&self) -> crate::estimate::EstimateAccuracy {
        self.estimator.accuracy()
    }

    /// The next request's size as the runtime estimates it, calibrated by the provider's
    /// counts so far (what a status line shows between calls).
    pub fn estimated_prompt_tokens(&mut self) -> u64 {
        self.estimator.peek(&self.session.messages)
    }

    /// The rough estimate of the next request (the reference's hygiene measure).
    pub fn rough_prompt_tokens(&mut self) -> u64 {
        self.estimator.raw(&self.session.messages) as u64
    }

    /// Whether a resumed session is over the hygiene line (85% of the window by the rough
    /// estimate) and should be compacted before its first turn.
    pub fn needs_resume_hygiene(&mut self) -> bool {
        let rough = self.rough_prompt_tokens() as f64;
        rough > self.config.context_length as f64 * RESUME_HYGIENE_RATIO
    }

    /// Compacts a resumed session that is over the hygiene line; returns whether it did.
    pub async fn resume_hygiene(
        &mut self,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<bool, AgentError> {
        if !self.config.compression_enabled || !self.needs_resume_hygiene() {
            return Ok(false);
        }
        let rough = self.rough_prompt_tokens();
        let done = self
            .compact(
                crate::compaction::Trigger::Resume,
                None,
                true,
                Some(rough),
                sink,
            )
            .await?;
        Ok(done.is_some())
    }

    /// Compacts now if the context is over the engine's threshold for the current window
    /// (what the next turn's preflight would do), so a switch to a smaller window shows its
    /// compaction at once. Returns whether the context changed.
    pub async fn fit_to_window(
        &mut self,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<bool, AgentError> {
        let before = (self.session.id.clone(), self.session.messages.len());
        self.preflight(sink).await?;
        Ok((self.session.id.clone(), self.session.messages.len()) != before)
    }

    /// Switches the model; a smaller window makes the next turn's preflight compress before
    /// the first call.
    pub fn switch_model(&mut self, model: &str, context_length: u64) {
        self.config.model = model.to_string();
        self.config.context_length = context_length;
        self.engine.update_model(model, context_length);
        self.estimator.set_model(model);
    }

    /// Pins the live message at `position` (user or assistant): it stays verbatim through
    /// every later compaction, within the pin budget.
    pub fn pin(&mut self, position: usize) -> Result<(), AgentError> {
        let message = self
            .session
            .messages
            .get(position)
            .cloned()
            .ok_or_else(|| {
                AgentError::Pin(format!(
                    "no message at position {position} (the view has {})",
                    self.session.messages.len()
                ))
            })?;
        if let Some(why) = crate::pins::refuse_pin(&message) {
            return Err(AgentError::Pin(why));
        }
        if !self
            .pins
            .iter()
            .any(|p| p.text() == message.text() && p.role == message.role)
        {
            self.pins.push(message);
            self.save_pins()?;
        }
        Ok(())
    }

    /// Removes pin `index` (as listed by [`Agent::pins`]).
    pub fn unpin(&mut self, index: usize) -> Result<(), AgentError> {
        if index >= self.pins.len() {
            return Err(AgentError::Pin(format!("there is no pin {index}")));
        }
        self.pins.remove(index);
        self.save_pins()
    }

    /// The compactions of this run and their economics (what `/usage` shows).
    pub fn economics(&self) -> &[crate::economics::CompactionEconomics] {
        &self.economics
    }

    pub fn pins(&self) -> &[baton_core::Message] {
        &self.pins
    }

    /// The first real user message of the lineage's root (read once, when the agent starts).
    fn find_first_request(&self) -> Option<baton_core::Message> {
        let root = &self.session.lineage[0];
        let messages = if *root == self.session.id {
            self.session.messages.iter().take(64).cloned().collect()
        } else {
            self.store.messages_range(root, 0, 64).ok()?
        };
        first_user_request(&messages)
    }

    /// Records the first request when this turn's message is it.
    pub(crate) fn note_first_request(&mut self) {
        if self.first_request.is_none() && self.session.lineage.len() == 1 {
            self.first_request = first_user_request(&self.session.messages);
        }
    }

    /// Pins belong to the lineage: stored under its root session's id.
    fn pins_key(&self) -> String {
        format!("pins:{}", self.session.lineage[0])
    }

    fn load_pins(&self) -> Vec<baton_core::Message> {
        let Ok(Some(text)) = self.store.get_meta(&self.pins_key()) else {
            return Vec::new();
        };
        let Ok(serde_json::Value::Array(items)) = serde_json::from_str(&text) else {
            return Vec::new();
        };
        items
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| baton_core::Message::from_value(v, i).ok())
            .collect()
    }

    fn save_pins(&self) -> Result<(), AgentError> {
        let list: Vec<serde_json::Value> = self.pins.iter().map(|m| m.to_value()).collect();
        self.store.set_meta(
            &self.pins_key(),
            &serde_json::Value::Array(list).to_string(),
        )?;
        Ok(())
    }

    /// The context tools run with in the current session.
    pub(crate) fn tool_context(&self, interrupt: &crate::Interrupt) -> ToolContext {
        ToolContext {
            workdir: self.config.workdir.clone(),
            allow_outside_workdir: self.config.allow_outside_workdir,
            readable_roots: vec![self.tool_results.dir().to_path_buf()],
            approver: self.approver.clone(),
            interrupt: interrupt.clone(),
            session_id: self.session.id.clone(),
            lineage: self.session.lineage.clone(),
            command_timeout: self.config.command_timeout,
        }
    }

    /// Appends the model's answer with its call's usage (one store transaction).
    pub(crate) fn append_answer(
        &mut self,
        answer: baton_core::Message,
        usage: &baton_core::usage::CanonicalUsage,
        cost: Option<f64>,
    ) -> Result<(), AgentError> {
        self.store
            .append_answer(&self.session.id, std::slice::from_ref(&answer), usage, cost)?;
        Arc::make_mut(&mut self.session.messages).push(answer);
        Ok(())
    }

    /// Appends messages to the live view and the store, keeping them row for row equal.
    pub(crate) fn append(&mut self, messages: Vec<baton_core::Message>) -> Result<(), AgentError> {
        self.store.append_messages(&self.session.id, &messages)?;
        Arc::make_mut(&mut self.session.messages).extend(messages);
        Ok(())
    }
}

/// The first user message that is the user's own words (not a summary, not an injected row).
fn first_user_request(messages: &[baton_core::Message]) -> Option<baton_core::Message> {
    messages
        .iter()
        .find(|m| {
            m.role == baton_core::Role::User
                && !baton_core::compress::markers::is_summary_message(m)
                && baton_core::synthetic::kind_of(m).is_none()
                && !m.text().trim().is_empty()
        })
        .cloned()
}
