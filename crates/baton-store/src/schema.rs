//! The database schema and its forward migrations.
//!
//! The base DDL is the reference SessionDB's version 11, verbatim, so a database written by the
//! reference opens here and one written here keeps every reference column. On top of it we add
//! `messages.raw_json` (version 12), which holds each message exactly as it was appended so
//! provider-specific fields survive, and `messages_fts_cjk` (version 13), the CJK bigram index
//! that answers CJK terms of any length and replaces the reference's trigram table, the most
//! expensive part of every insert (see [`crate::cjk_index`]); version 14 rebuilds that index
//! without `contentless_delete` and adds the queue that indexes rows other programs insert;
//! version 15 turns the reference's word index into an external-content index over a view
//! (the text is stored once) that bulk writes can defer (see [`crate::deferred_index`]).
//!
//! Everything we add stays within what SQLite 3.40 (Debian stable) parses, so the reference
//! design's code on a system SQLite can still write a database we migrated
//! (`tests/sqlite_compat.rs` holds the list of newer features and checks every DDL against it).
//!
//! Migrations are a list of steps, each taking the schema from version N to N+1. Steps are
//! idempotent (columns are added only when missing), because the reference once renumbered a
//! version and left databases whose version number and columns disagree. After the steps, a
//! reconcile pass adds any column of the base DDL that is still missing, as the reference does.

use crate::error::{Result, StoreError};
use rusqlite::{Connection, OptionalExtension, Transaction};
use std::path::Path;

/// The version this build writes and the newest it can open.
pub const SCHEMA_VERSION: i64 = 15;

/// The reference schema version the base DDL corresponds to.
pub const BASE_VERSION: i64 = 11;

/// Reference v11 tables and indexes (verbatim).
pub const BASE_SCHEMA_SQL: &str = r#"
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT
);

CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
"#;

/// Titles are unique among sessions that have one.
pub const TITLE_INDEX_SQL: &str = "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL";

/// Word-tokenized full-text index over content, tool name and tool calls (reference, verbatim).
pub const FTS_SQL: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content
);

CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
"#;

/// Trigram full-text index (CJK and substring recall), same text (reference, verbatim).
pub const FTS_TRIGRAM_SQL: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(
    content,
    tokenize='trigram'
);

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
"#;

/// The complete reference v11 DDL (tables, title index, both full-text indexes and their
/// triggers) as one batch: what a reference-design database contains. Tests build
/// reference databases from it.
pub fn reference_v11_ddl() -> String {
    format!("{BASE_SCHEMA_SQL}\n{TITLE_INDEX_SQL};\n{FTS_SQL}\n{FTS_TRIGRAM_SQL}")
}

const FTS_TEXT_SELECT: &str = "SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' || COALESCE(tool_calls, '') FROM messages";

/// Messages of an index backlog a read-write open indexes (about 0.1 s of work).
const OPEN_CATCH_UP: usize = 2_000;

