//! What a listing shows of a session besides its counters: a one-line preview of what the
//! user asked first, and when the session was last active.

use crate::codec::JSON_CONTENT_SENTINEL;
use crate::error::Result;
use crate::session::{PREVIEW_CHARS, Session};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

/// The first user message of `session_id` with any text, on one line (whitespace runs become
/// one space), cut to [`PREVIEW_CHARS`] characters plus `...`; empty when there is none.
pub fn first_user_line(conn: &Connection, session_id: &str) -> Result<String> {
    let mut stmt = conn.prepare_cached(
        "SELECT content FROM messages WHERE session_id = ?1 AND role = 'user' \
         AND content IS NOT NULL AND TRIM(content) != '' ORDER BY timestamp, id LIMIT 5",
    )?;
    let rows = stmt
        .query_map([session_id], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .iter()
        .map(|c| one_line(&plain_text(c)))
        .find(|line| !line.is_empty())
        .map(|line| cut(&line))
        .unwrap_or_default())
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
}
