//! The built-in provider: MEMORY.md and USER.md behind the `MemoryProvider` lifecycle.
//!
//! It is always present and always first. Its prompt block is the store's frozen snapshot; a
//! new session or a compaction (both arrive as `initialize` / `on_session_switch`) captures a
//! fresh one, and nothing else does.

use crate::provider::{BoxFuture, MemoryProvider, ProviderError, SessionContext, SessionSwitch};
use crate::store::MemoryStore;
use crate::tool;
use serde_json::Value;
use std::sync::Arc;

/// The reserved provider name.
pub const BUILTIN_NAME: &str = "builtin";

#[derive(Debug, Clone)]
pub struct BuiltinProvider {
    store: Arc<MemoryStore>,
}

impl BuiltinProvider {
    pub fn new(store: Arc<MemoryStore>) -> Self {
        BuiltinProvider { store }
    }

    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    fn refresh(&self) -> Result<(), ProviderError> {
        self.store
            .refresh_snapshot()
            .map(|_| ())
            .map_err(|e| ProviderError::Failed {
                provider: BUILTIN_NAME.into(),
                message: e.to_string(),
            })
    }
}

impl MemoryProvider for BuiltinProvider {
    fn name(&self) -> &str {
        BUILTIN_NAME
    }

    fn is_available(&self) -> bool {
        true
    }

    fn initialize<'a>(
        &'a self,
        _ctx: &'a SessionContext,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move { self.refresh() })
    }

    fn system_prompt_block(&self) -> String {
        self.store.snapshot().system_prompt_block()
    }

    fn tool_schemas(&self) -> Vec<Value> {
        vec![tool::schema()]
    }

    fn handle_tool_call<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<String, ProviderError>> {
        Box::pin(async move {
            if name != tool::TOOL_NAME {
                return Err(ProviderError::UnknownTool {
                    provider: BUILTIN_NAME.into(),
                    tool: name.into(),
                });
            }
            Ok(tool::handle(&self.store, args).to_string())
        })
    }

    fn on_session_switch(&self, _switch: &SessionSwitch) {
        if let Err(e) = self.refresh() {
            tracing::warn!("memory snapshot not refreshed on session switch: {e}");
        }
    }
}
