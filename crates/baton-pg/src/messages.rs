//! Message rows: inserting a batch (the reference columns, `raw_json`, and the two search
//! columns) and reading rows back as messages, through the SQLite store's codec so both
//! stores give back the same values.

use crate::tsvector::{SearchColumns, TsVector};
use baton_core::Message;
use baton_store::codec::{JSON_CONTENT_SENTINEL, MessageRow, RawJson, row_to_value, to_row};
use baton_store::{Result, StoreError};
use std::collections::HashMap;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

/// Columns a stored message is read from, in [`decode`]'s order.
pub const MESSAGE_COLUMNS: &str = "id, role, content, tool_call_id, tool_calls, tool_name, \
     finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, \
     codex_message_items, raw_json, token_count";

/// Rows per INSERT statement ([`PARAMS_PER_ROW`] parameters each, under PostgreSQL's 65,535).
const ROWS_PER_INSERT: usize = 500;
/// The columns of a stored message after its session id, in [`row_values`]'s order; the
/// INSERT and COPY paths both write them.
pub const ROW_COLUMNS: &str = "role, content, tool_call_id, tool_calls, tool_name, timestamp, \
     finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, \
     codex_message_items, token_count, raw_json, words, cjk, search_len";

/// Parameters of one message row in an INSERT (the session id is shared).
pub const PARAMS_PER_ROW: usize = 17;

/// The search columns of a message the indexer has not reached: NULL vectors (what marks it
/// as waiting) and the column's default length.
static NO_VECTOR: Option<TsVector> = None;
static UNINDEXED_LEN: i32 = 1;

/// The values of [`ROW_COLUMNS`] for one message; `search` is `None` for a message left for
/// [`crate::deferred_index`].
pub fn row_values<'a>(
    row: &'a MessageRow,
    ts: &'a f64,
    search: Option<&'a SearchColumns>,
) -> [&'a (dyn ToSql + Sync); PARAMS_PER_ROW] {
    let (words, cjk, len): (
        &(dyn ToSql + Sync),
        &(dyn ToSql + Sync),
        &(dyn ToSql + Sync),
    ) = match search {
        Some(s) => (&s.words, &s.cjk, &s.len),
        None => (&NO_VECTOR, &NO_VECTOR, &UNINDEXED_LEN),
    };
    [
        &row.role,
        &row.content,
        &row.tool_call_id,
        &row.tool_calls,
        &row.tool_name,
        ts,
        &row.finish_reason,
        &row.reasoning,
        &row.reasoning_content,
        &row.reasoning_details,
        &row.codex_reasoning_items,
        &row.codex_message_items,
        &row.token_count,
        &row.raw_json,
        words,
        cjk,
        len,
    ]
}

/// Inserts `messages` into `session_id`, message `k` stamped `stamp(k)` (live appends bump a
/// microsecond per message so a batch stays ordered by time as well as by id; copies keep the
/// source's times). `call_names` maps tool-call ids to function names for tool results
/// without a `name` (seeded with the session's earlier calls).
pub async fn insert(
    client: &impl GenericClient,
    session_id: &str,
    messages: &[Message],
    stamp: &(dyn Fn(usize) -> f64 + Sync),
    call_names: &mut HashMap<String, String>,
) -> std::result::Result<(), tokio_postgres::Error> {
    for (chunk_index, chunk) in messages.chunks(ROWS_PER_INSERT).enumerate() {
        let mut rows: Vec<(MessageRow, f64, SearchColumns)> = Vec::with_capacity(chunk.len());
        for (k, m) in chunk.iter().enumerate() {
            for call in m.calls() {
                call_names.insert(call.id.clone(), call.function.name.clone());
            }
            let row = stored_row(m, call_names);
            let haystack = haystack(&row);
            let ts = stamp(chunk_index * ROWS_PER_INSERT + k);
            let search = SearchColumns::of(&haystack);
            rows.push((row, ts, search));
        }
        let mut sql = format!("INSERT INTO messages (session_id, {ROW_COLUMNS}) VALUES ");
        let mut params: Vec<&(dyn ToSql + Sync)> =
            Vec::with_capacity(rows.len() * PARAMS_PER_ROW + 1);
        params.push(&session_id);
        for (i, (row, ts, search)) in rows.iter().enumerate() {
            let base = 2 + i * PARAMS_PER_ROW;
            if i > 0 {
                sql.push(',');
            }
            let marks: Vec<String> = (0..PARAMS_PER_ROW)
                .map(|j| format!("${}", base + j))
                .collect();
            sql.push_str(&format!("($1, {})", marks.join(", ")));
            params.extend(row_values(row, ts, Some(search)));
        }
        client.execute(sql.as_str(), &params).await?;
    }
    Ok(())
}

/// The row PostgreSQL stores for `m`. Like the SQLite store, it keeps the message's JSON
/// (`raw_json`) only where the columns do not rebuild the message exactly: the codec's check,
/// plus what [`for_postgres`] changes (list-valued content, NUL). Most messages are plain
/// text, and their JSON would be a second copy of the content for the server to compress and
/// write (a third of a bulk import's server time went to compressing it).
pub fn stored_row(m: &Message, call_names: &HashMap<String, String>) -> MessageRow {
    let mut row = to_row(m, call_names, RawJson::WhereColumnsLose);
    if row.raw_json.is_none() && changed_for_postgres(&row) {
        row.raw_json = Some(m.to_value().to_string());
    }
    for_postgres(row)
}

