//! `history_search`: find what was said or done earlier in *this* conversation — in the
//! sessions of the current lineage that were compacted away — ranked, in any language, with a
//! reference for `history_expand`.

use crate::recall::span::SpanRef;
use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use baton_core::summary::BoxFuture;
use baton_store::{SearchQuery, SessionStore};
use serde_json::{Value, json};
use std::sync::Arc;

pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 25;

pub struct HistorySearch {
    store: Arc<dyn SessionStore>,
}

impl HistorySearch {
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        HistorySearch { store }
    }
}

impl Tool for HistorySearch {
    fn name(&self) -> &str {
        "history_search"
    }

    fn schema(&self) -> Value {
        function_schema(
            "history_search",
            "Search this conversation's earlier turns that were compacted into summaries (any \
             language). Returns matching messages with references; pass a reference to \
             history_expand to read the originals.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to find; quote a phrase for an exact match."},
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
            let query = args::required_text("history_search", &arguments, "query")?;
            let limit = arguments
                .get("limit")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_LIMIT, |n| (n as usize).clamp(1, MAX_LIMIT));
            let archived: Vec<String> = ctx
                .lineage
                .iter()
                .filter(|id| **id != ctx.session_id)
                .cloned()
                .collect();
            if archived.is_empty() {
                return Ok(
                    "Nothing has been compacted in this conversation yet: everything \
                           said so far is still in view."
                        .into(),
                );
            }
            let store = self.store.clone();
            let query = query.to_string();
            tokio::task::spawn_blocking(move || search(store.as_ref(), &query, archived, limit))
                .await
                .map_err(|e| ToolError::Failed(format!("history search failed: {e}")))?
        })
    }
}

fn search(
    store: &dyn SessionStore,
    query: &str,
    sessions: Vec<String>,
    limit: usize,
) -> Result<String, ToolError> {
    let hits = store
        .search(&SearchQuery {
            text: query.to_string(),
            session_ids: sessions,
            limit,
            ..SearchQuery::default()
        })
        .map_err(|e| ToolError::Failed(format!("history search failed: {e}")))?;
    if hits.is_empty() {
        return Ok(format!(
            "No earlier message of this conversation matches {query:?}."
        ));
    }
    let mut out = format!("{} matches, best first:\n", hits.len());
    for hit in hits {
        let reference = match store.message_position(hit.message_id) {
            Ok((session, position)) => SpanRef::message(&session, position).to_string(),
            Err(_) => continue,
        };
        let snippet = hit.snippet.replace('\n', " ");
        out.push_str(&format!("[{reference}] {}: {snippet}\n", hit.role));
    }
    out.push_str("Read a match (and what surrounds it) with history_expand(\"<reference>\").\n");
    Ok(out)
}