/// One forward step, from `from` to `from + 1`.
pub struct Migration {
    pub from: i64,
    pub description: &'static str,
    apply: fn(&Transaction<'_>) -> rusqlite::Result<()>,
}

/// Every step, in order. The reference history is v1..v11; v12 to v15 are ours.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        from: 1,
        description: "messages.finish_reason",
        apply: |tx| add_columns(tx, "messages", &[("finish_reason", "TEXT")]),
    },
    Migration {
        from: 2,
        description: "sessions.title",
        apply: |tx| add_columns(tx, "sessions", &[("title", "TEXT")]),
    },
    Migration {
        from: 3,
        description: "unique partial index on sessions.title",
        apply: |tx| {
            ensure_title_index(tx);
            Ok(())
        },
    },
    Migration {
        from: 4,
        description: "cache/reasoning token counters, billing and cost columns",
        apply: |tx| {
            add_columns(
                tx,
                "sessions",
                &[
                    ("cache_read_tokens", "INTEGER DEFAULT 0"),
                    ("cache_write_tokens", "INTEGER DEFAULT 0"),
                    ("reasoning_tokens", "INTEGER DEFAULT 0"),
                    ("billing_provider", "TEXT"),
                    ("billing_base_url", "TEXT"),
                    ("billing_mode", "TEXT"),
                    ("estimated_cost_usd", "REAL"),
                    ("actual_cost_usd", "REAL"),
                    ("cost_status", "TEXT"),
                    ("cost_source", "TEXT"),
                    ("pricing_version", "TEXT"),
                ],
            )
        },
    },
    Migration {
        from: 5,
        description: "messages.reasoning, reasoning_details, codex_reasoning_items",
        apply: |tx| {
            add_columns(
                tx,
                "messages",
                &[
                    ("reasoning", "TEXT"),
                    ("reasoning_details", "TEXT"),
                    ("codex_reasoning_items", "TEXT"),
                ],
            )
        },
    },
    Migration {
        from: 6,
        description: "messages.reasoning_content",
        apply: |tx| add_columns(tx, "messages", &[("reasoning_content", "TEXT")]),
    },
    Migration {
        from: 7,
        description: "sessions.api_call_count",
        apply: |tx| add_columns(tx, "sessions", &[("api_call_count", "INTEGER DEFAULT 0")]),
    },
    Migration {
        from: 8,
        description: "messages.codex_message_items",
        apply: |tx| add_columns(tx, "messages", &[("codex_message_items", "TEXT")]),
    },
    Migration {
        from: 9,
        description: "trigram FTS table, backfilled",
        apply: |tx| {
            if !table_exists(tx, "messages_fts_trigram")? {
                tx.execute_batch(FTS_TRIGRAM_SQL)?;
                tx.execute(
                    "INSERT INTO messages_fts_trigram(rowid, content) SELECT id, content FROM messages WHERE content IS NOT NULL",
                    [],
                )?;
            }
            Ok(())
        },
    },
    Migration {
        from: 10,
        description: "FTS rebuilt inline, indexing tool_name and tool_calls",
        apply: rebuild_fts,
    },
    Migration {
        from: 11,
        description: "messages.raw_json (the message exactly as appended)",
        apply: |tx| add_columns(tx, "messages", &[("raw_json", "TEXT")]),
    },
    Migration {
        from: 12,
        description: "CJK unigram/bigram index for 1-2 character terms, backfilled",
        apply: |tx| {
            if !table_exists(tx, crate::cjk_index::CJK_TABLE)? {
                crate::cjk_index::create_and_backfill(tx)?;
            }
            Ok(())
        },
    },
    Migration {
        from: 13,
        description: "CJK index without contentless_delete (SQLite 3.40 can write the file), \
                      and a queue so rows other programs insert get indexed",
        apply: crate::cjk_index::upgrade,
    },
    Migration {
        from: 14,
        description: "word index over a view of messages (text stored once), with a queue \
                      for bulk writes that index after their rows",
        apply: crate::deferred_index::upgrade,
    },
];

/// Applies the steps that take a database from version `from` to version `to` (both within
/// `1..=SCHEMA_VERSION`) and records `to`. [`init`] is what opening uses; this exists so tests
/// and tools can produce a database of any intermediate version.
pub fn migrate_between(tx: &Transaction<'_>, from: i64, to: i64) -> Result<()> {
    for step in MIGRATIONS.iter().filter(|m| m.from >= from && m.from < to) {
        (step.apply)(tx)?;
    }
    tx.execute("UPDATE schema_version SET version = ?1", [to])?;
    Ok(())
}

fn rebuild_fts(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "DROP TRIGGER IF EXISTS messages_fts_insert;
         DROP TRIGGER IF EXISTS messages_fts_delete;
         DROP TRIGGER IF EXISTS messages_fts_update;
         DROP TRIGGER IF EXISTS messages_fts_trigram_insert;
         DROP TRIGGER IF EXISTS messages_fts_trigram_delete;
         DROP TRIGGER IF EXISTS messages_fts_trigram_update;
         DROP TABLE IF EXISTS messages_fts;
         DROP TABLE IF EXISTS messages_fts_trigram;",
    )?;
    tx.execute_batch(FTS_SQL)?;
    tx.execute_batch(FTS_TRIGRAM_SQL)?;
    tx.execute(
        &format!("INSERT INTO messages_fts(rowid, content) {FTS_TEXT_SELECT}"),
        [],
    )?;
    tx.execute(
        &format!("INSERT INTO messages_fts_trigram(rowid, content) {FTS_TEXT_SELECT}"),
        [],
    )?;
    Ok(())
}

/// The stored schema version: `None` for a database without the table or its row.
pub fn read_version(conn: &Connection) -> Result<Option<i64>> {
    if !table_exists(conn, "schema_version")? {
        return Ok(None);
    }
    let v = conn
        .query_row("SELECT version FROM schema_version LIMIT 1", [], |r| {
            r.get::<_, i64>(0)
        })
        .optional()?;
    Ok(v)
}

/// Refuses a database written by a newer build.
pub fn check_not_newer(conn: &Connection, path: &Path) -> Result<Option<i64>> {
    let found = read_version(conn)?;
    match found {
        Some(v) if v > SCHEMA_VERSION => Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: v,
            supported: SCHEMA_VERSION,
        }),
        _ => Ok(found),
    }
}

