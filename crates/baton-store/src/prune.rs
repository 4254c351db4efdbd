//! Deleting sessions: one at a time, or by age with compression chains kept whole.

use crate::error::Result;
use crate::lineage::MAX_CHAIN_HOPS;
use crate::session::end_reason;
use rusqlite::{Connection, OptionalExtension, Transaction};
use std::collections::{HashMap, HashSet};

/// Deletes one session and its messages; children are detached (`parent_session_id = NULL`),
/// grandchildren untouched. `false` when there was no such session.
pub fn delete_session(tx: &Transaction<'_>, id: &str) -> Result<bool> {
    let exists: Option<i64> = tx
        .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |r| r.get(0))
        .optional()?;
    if exists.is_none() {
        return Ok(false);
    }
    delete_ids(tx, &HashSet::from([id.to_string()]))?;
    Ok(true)
}

/// What pruning needs to know of a session.
pub struct Node {
    pub parent: Option<String>,
    pub source: String,
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub end_reason: Option<String>,
}

/// Deletes ended sessions that started before `cutoff` (Unix seconds), optionally only of one
/// source. A compression chain is one unit: it goes only when every session in it qualifies,
/// so a live conversation never loses its early part.
pub fn prune_before(tx: &Transaction<'_>, cutoff: f64, source: Option<&str>) -> Result<usize> {
    Ok(prune_before_listed(tx, cutoff, source)?.len())
}

/// [`prune_before`], returning the ids it deleted (oldest first).
pub fn prune_before_listed(
    tx: &Transaction<'_>,
    cutoff: f64,
    source: Option<&str>,
) -> Result<Vec<String>> {
    let doomed = prune_candidates(tx, cutoff, source)?;
    delete_ids(tx, &doomed.iter().cloned().collect())?;
    Ok(doomed)
}

/// The ids [`prune_before`] would delete, oldest first, without deleting anything.
pub fn prune_candidates(
    conn: &Connection,
    cutoff: f64,
    source: Option<&str>,
) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT id, parent_session_id, source, started_at, ended_at, end_reason FROM sessions",
    )?;
    let nodes: HashMap<String, Node> = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Node {
                    parent: r.get(1)?,
                    source: r.get(2)?,
                    started_at: r.get(3)?,
                    ended_at: r.get(4)?,
                    end_reason: r.get(5)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    Ok(doomed(&nodes, cutoff, source))
}

/// The sessions pruning deletes, oldest first: whole compression chains whose every session
/// ended and started before `cutoff`, of `source` when given (the root's source). Shared by
/// every store.
pub fn doomed(nodes: &HashMap<String, Node>, cutoff: f64, source: Option<&str>) -> Vec<String> {
    let mut chains: HashMap<&str, Vec<&str>> = HashMap::new();
    for id in nodes.keys() {
        chains.entry(chain_root(nodes, id)).or_default().push(id);
    }
    let mut doomed = Vec::new();
    for (root, members) in chains {
        let source_ok = source.is_none_or(|s| nodes.get(root).is_some_and(|n| n.source == s));
        let all_old_and_ended = members.iter().all(|m| {
            nodes
                .get(*m)
                .is_some_and(|n| n.ended_at.is_some() && n.started_at < cutoff)
        });
        if source_ok && all_old_and_ended {
            doomed.extend(members);
        }
    }
    let start = |id: &str| nodes.get(id).map_or(0.0, |n| n.started_at);
    doomed.sort_by(|a, b| start(a).total_cmp(&start(b)).then_with(|| a.cmp(b)));
    doomed.into_iter().map(str::to_string).collect()
}

/// The root of the compression chain `id` belongs to.
fn chain_root<'a>(nodes: &'a HashMap<String, Node>, id: &'a str) -> &'a str {
    let mut current = id;
    for _ in 0..MAX_CHAIN_HOPS {
        let Some(node) = nodes.get(current) else {
            break;
        };
        let Some((parent_id, parent)) = node.parent.as_deref().and_then(|p| nodes.get_key_value(p))
        else {
            break;
        };
        let continues = parent.end_reason.as_deref() == Some(end_reason::COMPRESSION)
            && parent.ended_at.is_some_and(|e| node.started_at >= e);
        if !continues || parent_id == id {
            break;
        }
        current = parent_id;
    }
    current
}

fn delete_ids(tx: &Transaction<'_>, ids: &HashSet<String>) -> Result<()> {
    let mut detach = tx.prepare_cached(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
    )?;
    let mut del_messages = tx.prepare_cached("DELETE FROM messages WHERE session_id = ?1")?;
    let mut del_session = tx.prepare_cached("DELETE FROM sessions WHERE id = ?1")?;
    for id in ids {
        detach.execute([id])?;
    }
    for id in ids {
        del_messages.execute([id])?;
        del_session.execute([id])?;
    }
    Ok(())
}
