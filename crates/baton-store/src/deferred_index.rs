//! Search indexing after the rows: bulk imports write messages first, and the two full-text
//! indexes catch up in separate, bounded transactions.
//!
//! Maintaining the indexes inside the write transaction capped imports at ~7,000 messages/s
//! (FTS5 flushing and merging its segments was three quarters of an import's CPU), and the
//! reference's word index kept a second copy of every message's text. Schema version 15:
//!
//! - `messages_fts` is an *external-content* FTS5 table over the view `messages_fts_source`
//!   (the same `content || tool_name || tool_calls` text the reference indexes), so the text is
//!   stored once, in `messages`. Its delete and update triggers pass the old text with FTS5's
//!   `'delete'` command, which every SQLite with FTS5 understands, so the reference design's
//!   code on SQLite 3.40 still writes the file correctly.
//! - While a transaction of ours holds the row of `messages_index_deferred`, inserted messages
//!   are queued in `messages_fts_pending` instead of indexed (the CJK index has its own queue,
//!   fed by its trigger either way). The flag row is inserted and deleted inside that one
//!   transaction, so no other connection ever sees it: every other writer, the reference's
//!   code included, indexes inline as before.
//! - [`catch_up`] indexes the oldest queued messages, a chunk per transaction: `sessions
//!   import` runs it to the end after writing its rows (or leaves it to `sessions index`), a
//!   read-write open does one small chunk, and a search scans whatever is still queued, so no
//!   message is ever missing from results while the indexes catch up.

use rusqlite::{Connection, Transaction, params};

/// The queue of messages the word index has not seen (only bulk writes of ours fill it).
pub const WORD_QUEUE: &str = "messages_fts_pending";

/// The text both full-text indexes hold for a message, as a view (the external content of
/// `messages_fts`). Same concatenation as the reference's triggers.
const SOURCE_VIEW_SQL: &str = "CREATE VIEW IF NOT EXISTS messages_fts_source AS \
     SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' || \
     COALESCE(tool_calls, '') AS content FROM messages";

/// The word index of schema 15, its queue, the deferral flag and the triggers. Plain SQL and
/// FTS5 options SQLite 3.40 knows.
const WORD_INDEX_SQL: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content,
    content='messages_fts_source',
    content_rowid='id'
);

CREATE TABLE IF NOT EXISTS messages_fts_pending (
    id INTEGER PRIMARY KEY
);

CREATE TABLE IF NOT EXISTS messages_index_deferred (
    one INTEGER PRIMARY KEY CHECK (one = 1)
);

CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM messages_index_deferred) BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_defer AFTER INSERT ON messages
WHEN EXISTS (SELECT 1 FROM messages_index_deferred) BEGIN
    INSERT OR IGNORE INTO messages_fts_pending(id) VALUES (new.id);
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content)
    SELECT 'delete', old.id,
        COALESCE(old.content, '') || ' ' || COALESCE(old.tool_name, '') || ' ' || COALESCE(old.tool_calls, '')
    WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = old.id);
    DELETE FROM messages_fts_pending WHERE id = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content)
    SELECT 'delete', old.id,
        COALESCE(old.content, '') || ' ' || COALESCE(old.tool_name, '') || ' ' || COALESCE(old.tool_calls, '')
    WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = old.id);
    INSERT INTO messages_fts(rowid, content)
    SELECT new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = new.id);
END;
"#;

/// FTS5 flushes its in-memory terms to a new segment whenever they pass this size (1 MiB by
/// default), and merges segments as they pile up. Catch-up chunks write tens of thousands of
/// messages in one transaction; a larger buffer means fewer, larger segments and far less
/// merging (corpus_x16's word index: 4.5 s at 1 MiB, 3.4 s at 32 MiB). Kept in the table's
/// config, which versions of SQLite without the option ignore.
const WORD_INDEX_HASH_BYTES: i64 = 32 * 1024 * 1024;

/// Messages per catch-up transaction: large enough for FTS5 to write big segments, small
/// enough that a writer waiting for the lock waits a fraction of a second.
pub const CATCH_UP_CHUNK: usize = 20_000;

/// The migration to schema 15: the word index rebuilt over the view (external content),
/// with the deferral queue and flag. Rebuilding reads every message once.
pub fn upgrade(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "DROP TRIGGER IF EXISTS messages_fts_insert;
         DROP TRIGGER IF EXISTS messages_fts_delete;
         DROP TRIGGER IF EXISTS messages_fts_update;
         DROP TABLE IF EXISTS messages_fts;",
    )?;
    create(tx)?;
    tx.execute(
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
        [],
    )?;
    Ok(())
}