/// Creates or upgrades the schema to [`SCHEMA_VERSION`] inside `tx`. Returns the version found
/// before (`None` for a fresh database).
pub fn init(tx: &Transaction<'_>, path: &Path) -> Result<Option<i64>> {
    let found = check_not_newer(tx, path)?;
    let had_sessions = table_exists(tx, "sessions")?;
    tx.execute_batch(BASE_SCHEMA_SQL)?;
    // A fresh database gets the base DDL, which already is version 11. A database with tables
    // but no version row is treated as the oldest version: every step is idempotent.
    let start = match found {
        Some(v) => v.max(1),
        None if had_sessions => 1,
        None => BASE_VERSION,
    };
    for step in MIGRATIONS.iter().filter(|m| m.from >= start) {
        (step.apply)(tx)?;
    }
    reconcile_columns(tx)?;
    ensure_title_index(tx);
    if !table_exists(tx, "messages_fts")? {
        crate::deferred_index::upgrade(tx)?;
    }
    if !table_exists(tx, crate::cjk_index::CJK_TABLE)? {
        crate::cjk_index::create_and_backfill(tx)?;
    }
    // Rows another program inserted since our last write (the reference design's code, a
    // plain `sqlite3` shell) and a share of what a bulk import left to index are indexed now;
    // a larger backlog is left to `sessions index` (searches scan it meanwhile), so opening
    // stays fast.
    crate::deferred_index::catch_up(tx, OPEN_CATCH_UP)?;
    if found.is_some() {
        tx.execute("UPDATE schema_version SET version = ?1", [SCHEMA_VERSION])?;
    } else {
        tx.execute("DELETE FROM schema_version", [])?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )?;
    }
    Ok(found)
}

/// The unique title index. An old database that already holds duplicate titles cannot get it;
/// like the reference, we then rely on the application-level check alone.
fn ensure_title_index(tx: &Transaction<'_>) {
    let _ = tx.execute(TITLE_INDEX_SQL, []);
}

pub(crate) fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
    )?
    .query_row([name], |r| r.get(0))
}

pub(crate) fn column_names(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

fn add_columns(tx: &Transaction<'_>, table: &str, cols: &[(&str, &str)]) -> rusqlite::Result<()> {
    let existing = column_names(tx, table)?;
    for (name, decl) in cols {
        if !existing.iter().any(|c| c == name) {
            tx.execute(
                &format!("ALTER TABLE \"{table}\" ADD COLUMN \"{name}\" {decl}"),
                [],
            )?;
        }
    }
    Ok(())
}

/// The columns of `table` in the base DDL (`model`, from [`schema_model`]): (name, type,
/// default).
fn declared_columns(
    model: &Connection,
    table: &str,
) -> rusqlite::Result<Vec<(String, String, Option<String>)>> {
    let mut stmt = model.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    stmt.query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(4)?)))?
        .collect()
}

/// An in-memory database holding the current DDL, to read the declared columns from. Built
/// once per migration or old-database open: executing the whole schema (FTS5 tables,
/// triggers) costs about a millisecond.
fn schema_model() -> rusqlite::Result<Connection> {
    let model = Connection::open_in_memory()?;
    model.execute_batch(BASE_SCHEMA_SQL)?;
    Ok(model)
}

/// For a database opened read-only as it is: where `sessions` or `messages` lack columns of
/// the current DDL (an old reference database), a TEMP view of the same name adds them with
/// their defaults. Temp objects shadow the file's tables for this connection only, so every
/// query works unchanged and nothing is written to the file.
pub(crate) fn shadow_missing_columns(conn: &Connection) -> rusqlite::Result<()> {
    let model = schema_model()?;
    for table in ["sessions", "messages"] {
        if !table_exists(conn, table)? {
            continue;
        }
        let live = column_names(conn, table)?;
        let missing: Vec<String> = declared_columns(&model, table)?
            .into_iter()
            .filter(|(name, _, _)| !live.contains(name))
            .map(|(name, _, default)| {
                format!("{} AS \"{name}\"", default.as_deref().unwrap_or("NULL"))
            })
            .collect();
        if !missing.is_empty() {
            conn.execute_batch(&format!(
                "CREATE TEMP VIEW \"{table}\" AS SELECT *, {} FROM main.\"{table}\"",
                missing.join(", ")
            ))?;
        }
    }
    Ok(())
}

/// Adds every column the base DDL declares that the live tables lack (the reference's
/// declarative column additions, which cover columns added without a version bump).
fn reconcile_columns(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let model = schema_model()?;
    for table in ["sessions", "messages", "state_meta"] {
        let live = column_names(tx, table)?;
        for (name, ty, default) in declared_columns(&model, table)? {
            if !live.contains(&name) {
                let default = default.map(|d| format!(" DEFAULT {d}")).unwrap_or_default();
                tx.execute(
                    &format!("ALTER TABLE \"{table}\" ADD COLUMN \"{name}\" {ty}{default}"),
                    [],
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_form_a_contiguous_chain_to_the_current_version() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.from, i as i64 + 1, "{}", m.description);
        }
        assert_eq!(MIGRATIONS.len() as i64 + 1, SCHEMA_VERSION);
    }
}
