//! Compression lineage on PostgreSQL, with the SQLite store's rules
//! ([`baton_store::lineage`]): a continuation is a child started at or after its parent ended
//! with reason `compression`; chains are followed at most
//! [`baton_store::lineage::MAX_CHAIN_HOPS`] hops, so damaged data cannot loop.

use baton_store::lineage::{MAX_CHAIN_HOPS, is_compression_continuation, tip_view};
use baton_store::{Session, end_reason};
use std::collections::HashSet;
use tokio_postgres::{GenericClient, Row};

type PgResult<T> = std::result::Result<T, tokio_postgres::Error>;

/// Columns of a session row, in [`session_from_row`]'s order.
pub const SESSION_COLUMNS: &str = "id, source, user_id, model, system_prompt, \
     parent_session_id, started_at, ended_at, end_reason, message_count, tool_call_count, \
     input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, \
     estimated_cost_usd, title, api_call_count";

pub fn session_from_row(r: &Row) -> Session {
    Session {
        id: r.get(0),
        source: r.get(1),
        user_id: r.get(2),
        model: r.get(3),
        system_prompt: r.get(4),
        parent_session_id: r.get(5),
        started_at: r.get(6),
        ended_at: r.get(7),
        end_reason: r.get(8),
        message_count: r.get(9),
        tool_call_count: r.get(10),
        input_tokens: r.get(11),
        output_tokens: r.get(12),
        cache_read_tokens: r.get(13),
        cache_write_tokens: r.get(14),
        reasoning_tokens: r.get(15),
        estimated_cost_usd: r.get(16),
        title: r.get(17),
        api_call_count: r.get(18),
    }
}

pub async fn load_session(client: &impl GenericClient, id: &str) -> PgResult<Option<Session>> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1");
    Ok(client
        .query_opt(sql.as_str(), &[&id])
        .await?
        .map(|r| session_from_row(&r)))
}

async fn compression_child(client: &impl GenericClient, id: &str) -> PgResult<Option<String>> {
    Ok(client
        .query_opt(
            "SELECT id FROM sessions WHERE parent_session_id = $1 AND started_at >= \
             (SELECT ended_at FROM sessions WHERE id = $1 AND end_reason = 'compression') \
             ORDER BY started_at DESC LIMIT 1",
            &[&id],
        )
        .await?
        .map(|r| r.get(0)))
}

pub async fn compression_tip(client: &impl GenericClient, id: &str) -> PgResult<String> {
    let mut current = id.to_string();
    let mut seen = HashSet::from([current.clone()]);
    for _ in 0..MAX_CHAIN_HOPS {
        match compression_child(client, &current).await? {
            Some(next) if seen.insert(next.clone()) => current = next,
            _ => break,
        }
    }
    Ok(current)
}

pub async fn compression_root(client: &impl GenericClient, id: &str) -> PgResult<String> {
    let Some(mut child) = load_session(client, id).await? else {
        return Ok(id.to_string());
    };
    let mut seen = HashSet::from([child.id.clone()]);
    for _ in 0..MAX_CHAIN_HOPS {
        let Some(parent_id) = child.parent_session_id.clone() else {
            break;
        };
        let Some(parent) = load_session(client, &parent_id).await? else {
            break;
        };
        if !is_compression_continuation(&parent, &child) || !seen.insert(parent.id.clone()) {
            break;
        }
        child = parent;
    }
    Ok(child.id)
}

pub async fn compression_chain(client: &impl GenericClient, id: &str) -> PgResult<Vec<String>> {
    let mut chain = vec![compression_root(client, id).await?];
    let mut seen: HashSet<String> = chain.iter().cloned().collect();
    for _ in 0..MAX_CHAIN_HOPS {
        let Some(last) = chain.last() else { break };
        match compression_child(client, last).await? {
            Some(next) if seen.insert(next.clone()) => chain.push(next),
            _ => break,
        }
    }
    Ok(chain)
}

/// A compressed root shown as its chain's tip, keeping the root's start time (the SQLite
/// store's `list_projected`).
pub async fn project_tip(
    client: &impl GenericClient,
    row: Session,
    include_children: bool,
) -> PgResult<(Session, Option<String>)> {
    if include_children || row.end_reason.as_deref() != Some(end_reason::COMPRESSION) {
        return Ok((row, None));
    }
    let tip_id = compression_tip(client, &row.id).await?;
    if tip_id == row.id {
        return Ok((row, None));
    }
    let Some(tip) = load_session(client, &tip_id).await? else {
        return Ok((row, None));
    };
    let root_id = row.id.clone();
    Ok((tip_view(row, tip), Some(root_id)))
}
