//! What a listing shows of a session besides its counters: a one-line preview of what the
//! user asked first, and when the session was last active.

use crate::codec::JSON_CONTENT_SENTINEL;
use crate::error::Result;
use crate::session::{PREVIEW_CHARS, Session};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

/// The first user message of `session_id` with any text the user typed, on one line (whitespace
/// runs become one space), cut to [`PREVIEW_CHARS`] characters plus `...`; empty when there is
/// none. Rows an agent injected (slash-command markup, system reminders, `/compact` summaries)
/// are skipped, since they say nothing about what the session was for.
pub fn first_user_line(conn: &Connection, session_id: &str) -> Result<String> {
    let mut stmt = conn.prepare_cached(
        "SELECT content FROM messages WHERE session_id = ?1 AND role = 'user' \
         AND content IS NOT NULL AND TRIM(content) != '' ORDER BY timestamp, id LIMIT 20",
    )?;
    let rows = stmt
        .query_map([session_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(first_user_line_of(&rows))
}

/// [`first_user_line`] over the contents of a session's first user messages (up to 20, in
/// order), for stores that fetch them their own way.
pub fn first_user_line_of(rows: &[String]) -> String {
    rows.iter()
        .map(|c| plain_text(c))
        .filter(|text| baton_core::synthetic::classify_text(text).is_none())
        .map(|text| one_line(&baton_core::synthetic::without_wrapping_blocks(&text)))
        .find(|line| !line.is_empty())
        .map(|line| cut(&line))
        .unwrap_or_default()
}

/// The latest of the session's newest message, its end and its start (Unix seconds).
pub fn last_active(conn: &Connection, session: &Session) -> Result<f64> {
    let newest: Option<f64> = conn
        .prepare_cached("SELECT MAX(timestamp) FROM messages WHERE session_id = ?1")?
        .query_row([&session.id], |r| r.get(0))
        .optional()?
        .flatten();
    Ok([newest, session.ended_at]
        .into_iter()
        .flatten()
        .fold(session.started_at, f64::max))
}

/// Stored content as text: multimodal parts (stored as `\0json:` + JSON) give their text parts.
fn plain_text(content: &str) -> String {
    let Some(json) = content.strip_prefix(JSON_CONTENT_SENTINEL) else {
        return content.to_string();
    };
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(line: &str) -> String {
    if line.chars().count() <= PREVIEW_CHARS {
        return line.to_string();
    }
    let mut out: String = line.chars().take(PREVIEW_CHARS).collect();
    out.push_str("...");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_one_line_and_cut_by_characters() {
        assert_eq!(one_line("fix\n the   parser\r\n"), "fix the parser");
        let long = "修".repeat(70);
        assert_eq!(cut(&long), format!("{}...", "修".repeat(60)));
        assert_eq!(
            plain_text(
                "\u{0}json:[{\"type\":\"text\",\"text\":\"look\"},{\"type\":\"image_url\"}]"
            ),
            "look"
        );
    }

    #[test]
    fn previews_skip_rows_the_agent_injected() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, \
             content TEXT, timestamp REAL);
             INSERT INTO messages (session_id, role, content, timestamp) VALUES
               ('s', 'user', '<command-name>/clear</command-name>', 1),
               ('s', 'user', '<system-reminder>be brief</system-reminder>', 2),
               ('s', 'user', '<system-reminder>x</system-reminder> fix the parser', 3);",
        )
        .unwrap();
        assert_eq!(first_user_line(&conn, "s").unwrap(), "fix the parser");
    }
}
