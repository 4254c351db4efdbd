//! Recent mode: what was worked on lately, read straight from the store.
//!
//! This is what an agent calls when the user asks "what were we doing?", often several times
//! in a row, so it must never reach for a summarizer: titles and the first thing the user said
//! are enough to decide what to search for next.

use super::group::load_group;
use super::{
    EntryDetail, HIDDEN_SOURCES, PREVIEW_CHARS, SearchMode, SessionEntry, SessionSearchResult,
};
use crate::SessionStore;
use crate::error::Result;
use crate::session::SessionFilter;
use baton_core::Role;
use std::collections::HashSet;

/// Listing rows read per page while skipping excluded sessions.
const PAGE: usize = 50;
/// Messages read from a session's start looking for its first user text.
const PREVIEW_SCAN: usize = 32;

/// The `limit` newest conversations outside `excluded`, compression chains shown once (as their
/// tip) and child sessions hidden, as the session listing shows them.
pub fn list(
    store: &dyn SessionStore,
    excluded: &HashSet<String>,
    limit: usize,
) -> Result<SessionSearchResult> {
    let results = newest(store, excluded, limit)?;
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
    store: &dyn SessionStore,
    excluded: &HashSet<String>,
    limit: usize,
) -> Result<Vec<SessionEntry>> {
    let mut out = Vec::new();
    let mut filter = SessionFilter {
        limit: PAGE,
        ..SessionFilter::default()
    };
    loop {
        let page = store.list_sessions(&filter)?;
        for row in &page {
            let root_id = row.lineage_root_id.as_deref().unwrap_or(&row.session.id);
            let hidden = HIDDEN_SOURCES.contains(&row.session.source.as_str());
            if hidden || excluded.contains(&row.session.id) || excluded.contains(root_id) {
                continue;
            }
            if let Some(entry) = entry(store, root_id)? {
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

fn entry(store: &dyn SessionStore, root_id: &str) -> Result<Option<SessionEntry>> {
    let Some(group) = load_group(store, root_id, 0)? else {
        return Ok(None);
    };
    let mut preview = None;
    for id in &group.chain {
        preview = first_user_text(store, id)?.map(|t| one_line_preview(&t));
        if preview.is_some() {
            break;
        }
    }
    Ok(Some(SessionEntry::for_chain(
        group,
        EntryDetail::Recent { preview },
    )))
}

/// The text of the session's first non-empty user message among its first
/// [`PREVIEW_SCAN`] messages, read without loading the rest.
fn first_user_text(store: &dyn SessionStore, session_id: &str) -> Result<Option<String>> {
    Ok(store
        .messages_range(session_id, 0, PREVIEW_SCAN)?
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .find(|t| !t.trim().is_empty()))
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
}
