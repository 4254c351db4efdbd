//! The bulk path: many sessions and their messages in one transaction, the messages streamed
//! with binary `COPY … FROM STDIN` instead of one INSERT per batch: nothing is escaped by the
//! client or parsed as text by the server (text-format COPY spent more server time parsing
//! the search vectors than storing the rows). For imports, copies and benchmarks; live
//! turns append with INSERT (a few rows each).

use crate::messages::{ROW_COLUMNS, for_postgres, haystack, row_values};
use crate::store::{PgStore, TxError, add_usage_in_tx, set_title_in_tx};
use crate::tsvector::SearchColumns;
use baton_core::Message;
use baton_store::codec::{RawJson, to_row};
use baton_store::{Result, SessionBatch, new_session_id};
use std::collections::HashMap;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

fn copy_sql() -> String {
    format!("COPY messages (session_id, {ROW_COLUMNS}) FROM STDIN (FORMAT binary)")
}

/// The column types of [`copy_sql`], in order.
const COPY_TYPES: [Type; 18] = [
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::FLOAT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::TS_VECTOR,
    Type::TS_VECTOR,
    Type::INT4,
];

/// Writes one message as a COPY row.
async fn copy_row(
    writer: std::pin::Pin<&mut BinaryCopyInWriter>,
    session_id: &str,
    m: &Message,
    ts: f64,
    names: &HashMap<String, String>,
) -> std::result::Result<(), tokio_postgres::Error> {
    let row = for_postgres(to_row(m, names, RawJson::Always));
    let search = SearchColumns::of(&haystack(&row));
    let mut fields: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(COPY_TYPES.len());
    fields.push(&session_id);
    fields.extend(row_values(&row, &ts, &search));
    writer.write(&fields).await
}

impl PgStore {
    /// Creates every session of `batch` (an existing id is left as it was) and appends its
    /// messages, all in one transaction, messages by COPY. Returns the ids in batch order.
    pub fn write_batch(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<String>> {
        Ok(self
            .write_sessions(batch, false)?
            .into_iter()
            .map(|(id, _)| id)
            .collect())
    }

    /// The bulk write: every session of `batch` created in one transaction, messages by COPY.
    /// `only_new`: a session whose id is already stored is left untouched (nothing appended,
    /// no usage, title or end written); otherwise its messages are appended. Returns each id
    /// with whether its row was created by this call.
    pub(crate) fn write_sessions(
        &self,
        batch: &[SessionBatch<'_>],
        only_new: bool,
    ) -> Result<Vec<(String, bool)>> {
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
        self.write(move |tx| {
            let owned = owned.clone();
            Box::pin(async move {
                let mut created = Vec::with_capacity(owned.len());
                for (id, b) in owned.iter() {
                    let inserted = tx
                        .execute(
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
                    created.push((id.clone(), inserted == 1));
                }
                let written = |k: usize| !only_new || created[k].1;
                let sink = tx.copy_in(copy_sql().as_str()).await?;
                let writer = BinaryCopyInWriter::new(sink, &COPY_TYPES);
                let mut writer = std::pin::pin!(writer);
                for (k, (id, b)) in owned.iter().enumerate() {
                    if !written(k) {
                        continue;
                    }
                    let mut names = HashMap::new();
                    let at = b.started_at.unwrap_or(now);
                    for (k, m) in b.messages.iter().enumerate() {
                        for call in m.calls() {
                            names.insert(call.id.clone(), call.function.name.clone());
                        }
                        copy_row(writer.as_mut(), id, m, at + k as f64 * 1e-6, &names).await?;
                    }
                }
                writer.as_mut().finish().await?;
                for (k, (id, b)) in owned.iter().enumerate() {
                    if !written(k) {
                        continue;
                    }
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
                Ok::<_, TxError>(created)
            })
        })
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
