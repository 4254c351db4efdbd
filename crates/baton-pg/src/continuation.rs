//! Starting a continuation on PostgreSQL: the parent ended with reason `compression` and its
//! child created holding the carried messages, in one transaction with the parent row locked.

use crate::store::{PgStore, append_in_tx, next_title};
use baton_core::Message;
use baton_store::continuation::ChildSettings;
use baton_store::{Result, StoreError, end_reason, new_session_id};

impl PgStore {
    /// The trait's `start_continuation_with`: the parent row is locked (`FOR UPDATE`), so two
    /// hosts compacting one session cannot both continue it.
    pub(crate) fn continue_session(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &ChildSettings,
    ) -> Result<String> {
        let parent_id = parent_id.to_string();
        let messages = std::sync::Arc::new(messages.to_vec());
        let settings = settings.clone();
        let child_id = new_session_id();
        let child = child_id.clone();
        self.write(move |tx| {
            let (parent_id, messages, settings, child) = (
                parent_id.clone(),
                messages.clone(),
                settings.clone(),
                child.clone(),
            );
            Box::pin(async move {
                let (parent_id, messages, settings, child) =
                    (&parent_id, messages.as_slice(), &settings, &child);
                let row = tx
                    .query_opt(
                        "SELECT source, model, system_prompt, title, ended_at, end_reason \
                         FROM sessions WHERE id = $1 FOR UPDATE",
                        &[parent_id],
                    )
                    .await?
                    .ok_or_else(|| StoreError::NotFound {
                        id: parent_id.clone(),
                    })?;
                let source: String = row.get(0);
                let model: Option<String> = row.get(1);
                let system_prompt: Option<String> = row.get(2);
                let title: Option<String> = row.get(3);
                let ended_at: Option<f64> = row.get(4);
                let reason: Option<String> = row.get(5);
                if reason.as_deref() == Some(end_reason::COMPRESSION) {
                    let existing = tx
                        .query_opt(
                            "SELECT id FROM sessions WHERE parent_session_id = $1 \
                             ORDER BY started_at DESC LIMIT 1",
                            &[parent_id],
                        )
                        .await?
                        .map(|r| r.get(0));
                    return Err(StoreError::AlreadyContinued {
                        id: parent_id.clone(),
                        child: existing,
                    }
                    .into());
                }
                let now = baton_store::session::now();
                let ended = ended_at.unwrap_or(now);
                tx.execute(
                    "UPDATE sessions SET ended_at = $1, end_reason = 'compression' WHERE id = $2",
                    &[&ended, parent_id],
                )
                .await?;
                let child_title = match &title {
                    Some(t) => Some(next_title(tx, t).await?),
                    None => None,
                };
                tx.execute(
                    "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, \
                     started_at, title) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        child,
                        &source,
                        &settings.model.clone().or(model),
                        &settings.system_prompt.clone().or(system_prompt),
                        parent_id,
                        &now.max(ended),
                        &child_title,
                    ],
                )
                .await?;
                append_in_tx(tx, child, messages, now.max(ended)).await?;
                Ok(())
            })
        })?;
        Ok(child_id)
    }
}
