//! Baton's own cost per turn: everything but the model. The model is an in-process provider
//! that answers at once (so no network or serialization is timed), the store is real SQLite
//! (in memory, and on disk with its per-append fsync), and each turn makes one tool call and
//! one final answer — the shape of an agent step. Histories of 100, 1,000 and 5,000 messages
//! show whether the cost is flat in history length.
//!
//! Run: `cargo bench -p baton-agent --bench turn_overhead`. Goal: under 1 ms per turn at 1,000
//! messages of history, flat in history length.

use baton_agent::{
    AgentBuilder, AgentConfig, FixedPrompt, Interrupt, Tool, ToolContext, ToolError, ToolRegistry,
};
use baton_core::message::{Message, ToolCall};
use baton_core::summary::BoxFuture;
use baton_core::usage::CanonicalUsage;
use baton_llm::{
    ChatRequest, ChatResponse, EventSink, FinishReason, LlmError, ModelInfo, Provider, StreamEvent,
};
use baton_store::{NewSession, SessionStore, SqliteStore};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Answers every other call with a tool call, the others with text, instantly.
struct InstantModel {
    calls: AtomicU64,
}

impl InstantModel {
    fn answer(&self, request: &ChatRequest) -> ChatResponse {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let message = if n.is_multiple_of(2) {
            Message::assistant_tool_calls(vec![ToolCall::function(
                format!("call_{n}"),
                "echo",
                r#"{"text":"ok"}"#,
            )])
        } else {
            Message::assistant("Done: the step is complete.")
        };
        ChatResponse {
            message,
            finish_reason: if n.is_multiple_of(2) {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            },
            usage: CanonicalUsage {
                input: 500,
                output: 20,
                cache_read: 100 * request.messages.len() as u64,
                ..CanonicalUsage::default()
            },
            raw_usage: None,
            model: Some(request.model.clone()),
            id: None,
            metadata: Map::new(),
            attempts: 1,
        }
    }
}

impl Provider for InstantModel {
    fn name(&self) -> &str {
        "openai"
    }
    fn base_url(&self) -> &str {
        "in-process"
    }
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { Ok(self.answer(request)) })
    }
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let response = self.answer(request);
            let text = response.message.text();
            if !text.is_empty() {
                on_event(StreamEvent::TextDelta(text));
            }
            Ok(response)
        })
    }
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

struct Echo;

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn schema(&self) -> Value {
        baton_agent::tool::function_schema(
            "echo",
            "Echoes its text.",
            json!({"type":"object","properties":{"text":{"type":"string"}}}),
        )
    }
    fn call<'a>(
        &'a self,
        arguments: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move { Ok(arguments["text"].as_str().unwrap_or_default().to_string()) })
    }
}

/// A stored session of `n` messages in rounds of user, tool call, result, answer.
fn history(store: &SqliteStore, n: usize) -> String {
    let id = store
        .create_session(NewSession {
            system_prompt: Some("You are a coding agent.".into()),
            ..NewSession::new("bench")
        })
        .unwrap_or_default();
    let mut messages = Vec::with_capacity(n);
    let mut i = 0;
    while messages.len() < n {
        messages.push(Message::user(format!(
            "step {i}: fix the test in module {i}"
        )));
        messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
            format!("h{i}"),
            "echo",
            r#"{"text":"ok"}"#,
        )]));
        messages.push(Message::tool(format!("h{i}"), "x".repeat(400)));
        messages.push(Message::assistant(format!("module {i} fixed")));
        i += 1;
    }
    messages.truncate(n);
    let _ = store.append_messages(&id, &messages);
    id
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut group = c.benchmark_group("turn_overhead");
    for (label, on_disk) in [("memory_store", false), ("disk_store", true)] {
        for n in [100usize, 1_000, 5_000] {
            let store = Arc::new(
                if on_disk {
                    SqliteStore::open(dir.path().join(format!("bench-{n}.db")))
                } else {
                    SqliteStore::open_in_memory()
                }
                .unwrap_or_else(|e| panic!("store: {e}")),
            );
            let mut tools = ToolRegistry::new();
            tools.register(Arc::new(Echo));
            group.bench_with_input(BenchmarkId::new(label, n), &n, |b, _| {
                b.iter_custom(|iters| {
                    // A fresh copy of the history per sample, so samples do not grow it
                    // for each other; one warm-up turn so the incremental counts are primed
                    // (the first turn after a resume counts the whole history once).
                    let session = history(&store, n);
                    let config = AgentConfig::new(
                        "gpt-4o",
                        10_000_000,
                        dir.path().to_path_buf(),
                        dir.path().to_path_buf(),
                    );
                    let mut agent = AgentBuilder::new(
                        config,
                        Arc::new(InstantModel {
                            calls: AtomicU64::new(0),
                        }),
                        store.clone(),
                    )
                    .tools(tools.clone())
                    .system_prompt(Arc::new(FixedPrompt("You are a coding agent.".into())))
                    .resume(&session)
                    .unwrap_or_else(|e| panic!("resume: {e}"));
                    let interrupt = Interrupt::new();
                    let turn = |agent: &mut baton_agent::Agent| {
                        runtime
                            .block_on(agent.run_turn("next step", &interrupt, &mut |_| {}))
                            .unwrap_or_else(|e| panic!("turn: {e}"))
                    };
                    turn(&mut agent);
                    let started = Instant::now();
                    for _ in 0..iters {
                        black_box(turn(&mut agent));
                    }
                    started.elapsed()
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
