//! `history_expand`: the original messages of a summarized span (or one message), as they
//! were stored, cut honestly at a token cap: the trailer says how much is left and the
//! reference to read on from. Only the current lineage can be read: a model must not reach
//! other conversations through it.

use crate::recall::render::render;
use crate::recall::span::SpanRef;
use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use baton_core::summary::BoxFuture;
use baton_core::tokens::rough_text_tokens;
use baton_store::SessionStore;
use serde_json::{Value, json};
use std::sync::Arc;

pub const DEFAULT_MAX_TOKENS: usize = 4_000;
pub const MAX_TOKENS: usize = 20_000;

pub struct HistoryExpand {
    store: Arc<dyn SessionStore>,
}

impl HistoryExpand {
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        HistoryExpand { store }
    }
}

impl Tool for HistoryExpand {
    fn name(&self) -> &str {
        "history_expand"
    }

    fn schema(&self) -> Value {
        function_schema(
            "history_expand",
            "Return the original messages behind a summary or a search hit, by reference \
             (`<session>/<first>-<last>` or `<session>/<n>`), up to max_tokens; the end says \
             how to read on.",
            json!({
                "type": "object",
                "properties": {
                    "ref": {"type": "string"},
                    "max_tokens": {"type": "integer", "minimum": 100, "maximum": MAX_TOKENS}
                },
                "required": ["ref"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let invalid = |message: String| ToolError::InvalidArguments {
                tool: "history_expand".into(),
                message,
            };
            let text = args::required_str("history_expand", &arguments, "ref")?;
            let span = SpanRef::parse(text).map_err(invalid)?;
            if !ctx.lineage.contains(&span.session) {
                return Err(ToolError::Refused(format!(
                    "{} is not part of this conversation; history_expand reads only this \
                     conversation's sessions ({})",
                    span.session,
                    ctx.lineage.join(", ")
                )));
            }
            let cap = arguments
                .get("max_tokens")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_MAX_TOKENS, |n| (n as usize).clamp(100, MAX_TOKENS));
            let store = self.store.clone();
            tokio::task::spawn_blocking(move || expand(store.as_ref(), &span, cap))
                .await
                .map_err(|e| ToolError::Failed(format!("history expand failed: {e}")))?
        })
    }
}

/// Reads at most this many messages at a time, so a huge span costs what is shown.
const BATCH: usize = 64;

fn expand(store: &dyn SessionStore, span: &SpanRef, cap: usize) -> Result<String, ToolError> {
    let failed = |e: baton_store::StoreError| ToolError::Failed(format!("cannot read {span}: {e}"));
    let count = store.message_count(&span.session).map_err(failed)?;
    if span.first >= count {
        return Err(ToolError::Failed(format!(
            "{span} is past the end: session {} has {count} messages (positions 0-{})",
            span.session,
            count.saturating_sub(1)
        )));
    }
    let last = span.last.min(count - 1);
    let mut out = String::new();
    let mut used = 0usize;
    let mut position = span.first;
    while position <= last {
        let batch = store
            .messages_range(&span.session, position, (position + BATCH).min(last + 1))
            .map_err(failed)?;
        for message in batch {
            let shown = render(&span.session, position, &message);
            let tokens = rough_text_tokens(&shown);
            if used + tokens > cap {
                if used == 0 {
                    // One message larger than the cap: show its start, say what was cut.
                    let keep_chars = cap * 3;
                    let head: String = shown.chars().take(keep_chars).collect();
                    out.push_str(&head);
                    out.push_str(&format!(
                        "\n[cut: this message continues for ~{} more tokens]\n",
                        tokens.saturating_sub(rough_text_tokens(&head))
                    ));
                    position += 1;
                }
                return Ok(finish(out, span, position, last));
            }
            used += tokens;
            out.push_str(&shown);
            position += 1;
        }
    }
    if span.last > last {
        out.push_str(&format!(
            "[end of session {}: it has {count} messages]\n",
            span.session
        ));
    }
    Ok(out)
}

fn finish(mut out: String, span: &SpanRef, next: usize, last: usize) -> String {
    if next <= last {
        let rest = SpanRef {
            session: span.session.clone(),
            first: next,
            last,
        };
        out.push_str(&format!(
            "[cut at the token cap: {} more messages; continue with history_expand(\"{rest}\")]\n",
            last - next + 1
        ));
    }
    out
}
