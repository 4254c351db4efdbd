//! Recent mode: what was worked on lately, read straight from the store.
//!
//! This is what an agent calls when the user asks "what were we doing?", often several times
//! in a row, so it must never reach for a summarizer: titles and the first thing the user said
//! are enough to decide what to search for next.

use super::group::load_group;
use super::{
    EntryDetail, HIDDEN_SOURCES, PREVIEW_CHARS, SearchMode, SessionEntry, SessionSearchResult,
};
use crate::codec::JSON_CONTENT_SENTINEL;
use crate::error::Result;
use crate::lineage::list_projected;
use crate::session::SessionFilter;
use crate::sqlite::SqliteStore;
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;
use std::collections::HashSet;

/// Listing rows read per page while skipping excluded sessions.
const PAGE: usize = 50;

/// The `limit` newest conversations outside `excluded`, compression chains shown once (as their
/// tip) and child sessions hidden, as the session listing shows them.
pub fn list(
    store: &SqliteStore,
    excluded: &HashSet<String>,
    limit: usize,
) -> Result<SessionSearchResult> {
    let results = store.read(|conn| newest(conn, excluded, limit))?;
    let message = if results.is_empty() {
        "No earlier sessions.".to_string()
    } else {
        format!(
            "Showing the {} most recent sessions. Search with a query to recall what happened in them.",
            results.len()
        )
    };
    Ok(SessionSearchResult {
        mode: SearchMode::Recent,
        query: String::new(),
        count: results.len(),
        results,
        message: Some(message),
        time_budget_exceeded: false,
    })
}

fn newest(
    conn: &Connection,
    excluded: &HashSet<String>,
    limit: usize,
) -> Result<Vec<SessionEntry>> {
    let mut out = Vec::new();
    let mut filter = SessionFilter {
        limit: PAGE,
        ..SessionFilter::default()
    };
    loop {
        let page = list_projected(conn, &filter)?;
        for row in &page {
            let root_id = row.lineage_root_id.as_deref().unwrap_or(&row.session.id);
            let hidden = HIDDEN_SOURCES.contains(&row.session.source.as_str());
            if hidden || excluded.contains(&row.session.id) || excluded.contains(root_id) {
                continue;
            }
            if let Some(entry) = entry(conn, root_id)? {
                out.push(entry);
            }
            if out.len() >= limit {
                return Ok(out);
            }
        }
        if page.len() < PAGE {
            return Ok(out);
        }
        filter.offset += PAGE;
    }
}

fn entry(conn: &Connection, root_id: &str) -> Result<Option<SessionEntry>> {
    let Some(group) = load_group(conn, root_id, 0)? else {
        return Ok(None);
    };
    let mut preview = None;
    for id in &group.chain {
        preview = first_user_text(conn, id)?.map(|t| one_line_preview(&t));
        if preview.is_some() {
            break;
        }
    }
    Ok(Some(SessionEntry::for_chain(
        group,
        EntryDetail::Recent { preview },
    )))
}

/// The text of the session's first non-empty user message, read without loading the rest.
fn first_user_text(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    let content: Option<String> = conn
        .prepare_cached(
            "SELECT content FROM messages WHERE session_id = ?1 AND role = 'user' \
             AND content IS NOT NULL AND trim(content) != '' ORDER BY id LIMIT 1",
        )?
        .query_row([session_id], |r| r.get(0))
        .optional()?;
    Ok(
        content.map(|c| match c.strip_prefix(JSON_CONTENT_SENTINEL) {
            Some(json) => parts_text(json),
            None => c,
        }),
    )
}

/// Text parts of multimodal content stored as the reference's JSON list.
fn parts_text(json: &str) -> String {
    let Ok(Value::Array(parts)) = serde_json::from_str::<Value>(json) else {
        return String::new();
    };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    texts.join(" ")
}

/// Whitespace collapsed and cut to [`PREVIEW_CHARS`] with an ellipsis.
fn one_line_preview(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= PREVIEW_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(PREVIEW_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_is_one_line_and_bounded() {
        assert_eq!(one_line_preview("  fix\n the   build "), "fix the build");
        let long = one_line_preview(&"配置".repeat(200));
        assert_eq!(long.chars().count(), PREVIEW_CHARS);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn multimodal_previews_keep_text_parts() {
        let json = r#"[{"type":"text","text":"look at"},{"type":"image_url"},{"type":"text","text":"this"}]"#;
        assert_eq!(parts_text(json), "look at this");
        assert_eq!(parts_text("not json"), "");
    }
}
