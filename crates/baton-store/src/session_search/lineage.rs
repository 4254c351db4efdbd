//! Which sessions count as "the conversation the agent is already in".
//!
//! Recalling the current conversation is useless (the agent has it, or its own compaction
//! summary of it) and crowds out the sessions it actually asked about. So everything linked to
//! the current session is left out: every ancestor by any parent link (compression, branch,
//! delegation), its whole compression chain, and every descendant of that chain (its branches
//! and the subagents it spawned). Unrelated siblings, such as another branch of a shared parent,
//! stay searchable.

use crate::SessionStore;
use crate::error::Result;
use crate::lineage::MAX_CHAIN_HOPS;
use std::collections::{HashSet, VecDeque};

/// Descendants visited at most; guards against pathological trees in damaged data.
const MAX_DESCENDANTS: usize = 1_000;

/// The ids linked to `current` (itself included); empty when there is no current session.
pub fn current_lineage(store: &dyn SessionStore, current: Option<&str>) -> Result<HashSet<String>> {
    let Some(current) = current else {
        return Ok(HashSet::new());
    };
    let mut lineage = HashSet::from([current.to_string()]);
    lineage.extend(ancestors(store, current)?);
    let chain = store.compression_chain(current)?;
    lineage.extend(chain.iter().cloned());
    lineage.extend(descendants(store, &chain)?);
    Ok(lineage)
}

fn ancestors(store: &dyn SessionStore, id: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut seen = HashSet::from([id.to_string()]);
    let mut current = id.to_string();
    for _ in 0..MAX_CHAIN_HOPS {
        let parent = store
            .get_session(&current)?
            .and_then(|s| s.parent_session_id);
        match parent {
            Some(parent) if seen.insert(parent.clone()) => {
                out.push(parent.clone());
                current = parent;
            }
            _ => break,
        }
    }
    Ok(out)
}

fn descendants(store: &dyn SessionStore, roots: &[String]) -> Result<Vec<String>> {
    let mut seen: HashSet<String> = roots.iter().cloned().collect();
    let mut queue: VecDeque<String> = roots.iter().cloned().collect();
    let mut out = Vec::new();
    while let Some(id) = queue.pop_front() {
        for child in store.child_sessions(&id)? {
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
