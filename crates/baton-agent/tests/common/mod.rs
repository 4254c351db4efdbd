//! An agent wired to the scripted model server, with a real SQLite store in a temp folder.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use baton_agent::{
    Agent, AgentBuilder, AgentConfig, AgentEvent, FixedPrompt, Interrupt, Tool, ToolContext,
    ToolError, ToolRegistry, TurnOutcome,
};
use baton_core::compress::CompressorConfig;
use baton_core::engine::EngineRegistry;
use baton_core::summary::BoxFuture;
use baton_core::summary::extractive::ExtractiveSummarizer;
use baton_llm::{ApiKey, HttpSettings, Provider, ProviderConfig, ProviderKind, RetryPolicy};
use baton_scripted::{Api, ScriptedServer};
use baton_store::SqliteStore;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub fn kind(api: Api) -> ProviderKind {
    match api {
        Api::ChatCompletions => ProviderKind::OpenAi,
        Api::Messages => ProviderKind::Anthropic,
        Api::Responses => ProviderKind::Responses,
    }
}

pub fn provider(server: &ScriptedServer, api: Api) -> Arc<dyn Provider> {
    ProviderConfig::new(kind(api))
        .base_url(server.base_url(api))
        .api_key(ApiKey::new("sk-scripted-test-key"))
        .http(HttpSettings {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(30),
            retry: RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            },
        })
        .build()
        .unwrap()
}

/// A test tool: `fetch(n, tag)` returns `n` characters of text naming `tag`.
pub struct Fetch;

impl Tool for Fetch {
    fn name(&self) -> &str {
        "fetch"
    }
    fn schema(&self) -> Value {
        baton_agent::tool::function_schema(
            "fetch",
            "Returns n characters of text about a tag.",
            json!({"type": "object", "properties": {"n": {"type": "integer"}, "tag": {"type": "string"}}}),
        )
    }
    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let n = args["n"].as_u64().unwrap_or(100) as usize;
            let tag = args["tag"].as_str().unwrap_or("none").to_string();
            let unit = format!("{tag} record; ");
            Ok(unit.repeat(n / unit.len() + 1).chars().take(n).collect())
        })
    }
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub store: Arc<SqliteStore>,
}

impl Harness {
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(dir.path().join("state.db")).unwrap());
        Harness { dir, store }
    }

    pub fn config(&self, model: &str, window: u64) -> AgentConfig {
        let work = self.dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        AgentConfig::new(
            model,
            window,
            work.canonicalize().unwrap(),
            self.dir.path().to_path_buf(),
        )
    }

    pub fn builder(&self, server: &ScriptedServer, api: Api, config: AgentConfig) -> AgentBuilder {
        let engine = EngineRegistry::with_builtin()
            .create(
                "",
                &CompressorConfig {
                    model: config.model.clone(),
                    context_length: config.context_length,
                    summarizer: Arc::new(ExtractiveSummarizer),
                    ..CompressorConfig::default()
                },
            )
            .unwrap();
        let mut tools = ToolRegistry::new();
        tools.register(Arc::new(Fetch));
        for tool in baton_agent::tools::builtin_tools(Default::default()) {
            tools.register(tool);
        }
        tools.register(Arc::new(baton_agent::recall::HistorySearch::new(
            self.store.clone(),
        )));
        tools.register(Arc::new(baton_agent::recall::HistoryExpand::new(
            self.store.clone(),
        )));
        AgentBuilder::new(config, provider(server, api), self.store.clone())
            .engine(engine)
            .tools(tools)
            .system_prompt(Arc::new(FixedPrompt("You are a test agent.".into())))
    }
}

impl Harness {
    /// A new session's agent on `server` with `model` and a `window`-token context.
    pub fn agent(&self, server: &ScriptedServer, api: Api, model: &str, window: u64) -> Agent {
        self.builder(server, api, self.config(model, window))
            .start()
            .unwrap()
    }
}

/// A server playing `replies` in order.
pub async fn serve(replies: impl IntoIterator<Item = baton_scripted::Reply>) -> ScriptedServer {
    ScriptedServer::start(baton_scripted::Script::replies(replies))
        .await
        .unwrap()
}

/// Runs one turn, collecting its events.
pub async fn turn(agent: &mut Agent, text: &str) -> (TurnOutcome, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let interrupt = Interrupt::new();
    let outcome = agent
        .run_turn(text, &interrupt, &mut |e| events.push(e))
        .await
        .unwrap();
    (outcome, events)
}

pub fn compactions(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Compaction { .. }))
        .count()
}

/// An engine whose every compaction drops the two oldest messages: it always shrinks, so the
/// overflow loop's attempt cap (not the engine) is what stops a turn.
#[derive(Default)]
pub struct DropOldest {
    compactions: u32,
}

impl baton_core::engine::ContextEngine for DropOldest {
    fn name(&self) -> &str {
        "drop-oldest"
    }
    fn tokens(&self) -> baton_core::engine::TokenState {
        baton_core::engine::TokenState::default()
    }
    fn update_from_response(&mut self, _usage: &baton_core::usage::CanonicalUsage) {}
    fn should_compress(&self, _prompt_tokens: Option<u64>) -> bool {
        false
    }
    fn should_compress_preflight(
        &mut self,
        _m: &[baton_core::Message],
        _t: Option<&[Value]>,
    ) -> bool {
        false
    }
    fn has_content_to_compress(&self, messages: &[baton_core::Message]) -> bool {
        messages.len() > 2
    }
    fn compress<'a>(
        &'a mut self,
        request: baton_core::engine::CompressRequest<'a>,
    ) -> BoxFuture<'a, baton_core::compress::CompressionResult> {
        Box::pin(async move {
            self.compactions += 1;
            let kept: Vec<baton_core::Message> = request.messages.iter().skip(2).cloned().collect();
            let mut result = baton_core::compress::CompressionResult::unchanged(
                &kept,
                kept.len() as u64,
                baton_core::compress::Outcome::Compressed,
            );
            result.tokens_before = request.messages.len() as u64;
            result
        })
    }
    fn on_session_reset(&mut self) {}
    fn status(&self) -> baton_core::engine::EngineStatus {
        baton_core::engine::EngineStatus {
            engine: "drop-oldest".into(),
            tokens: self.tokens(),
            usage_percent: 0.0,
            blocked: None,
        }
    }
    fn update_model(&mut self, _model: &str, _context_length: u64) {}
}
