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
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How a write fills the search columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Indexing {
    /// In the write's own transaction: searchable through the indexes once it commits.
    Inline,
    /// Left NULL for [`PgStore::index_waiting`]: found by search's scan of waiting rows.
    Deferred,
}

/// Indexing transactions a catch-up step runs at once, each on its own connection. The
/// server's GIN maintenance runs in each writing backend, so concurrent indexers use the
/// server's cores: on the 2-core machine, `corpus_x16` (207,632 messages) caught up in
/// 73.7 s with one indexer and 30.8 s with two (four: 30.6 s; more cores, more gain).
const INDEXERS: usize = 4;

/// Most messages one indexing transaction takes: its rows' text and vectors are held in
/// memory until it commits.
const INDEX_CHUNK: usize = 2_500;

/// What is left of a catch-up step's messages, shared by its indexers: each takes its next
/// transaction's share when it is free, so one slow transaction (a chunk of long tool
/// outputs) does not hold the others idle until the step ends.
struct Budget(Mutex<usize>);

impl Budget {
    fn left(&self) -> MutexGuard<'_, usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next transaction's share: up to [`INDEX_CHUNK`]; 0 once the step is spent.
    fn take(&self) -> usize {
        let mut left = self.left();
        let n = (*left).min(INDEX_CHUNK);
        *left -= n;
        n
    }

    /// Ends the step for every indexer (one failed, or nothing is left to take).
    fn spend(&self) {
        *self.left() = 0;
    }
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

    /// Indexes up to `limit` of the oldest waiting messages with [`INDEXERS`] concurrent
    /// indexers, each running transactions of at most [`INDEX_CHUNK`] until the step's
    /// `limit` is spent. Returns how many; 0 when none are left to take.
    pub fn index_waiting_concurrently(&self, limit: usize) -> Result<usize> {
        let budget = Budget(Mutex::new(limit));
        let indexer = || -> Result<usize> {
            let mut indexed = 0;
            loop {
                let share = budget.take();
                if share == 0 {
                    return Ok(indexed);
                }
                let n = self.index_waiting(share).inspect_err(|_| budget.spend())?;
                indexed += n;
                if n < share {
                    // Nothing more waits that another indexer does not hold.
                    budget.spend();
                    return Ok(indexed);
                }
            }
        };
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..INDEXERS).map(|_| scope.spawn(indexer)).collect();
            let mut indexed = 0;
            let mut failure = None;
            for worker in workers {
                match worker.join() {
                    Ok(Ok(n)) => indexed += n,
                    Ok(Err(e)) => {
                        failure.get_or_insert(e);
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            // What the others indexed is committed either way; the failure is what to report.
            failure.map_or(Ok(indexed), Err)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_taken_a_chunk_at_a_time_and_never_past_its_limit() {
        let budget = Budget(Mutex::new(INDEX_CHUNK * 2 + 10));
        assert_eq!(budget.take(), INDEX_CHUNK);
        assert_eq!(budget.take(), INDEX_CHUNK);
        assert_eq!(budget.take(), 10);
        assert_eq!(budget.take(), 0);
    }

    #[test]
    fn a_spent_step_gives_no_indexer_more() {
        let budget = Budget(Mutex::new(100_000));
        budget.spend();
        assert_eq!(budget.take(), 0);
    }
}
