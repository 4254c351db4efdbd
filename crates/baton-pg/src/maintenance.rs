//! Chain-wide maintenance on PostgreSQL, with the SQLite store's rules: pruning whole
//! compression chains ([`baton_store::prune::doomed`]), deleting a chain, titling a chain
//! along its numbered lineage ([`baton_store::retitle`]). Each change is one transaction.

use crate::lineage;
use crate::store::{PgStore, TxError, require_session};
use baton_store::prune::{Node, doomed};
use baton_store::retitle::{chain_titles, is_lineage_conflict};
use baton_store::title::{clean_title, escape_like, split_numbered};
use baton_store::{Result, StoreError};
use std::collections::HashMap;
use std::time::Duration;
use tokio_postgres::GenericClient;

/// Every session as pruning sees it; `lock` holds the rows until the transaction ends, so a
/// continuation cannot start on a chain being deleted.
async fn nodes(
    client: &impl GenericClient,
    lock: bool,
) -> std::result::Result<HashMap<String, Node>, tokio_postgres::Error> {
    let sql = format!(
        "SELECT id, parent_session_id, source, started_at, ended_at, end_reason FROM sessions{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    Ok(client
        .query(sql.as_str(), &[])
        .await?
        .iter()
        .map(|r| {
            (
                r.get(0),
                Node {
                    parent: r.get(1),
                    source: r.get(2),
                    started_at: r.get(3),
                    ended_at: r.get(4),
                    end_reason: r.get(5),
                },
            )
        })
        .collect())
}

fn cutoff(older_than: Duration) -> f64 {
    baton_store::session::now() - older_than.as_secs_f64()
}

impl PgStore {
    /// [`baton_store::SessionStore::prune_sessions`].
    pub(crate) fn prune(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>> {
        let cutoff = cutoff(older_than);
        let source = source.map(str::to_string);
        self.write(move |tx| {
            let source = source.clone();
            Box::pin(async move {
                let ids = doomed(&nodes(tx, true).await?, cutoff, source.as_deref());
                tx.execute("DELETE FROM sessions WHERE id = ANY($1)", &[&ids])
                    .await?;
                Ok(ids)
            })
        })
    }

    /// [`baton_store::SessionStore::prune_candidates`].
    pub(crate) fn pruned_by(
        &self,
        older_than: Duration,
        source: Option<&str>,
    ) -> Result<Vec<String>> {
        let cutoff = cutoff(older_than);
        let source = source.map(str::to_string);
        self.read(move |client| async move {
            Ok(doomed(
                &nodes(&**client, false).await?,
                cutoff,
                source.as_deref(),
            ))
        })
    }

    /// [`baton_store::SessionStore::delete_chain`].
    pub(crate) fn delete_whole_chain(&self, id: &str) -> Result<Vec<String>> {
        let id = id.to_string();
        self.write(move |tx| {
            let id = id.clone();
            Box::pin(async move {
                if tx
                    .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&id])
                    .await?
                    .is_none()
                {
                    return Ok(Vec::new());
                }
                let chain = lineage::compression_chain(tx, &id).await?;
                let gone: Vec<String> = tx
                    .query(
                        "DELETE FROM sessions WHERE id = ANY($1) RETURNING id",
                        &[&chain],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok(chain.into_iter().filter(|c| gone.contains(c)).collect())
            })
        })
    }

    /// [`baton_store::SessionStore::retitle_chain`].
    pub(crate) fn retitle(&self, id: &str, raw: &str) -> Result<Vec<(String, Option<String>)>> {
        let cleaned = clean_title(raw)?;
        let id = id.to_string();
        self.write(move |tx| {
            let (id, cleaned) = (id.clone(), cleaned.clone());
            Box::pin(async move {
                require_session(tx, &id).await?;
                let chain = lineage::compression_chain(tx, &id).await?;
                let titles = match &cleaned {
                    None => vec![None; chain.len()],
                    Some(t) => {
                        let (base, titles) = chain_titles(t, chain.len());
                        let (plain, _) = split_numbered(&base);
                        let taken = tx
                            .query(
                                "SELECT title, id FROM sessions WHERE title = $1 OR title = $2 \
                                 OR title LIKE $3 ESCAPE '\\' ORDER BY started_at, id",
                                &[&base, &plain, &format!("{} #%", escape_like(plain))],
                            )
                            .await?;
                        if let Some(row) = taken
                            .iter()
                            .find(|r| is_lineage_conflict(r.get(0), r.get(1), &base, &chain))
                        {
                            return Err(TxError::Store(StoreError::TitleInUse {
                                title: row.get(0),
                                other_id: row.get(1),
                            }));
                        }
                        titles
                    }
                };
                // Cleared first, so a chain renumbered onto its own titles never meets the
                // unique index half-way.
                tx.execute(
                    "UPDATE sessions SET title = NULL WHERE id = ANY($1)",
                    &[&chain],
                )
                .await?;
                for (sid, t) in chain.iter().zip(&titles) {
                    tx.execute("UPDATE sessions SET title = $1 WHERE id = $2", &[t, sid])
                        .await?;
                }
                Ok(chain.into_iter().zip(titles).collect())
            })
        })
    }
}