/// Whether [`for_postgres`] would change a column of `row`.
fn changed_for_postgres(row: &MessageRow) -> bool {
    let content = row.content.as_deref().unwrap_or("");
    content.starts_with(JSON_CONTENT_SENTINEL)
        || [
            Some(content),
            row.tool_call_id.as_deref(),
            row.tool_calls.as_deref(),
            row.tool_name.as_deref(),
            row.finish_reason.as_deref(),
            row.reasoning.as_deref(),
            row.reasoning_content.as_deref(),
            row.reasoning_details.as_deref(),
            row.codex_reasoning_items.as_deref(),
            row.codex_message_items.as_deref(),
        ]
        .into_iter()
        .flatten()
        .any(|text| text.contains('\0'))
}

/// The reference columns as PostgreSQL can hold them: `TEXT` cannot hold NUL, which the
/// codec uses to mark list-valued content (`\0json:[…]`) and which pasted text may contain.
/// List-valued content is stored as its text parts (what search and previews read); NUL is
/// dropped elsewhere. Nothing is lost: such a row keeps `raw_json` ([`stored_row`]; JSON
/// escapes NUL), which is what reading returns.
pub fn for_postgres(mut row: MessageRow) -> MessageRow {
    row.content = row
        .content
        .map(|c| match c.strip_prefix(JSON_CONTENT_SENTINEL) {
            Some(parts) => text_of_parts(parts),
            None => without_nul(c),
        });
    for column in [
        &mut row.tool_call_id,
        &mut row.tool_calls,
        &mut row.tool_name,
        &mut row.finish_reason,
        &mut row.reasoning,
        &mut row.reasoning_content,
        &mut row.reasoning_details,
        &mut row.codex_reasoning_items,
        &mut row.codex_message_items,
        &mut row.raw_json,
    ] {
        if let Some(text) = column.take() {
            *column = Some(without_nul(text));
        }
    }
    row
}

fn without_nul(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "")
    } else {
        text
    }
}

/// The text parts of list-valued content, one per line.
fn text_of_parts(json: &str) -> String {
    let Ok(serde_json::Value::Array(parts)) = serde_json::from_str(json) else {
        return without_nul(json.to_string());
    };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(serde_json::Value::as_str))
        .collect();
    without_nul(texts.join("\n"))
}

/// The text the search columns index: content, tool name and tool calls (the concatenation
/// the SQLite store's full-text triggers index).
pub fn haystack(row: &MessageRow) -> String {
    haystack_of(
        row.content.as_deref(),
        row.tool_name.as_deref(),
        row.tool_calls.as_deref(),
    )
}

/// [`haystack`] from the stored columns.
pub fn haystack_of(
    content: Option<&str>,
    tool_name: Option<&str>,
    tool_calls: Option<&str>,
) -> String {
    format!(
        "{} {} {}",
        content.unwrap_or(""),
        tool_name.unwrap_or(""),
        tool_calls.unwrap_or("")
    )
}

/// A row read with [`MESSAGE_COLUMNS`] as a message.
pub fn decode(session_id: &str, row: &Row) -> Result<Message> {
    let id: i64 = row.get(0);
    let stored = MessageRow {
        role: row.get(1),
        content: row.get(2),
        tool_call_id: row.get(3),
        tool_calls: row.get(4),
        tool_name: row.get(5),
        finish_reason: row.get(6),
        reasoning: row.get(7),
        reasoning_content: row.get(8),
        reasoning_details: row.get(9),
        codex_reasoning_items: row.get(10),
        codex_message_items: row.get(11),
        raw_json: row.get(12),
        token_count: row.get(13),
    };
    Message::from_value(row_to_value(stored), usize::try_from(id).unwrap_or(0)).map_err(|source| {
        StoreError::BadMessage {
            session_id: session_id.to_string(),
            row_id: id,
            source,
        }
    })
}

/// The tool-call names of a session's 64 newest assistant messages with calls (tool results
/// answer recent calls), for naming tool results appended later.
pub async fn call_names(
    client: &impl GenericClient,
    session_id: &str,
) -> std::result::Result<HashMap<String, String>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT tool_calls FROM messages WHERE session_id = $1 AND tool_calls IS NOT NULL \
             ORDER BY id DESC LIMIT 64",
            &[&session_id],
        )
        .await?;
    let mut names = HashMap::new();
    for row in rows {
        let text: String = row.get(0);
        if let Ok(serde_json::Value::Array(calls)) = serde_json::from_str(&text) {
            for call in calls {
                let id = call.get("id").and_then(|v| v.as_str());
                let name = call
                    .get("function")
                    .and_then(|f| f.get("name"))
                    .and_then(|v| v.as_str());
                if let (Some(id), Some(name)) = (id, name) {
                    names.insert(id.to_string(), name.to_string());
                }
            }
        }
    }
    Ok(names)
}
