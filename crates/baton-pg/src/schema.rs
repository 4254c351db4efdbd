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
pub const PG_SCHEMA_VERSION: i32 = 3;

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
/// count ranking uses. The table is rebuilt so that `search_len` sits right after `id`: a
/// search reads it from every candidate row, and PostgreSQL walks a row's columns in order to
/// reach one, so behind the inline texts it cost 3 µs per candidate (12 ms of a 17 ms
/// window). The rows move over with new search columns in [`rebuild_messages`].
const V2: &str = r#"
ALTER TABLE messages RENAME TO messages_v1;
ALTER INDEX messages_pkey RENAME TO messages_v1_pkey;
ALTER INDEX messages_session RENAME TO messages_v1_session;
ALTER INDEX messages_words RENAME TO messages_v1_words;
ALTER INDEX messages_cjk RENAME TO messages_v1_cjk;
CREATE TABLE messages (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    search_len INTEGER NOT NULL DEFAULT 1,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    timestamp DOUBLE PRECISION NOT NULL,
    token_count BIGINT,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
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
"#;

/// After the rows moved: version 2's indexes, the id sequence continued, the old table gone.
const V2_FINISH: &str = r#"
SELECT setval(pg_get_serial_sequence('messages', 'id'),
              GREATEST((SELECT COALESCE(MAX(id), 0) FROM messages), 1),
              (SELECT COUNT(*) > 0 FROM messages));
DROP TABLE messages_v1;
CREATE INDEX messages_session ON messages(session_id, id);
CREATE INDEX messages_words ON messages USING GIN (words);
CREATE INDEX messages_cjk ON messages USING GIN (cjk);
"#;

/// Version 3: a message may be stored before it is indexed (a bulk import writes its rows by
/// COPY and [`crate::deferred_index`] fills the search columns afterwards), so the search
/// columns may be NULL, and the messages still waiting are found through a partial index of
/// exactly those rows: it holds nothing once indexing has caught up, and a catch-up finds its
/// next chunk without scanning the table.
///
/// Long values are compressed with LZ4 instead of the default pglz, which was the largest
/// single cost of a bulk import on the server (pglz_compress, a third of its time); values
/// already stored keep their compression. A server built without LZ4 keeps pglz.
const V3: &str = r#"
ALTER TABLE messages ALTER COLUMN words DROP NOT NULL, ALTER COLUMN cjk DROP NOT NULL;
CREATE INDEX messages_unindexed ON messages(id) WHERE words IS NULL;
DO $$
BEGIN
    ALTER TABLE messages
        ALTER COLUMN content SET COMPRESSION lz4,
        ALTER COLUMN tool_calls SET COMPRESSION lz4,
        ALTER COLUMN reasoning SET COMPRESSION lz4,
        ALTER COLUMN reasoning_content SET COMPRESSION lz4,
        ALTER COLUMN reasoning_details SET COMPRESSION lz4,
        ALTER COLUMN codex_reasoning_items SET COMPRESSION lz4,
        ALTER COLUMN codex_message_items SET COMPRESSION lz4,
        ALTER COLUMN raw_json SET COMPRESSION lz4,
        ALTER COLUMN words SET COMPRESSION lz4,
        ALTER COLUMN cjk SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'LZ4 is not available on this server; long values stay compressed with pglz';
END $$;
"#;

/// Messages moved per statement by the version 2 migration.
const REBUILD_BATCH: i64 = 1_000;

/// Moves every message of `messages_v1` into the version 2 table, in id order, with search
/// columns built from its stored text (the other columns are copied by the server).
async fn rebuild_messages(tx: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    let mut last = 0i64;
    loop {
        let rows = tx
            .query(
                "SELECT id, content, tool_name, tool_calls FROM messages_v1 WHERE id > $1 \
                 ORDER BY id LIMIT $2",
                &[&last, &REBUILD_BATCH],
            )
            .await?;
        let Some(end) = rows.last() else {
            return tx.batch_execute(V2_FINISH).await;
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
            "INSERT INTO messages (id, search_len, session_id, role, timestamp, token_count, \
             content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning, \
             reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, \
             raw_json, words, cjk) OVERRIDING SYSTEM VALUE \
             SELECT v.id, u.l, v.session_id, v.role, v.timestamp, v.token_count, v.content, \
             v.tool_call_id, v.tool_calls, v.tool_name, v.finish_reason, v.reasoning, \
             v.reasoning_content, v.reasoning_details, v.codex_reasoning_items, \
             v.codex_message_items, v.raw_json, u.w, u.c \
             FROM unnest($1::int8[], $2::tsvector[], $3::tsvector[], $4::int4[]) \
             AS u(id, w, c, l) JOIN messages_v1 v ON v.id = u.id ORDER BY v.id",
            &[&ids, &words, &cjk, &lens],
        )
        .await?;
    }
}

/// Every step, in order: `(version it produces, description, SQL)`.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "sessions, messages, search columns", V1),
    (
        2,
        "search vectors with token pairs, no positions; search_len",
        V2,
    ),
    (3, "messages stored before they are indexed", V3),
];

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
            rebuild_messages(&tx).await.map_err(failed)?;
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
