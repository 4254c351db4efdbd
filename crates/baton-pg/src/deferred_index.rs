//! Indexing after the rows, on PostgreSQL: a bulk import COPYs its messages with the search
//! columns left NULL, and [`PgStore::index_waiting`] fills them in later, in chunks.
//!
//! Why: maintaining the two GIN indexes is most of what a write costs (for 50,000 stored
//! rows, 0.8 s for the rows and 8.3 s for the indexes), so an import that indexes inline
//! cannot pass a few thousand messages a second. Deferred, the rows go in at COPY speed and
//! the index work happens once, in bounded transactions that any number of indexers (hosts,
//! `baton sessions index` runs) share: each takes the oldest waiting rows it can lock
//! (`FOR UPDATE SKIP LOCKED`), so two never index the same row and a killed one leaves its
//! chunk waiting for the next.
//!
//! A waiting message is one whose `words` column is NULL (schema version 3). The partial
//! index `messages_unindexed` holds exactly those rows, so finding the backlog never scans
//! the table, and search reads them directly (`crate::search`) so results are complete
//! while the indexes catch up. Live appends (a few rows each) still index in their own
//! transaction.

use crate::messages::haystack_of;
use crate::store::PgStore;
use crate::tsvector::{SearchColumns, TsVector};
use baton_store::Result;

/// How a write fills the search columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Indexing {
    /// In the write's own transaction: searchable through the indexes once it commits.
    Inline,
    /// Left NULL for [`PgStore::index_waiting`]: found by search's scan of waiting rows.
    Deferred,
}

/// The condition naming a message not yet indexed (the partial index's predicate, written
/// identically so the planner uses it).
pub(crate) const WAITING: &str = "words IS NULL";

impl PgStore {
    /// How many messages wait for the search indexes.
    pub fn unindexed_count(&self) -> Result<usize> {
        self.read(|client| async move {
            let n: i64 = client
                .query_one(
                    &format!("SELECT COUNT(*) FROM messages WHERE {WAITING}"),
                    &[],
                )
                .await?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    /// Indexes up to `limit` of the oldest waiting messages that no other indexer holds, in
    /// one transaction. Returns how many; 0 when none are left to take.
    ///
    /// (Overlapping chunks, the client building one chunk's vectors while the server updates
    /// the previous one, was tried: 16–19 s for 50,000 messages either way, within this
    /// machine's noise. The server's GIN maintenance is most of the work.)
    pub fn index_waiting(&self, limit: usize) -> Result<usize> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.write(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        &format!(
                            "SELECT id, content, tool_name, tool_calls FROM messages \
                             WHERE {WAITING} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED"
                        ),
                        &[&limit],
                    )
                    .await?;
                let mut ids = Vec::with_capacity(rows.len());
                let mut words: Vec<TsVector> = Vec::with_capacity(rows.len());
                let mut cjk: Vec<TsVector> = Vec::with_capacity(rows.len());
                let mut lens = Vec::with_capacity(rows.len());
                for r in &rows {
                    let columns = SearchColumns::of(&haystack_of(r.get(1), r.get(2), r.get(3)));
                    ids.push(r.get::<_, i64>(0));
                    words.push(columns.words);
                    cjk.push(columns.cjk);
                    lens.push(columns.len);
                }
                tx.execute(
                    "UPDATE messages m SET words = u.w, cjk = u.c, search_len = u.l \
                     FROM unnest($1::int8[], $2::tsvector[], $3::tsvector[], $4::int4[]) \
                     AS u(id, w, c, l) WHERE m.id = u.id",
                    &[&ids, &words, &cjk, &lens],
                )
                .await?;
                Ok(ids.len())
            })
        })
    }
}
