//! Reading a session's history back by position, as the SQLite store's `archive` does: what
//! an agent's `history_expand` returns for a summarized span and how `history_search` turns a
//! hit into a reference. A position is a message's place in its session's append order, from
//! 0 (ids grow with appends, so the order is the id order).

use crate::messages::{self, MESSAGE_COLUMNS};
use crate::store::{PgStore, TxError, require_session};
use baton_core::Message;
use baton_store::{Result, StoreError};

impl PgStore {
    /// Messages `start..end` of a session (`end` clamped to its length), reading only those.
    pub(crate) fn range(&self, session_id: &str, start: usize, end: usize) -> Result<Vec<Message>> {
        if end <= start {
            return Ok(Vec::new());
        }
        let id = session_id.to_string();
        self.read(move |client| async move {
            require_session(&**client, &id).await?;
            let sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY id \
                 LIMIT $2 OFFSET $3"
            );
            let rows = client
                .query(
                    sql.as_str(),
                    &[&id, &((end - start) as i64), &(start as i64)],
                )
                .await?;
            rows.iter()
                .map(|r| messages::decode(&id, r).map_err(TxError::Store))
                .collect()
        })
    }

    /// How many messages a session has.
    pub(crate) fn count(&self, session_id: &str) -> Result<usize> {
        let id = session_id.to_string();
        self.read(move |client| async move {
            require_session(&**client, &id).await?;
            let n: i64 = client
                .query_one(
                    "SELECT COUNT(*) FROM messages WHERE session_id = $1",
                    &[&id],
                )
                .await?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    /// The session and position of the stored message `message_id`.
    pub(crate) fn position(&self, message_id: i64) -> Result<(String, usize)> {
        self.read(move |client| async move {
            let Some(row) = client
                .query_opt(
                    "SELECT session_id FROM messages WHERE id = $1",
                    &[&message_id],
                )
                .await?
            else {
                return Err(TxError::Store(StoreError::NotFound {
                    id: format!("message {message_id}"),
                }));
            };
            let session: String = row.get(0);
            let before: i64 = client
                .query_one(
                    "SELECT COUNT(*) FROM messages WHERE session_id = $1 AND id < $2",
                    &[&session, &message_id],
                )
                .await?
                .get(0);
            Ok((session, usize::try_from(before).unwrap_or(0)))
        })
    }

    /// The sessions whose parent is `parent_id`, oldest first.
    pub(crate) fn children(&self, parent_id: &str) -> Result<Vec<String>> {
        let id = parent_id.to_string();
        self.read(move |client| async move {
            Ok(client
                .query(
                    "SELECT id FROM sessions WHERE parent_session_id = $1 \
                     ORDER BY started_at, id",
                    &[&id],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect())
        })
    }
}
