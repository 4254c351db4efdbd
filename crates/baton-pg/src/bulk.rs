//! The bulk path: many sessions and their messages in one transaction, the messages streamed
//! with binary `COPY … FROM STDIN` instead of one INSERT per batch: nothing is escaped by the
//! client or parsed as text by the server (text-format COPY spent more server time parsing
//! the search vectors than storing the rows). For imports, copies and benchmarks; live
//! turns append with INSERT (a few rows each). An import may also leave the search columns
//! for [`crate::deferred_index`] to fill in afterwards.

use crate::deferred_index::Indexing;
use crate::messages::{ROW_COLUMNS, haystack, row_values, stored_row};
use crate::store::{PgStore, TxError, add_usage_in_tx, set_title_in_tx};
use crate::tsvector::SearchColumns;
use baton_core::Message;
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

/// Writes one message as a COPY row, its search columns computed now or left for the
/// indexer.
async fn copy_row(
    writer: std::pin::Pin<&mut BinaryCopyInWriter>,
    session_id: &str,
    m: &Message,
    ts: f64,
    names: &HashMap<String, String>,
    indexing: Indexing,
) -> std::result::Result<(), tokio_postgres::Error> {
    let row = stored_row(m, names);
    let search = (indexing == Indexing::Inline).then(|| SearchColumns::of(&haystack(&row)));
    let mut fields: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(COPY_TYPES.len());
    fields.push(&session_id);
    fields.extend(row_values(&row, &ts, search.as_ref()));
    writer.write(&fields).await
}

impl PgStore {
    /// Creates every session of `batch` (an existing id is left as it was) and appends its
    /// messages, all in one transaction, messages by COPY. Returns the ids in batch order.
    pub fn write_batch(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<String>> {
        Ok(self
            .write_sessions(batch, false, Indexing::Inline)?
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
        indexing: Indexing,
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
                let created = create_sessions(tx, &owned, now).await?;
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
                        let ts = at + k as f64 * 1e-6;
                        copy_row(writer.as_mut(), id, m, ts, &names, indexing).await?;
                    }
                }
                writer.as_mut().finish().await?;
                let written: Vec<&(String, SessionBatchOwned)> = (0..owned.len())
                    .filter(|&k| written(k))
                    .map(|k| &owned[k])
                    .collect();
                finish_sessions(tx, &written, now).await?;
                Ok::<_, TxError>(created)
            })
        })
    }
}

/// Creates the batch's sessions in one statement (an id already stored is left as it was);
/// returns each with whether this call created it. An id given twice in the batch is
/// created by its first copy only. (One statement per session cost a round trip each, more
/// than the messages' COPY for an import of short conversations.)
async fn create_sessions(
    tx: &tokio_postgres::Transaction<'_>,
    owned: &[(String, SessionBatchOwned)],
    now: f64,
) -> std::result::Result<Vec<(String, bool)>, tokio_postgres::Error> {
    let ids: Vec<&str> = owned.iter().map(|(id, _)| id.as_str()).collect();
    let sources: Vec<&str> = owned.iter().map(|(_, b)| b.source.as_str()).collect();
    let models: Vec<Option<&str>> = owned.iter().map(|(_, b)| b.model.as_deref()).collect();
    let prompts: Vec<Option<&str>> = owned
        .iter()
        .map(|(_, b)| b.system_prompt.as_deref())
        .collect();
    let starts: Vec<f64> = owned
        .iter()
        .map(|(_, b)| b.started_at.unwrap_or(now))
        .collect();
    let rows = tx
        .query(
            "INSERT INTO sessions (id, source, model, system_prompt, started_at) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[]) \
             ON CONFLICT (id) DO NOTHING RETURNING id",
            &[&ids, &sources, &models, &prompts, &starts],
        )
        .await?;
    let mut new: std::collections::HashSet<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(owned
        .iter()
        .map(|(id, _)| (id.clone(), new.remove(id)))
        .collect())
}

/// After the messages of `written`: their sessions' message and tool-call counts and their
/// ends, one statement each for the whole batch; usage and titles, which only some sessions
/// carry, per session.
async fn finish_sessions(
    tx: &tokio_postgres::Transaction<'_>,
    written: &[&(String, SessionBatchOwned)],
    now: f64,
) -> std::result::Result<(), TxError> {
    // Summed per id: an id may come twice when appending (each copy's messages are written).
    let mut ids: Vec<&str> = Vec::with_capacity(written.len());
    let mut counts: Vec<i64> = Vec::with_capacity(written.len());
    let mut calls: Vec<i64> = Vec::with_capacity(written.len());
    let mut slot: HashMap<&str, usize> = HashMap::with_capacity(written.len());
    for (id, b) in written {
        let k = *slot.entry(id.as_str()).or_insert_with(|| {
            ids.push(id);
            counts.push(0);
            calls.push(0);
            ids.len() - 1
        });
        counts[k] += b.messages.len() as i64;
        calls[k] += b
            .messages
            .iter()
            .filter_map(|m| m.tool_calls.as_ref())
            .map(|c| c.len() as i64)
            .sum::<i64>();
    }
    // Locked in id order, so bulk writers sharing sessions wait for each other instead of
    // deadlocking (the UPDATE's join visits rows in the planner's order).
    tx.execute(
        "SELECT 1 FROM sessions WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE",
        &[&ids],
    )
    .await?;
    tx.execute(
        "UPDATE sessions s SET message_count = s.message_count + u.n, \
         tool_call_count = s.tool_call_count + u.c \
         FROM unnest($1::text[], $2::int8[], $3::int8[]) AS u(id, n, c) WHERE s.id = u.id",
        &[&ids, &counts, &calls],
    )
    .await?;
    // The first end given for an id, as when each is applied in turn.
    let mut seen = std::collections::HashSet::new();
    let ended: Vec<&&(String, SessionBatchOwned)> = written
        .iter()
        .filter(|(id, b)| b.end_reason.is_some() && seen.insert(id.as_str()))
        .collect();
    if !ended.is_empty() {
        let ids: Vec<&str> = ended.iter().map(|(id, _)| id.as_str()).collect();
        let ats: Vec<f64> = ended
            .iter()
            .map(|(_, b)| b.ended_at.unwrap_or(now))
            .collect();
        let reasons: Vec<Option<&str>> =
            ended.iter().map(|(_, b)| b.end_reason.as_deref()).collect();
        tx.execute(
            "UPDATE sessions s SET ended_at = u.at, end_reason = u.reason \
             FROM unnest($1::text[], $2::float8[], $3::text[]) AS u(id, at, reason) \
             WHERE s.id = u.id AND s.ended_at IS NULL",
            &[&ids, &ats, &reasons],
        )
        .await?;
    }
    for (id, b) in written {
        if let Some((usage, api_calls)) = &b.usage {
            add_usage_in_tx(tx, id, usage, None, *api_calls).await?;
        }
        if let Some(title) = &b.title {
            set_title_in_tx(tx, id, Some(title)).await?;
        }
    }
    Ok(())
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
