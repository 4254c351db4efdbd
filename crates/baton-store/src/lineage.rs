//! Compression lineage: a session that was compressed ends with reason `compression`, and its
//! continuation is a child started at or after that end. Such chains read as one conversation.
//!
//! `parent_session_id` also links branches and subagents; only the timing and end reason tell
//! a compression continuation apart.

use crate::error::Result;
use crate::session::{ListedSession, Session, SessionFilter, end_reason};
use crate::sqlite::{SESSION_COLUMNS, load_session, session_from_row};
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use std::collections::HashSet;

/// Longest chain followed in either direction; guards against cycles in damaged data.
pub const MAX_CHAIN_HOPS: usize = 100;

/// True when `child` continues `parent` after a compression.
pub fn is_compression_continuation(parent: &Session, child: &Session) -> bool {
    child.parent_session_id.as_deref() == Some(parent.id.as_str())
        && parent.end_reason.as_deref() == Some(end_reason::COMPRESSION)
        && parent
            .ended_at
            .is_some_and(|ended| child.started_at >= ended)
}

/// The continuation of `id`, if it was compressed and continued.
fn compression_child(conn: &Connection, id: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT id FROM sessions WHERE parent_session_id = ?1 AND started_at >= \
         (SELECT ended_at FROM sessions WHERE id = ?1 AND end_reason = 'compression') \
         ORDER BY started_at DESC LIMIT 1",
    )?
    .query_row([id], |r| r.get(0))
    .optional()
}

/// Follows continuations from `id` to the newest session of its chain. Unknown and
/// uncompressed ids come back unchanged.
pub fn compression_tip(conn: &Connection, id: &str) -> Result<String> {
    let mut current = id.to_string();
    let mut seen = HashSet::from([current.clone()]);
    for _ in 0..MAX_CHAIN_HOPS {
        match compression_child(conn, &current)? {
            Some(next) if seen.insert(next.clone()) => current = next,
            _ => break,
        }
    }
    Ok(current)
}

/// Walks up from `id` while each step is a compression continuation.
pub fn compression_root(conn: &Connection, id: &str) -> Result<String> {
    let Some(mut child) = load_session(conn, id)? else {
        return Ok(id.to_string());
    };
    let mut seen = HashSet::from([child.id.clone()]);
    for _ in 0..MAX_CHAIN_HOPS {
        let Some(parent_id) = child.parent_session_id.clone() else {
            break;
        };
        let Some(parent) = load_session(conn, &parent_id)? else {
            break;
        };
        if !is_compression_continuation(&parent, &child) || !seen.insert(parent.id.clone()) {
            break;
        }
        child = parent;
    }
    Ok(child.id)
}

/// The chain containing `id`, root first, tip last.
pub fn compression_chain(conn: &Connection, id: &str) -> Result<Vec<String>> {
    let mut chain = vec![compression_root(conn, id)?];
    let mut seen: HashSet<String> = chain.iter().cloned().collect();
    for _ in 0..MAX_CHAIN_HOPS {
        let Some(last) = chain.last() else { break };
        match compression_child(conn, last)? {
            Some(next) if seen.insert(next.clone()) => chain.push(next),
            _ => break,
        }
    }
    Ok(chain)
}

/// The listing's filter (on `sessions s`) without `include_children`: roots, and sessions a
/// branch started. Plain SQL both backends run.
pub const ROOTS_AND_BRANCHES_SQL: &str = "(s.parent_session_id IS NULL OR EXISTS (SELECT 1 \
     FROM sessions p WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' \
     AND s.started_at >= p.ended_at))";

/// A chain's root row shown as its tip: the tip's id, end, counters, title, model and prompt,
/// the root's start (and the rest of the root's row).
pub fn tip_view(root: Session, tip: Session) -> Session {
    Session {
        id: tip.id,
        ended_at: tip.ended_at,
        end_reason: tip.end_reason,
        message_count: tip.message_count,
        tool_call_count: tip.tool_call_count,
        title: tip.title,
        model: tip.model,
        system_prompt: tip.system_prompt,
        ..root
    }
}

/// Sessions newest first. Unless `include_children`, only roots and branches are listed and a
/// compressed root is shown as its chain's tip, keeping the root's start time.
pub fn list_projected(conn: &Connection, filter: &SessionFilter) -> Result<Vec<ListedSession>> {
    let mut clauses = Vec::new();
    let mut args: Vec<String> = Vec::new();
    if !filter.include_children {
        clauses.push(ROOTS_AND_BRANCHES_SQL);
    }
    if let Some(source) = &filter.source {
        clauses.push("s.source = ?");
        args.push(source.clone());
    }
    let where_sql = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM sessions s {where_sql} \
         ORDER BY s.started_at DESC, s.id DESC LIMIT {} OFFSET {}",
        filter.limit, filter.offset
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(params_from_iter(args.iter()), session_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(project(conn, row, filter.include_children)?);
    }
    Ok(out)
}

fn project(conn: &Connection, row: Session, include_children: bool) -> Result<ListedSession> {
    let mut listed = project_tip(conn, row, include_children)?;
    let root = listed
        .lineage_root_id
        .clone()
        .unwrap_or_else(|| listed.session.id.clone());
    listed.preview = crate::preview::first_user_line(conn, &root)?;
    listed.last_active = crate::preview::last_active(conn, &listed.session)?;
    Ok(listed)
}

fn project_tip(conn: &Connection, row: Session, include_children: bool) -> Result<ListedSession> {
    let plain = |session| ListedSession {
        session,
        lineage_root_id: None,
        last_active: 0.0,
        preview: String::new(),
    };
    if include_children || row.end_reason.as_deref() != Some(end_reason::COMPRESSION) {
        return Ok(plain(row));
    }
    let tip_id = compression_tip(conn, &row.id)?;
    let tip = if tip_id == row.id {
        None
    } else {
        load_session(conn, &tip_id)?
    };
    let Some(tip) = tip else {
        return Ok(plain(row));
    };
    let root_id = row.id.clone();
    let session = tip_view(row, tip);
    Ok(ListedSession {
        lineage_root_id: Some(root_id),
        ..plain(session)
    })
}
