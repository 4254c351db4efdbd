//! The bulk path: many sessions and their messages in one transaction, the messages streamed
//! with `COPY … FROM STDIN` (text format) instead of one INSERT per batch. For imports,
//! copies and benchmarks; live turns append with INSERT (a few rows each).

use crate::messages::{for_postgres, haystack};
use crate::store::{PgStore, TxError, add_usage_in_tx, set_title_in_tx};
use crate::tsvector::{cjk_vector, words_vector};
use baton_core::Message;
use baton_store::codec::to_row;
use baton_store::{Result, SessionBatch, new_session_id};
use bytes::Bytes;
use futures_util::SinkExt;
use std::collections::HashMap;

/// Bytes buffered before a chunk is sent to the server.
const COPY_CHUNK: usize = 1 << 20;

const COPY_SQL: &str = "COPY messages (session_id, role, content, tool_call_id, tool_calls, \
     tool_name, timestamp, finish_reason, reasoning, reasoning_content, reasoning_details, \
     codex_reasoning_items, codex_message_items, token_count, raw_json, words, cjk) \
     FROM STDIN";

/// One field in COPY text format: `\N` for NULL, backslash, tab, newline and CR escaped.
fn field(out: &mut String, value: Option<&str>) {
    let Some(text) = value else {
        out.push_str("\\N");
        return;
    };
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// Appends one message as a COPY line.
fn line(out: &mut String, session_id: &str, m: &Message, ts: f64, names: &HashMap<String, String>) {
    let row = for_postgres(to_row(m, names));
    let text = haystack(&row);
    let words = words_vector(&text);
    let cjk = cjk_vector(&text);
    let token_count = row.token_count.map(|n| n.to_string());
    let ts = format!("{ts:?}");
    let fields: [Option<&str>; 17] = [
        Some(session_id),
        Some(&row.role),
        row.content.as_deref(),
        row.tool_call_id.as_deref(),
        row.tool_calls.as_deref(),
        row.tool_name.as_deref(),
        Some(&ts),
        row.finish_reason.as_deref(),
        row.reasoning.as_deref(),
        row.reasoning_content.as_deref(),
        row.reasoning_details.as_deref(),
        row.codex_reasoning_items.as_deref(),
        row.codex_message_items.as_deref(),
        token_count.as_deref(),
        row.raw_json.as_deref(),
        Some(&words),
        Some(&cjk),
    ];
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        field(out, *f);
    }
    out.push('\n');
}

impl PgStore {
    /// Creates every session of `batch` (an existing id is left as it was) and appends its
    /// messages, all in one transaction, messages by COPY. Returns the ids in batch order.
    pub fn write_batch(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<String>> {
        let now = baton_store::session::now();
        // Owned, so the transaction can be retried from the start.
        let owned: std::sync::Arc<Vec<(String, SessionBatchOwned)>> = std::sync::Arc::new(
            batch
                .iter()
                .map(|b| {
                    let id = b.session.id.clone().unwrap_or_else(new_session_id);
                    (id, SessionBatchOwned::of(b))
                })
                .collect(),
        );
        let ids: Vec<String> = owned.iter().map(|(id, _)| id.clone()).collect();
        self.write(move |tx| {
            let owned = owned.clone();
            Box::pin(async move {
                for (id, b) in owned.iter() {
                    tx.execute(
                        "INSERT INTO sessions (id, source, model, system_prompt, started_at) \
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                        &[
                            id,
                            &b.source,
                            &b.model,
                            &b.system_prompt,
                            &b.started_at.unwrap_or(now),
                        ],
                    )
                    .await?;
                }
                let sink = tx.copy_in(COPY_SQL).await?;
                let mut sink = std::pin::pin!(sink);
                let mut buf = String::with_capacity(COPY_CHUNK + 64 * 1024);
                for (id, b) in owned.iter() {
                    let mut names = HashMap::new();
                    let at = b.started_at.unwrap_or(now);
                    for (k, m) in b.messages.iter().enumerate() {
                        for call in m.calls() {
                            names.insert(call.id.clone(), call.function.name.clone());
                        }
                        line(&mut buf, id, m, at + k as f64 * 1e-6, &names);
                        if buf.len() >= COPY_CHUNK {
                            sink.send(Bytes::from(std::mem::take(&mut buf))).await?;
                        }
                    }
                }
                if !buf.is_empty() {
                    sink.send(Bytes::from(buf)).await?;
                }
                sink.as_mut().finish().await?;
                for (id, b) in owned.iter() {
                    let calls: i64 = b
                        .messages
                        .iter()
                        .filter_map(|m| m.tool_calls.as_ref())
                        .map(|c| c.len() as i64)
                        .sum();
                    tx.execute(
                        "UPDATE sessions SET message_count = message_count + $1, \
                         tool_call_count = tool_call_count + $2 WHERE id = $3",
                        &[&(b.messages.len() as i64), &calls, id],
                    )
                    .await?;
                    if let Some((usage, api_calls)) = &b.usage {
                        add_usage_in_tx(tx, id, usage, None, *api_calls).await?;
                    }
                    if let Some(title) = &b.title {
                        set_title_in_tx(tx, id, Some(title)).await?;
                    }
                    if let Some(reason) = &b.end_reason {
                        tx.execute(
                            "UPDATE sessions SET ended_at = $1, end_reason = $2 \
                             WHERE id = $3 AND ended_at IS NULL",
                            &[&b.ended_at.unwrap_or(now), reason, id],
                        )
                        .await?;
                    }
                }
                Ok::<(), TxError>(())
            })
        })?;
        Ok(ids)
    }
}

/// What the bulk path needs of a [`SessionBatch`], owned.
struct SessionBatchOwned {
    end_reason: Option<String>,
    ended_at: Option<f64>,
    usage: Option<(baton_core::usage::CanonicalUsage, u64)>,
    title: Option<String>,
    source: String,
    model: Option<String>,
    system_prompt: Option<String>,
    started_at: Option<f64>,
    messages: Vec<Message>,
}

impl SessionBatchOwned {
    fn of(b: &SessionBatch<'_>) -> Self {
        SessionBatchOwned {
            end_reason: b.end_reason.map(str::to_string),
            ended_at: b.ended_at,
            usage: b.usage,
            title: b
                .title
                .as_deref()
                .and_then(|t| baton_store::clean_title(t).ok().flatten()),
            source: b.session.source.clone(),
            model: b.session.model.clone(),
            system_prompt: b.session.system_prompt.clone(),
            started_at: b.session.started_at,
            messages: b.messages.to_vec(),
        }
    }
}
