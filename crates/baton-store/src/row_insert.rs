//! Writing message rows: many rows per `INSERT` statement.
//!
//! Why: each `INSERT INTO messages` statement pays, besides its rows, for what SQLite does per
//! statement: the `sqlite_sequence` update `AUTOINCREMENT` makes at its end, opening and
//! closing a statement journal (the insert triggers make it a multi-row write that a
//! `NOT NULL` or foreign-key failure must undo), and the VM's setup and reset. A bulk import
//! spent most of its writer thread in such statements, one per message. Rows now go up to
//! [`ROWS_PER_INSERT`] to a statement, a session's rows split into statements of 32, 16, 8, 4, 2
//! and 1 rows (a 15-message session is 4 statements, not 15); only those six statements are
//! ever prepared, so the statement cache holds them all.

use rusqlite::{ToSql, Transaction};
use std::sync::OnceLock;

use crate::codec::MessageRow;
use crate::error::Result;

/// Rows of one multi-row `INSERT` (× 15 parameters, far below SQLite's 32,766).
pub(crate) const ROWS_PER_INSERT: usize = 32;
// `insert_sql` keeps the statements of 1, 2, 4, … 32 rows: six sizes.
const _: () = assert!(ROWS_PER_INSERT == 1 << 5);

/// The columns written, in the order [`bind_row`] binds them.
const COLUMNS: &str = "session_id, role, content, tool_call_id, tool_calls, tool_name, \
    timestamp, finish_reason, reasoning, reasoning_content, reasoning_details, \
    codex_reasoning_items, codex_message_items, token_count";

/// `INSERT INTO messages` of `rows` rows (a power of two up to [`ROWS_PER_INSERT`]), with the
/// `raw_json` column when the table has it: built once per process, since the statement
/// cache is looked up by this text on every statement.
fn insert_sql(rows: usize, raw_json: bool) -> &'static str {
    static SQL: OnceLock<[[String; 6]; 2]> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        [false, true].map(|raw_json| std::array::from_fn(|k| build_insert_sql(1 << k, raw_json)))
    });
    &all[usize::from(raw_json)][rows.ilog2() as usize]
}

fn build_insert_sql(rows: usize, raw_json: bool) -> String {
    let (extra_column, width) = if raw_json {
        (", raw_json", 15)
    } else {
        ("", 14)
    };
    let one = format!("({})", vec!["?"; width].join(", "));
    format!(
        "INSERT INTO messages ({COLUMNS}{extra_column}) VALUES {}",
        vec![one; rows].join(", ")
    )
}

/// Appends the parameters of one row to `params`.
fn bind_row<'a>(
    params: &mut Vec<&'a dyn ToSql>,
    session_id: &'a &'a str,
    row: &'a MessageRow,
    timestamp: &'a f64,
    raw_json: bool,
) {
    params.extend_from_slice(&[
        session_id as &dyn ToSql,
        &row.role,
        &row.content,
        &row.tool_call_id,
        &row.tool_calls,
        &row.tool_name,
        timestamp,
        &row.finish_reason,
        &row.reasoning,
        &row.reasoning_content,
        &row.reasoning_details,
        &row.codex_reasoning_items,
        &row.codex_message_items,
        &row.token_count,
    ]);
    if raw_json {
        params.push(&row.raw_json);
    }
}

/// Inserts `rows` (with their timestamps) into `messages` for `session_id`, in order, and
/// returns the id of the first (`None` for no rows). Ids are consecutive: `AUTOINCREMENT`
/// gives each row of a statement the next id, and the write transaction excludes others.
pub(crate) fn insert_message_rows(
    tx: &Transaction<'_>,
    session_id: &str,
    rows: &[(&MessageRow, f64)],
    raw_json: bool,
) -> Result<Option<i64>> {
    let mut first_id = None;
    let mut params: Vec<&dyn ToSql> = Vec::new();
    let mut rest = rows;
    while !rest.is_empty() {
        let n = statement_rows(rest.len());
        let (chunk, after) = rest.split_at(n);
        let mut stmt = tx.prepare_cached(insert_sql(n, raw_json))?;
        params.clear();
        for (row, ts) in chunk {
            bind_row(&mut params, &session_id, row, ts, raw_json);
        }
        stmt.execute(params.as_slice())?;
        first_id.get_or_insert_with(|| tx.last_insert_rowid() - (n as i64 - 1));
        rest = after;
    }
    Ok(first_id)
}

/// Rows of the next statement for `left` (> 0) rows: the largest of 32, 16, 8, 4, 2, 1 that
/// fits.
fn statement_rows(left: usize) -> usize {
    if left >= ROWS_PER_INSERT {
        ROWS_PER_INSERT
    } else {
        1 << left.ilog2()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_first_id_returned_is_the_first_rows_and_rows_keep_their_order() {
        let mut conn = crate::open::open_memory().unwrap().conn;
        let tx = conn.transaction().unwrap();
        tx.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'test', 0)",
            [],
        )
        .unwrap();
        let messages: Vec<baton_core::Message> = (0..3)
            .map(|i| baton_core::Message::user(format!("warm-up {i}")))
            .chain((0..45).map(|i| baton_core::Message::user(format!("m{i}"))))
            .collect();
        let rows = crate::codec::new_session_rows(&messages);
        let stamped: Vec<(&MessageRow, f64)> = rows
            .iter()
            .zip(0..)
            .map(|(r, k)| (r, f64::from(k)))
            .collect();
        // Three rows first, so ids do not start at 1; then 45 rows: statements of 32, 8, 4, 1.
        insert_message_rows(&tx, "s", &stamped[..3], false).unwrap();
        let first = insert_message_rows(&tx, "s", &stamped[3..], false).unwrap();
        let stored: Vec<(i64, String)> = tx
            .prepare("SELECT id, content FROM messages ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(first, Some(stored[3].0));
        let contents: Vec<&str> = stored.iter().map(|(_, c)| c.as_str()).collect();
        let expected: Vec<String> = messages.iter().map(|m| m.text()).collect();
        assert_eq!(contents, expected);
        assert_eq!(insert_message_rows(&tx, "s", &[], false).unwrap(), None);
    }

    #[test]
    fn the_statement_has_one_placeholder_per_column_per_row() {
        let sql = build_insert_sql(3, true);
        assert_eq!(sql.matches('?').count(), 3 * 15);
        assert_eq!(sql.matches("), (").count(), 2);
        assert!(sql.contains("token_count, raw_json)"));
        assert_eq!(build_insert_sql(1, false).matches('?').count(), 14);
        assert_eq!(insert_sql(32, true), build_insert_sql(32, true));
    }

    #[test]
    fn rows_split_into_power_of_two_statements() {
        let split = |mut left: usize| {
            let mut sizes = Vec::new();
            while left > 0 {
                sizes.push(statement_rows(left));
                left -= sizes[sizes.len() - 1];
            }
            sizes
        };
        assert_eq!(split(15), [8, 4, 2, 1]);
        assert_eq!(split(32), [32]);
        assert_eq!(split(70), [32, 32, 4, 2]);
        assert_eq!(split(1), [1]);
    }
}
