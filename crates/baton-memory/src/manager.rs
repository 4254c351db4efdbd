//! `MemoryManager`: the built-in provider plus at most one external one, behind one API.
//!
//! One external provider, not several: each adds prompt text, recall and tools, and two
//! recall systems would put competing, possibly contradictory context into every turn. The
//! built-in provider is always first, so its tool names win and its block leads the prompt.
//! A failing provider is logged and skipped; it never takes the turn down with it.

use crate::builtin::{BUILTIN_NAME, BuiltinProvider};
use crate::fence::memory_context_block;
use crate::provider::{MemoryProvider, MemoryWrite, SessionContext, SessionSwitch, WriteAction};
use crate::target::Target;
use crate::tool::{self, tool_error};
use baton_core::Message;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a provider was not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManagerError {
    #[error(
        "memory provider '{rejected}' rejected: '{existing}' is already the external provider, \
         and only one is allowed (choose it with [memory] provider in config.toml)"
    )]
    SecondExternal { rejected: String, existing: String },
    #[error("memory provider name '{0}' is reserved for the built-in memory")]
    ReservedName(String),
    #[error("memory provider '{0}' is not available here")]
    Unavailable(String),
}

pub struct MemoryManager {
    providers: Vec<Arc<dyn MemoryProvider>>,
    /// Tool name → index into `providers`; the first provider to claim a name keeps it.
    routes: BTreeMap<String, usize>,
}

impl MemoryManager {
    /// A manager with the built-in provider registered first.
    pub fn new(builtin: BuiltinProvider) -> Self {
        let mut m = MemoryManager {
            providers: Vec::new(),
            routes: BTreeMap::new(),
        };
        m.register(Arc::new(builtin));
        m
    }

    /// Adds the external provider; refused if one is already registered, if it claims the
    /// built-in's name, or if it says it cannot run here.
    pub fn add_external(&mut self, provider: Arc<dyn MemoryProvider>) -> Result<(), ManagerError> {
        if provider.name() == BUILTIN_NAME {
            return Err(ManagerError::ReservedName(provider.name().into()));
        }
        if let Some(existing) = self.providers.iter().find(|p| p.name() != BUILTIN_NAME) {
            return Err(ManagerError::SecondExternal {
                rejected: provider.name().into(),
                existing: existing.name().into(),
            });
        }
        if !provider.is_available() {
            return Err(ManagerError::Unavailable(provider.name().into()));
        }
        self.register(provider);
        Ok(())
    }

    fn register(&mut self, provider: Arc<dyn MemoryProvider>) {
        let index = self.providers.len();
        for schema in provider.tool_schemas() {
            let Some(name) = schema.get("name").and_then(Value::as_str) else {
                tracing::warn!(
                    "memory provider '{}' has a tool without a name",
                    provider.name()
                );
                continue;
            };
            if let Some(&owner) = self.routes.get(name) {
                tracing::warn!(
                    "tool '{name}' of memory provider '{}' ignored: '{}' already serves it",
                    provider.name(),
                    self.providers[owner].name()
                );
                continue;
            }
            self.routes.insert(name.to_string(), index);
        }
        self.providers.push(provider);
    }

    /// Provider names in call order (built-in first).
    pub fn provider_names(&self) -> Vec<&str> {
        self.providers.iter().map(|p| p.name()).collect()
    }

    pub async fn initialize_all(&self, ctx: &SessionContext) {
        for p in &self.providers {
            if let Err(e) = p.initialize(ctx).await {
                tracing::warn!("{e}");
            }
        }
    }

    /// The providers' prompt blocks, joined by blank lines.
    pub fn build_system_prompt(&self) -> String {
        join_non_empty(self.providers.iter().map(|p| p.system_prompt_block()))
    }

