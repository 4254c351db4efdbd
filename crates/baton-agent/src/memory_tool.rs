//! The `memory` tool: the model's own notes (MEMORY.md) and the user profile (USER.md), through
//! baton-memory's store (limits, scanning, locking and atomic writes live there). A write
//! changes the files at once but not the running session's system prompt: the frozen snapshot
//! is re-read at the next session boundary, so the cached prefix stays valid.

use crate::tool::{Tool, ToolContext, ToolError};
use baton_core::summary::BoxFuture;
use baton_memory::store::MemoryStore;
use serde_json::{Value, json};
use std::sync::Arc;

pub struct MemoryTool {
    store: Arc<MemoryStore>,
}

impl MemoryTool {
    pub fn new(store: Arc<MemoryStore>) -> Self {
        MemoryTool { store }
    }
}

impl Tool for MemoryTool {
    fn name(&self) -> &str {
        baton_memory::tool::TOOL_NAME
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": baton_memory::tool::schema()})
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let result = baton_memory::tool::handle(&self.store, &arguments);
            if baton_memory::tool::succeeded(&result) {
                Ok(result.to_string())
            } else {
                let why = result
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("the memory write failed")
                    .to_string();
                Err(ToolError::Failed(why))
            }
        })
    }
}
