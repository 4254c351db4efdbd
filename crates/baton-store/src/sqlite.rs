//! [`SqliteStore`]: the embedded SQLite implementation of [`SessionStore`].

use crate::SessionStore;
use crate::checkpointer::{self, Checkpointer};
use crate::cjk_index;
use crate::codec::{self, MessageRow};
use crate::error::{Result, StoreError};
use crate::lineage;
use crate::open::{self, JournalMode, OpenOptions};
use crate::prune;
use crate::resolve;
use crate::retry::with_write_tx;
use crate::row_insert;
use crate::schema;
use crate::session::{self, ListedSession, NewSession, Session, SessionFilter};
use crate::stats::{self, StatsQuery, UsageStats};
use crate::title;
use baton_core::Message;
use baton_core::usage::CanonicalUsage;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Successful writes between passive WAL checkpoints.
const CHECKPOINT_EVERY_N_WRITES: u64 = 50;

/// Messages of an index backlog (another program's rows, a deferred import's) each write of
/// ours indexes besides its own: the backlog shrinks without making any one turn slow.
const INLINE_BACKLOG_SHARE: usize = 200;

/// Columns read back for a message, in the order `messages()` reads them.
pub(crate) const MESSAGE_COLUMNS: [&str; 13] = [
    "id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "raw_json",
];

/// Columns of [`Session`], in the order [`session_from_row`] reads them.
pub(crate) const SESSION_COLUMNS: &str = "id, source, user_id, model, system_prompt, \
    parent_session_id, started_at, ended_at, end_reason, COALESCE(message_count, 0), \
    COALESCE(tool_call_count, 0), COALESCE(input_tokens, 0), COALESCE(output_tokens, 0), \
    COALESCE(cache_read_tokens, 0), COALESCE(cache_write_tokens, 0), \
    COALESCE(reasoning_tokens, 0), estimated_cost_usd, title, COALESCE(api_call_count, 0)";

pub(crate) fn session_from_row(r: &Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        source: r.get(1)?,
        user_id: r.get(2)?,
        model: r.get(3)?,
        system_prompt: r.get(4)?,
        parent_session_id: r.get(5)?,
        started_at: r.get(6)?,
        ended_at: r.get(7)?,
        end_reason: r.get(8)?,
        message_count: r.get(9)?,
        tool_call_count: r.get(10)?,
        input_tokens: r.get(11)?,
        output_tokens: r.get(12)?,
        cache_read_tokens: r.get(13)?,
        cache_write_tokens: r.get(14)?,
        reasoning_tokens: r.get(15)?,
        estimated_cost_usd: r.get(16)?,
        title: r.get(17)?,
        api_call_count: r.get(18)?,
    })
}

pub(crate) fn load_session(conn: &Connection, id: &str) -> rusqlite::Result<Option<Session>> {
    conn.prepare_cached(&format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"
    ))?
    .query_row([id], session_from_row)
    .optional()
}

fn session_exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")?
        .query_row([id], |r| r.get(0))
}