    /// Raw recall from every provider for this turn's user message.
    pub async fn prefetch_all(&self, query: &str, session_id: &str) -> String {
        let mut parts = Vec::new();
        for p in &self.providers {
            match p.prefetch(query, session_id).await {
                Ok(s) => parts.push(s),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        join_non_empty(parts)
    }

    /// Recall, fenced for the outgoing copy of the user message ("" when there is none).
    pub async fn prefetch_fenced(&self, query: &str, session_id: &str) -> String {
        memory_context_block(&self.prefetch_all(query, session_id).await)
    }

    pub fn queue_prefetch_all(&self, query: &str, session_id: &str) {
        for p in &self.providers {
            p.queue_prefetch(query, session_id);
        }
    }

    /// Records a completed, non-interrupted turn with every provider.
    pub async fn sync_all(&self, user: &str, assistant: &str, session_id: &str) {
        for p in &self.providers {
            if let Err(e) = p.sync_turn(user, assistant, session_id).await {
                tracing::warn!("{e}");
            }
        }
    }

    /// Every provider's tools, one per name.
    pub fn tool_schemas(&self) -> Vec<Value> {
        let mut seen = std::collections::HashSet::new();
        self.providers
            .iter()
            .flat_map(|p| p.tool_schemas())
            .filter(|s| {
                let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
                seen.insert(name.to_string())
            })
            .collect()
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.routes.contains_key(name)
    }

    /// Routes a tool call to the provider that owns the name; the result is the tool message
    /// content. Successful built-in writes are mirrored to the external provider.
    pub async fn handle_tool_call(&self, name: &str, args: &Value, session_id: &str) -> String {
        let Some(&index) = self.routes.get(name) else {
            return tool_error(format!("No memory provider handles tool '{name}'.")).to_string();
        };
        let provider = &self.providers[index];
        let result = match provider.handle_tool_call(name, args).await {
            Ok(r) => r,
            Err(e) => return tool_error(format!("Memory tool '{name}' failed: {e}")).to_string(),
        };
        if provider.name() == BUILTIN_NAME && name == tool::TOOL_NAME {
            self.mirror_write(args, &result, session_id);
        }
        result
    }

    fn mirror_write(&self, args: &Value, result: &str, session_id: &str) {
        let ok = serde_json::from_str::<Value>(result).is_ok_and(|v| tool::succeeded(&v));
        let field = |k: &str| args.get(k).and_then(Value::as_str);
        let action = match field("action") {
            Some("add") => WriteAction::Add,
            Some("replace") => WriteAction::Replace,
            Some("remove") => WriteAction::Remove,
            _ => return,
        };
        let target = field("target")
            .and_then(|t| t.parse::<Target>().ok())
            .unwrap_or(Target::Memory);
        if !ok {
            return;
        }
        let write = MemoryWrite {
            action,
            target,
            content: field("content")
                .or(field("old_text"))
                .unwrap_or_default()
                .into(),
            session_id: (!session_id.is_empty()).then(|| session_id.to_string()),
        };
        self.on_memory_write(&write);
    }

    pub fn on_turn_start(&self, turn: u64, message: &str) {
        for p in &self.providers {
            p.on_turn_start(turn, message);
        }
    }

    pub fn on_session_end(&self, messages: &[Message]) {
        for p in &self.providers {
            p.on_session_end(messages);
        }
    }

    /// Tells every provider about a session change; ignored without a new session id. The
    /// built-in provider takes a fresh snapshot here (new session or compaction).
    pub fn on_session_switch(&self, switch: &SessionSwitch) {
        if switch.new_session_id.is_empty() {
            return;
        }
        for p in &self.providers {
            p.on_session_switch(switch);
        }
    }

    /// What providers want kept from messages about to be compacted.
    pub fn on_pre_compress(&self, messages: &[Message]) -> String {
        join_non_empty(self.providers.iter().map(|p| p.on_pre_compress(messages)))
    }

    /// Mirrors a built-in write to external providers (never back to the built-in one).
    pub fn on_memory_write(&self, write: &MemoryWrite) {
        for p in self.providers.iter().filter(|p| p.name() != BUILTIN_NAME) {
            p.on_memory_write(write);
        }
    }

    /// Shuts providers down in reverse registration order (the external one first, since it
    /// may still flush into state the built-in one owns).
    pub async fn shutdown_all(&self) {
        for p in self.providers.iter().rev() {
            p.shutdown().await;
        }
    }
}

fn join_non_empty(parts: impl IntoIterator<Item = String>) -> String {
    parts
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}
