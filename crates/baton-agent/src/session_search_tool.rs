//! The `session_search` tool: recall across the user's *other* past sessions (the current
//! lineage is left out; `history_search` covers it), grouped by conversation and summarized
//! under a deadline by baton-store's pipeline.

use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use baton_core::summary::{BoxFuture, Summarizer};
use baton_store::SessionStore;
use baton_store::session_search::{MAX_LIMIT, SessionSearchRequest, session_search};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct SessionSearchTool {
    store: Arc<dyn SessionStore>,
    summarizer: Arc<dyn Summarizer>,
}

impl SessionSearchTool {
    pub fn new(store: Arc<dyn SessionStore>, summarizer: Arc<dyn Summarizer>) -> Self {
        SessionSearchTool { store, summarizer }
    }
}

impl Tool for SessionSearchTool {
    fn name(&self) -> &str {
        "session_search"
    }

    fn schema(&self) -> Value {
        function_schema(
            "session_search",
            "Search the user's earlier, separate conversations (not this one: use history_search \
             for this conversation's compacted past). Returns the best-matching sessions, each \
             summarized around the matches. An empty query lists recent sessions.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to find, any language."},
                    "roles": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["user", "assistant", "tool"]},
                        "description": "Only messages of these roles (default: all)."
                    },
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
                },
                "required": ["query"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let query = args::required_str("session_search", &arguments, "query")?;
            let roles = arguments
                .get("roles")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let limit = arguments
                .get("limit")
                .and_then(Value::as_u64)
                .map_or(3, |n| n as usize);
            let request = SessionSearchRequest {
                query: query.to_string(),
                roles,
                limit,
                current_session_id: Some(ctx.session_id.clone()),
                ..SessionSearchRequest::default()
            };
            let result = session_search(self.store.as_ref(), self.summarizer.as_ref(), &request)
                .await
                .map_err(|e| ToolError::Failed(format!("session search failed: {e}")))?;
            serde_json::to_string(&result)
                .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))
        })
    }
}
