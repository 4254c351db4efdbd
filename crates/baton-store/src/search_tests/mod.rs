//! Tests against the reference DDL (state-memory.md §1.3).

mod behaviour;
mod recall;

use rusqlite::{Connection, params};

/// An in-memory database built from the reference DDL, verbatim.
pub(crate) fn db() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&crate::schema::reference_v11_ddl())
        .unwrap();
    conn
}

pub(crate) fn session(conn: &Connection, id: &str, source: &str, started: f64) {
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)",
        params![id, source, started],
    )
    .unwrap();
}

pub(crate) fn msg(conn: &Connection, session: &str, role: &str, content: &str, ts: f64) -> i64 {
    msg_tool(conn, session, role, content, None, None, ts)
}

pub(crate) fn msg_tool(
    conn: &Connection,
    session: &str,
    role: &str,
    content: &str,
    tool_name: Option<&str>,
    tool_calls: Option<&str>,
    ts: f64,
) -> i64 {
    conn.execute(
        "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) \
         VALUES (?, ?, ?, ?, ?, ?)",
        params![session, role, content, tool_name, tool_calls, ts],
    )
    .unwrap();
    conn.last_insert_rowid()
}

/// Gives a reference-DDL database our CJK index, as our schema has it: the bigram index built
/// over the stored messages, and no trigram table.
pub(crate) fn with_cjk_index(conn: &Connection) {
    let tx = conn.unchecked_transaction().unwrap();
    crate::cjk_index::create_and_backfill(&tx).unwrap();
    tx.execute_batch("DROP TABLE messages_fts_trigram").unwrap();
    tx.commit().unwrap();
}