pub(crate) fn require_session(conn: &Connection, id: &str) -> Result<()> {
    if session_exists(conn, id)? {
        Ok(())
    } else {
        Err(StoreError::NotFound { id: id.to_string() })
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A session store in one SQLite file. One connection, guarded by a mutex, so a store can be
/// shared between threads; separate stores (or processes) on the same file coordinate through
/// SQLite's locks and the retrying write path.
pub struct SqliteStore {
    /// Checkpoints the WAL beside bulk writes (`checkpointer.rs`); started by the first one.
    /// Declared before `conn` so it stops, closing its connection, before `conn` closes: the
    /// last connection to close checkpoints what is left and removes the WAL.
    pub(crate) checkpointer: Mutex<Option<Checkpointer>>,
    /// WAL size past which a commit restarts the log while the checkpointer runs.
    pub(crate) wal_restart_bytes: u64,
    conn: Mutex<Connection>,
    path: PathBuf,
    journal_mode: JournalMode,
    has_raw_json: bool,
    /// Whether inserts must also feed the CJK short-term index (every database we migrated).
    has_cjk_index: bool,
    /// Whether bulk writes can leave their rows to the index catch-up (schema 15).
    has_word_queue: bool,
    /// The SELECT list for message rows; columns an older read-only database lacks read NULL.
    message_select: String,
    writes: AtomicU64,
}

impl SqliteStore {
    /// Opens or creates the database at `path`, migrating it to [`schema::SCHEMA_VERSION`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &OpenOptions::default())
    }

    /// Opens an existing database without writing to it. A database of an older schema
    /// version is read as it is (messages without `raw_json` are rebuilt from their columns).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(
            path,
            &OpenOptions {
                read_only: true,
                ..OpenOptions::default()
            },
        )
    }

    pub fn open_with(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<Self> {
        let path = path.as_ref();
        let opened = open::open_path(path, opts)?;
        Self::from_opened(opened, path.to_path_buf())
    }

    /// A private in-memory database.
    pub fn open_in_memory() -> Result<Self> {
        Self::from_opened(open::open_memory()?, PathBuf::from(":memory:"))
    }

    fn from_opened(opened: open::Opened, path: PathBuf) -> Result<Self> {
        let (present, has_cjk_index, has_word_queue) = if opened.current {
            let all = MESSAGE_COLUMNS.iter().map(|c| (*c).to_string()).collect();
            (all, true, true)
        } else {
            (
                schema::column_names(&opened.conn, "messages")?,
                cjk_index::is_present(&opened.conn)?,
                crate::deferred_index::is_present(&opened.conn)?,
            )
        };
        let has_raw_json = present.iter().any(|c| c == "raw_json");
        let message_select = MESSAGE_COLUMNS
            .iter()
            .map(|c| {
                if present.iter().any(|p| p == c) {
                    (*c).to_string()
                } else {
                    "NULL".to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        Ok(SqliteStore {
            checkpointer: Mutex::new(None),
            wal_restart_bytes: checkpointer::WAL_RESTART_BYTES as u64,
            conn: Mutex::new(opened.conn),
            path,
            journal_mode: opened.journal_mode,
            has_raw_json,
            has_cjk_index,
            has_word_queue,
            message_select,
            writes: AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn journal_mode(&self) -> &JournalMode {
        &self.journal_mode
    }

    /// The schema version stored in the file.
    pub fn schema_version(&self) -> Result<Option<i64>> {
        self.read(schema::read_version)
    }

    /// Usage statistics over `query`'s window (see [`stats`]). Read-only.
    pub fn stats(&self, query: &StatsQuery) -> Result<UsageStats> {
        self.read(|c| stats::usage_stats(c, query))
    }

    /// [`SqliteStore::stats`], pricing sessions without a stored cost by `prices` (the
    /// built-in table with `config.toml`'s `[pricing]` overrides). Read-only.
    pub fn stats_priced(
        &self,
        query: &StatsQuery,
        prices: &baton_core::pricing::PriceTable,
    ) -> Result<UsageStats> {
        self.read(|c| stats::usage_stats_priced(c, query, prices))
    }

    /// The ids `prune_sessions(older_than, source)` would delete now, oldest first. Read-only.
    pub fn prune_candidates(
        &self,
        older_than: Duration,
        source: Option<&str>,
    ) -> Result<Vec<String>> {
        let cutoff = session::now() - older_than.as_secs_f64();
        self.read(|c| prune::prune_candidates(c, cutoff, source))
    }

    /// [`SessionStore::prune_sessions`], returning the ids deleted (oldest first).
    pub fn prune_sessions_listed(
        &self,
        older_than: Duration,
        source: Option<&str>,
    ) -> Result<Vec<String>> {
        let cutoff = session::now() - older_than.as_secs_f64();
        self.write(|tx| prune::prune_before_listed(tx, cutoff, source))
    }

    /// Deletes every session of the compression chain containing `id` in one transaction
    /// (children outside the chain are detached). Returns the ids deleted, root first; empty
    /// when there was no such session.
    pub fn delete_chain(&self, id: &str) -> Result<Vec<String>> {
        self.write(|tx| {
            let chain = lineage::compression_chain(tx, id)?;
            let mut deleted = Vec::new();
            for sid in chain {
                if prune::delete_session(tx, &sid)? {
                    deleted.push(sid);
                }
            }
            Ok(deleted)
        })
    }

    /// Whether bulk writes can leave indexing to the catch-up (schema 15 and newer).
    pub(crate) fn can_defer_indexing(&self) -> bool {
        self.has_word_queue
    }

    /// How many messages the search indexes have not seen yet (a deferred import's rows,
    /// rows another program inserted). Searches scan them meanwhile.
    pub fn index_backlog(&self) -> Result<usize> {
        self.read(|c| Ok(crate::deferred_index::backlog(c)?))
    }

    /// Indexes up to `limit` of the oldest messages the search indexes have not seen, in one
    /// write transaction. Returns how many; 0 when the indexes are up to date.
    pub fn catch_up_index(&self, limit: usize) -> Result<usize> {
        self.prepare_bulk_write()?;
        self.write(|tx| Ok(crate::deferred_index::catch_up(tx, limit)?))
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic in another thread while holding the lock cannot leave a transaction open
        // (dropping it rolls back), so the connection is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a read on the connection.
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        f(&self.lock()).map_err(|e| open::corrupt_or(e, &self.path))
    }

    /// Runs a write transaction with the retrying write path, checkpointing now and then.
    pub fn write<T>(&self, f: impl FnMut(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let value = with_write_tx(&mut conn, f).map_err(|e| open::corrupt_or(e, &self.path))?;
        self.after_commit(&conn);
        let n = self.writes.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(CHECKPOINT_EVERY_N_WRITES) && self.journal_mode == JournalMode::Wal {
            // Best effort: a busy checkpoint simply happens later.
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
        Ok(value)
    }

    /// The session's messages selected by `tail` (an `ORDER BY … LIMIT …` clause whose extra
    /// parameters, after the session id, are `params`), decoded.
    pub(crate) fn decode_messages(
        &self,
        c: &Connection,
        session_id: &str,
        tail: &str,
        params: &[i64],
    ) -> Result<Vec<Message>> {
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE session_id = ?1 {tail}",
            self.message_select
        ))?;
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![&session_id];
        values.extend(params.iter().map(|p| p as &dyn rusqlite::ToSql));
        let rows = stmt.query_map(values.as_slice(), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                MessageRow {
                    role: r.get(1)?,
                    content: r.get(2)?,
                    tool_call_id: r.get(3)?,
                    tool_calls: r.get(4)?,
                    tool_name: r.get(5)?,
                    finish_reason: r.get(6)?,
                    reasoning: r.get(7)?,
                    reasoning_content: r.get(8)?,
                    reasoning_details: r.get(9)?,
                    codex_reasoning_items: r.get(10)?,
                    codex_message_items: r.get(11)?,
                    raw_json: r.get(12)?,
                    // Not read back: messages are rebuilt from their content.
                    token_count: None,
                },
            ))
        })?;
        let mut out = Vec::new();
        for (index, row) in rows.enumerate() {
            let (row_id, row) = row?;
            let msg = Message::from_value(codec::row_to_value(row), index).map_err(|source| {
                StoreError::BadMessage {
                    session_id: session_id.to_string(),
                    row_id,
                    source,
                }
            })?;
            out.push(msg);
        }
        Ok(out)
    }

    /// Tool-call ids of the session's recent assistant messages, mapped to function names.
    ///
    /// Ordered by `timestamp, id` so `idx_messages_session (session_id, timestamp)` (which
    /// ends in the rowid) answers it walking back from the newest row; `ORDER BY id` alone
    /// sorted every row of the session in a temporary B-tree on each tool result appended, so
    /// an agent's appends grew with its history.
    fn recent_call_names(
        tx: &Transaction<'_>,
        session_id: &str,
    ) -> Result<HashMap<String, String>> {
        let mut stmt = tx.prepare_cached(
            "SELECT tool_calls FROM messages WHERE session_id = ?1 AND tool_calls IS NOT NULL \
             ORDER BY timestamp DESC, id DESC LIMIT 20",
        )?;
        let mut names = HashMap::new();
        let rows = stmt.query_map([session_id], |r| r.get::<_, String>(0))?;
        for text in rows {
            let Ok(serde_json::Value::Array(calls)) = serde_json::from_str(&text?) else {
                continue;
            };
            for call in calls {
                if let (Some(id), Some(name)) = (
                    call.get("id").and_then(|v| v.as_str()),
                    call.pointer("/function/name").and_then(|v| v.as_str()),
                ) {
                    names
                        .entry(id.to_string())
                        .or_insert_with(|| name.to_string());
                }
            }
        }
        Ok(names)
    }

    fn insert_rows(
        &self,
        tx: &Transaction<'_>,
        session_id: &str,
        messages: &[Message],
        encoded: Option<&[codec::MessageRow]>,
        base: f64,
    ) -> Result<()> {
        // A monotonic bump keeps a batch ordered by timestamp as well as by id.
        self.insert_rows_stamped(tx, session_id, messages, encoded, &|k| {
            base + k as f64 * 1e-6
        })
    }

    /// Inserts message rows, message `k` stamped `stamp(k)` (copies keep the source's times).
    /// `encoded`, when given, holds the rows of `messages` already made by
    /// [`codec::new_session_rows`] (only for a session created in this transaction, whose tool
    /// results cannot name calls stored before).
    pub(crate) fn insert_rows_stamped(
        &self,
        tx: &Transaction<'_>,
        session_id: &str,
        messages: &[Message],
        encoded: Option<&[codec::MessageRow]>,
        stamp: &dyn Fn(usize) -> f64,
    ) -> Result<()> {
        let encoded = encoded.filter(|rows| rows.len() == messages.len());
        let mut call_names = if encoded.is_none()
            && messages
                .iter()
                .any(|m| m.tool_call_id.is_some() && m.name.is_none())
        {
            Self::recent_call_names(tx, session_id)?
        } else {
            HashMap::new()
        };
        // Rows go to the database a statement's worth at a time (`row_insert`), made (when not
        // encoded ahead) just before, in order, so each tool result sees the calls before it.
        let mut made: Vec<codec::MessageRow> = Vec::new();
        let mut first_id = None;
        for (c, chunk) in messages.chunks(row_insert::ROWS_PER_INSERT).enumerate() {
            let base = c * row_insert::ROWS_PER_INSERT;
            let rows: Vec<&codec::MessageRow> = match encoded {
                Some(rows) => rows[base..base + chunk.len()].iter().collect(),
                None => {
                    made.clear();
                    for m in chunk {
                        for call in m.calls() {
                            call_names.insert(call.id.clone(), call.function.name.clone());
                        }
                        made.push(codec::to_row(
                            m,
                            &call_names,
                            codec::RawJson::WhereColumnsLose,
                        ));
                    }
                    made.iter().collect()
                }
            };
            let stamped: Vec<(&codec::MessageRow, f64)> = rows
                .into_iter()
                .enumerate()
                .map(|(k, row)| (row, stamp(base + k)))
                .collect();
            let first =
                row_insert::insert_message_rows(tx, session_id, &stamped, self.has_raw_json)?;
            first_id = first_id.or(first);
        }
        // The insert trigger queued every row for the CJK index. Ours are indexed in this
        // transaction, with a bounded share of rows queued before (another program's, or a
        // bulk import's backlog), unless this is a bulk write leaving them to the catch-up.
        if self.has_cjk_index
            && let Some(first) = first_id
            && !(self.has_word_queue && crate::deferred_index::is_deferring(tx)?)
        {
            cjk_index::catch_up_from(tx, first)?;
            let queues = crate::deferred_index::Queues {
                words: self.has_word_queue,
                cjk: true,
            };
            crate::deferred_index::catch_up_queues(tx, queues, INLINE_BACKLOG_SHARE)?;
        }
        Ok(())
    }
    /// Appends messages inside an open transaction and bumps the session's counters.
    /// `at` is the time stamped on the messages (Unix seconds, bumped by a microsecond each so
    /// a batch stays ordered by time as well as by id): now for live turns, the session's own
    /// start for imported history.
    pub(crate) fn append_in_tx(
        &self,
        tx: &Transaction<'_>,
        session_id: &str,
        messages: &[Message],
        encoded: Option<&[codec::MessageRow]>,
        at: f64,
    ) -> Result<()> {
        require_session(tx, session_id)?;
        let tool_calls: usize = messages
            .iter()
            .filter_map(|m| m.tool_calls.as_ref())
            .map(Vec::len)
            .sum();
        self.insert_rows(tx, session_id, messages, encoded, at)?;
        tx.prepare_cached(
            "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?1, \
             tool_call_count = COALESCE(tool_call_count, 0) + ?2 WHERE id = ?3",
        )?
        .execute(params![
            messages.len() as i64,
            tool_calls as i64,
            session_id
        ])?;
        Ok(())
    }
}

/// A session with its messages and their timestamps, read in one connection.
fn export_in(
    store: &SqliteStore,
    c: &Connection,
    id: &str,
) -> Result<Option<crate::transfer::SessionExport>> {
    let Some(session) = load_session(c, id)? else {
        return Ok(None);
    };
    let messages = store.decode_messages(c, id, "ORDER BY id", &[])?;
    let mut stmt =
        c.prepare_cached("SELECT timestamp FROM messages WHERE session_id = ?1 ORDER BY id")?;
    let timestamps = stmt
        .query_map([id], |r| r.get::<_, f64>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(crate::transfer::SessionExport {
        session,
        messages,
        timestamps,
    }))
}

/// Adds `api_calls` calls' worth of token usage (and cost, if known) to a session's counters.
pub(crate) fn add_usage_in_tx(
    tx: &Transaction<'_>,
    session_id: &str,
    usage: &CanonicalUsage,
    cost_usd: Option<f64>,
    api_calls: u64,
) -> Result<()> {
    let n = tx
        .prepare_cached(
            "UPDATE sessions SET \
             input_tokens = COALESCE(input_tokens, 0) + ?1, \
             output_tokens = COALESCE(output_tokens, 0) + ?2, \
             cache_read_tokens = COALESCE(cache_read_tokens, 0) + ?3, \
             cache_write_tokens = COALESCE(cache_write_tokens, 0) + ?4, \
             reasoning_tokens = COALESCE(reasoning_tokens, 0) + ?5, \
             estimated_cost_usd = CASE WHEN ?6 IS NULL THEN estimated_cost_usd \
                 ELSE COALESCE(estimated_cost_usd, 0) + ?6 END, \
             api_call_count = COALESCE(api_call_count, 0) + ?7 \
             WHERE id = ?8",
        )?
        .execute(params![
            to_i64(usage.input),
            to_i64(usage.output),
            to_i64(usage.cache_read),
            to_i64(usage.cache_write),
            to_i64(usage.reasoning),
            cost_usd,
            to_i64(api_calls),
            session_id
        ])?;
    if n == 0 {
        return Err(StoreError::NotFound {
            id: session_id.to_string(),
        });
    }
    Ok(())
}

/// Creates a session row (an existing id is left as it was: first write wins).
pub(crate) fn insert_session(tx: &Transaction<'_>, id: &str, new: &NewSession) -> Result<()> {
    if let Some(parent) = &new.parent_session_id {
        require_session(tx, parent)?;
    }
    tx.prepare_cached(
        "INSERT OR IGNORE INTO sessions (id, source, model, system_prompt, \
         parent_session_id, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        id,
        new.source,
        new.model,
        new.system_prompt,
        new.parent_session_id,
        new.started_at.unwrap_or_else(session::now)
    ])?;
    Ok(())
}

impl SessionStore for SqliteStore {
    fn session_ids(&self) -> Result<Vec<String>> {
        self.read(|c| {
            let mut stmt = c.prepare("SELECT id FROM sessions ORDER BY started_at, id")?;
            let ids = stmt
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(ids)
        })
    }

    fn export_session(&self, id: &str) -> Result<Option<crate::transfer::SessionExport>> {
        self.read(|c| export_in(self, c, id))
    }

    fn import_session(
        &self,
        export: &crate::transfer::SessionExport,
    ) -> Result<crate::transfer::ImportOutcome> {
        use crate::transfer::{ImportOutcome, checksum};
        let id = &export.session.id;
        self.write(|tx| {
            if let Some(existing) = export_in(self, tx, id)? {
                return if checksum(&existing) == checksum(export) {
                    Ok(ImportOutcome::AlreadyPresent)
                } else {
                    Err(StoreError::CopyConflict { id: id.clone() })
                };
            }
            let s = &export.session;
            let parent = s
                .parent_session_id
                .as_ref()
                .filter(|p| session_exists(tx, p).unwrap_or(false));
            tx.prepare_cached(
                "INSERT INTO sessions (id, source, user_id, model, system_prompt, \
                 parent_session_id, started_at, ended_at, end_reason, message_count, \
                 tool_call_count, input_tokens, output_tokens, cache_read_tokens, \
                 cache_write_tokens, reasoning_tokens, estimated_cost_usd, title, api_call_count) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
                 ?17, ?18, ?19)",
            )?
            .execute(params![
                s.id,
                s.source,
                s.user_id,
                s.model,
                s.system_prompt,
                parent,
                s.started_at,
                s.ended_at,
                s.end_reason,
                s.message_count,
                s.tool_call_count,
                s.input_tokens,
                s.output_tokens,
                s.cache_read_tokens,
                s.cache_write_tokens,
                s.reasoning_tokens,
                s.estimated_cost_usd,
                s.title,
                s.api_call_count
            ])?;
            let stamps = &export.timestamps;
            self.insert_rows_stamped(tx, id, &export.messages, None, &|k| {
                stamps.get(k).copied().unwrap_or(s.started_at)
            })?;
            if self.has_cjk_index {
                cjk_index::catch_up(tx)?;
            }
            Ok(ImportOutcome::written(s, parent.is_some()))
        })
    }

    fn start_continuation_with(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &crate::continuation::ChildSettings,
    ) -> Result<String> {
        SqliteStore::start_continuation_with(self, parent_id, messages, settings)
    }

    fn messages_range(&self, session_id: &str, start: usize, end: usize) -> Result<Vec<Message>> {
        SqliteStore::messages_range(self, session_id, start, end)
    }

    fn append_answer(
        &self,
        session_id: &str,
        messages: &[Message],
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        self.write(|tx| {
            self.append_in_tx(tx, session_id, messages, None, session::now())?;
            add_usage_in_tx(tx, session_id, usage, cost_usd, 1)
        })
    }

    fn stats(
        &self,
        query: &StatsQuery,
        prices: &baton_core::pricing::PriceTable,
    ) -> Result<UsageStats> {
        SqliteStore::stats_priced(self, query, prices)
    }

    fn message_count(&self, session_id: &str) -> Result<usize> {
        SqliteStore::message_count(self, session_id)
    }

    fn message_position(&self, message_id: i64) -> Result<(String, usize)> {
        SqliteStore::message_position(self, message_id)
    }

    fn child_sessions(&self, parent_id: &str) -> Result<Vec<String>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id FROM sessions WHERE parent_session_id = ?1 ORDER BY started_at, id",
            )?;
            let ids = stmt
                .query_map([parent_id], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(ids)
        })
    }

    fn search(&self, query: &crate::search::SearchQuery) -> Result<Vec<crate::search::SearchHit>> {
        self.read(|c| crate::search::search(c, query).map_err(StoreError::Search))
    }

    fn create_session(&self, new: NewSession) -> Result<String> {
        let id = new.id.clone().unwrap_or_else(session::new_session_id);
        self.write(|tx| insert_session(tx, &id, &new))?;
        Ok(id)
    }

    fn end_session(&self, id: &str, reason: &str) -> Result<bool> {
        self.write(|tx| {
            let n = tx
                .prepare_cached(
                    "UPDATE sessions SET ended_at = ?1, end_reason = ?2 \
                     WHERE id = ?3 AND ended_at IS NULL",
                )?
                .execute(params![session::now(), reason, id])?;
            if n == 0 {
                require_session(tx, id)?;
            }
            Ok(n > 0)
        })
    }

    fn get_session(&self, id: &str) -> Result<Option<Session>> {
        self.read(|c| Ok(load_session(c, id)?))
    }

    fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<ListedSession>> {
        self.read(|c| lineage::list_projected(c, filter))
    }

    fn append_messages(&self, session_id: &str, messages: &[Message]) -> Result<()> {
        if messages.is_empty() {
            return self.read(|c| require_session(c, session_id));
        }
        self.write(|tx| self.append_in_tx(tx, session_id, messages, None, session::now()))
    }

    fn messages(&self, session_id: &str) -> Result<Vec<Message>> {
        self.read(|c| {
            require_session(c, session_id)?;
            self.decode_messages(c, session_id, "ORDER BY id", &[])
        })
    }

    fn add_usage(
        &self,
        session_id: &str,
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        self.write(|tx| add_usage_in_tx(tx, session_id, usage, cost_usd, 1))
    }

    fn set_title(&self, session_id: &str, raw: &str) -> Result<Option<String>> {
        let cleaned = title::clean_title(raw)?;
        self.write(|tx| {
            require_session(tx, session_id)?;
            if let Some(t) = &cleaned {
                let other: Option<String> = tx
                    .prepare_cached("SELECT id FROM sessions WHERE title = ?1 AND id != ?2")?
                    .query_row(params![t, session_id], |r| r.get(0))
                    .optional()?;
                if let Some(other_id) = other {
                    return Err(StoreError::TitleInUse {
                        title: t.clone(),
                        other_id,
                    });
                }
            }
            tx.prepare_cached("UPDATE sessions SET title = ?1 WHERE id = ?2")?
                .execute(params![cleaned, session_id])?;
            Ok(())
        })?;
        Ok(cleaned)
    }

    fn next_title_in_lineage(&self, raw: &str) -> Result<String> {
        self.read(|c| title::next_title_in_lineage(c, raw))
    }

    fn compression_tip(&self, id: &str) -> Result<String> {
        self.read(|c| lineage::compression_tip(c, id))
    }

    fn compression_chain(&self, id: &str) -> Result<Vec<String>> {
        self.read(|c| lineage::compression_chain(c, id))
    }

    fn resolve_session(&self, id_or_title: &str) -> Result<Option<String>> {
        self.read(|c| resolve::resolve_session(c, id_or_title))
    }

    fn delete_session(&self, id: &str) -> Result<bool> {
        self.write(|tx| prune::delete_session(tx, id))
    }

    fn prune_sessions(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>> {
        SqliteStore::prune_sessions_listed(self, older_than, source)
    }

    fn prune_candidates(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>> {
        SqliteStore::prune_candidates(self, older_than, source)
    }

    fn delete_chain(&self, id: &str) -> Result<Vec<String>> {
        SqliteStore::delete_chain(self, id)
    }

    fn retitle_chain(&self, id: &str, raw: &str) -> Result<Vec<(String, Option<String>)>> {
        SqliteStore::retitle_chain(self, id, raw)
    }

    fn write_new_sessions(&self, batch: &[crate::SessionBatch<'_>]) -> Result<Vec<(String, bool)>> {
        SqliteStore::write_new_sessions(self, batch)
    }

    fn write_new_sessions_deferred(
        &self,
        batch: &[crate::SessionBatch<'_>],
    ) -> Result<Vec<(String, bool)>> {
        SqliteStore::write_new_sessions_deferred(self, batch)
    }

    fn index_backlog(&self) -> Result<usize> {
        SqliteStore::index_backlog(self)
    }

    fn catch_up_index(&self, limit: usize) -> Result<usize> {
        SqliteStore::catch_up_index(self, limit)
    }

    fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT value FROM state_meta WHERE key = ?1")?
                    .query_row([key], |r| r.get::<_, Option<String>>(0))
                    .optional()?
                    .flatten(),
            )
        })
    }

    fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO state_meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![key, value])?;
            Ok(())
        })
    }
}
