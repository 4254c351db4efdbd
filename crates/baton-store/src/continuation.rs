//! Compression continuations: a compacted conversation continues in a new session.
//!
//! The parent keeps every message it had (nothing is ever lost); it ends with reason
//! `compression`, and the child starts at or after that moment with the compacted messages.
//! That pair of facts is what tells a continuation apart from a branch or a sub-agent
//! ([`crate::lineage::is_compression_continuation`]). Both rows change in one transaction,
//! so a crash never leaves a parent ended without its continuation.

use crate::error::{Result, StoreError};
use crate::session::{self, NewSession, end_reason};
use crate::sqlite::{SqliteStore, insert_session};
use crate::title;
use baton_core::Message;
use rusqlite::{OptionalExtension, params};

/// What a continuation sets itself instead of inheriting from its parent (`None` inherits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildSettings {
    pub system_prompt: Option<String>,
    pub model: Option<String>,
}

impl SqliteStore {
    /// Ends `parent_id` with reason `compression` and starts its continuation holding
    /// `messages`. The child inherits source, model and system prompt, and the parent's title
    /// numbered along the lineage ("Refactor auth" -> "Refactor auth #2"). Returns the child id.
    ///
    /// A parent that already has a continuation is refused (compress its tip instead). A
    /// parent that ended for another reason keeps its end time and is marked `compression`.
    pub fn start_continuation(&self, parent_id: &str, messages: &[Message]) -> Result<String> {
        self.start_continuation_with(parent_id, messages, &ChildSettings::default())
    }

    /// [`SqliteStore::start_continuation`] with what the child does not inherit: the agent
    /// rebuilds its system prompt at each compaction (a fresh memory snapshot), and a model
    /// switch may have happened since the parent started.
    pub fn start_continuation_with(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &ChildSettings,
    ) -> Result<String> {
        let child_id = session::new_session_id();
        self.write(|tx| {
            let parent = tx
                .query_row(
                    "SELECT source, model, system_prompt, title, ended_at, end_reason \
                     FROM sessions WHERE id = ?1",
                    [parent_id],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, Option<String>>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, Option<f64>>(4)?,
                            r.get::<_, Option<String>>(5)?,
                        ))
                    },
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound {
                    id: parent_id.to_string(),
                })?;
            let (source, model, system_prompt, parent_title, ended_at, reason) = parent;
            if reason.as_deref() == Some(end_reason::COMPRESSION) {
                let child: Option<String> = tx
                    .query_row(
                        "SELECT id FROM sessions WHERE parent_session_id = ?1 \
                         ORDER BY started_at DESC LIMIT 1",
                        [parent_id],
                        |r| r.get(0),
                    )
                    .optional()?;
                return Err(StoreError::AlreadyContinued {
                    id: parent_id.to_string(),
                    child,
                });
            }
            let now = session::now();
            let ended = ended_at.unwrap_or(now);
            tx.execute(
                "UPDATE sessions SET ended_at = ?1, end_reason = ?2 WHERE id = ?3",
                params![ended, end_reason::COMPRESSION, parent_id],
            )?;
            let child = NewSession {
                id: Some(child_id.clone()),
                source,
                model: settings.model.clone().or(model),
                system_prompt: settings.system_prompt.clone().or(system_prompt),
                parent_session_id: Some(parent_id.to_string()),
                started_at: Some(now.max(ended)),
            };
            insert_session(tx, &child_id, &child)?;
            self.append_in_tx(tx, &child_id, messages, None, now.max(ended))?;
            if let Some(t) = parent_title {
                let next = title::next_title_in_lineage(tx, &t)?;
                tx.execute(
                    "UPDATE sessions SET title = ?1 WHERE id = ?2",
                    params![next, child_id],
                )?;
            }
            Ok(())
        })?;
        Ok(child_id)
    }
}
