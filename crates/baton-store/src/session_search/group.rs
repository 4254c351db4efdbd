//! From ranked message hits to ranked sessions.
//!
//! A compressed conversation is stored as a chain of sessions, and a query often matches in
//! several of them; counted separately they would fill every result slot with one
//! conversation. Hits are therefore keyed by their chain's root, and a chain ranks where its
//! best hit ranks.

use super::HIDDEN_SOURCES;
use crate::SessionStore;
use crate::error::Result;
use crate::search::SearchHit;
use crate::session::Session;
use std::collections::{HashMap, HashSet};

/// One conversation that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionGroup {
    /// Where the conversation started: its source and start time.
    pub root: Session,
    /// Its newest session: the id to resume and the current title.
    pub tip: Session,
    /// Every session of the chain, root first.
    pub chain: Vec<String>,
    /// Hits in this chain among those fetched.
    pub match_count: usize,
    /// Messages stored across the chain.
    pub message_count: i64,
}

/// Groups `hits` (best first) by compression chain, skipping hidden sources and anything in
/// `excluded`, and keeps the first `limit` chains in the order of their best hit.
pub fn group_hits(
    store: &dyn SessionStore,
    hits: &[SearchHit],
    excluded: &HashSet<String>,
    limit: usize,
) -> Result<Vec<SessionGroup>> {
    let mut roots: HashMap<&str, String> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for hit in hits {
        if HIDDEN_SOURCES.contains(&hit.source.as_str()) || excluded.contains(&hit.session_id) {
            continue;
        }
        let root = match roots.get(hit.session_id.as_str()) {
            Some(root) => root.clone(),
            None => {
                let chain = store.compression_chain(&hit.session_id)?;
                let root = chain
                    .first()
                    .cloned()
                    .unwrap_or_else(|| hit.session_id.clone());
                roots.insert(&hit.session_id, root.clone());
                root
            }
        };
        if excluded.contains(&root) {
            continue;
        }
        let count = counts.entry(root.clone()).or_insert(0);
        if *count == 0 {
            if order.len() >= limit {
                continue;
            }
            order.push(root);
        }
        *count += 1;
    }
    let mut groups = Vec::with_capacity(order.len());
    for root_id in order {
        let match_count = counts.get(&root_id).copied().unwrap_or(0);
        if let Some(group) = load_group(store, &root_id, match_count)? {
            groups.push(group);
        }
    }
    Ok(groups)
}

/// The chain starting at `root_id`; `None` if it vanished since the search.
pub fn load_group(
    store: &dyn SessionStore,
    root_id: &str,
    match_count: usize,
) -> Result<Option<SessionGroup>> {
    let chain = store.compression_chain(root_id)?;
    let mut sessions = Vec::with_capacity(chain.len());
    for id in &chain {
        if let Some(session) = store.get_session(id)? {
            sessions.push(session);
        }
    }
    let (Some(root), Some(tip)) = (sessions.first().cloned(), sessions.last().cloned()) else {
        return Ok(None);
    };
    Ok(Some(SessionGroup {
        message_count: sessions.iter().map(|s| s.message_count).sum(),
        root,
        tip,
        chain,
        match_count,
    }))
}
