//! What `sessions copy` reads and writes on PostgreSQL: a session exported with its messages
//! and their timestamps, and an export imported in one transaction, idempotently (a session
//! already there with the same checksum is left alone; a different one is a conflict).

use crate::lineage;
use crate::messages::{self, MESSAGE_COLUMNS};
use crate::store::{PgStore, TxError};
use baton_store::transfer::{ImportOutcome, SessionExport, checksum};
use baton_store::{Result, StoreError};
use std::collections::HashMap;

/// A session with its messages and timestamps.
pub(crate) async fn export_in(
    client: &impl tokio_postgres::GenericClient,
    id: &str,
) -> std::result::Result<Option<SessionExport>, TxError> {
    let Some(session) = lineage::load_session(client, id).await? else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS}, timestamp FROM messages WHERE session_id = $1 ORDER BY id"
    );
    let rows = client.query(sql.as_str(), &[&id]).await?;
    let mut decoded = Vec::with_capacity(rows.len());
    let mut timestamps = Vec::with_capacity(rows.len());
    for row in &rows {
        decoded.push(messages::decode(id, row).map_err(TxError::Store)?);
        timestamps.push(row.get::<_, f64>(14));
    }
    Ok(Some(SessionExport {
        session,
        messages: decoded,
        timestamps,
    }))
}

impl PgStore {
    /// [`baton_store::SessionStore::import_session`].
    pub(crate) fn import(&self, export: &SessionExport) -> Result<ImportOutcome> {
        let export = std::sync::Arc::new(export.clone());
        self.write(move |tx| {
            let export = export.clone();
            Box::pin(async move {
                let s = &export.session;
                let parent_present = match &s.parent_session_id {
                    Some(p) => tx
                        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[p])
                        .await?
                        .is_some(),
                    None => false,
                };
                let parent = s.parent_session_id.clone().filter(|_| parent_present);
                let inserted = tx
                    .execute(
                        "INSERT INTO sessions (id, source, user_id, model, system_prompt, \
                         parent_session_id, started_at, ended_at, end_reason, message_count, \
                         tool_call_count, input_tokens, output_tokens, cache_read_tokens, \
                         cache_write_tokens, reasoning_tokens, estimated_cost_usd, title, \
                         api_call_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
                         $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT (id) DO NOTHING",
                        &[
                            &s.id,
                            &s.source,
                            &s.user_id,
                            &s.model,
                            &s.system_prompt,
                            &parent,
                            &s.started_at,
                            &s.ended_at,
                            &s.end_reason,
                            &s.message_count,
                            &s.tool_call_count,
                            &s.input_tokens,
                            &s.output_tokens,
                            &s.cache_read_tokens,
                            &s.cache_write_tokens,
                            &s.reasoning_tokens,
                            &s.estimated_cost_usd,
                            &s.title,
                            &s.api_call_count,
                        ],
                    )
                    .await?;
                if inserted == 0 {
                    let existing = export_in(tx, &s.id).await?;
                    return match existing {
                        Some(e) if checksum(&e) == checksum(&export) => {
                            Ok(ImportOutcome::AlreadyPresent)
                        }
                        _ => Err(StoreError::CopyConflict { id: s.id.clone() }.into()),
                    };
                }
                let stamps = export.timestamps.clone();
                let started = s.started_at;
                let mut names = HashMap::new();
                messages::insert(
                    tx,
                    &s.id,
                    &export.messages,
                    &move |k| stamps.get(k).copied().unwrap_or(started),
                    &mut names,
                )
                .await?;
                Ok(ImportOutcome::written(s, parent.is_some()))
            })
        })
    }
}
