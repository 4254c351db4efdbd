//! The PostgreSQL schema and its migrations, versioned like the SQLite ones: each step runs
//! once, in a transaction, under an advisory lock so hosts starting together migrate once.
//! The tables mirror the SQLite store's (the reference schema's columns, `raw_json` keeping
//! each message exactly as appended); search uses two `tsvector` columns with GIN indexes:
//! `words` (the unicode61 tokens the SQLite FTS5 index holds) and `cjk` (the CJK bigram and
//! unigram index), built in Rust ([`crate::tsvector`]).

use crate::messages::haystack_of;
use crate::tsvector::{SearchColumns, TsVector};
use tokio_postgres::{Client, Transaction};

/// The newest schema this build knows.
pub const PG_SCHEMA_VERSION: i32 = 2;

/// Key of the advisory lock migrations hold (any constant; "baton" in ASCII).
const MIGRATION_LOCK: i64 = 0x0062_6174_6f6e;

const V1: &str = r#"
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    end_reason TEXT,
    message_count BIGINT NOT NULL DEFAULT 0,
    tool_call_count BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    estimated_cost_usd DOUBLE PRECISION,
    title TEXT,
    api_call_count BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX sessions_parent ON sessions(parent_session_id);
CREATE INDEX sessions_started ON sessions(started_at DESC, id DESC);
CREATE INDEX sessions_source ON sessions(source);

CREATE TABLE messages (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp DOUBLE PRECISION NOT NULL,
    token_count BIGINT,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    raw_json TEXT,
    words TSVECTOR NOT NULL,
    cjk TSVECTOR NOT NULL
);
CREATE INDEX messages_session ON messages(session_id, id);
CREATE INDEX messages_words ON messages USING GIN (words);
CREATE INDEX messages_cjk ON messages USING GIN (cjk);

CREATE TABLE state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);
"#;

/// Version 2: search vectors without positions, with adjacent-token pairs, and the token
/// count ranking uses; existing rows are re-indexed by [`reindex_search_columns`].
const V2: &str = "ALTER TABLE messages ADD COLUMN search_len INTEGER NOT NULL DEFAULT 1;";

/// Messages re-indexed per statement by the version 2 migration.
const REINDEX_BATCH: i64 = 1_000;

/// Every step, in order: `(version it produces, description, SQL)`.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "sessions, messages, search columns", V1),
    (
        2,
        "search vectors with token pairs, no positions; search_len",
        V2,
    ),
];

/// Rebuilds every message's search columns from its stored text, in id order.
async fn reindex_search_columns(tx: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    let mut last = 0i64;
    loop {
        let rows = tx
            .query(
                "SELECT id, content, tool_name, tool_calls FROM messages WHERE id > $1 \
                 ORDER BY id LIMIT $2",
                &[&last, &REINDEX_BATCH],
            )
            .await?;
        let Some(end) = rows.last() else {
            return Ok(());
        };
        last = end.get(0);
        let mut ids = Vec::with_capacity(rows.len());
        let mut words: Vec<TsVector> = Vec::with_capacity(rows.len());
        let mut cjk: Vec<TsVector> = Vec::with_capacity(rows.len());
        let mut lens = Vec::with_capacity(rows.len());
        for r in &rows {
            let text = haystack_of(r.get(1), r.get(2), r.get(3));
            let columns = SearchColumns::of(&text);
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
    }
}

/// Brings the database to [`PG_SCHEMA_VERSION`]; refuses a newer one.
pub async fn migrate(client: &mut Client) -> Result<(), String> {
    let tx = client.transaction().await.map_err(|e| e.to_string())?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| e.to_string())?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS baton_schema (version INTEGER NOT NULL, \
         description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(|e| e.to_string())?;
    let current: i32 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM baton_schema", &[])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    if current > PG_SCHEMA_VERSION {
        return Err(format!(
            "the database has schema version {current}, newer than version {PG_SCHEMA_VERSION} \
             supported by this build; upgrade baton to use it"
        ));
    }
    for (version, description, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let failed = |e: tokio_postgres::Error| {
            format!("migration to version {version} ({description}): {e}")
        };
        tx.batch_execute(sql).await.map_err(failed)?;
        if *version == 2 {
            reindex_search_columns(&tx).await.map_err(failed)?;
        }
        tx.execute(
            "INSERT INTO baton_schema (version, description) VALUES ($1, $2)",
            &[version, description],
        )
        .await
        .map_err(|e| e.to_string())?;
    }
    tx.commit().await.map_err(|e| e.to_string())
}
