//! Which sessions count as "the conversation the agent is already in".
//!
//! Recalling the current conversation is useless (the agent has it, or its own compaction
//! summary of it) and crowds out the sessions it actually asked about. So everything linked to
//! the current session is left out: every ancestor by any parent link (compression, branch,
//! delegation), its whole compression chain, and every descendant of that chain (its branches
//! and the subagents it spawned). Unrelated siblings, such as another branch of a shared parent,
//! stay searchable.

use crate::error::Result;
use crate::lineage::{MAX_CHAIN_HOPS, compression_chain};
use rusqlite::{Connection, OptionalExtension};
use std::collections::{HashSet, VecDeque};

/// Descendants visited at most; guards against pathological trees in damaged data.
const MAX_DESCENDANTS: usize = 1_000;

/// The ids linked to `current` (itself included); empty when there is no current session.
pub fn current_lineage(conn: &Connection, current: Option<&str>) -> Result<HashSet<String>> {
    let Some(current) = current else {
        return Ok(HashSet::new());
    };
    let mut lineage = HashSet::from([current.to_string()]);
    lineage.extend(ancestors(conn, current)?);
    let chain = compression_chain(conn, current)?;
    lineage.extend(chain.iter().cloned());
    lineage.extend(descendants(conn, &chain)?);
    Ok(lineage)
}

fn parent_of(conn: &Connection, id: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT parent_session_id FROM sessions WHERE id = ?1")?
        .query_row([id], |r| r.get::<_, Option<String>>(0))
        .optional()
        .map(Option::flatten)
}

fn ancestors(conn: &Connection, id: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut seen = HashSet::from([id.to_string()]);
    let mut current = id.to_string();
    for _ in 0..MAX_CHAIN_HOPS {
        match parent_of(conn, &current)? {
            Some(parent) if seen.insert(parent.clone()) => {
                out.push(parent.clone());
                current = parent;
            }
            _ => break,
        }
    }
    Ok(out)
}

fn descendants(conn: &Connection, roots: &[String]) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM sessions WHERE parent_session_id = ?1")?;
    let mut seen: HashSet<String> = roots.iter().cloned().collect();
    let mut queue: VecDeque<String> = roots.iter().cloned().collect();
    let mut out = Vec::new();
    while let Some(id) = queue.pop_front() {
        let children = stmt
            .query_map([&id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for child in children {
            if out.len() >= MAX_DESCENDANTS {
                return Ok(out);
            }
            if seen.insert(child.clone()) {
                out.push(child.clone());
                queue.push_back(child);
            }
        }
    }
    Ok(out)
}