/// Creates the schema-15 word index (empty) and everything around it.
pub fn create(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SOURCE_VIEW_SQL)?;
    tx.execute_batch(WORD_INDEX_SQL)?;
    tx.execute(
        "INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', ?1)",
        [WORD_INDEX_HASH_BYTES],
    )?;
    Ok(())
}

/// Whether the database has the schema-15 word index (its queue).
pub fn is_present(conn: &Connection) -> rusqlite::Result<bool> {
    crate::schema::table_exists(conn, WORD_QUEUE)
}

/// Messages inserted from here to [`end_deferral`] in this transaction are queued for the word
/// index instead of indexed.
pub fn begin_deferral(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR IGNORE INTO messages_index_deferred(one) VALUES (1)",
        [],
    )?;
    Ok(())
}

/// Ends [`begin_deferral`]: later inserts, ours or anyone's, are indexed inline again.
pub fn end_deferral(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM messages_index_deferred", [])?;
    Ok(())
}

/// Whether this transaction is inside [`begin_deferral`] (schema 15 only: the flag's table).
pub fn is_deferring(tx: &Transaction<'_>) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM messages_index_deferred)",
        [],
        |r| r.get(0),
    )
}

/// How many messages one of the search indexes has not seen yet.
pub fn backlog(conn: &Connection) -> rusqlite::Result<usize> {
    let word = is_present(conn)?;
    let cjk = crate::cjk_index::has_queue(conn)?;
    let sql = match (word, cjk) {
        (true, true) => {
            "SELECT count(*) FROM (SELECT id FROM messages_fts_pending \
             UNION SELECT id FROM messages_cjk_pending)"
        }
        (true, false) => "SELECT count(*) FROM messages_fts_pending",
        (false, true) => "SELECT count(*) FROM messages_cjk_pending",
        (false, false) => return Ok(0),
    };
    let n: i64 = conn.query_row(sql, [], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Indexes up to `limit` of the oldest queued messages of each index. Returns how many
/// messages left a queue (0: both were empty).
pub fn catch_up(tx: &Transaction<'_>, limit: usize) -> rusqlite::Result<usize> {
    let queues = Queues {
        words: is_present(tx)?,
        cjk: crate::cjk_index::has_queue(tx)?,
    };
    catch_up_queues(tx, queues, limit)
}

/// Which index queues a database has (a store knows them from its open; the schema's open
/// path looks them up).
#[derive(Debug, Clone, Copy)]
pub struct Queues {
    pub words: bool,
    pub cjk: bool,
}

/// [`catch_up`] on queues already known, without looking them up again (every write of ours).
pub fn catch_up_queues(
    tx: &Transaction<'_>,
    queues: Queues,
    limit: usize,
) -> rusqlite::Result<usize> {
    let words = if queues.words {
        catch_up_words(tx, limit)?
    } else {
        0
    };
    let cjk = if queues.cjk {
        crate::cjk_index::catch_up_oldest(tx, limit)?
    } else {
        0
    };
    Ok(words.max(cjk))
}

/// The word index's part of [`catch_up`]: one INSERT … SELECT over the view, so FTS5 reads and
/// tokenizes the chunk without a round trip per message.
fn catch_up_words(tx: &Transaction<'_>, limit: usize) -> rusqlite::Result<usize> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let bounds: Option<(i64, i64, i64)> = tx.query_row(
        "SELECT min(id), max(id), count(*) FROM \
             (SELECT id FROM messages_fts_pending ORDER BY id LIMIT ?1)",
        [limit],
        |r| {
            Ok(
                match (r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?) {
                    (Some(lo), Some(hi)) => Some((lo, hi, r.get(2)?)),
                    _ => None,
                },
            )
        },
    )?;
    let Some((lo, hi, n)) = bounds else {
        return Ok(0);
    };
    // A queued id whose message was deleted left the queue with it (delete trigger), so
    // every id in the range has its row.
    tx.execute(
        "INSERT INTO messages_fts(rowid, content) SELECT s.id, s.content \
         FROM messages_fts_pending p JOIN messages_fts_source s ON s.id = p.id \
         WHERE p.id BETWEEN ?1 AND ?2",
        params![lo, hi],
    )?;
    tx.execute(
        "DELETE FROM messages_fts_pending WHERE id BETWEEN ?1 AND ?2",
        params![lo, hi],
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}
