//! [`PgStore`]: the [`SessionStore`] trait on PostgreSQL. Every write is one transaction,
//! retried on serialization failures and deadlocks; connections come from a pool.

use crate::bridge::Bridge;
use crate::deferred_index::Indexing;
use crate::error::{is_retryable, pg, pool};
use crate::lineage;
use crate::messages::{self, MESSAGE_COLUMNS};
use baton_core::Message;
use baton_core::usage::CanonicalUsage;
use baton_store::continuation::ChildSettings;
use baton_store::title::{clean_title, escape_like, next_numbered_title, split_numbered};
use baton_store::transfer::{ImportOutcome, SessionExport};
use baton_store::{
    ListedSession, NewSession, Result, Session, SessionFilter, SessionStore, StoreError,
    new_session_id,
};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio_postgres::Transaction;

/// Attempts of a transaction that keeps hitting serialization failures.
const WRITE_ATTEMPTS: u32 = 8;
/// Connections kept per store.
const POOL_SIZE: usize = 8;

pub struct PgStore {
    bridge: Bridge,
    pool: Pool,
    /// The URL without its password, for messages.
    name: String,
}

/// What a transaction body fails with: a driver error (maybe retryable) or a store error.
pub enum TxError {
    Pg(tokio_postgres::Error),
    Store(StoreError),
}

impl From<tokio_postgres::Error> for TxError {
    fn from(e: tokio_postgres::Error) -> Self {
        TxError::Pg(e)
    }
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        TxError::Store(e)
    }
}

type TxFuture<'a, T> = Pin<Box<dyn Future<Output = std::result::Result<T, TxError>> + Send + 'a>>;

/// `url` with any password replaced, for messages and logs.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "postgres".into();
    };
    let Some((auth, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => format!("{scheme}://{auth}@{host}"),
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`; a unix socket directory as
    /// the percent-encoded host) and brings the schema up to date.
    pub fn connect(url: &str) -> Result<PgStore> {
        let name = redacted(url);
        let config: tokio_postgres::Config = url.parse().map_err(|e| StoreError::Backend {
            store: name.clone(),
            detail: format!("not a PostgreSQL URL: {e}"),
        })?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let bridge = Bridge::new()?;
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(10)))
            .build()
            .map_err(|e| StoreError::Backend {
                store: name.clone(),
                detail: format!("cannot create the connection pool: {e}"),
            })?;
        let store = PgStore { bridge, pool, name };
        let pool = store.pool.clone();
        let name = store.name.clone();
        store.bridge.run(async move {
            let mut client = pool.get().await.map_err(|e| crate::error::pool(&name, e))?;
            crate::schema::migrate(&mut client)
                .await
                .map_err(|detail| StoreError::Backend {
                    store: name,
                    detail,
                })
        })?;
        Ok(store)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs a read on a pooled connection.
    pub(crate) fn read<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(deadpool_postgres::Object) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<T, TxError>> + Send,
    {
        let pool = self.pool.clone();
        let name = self.name.clone();
        self.bridge.run(async move {
            let client = pool.get().await.map_err(|e| crate::error::pool(&name, e))?;
            f(client).await.map_err(|e| match e {
                TxError::Pg(e) => pg(&name, e),
                TxError::Store(e) => e,
            })
        })
    }

    /// Runs `body` in a transaction, retried on serialization failures and deadlocks.
    pub(crate) fn write<T, F>(&self, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'a> Fn(&'a Transaction<'a>) -> TxFuture<'a, T> + Send + Sync + 'static,
    {
        let pool = self.pool.clone();
        let name = self.name.clone();
        self.bridge.run(async move {
            let mut attempt = 0;
            loop {
                attempt += 1;
                let mut client = pool.get().await.map_err(|e| pool_err(&name, e))?;
                let outcome: std::result::Result<T, TxError> = async {
                    let tx = client.transaction().await?;
                    let value = body(&tx).await?;
                    tx.commit().await?;
                    Ok(value)
                }
                .await;
                match outcome {
                    Ok(v) => return Ok(v),
                    Err(TxError::Pg(e)) if is_retryable(&e) && attempt < WRITE_ATTEMPTS => {
                        tokio::time::sleep(Duration::from_millis(5 << attempt.min(6))).await;
                    }
                    Err(TxError::Pg(e)) => return Err(pg(&name, e)),
                    Err(TxError::Store(e)) => return Err(e),
                }
            }
        })
    }
}

fn pool_err(name: &str, e: deadpool_postgres::PoolError) -> StoreError {
    pool(name, e)
}

pub(crate) async fn require_session(
    client: &impl tokio_postgres::GenericClient,
    id: &str,
) -> std::result::Result<(), TxError> {
    let found = client
        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&id])
        .await?;
    if found.is_none() {
        return Err(StoreError::NotFound { id: id.to_string() }.into());
    }
    Ok(())
}

/// The next title along the lineage of `raw` ("Refactor auth" -> "Refactor auth #2").
pub(crate) async fn next_title(
    client: &impl tokio_postgres::GenericClient,
    raw: &str,
) -> std::result::Result<String, TxError> {
    let cleaned = clean_title(raw)?.unwrap_or_default();
    let (base, _) = split_numbered(&cleaned);
    let rows = client
        .query(
            "SELECT title FROM sessions WHERE title = $1 OR title LIKE $2 ESCAPE '\\'",
            &[&base, &format!("{} #%", escape_like(base))],
        )
        .await?;
    let titles: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(next_numbered_title(base, titles.iter().map(String::as_str)))
}

/// Appends messages and bumps the session's counters, inside a transaction.
pub(crate) async fn append_in_tx(
    tx: &Transaction<'_>,
    session_id: &str,
    messages: &[Message],
    at: f64,
) -> std::result::Result<(), TxError> {
    require_session(tx, session_id).await?;
    // Earlier calls' names are only needed for tool results that do not carry one.
    let mut names = if messages
        .iter()
        .any(|m| m.tool_call_id.is_some() && m.name.is_none())
    {
        messages::call_names(tx, session_id).await?
    } else {
        HashMap::new()
    };
    messages::insert(
        tx,
        session_id,
        messages,
        &|k| at + k as f64 * 1e-6,
        &mut names,
    )
    .await?;
    let calls: i64 = messages
        .iter()
        .filter_map(|m| m.tool_calls.as_ref())
        .map(|c| c.len() as i64)
        .sum();
    tx.execute(
        "UPDATE sessions SET message_count = message_count + $1, \
         tool_call_count = tool_call_count + $2 WHERE id = $3",
        &[&(messages.len() as i64), &calls, &session_id],
    )
    .await?;
    Ok(())
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Sets (or clears) a session's already cleaned title; a title another session holds is
/// [`StoreError::TitleInUse`].
pub(crate) async fn set_title_in_tx(
    tx: &impl tokio_postgres::GenericClient,
    id: &str,
    title: Option<&str>,
) -> std::result::Result<(), TxError> {
    if let Some(t) = title {
        let other = tx
            .query_opt(
                "SELECT id FROM sessions WHERE title = $1 AND id <> $2",
                &[&t, &id],
            )
            .await?;
        if let Some(other) = other {
            return Err(StoreError::TitleInUse {
                title: t.to_string(),
                other_id: other.get(0),
            }
            .into());
        }
    }
    tx.execute(
        "UPDATE sessions SET title = $1 WHERE id = $2",
        &[&title, &id],
    )
    .await?;
    Ok(())
}

/// Adds `api_calls` calls' worth of usage (and cost, when known) to a session's counters;
/// returns the rows updated (0: no such session).
pub(crate) async fn add_usage_in_tx(
    tx: &impl tokio_postgres::GenericClient,
    id: &str,
    usage: &CanonicalUsage,
    cost_usd: Option<f64>,
    api_calls: u64,
) -> std::result::Result<u64, tokio_postgres::Error> {
    tx.execute(
        "UPDATE sessions SET input_tokens = input_tokens + $1, \
         output_tokens = output_tokens + $2, \
         cache_read_tokens = cache_read_tokens + $3, \
         cache_write_tokens = cache_write_tokens + $4, \
         reasoning_tokens = reasoning_tokens + $5, \
         estimated_cost_usd = CASE WHEN $6::float8 IS NULL THEN estimated_cost_usd \
             ELSE COALESCE(estimated_cost_usd, 0) + $6::float8 END, \
         api_call_count = api_call_count + $7 WHERE id = $8",
        &[
            &to_i64(usage.input),
            &to_i64(usage.output),
            &to_i64(usage.cache_read),
            &to_i64(usage.cache_write),
            &to_i64(usage.reasoning),
            &cost_usd,
            &to_i64(api_calls),
            &id,
        ],
    )
    .await
}

impl SessionStore for PgStore {
    fn session_ids(&self) -> Result<Vec<String>> {
        self.read(move |client| async move {
            Ok(client
                .query("SELECT id FROM sessions ORDER BY started_at, id", &[])
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect())
        })
    }

    fn export_session(&self, id: &str) -> Result<Option<SessionExport>> {
        let id = id.to_string();
        self.read(move |client| async move { crate::transfer::export_in(&**client, &id).await })
    }

    fn import_session(&self, export: &SessionExport) -> Result<ImportOutcome> {
        self.import(export)
    }

    fn start_continuation_with(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &ChildSettings,
    ) -> Result<String> {
        self.continue_session(parent_id, messages, settings)
    }

    fn messages_range(&self, session_id: &str, start: usize, end: usize) -> Result<Vec<Message>> {
        self.range(session_id, start, end)
    }

    fn stats(
        &self,
        query: &baton_store::StatsQuery,
        prices: &baton_core::pricing::PriceTable,
    ) -> Result<baton_store::UsageStats> {
        self.usage_stats(query, prices)
    }

    fn message_count(&self, session_id: &str) -> Result<usize> {
        self.count(session_id)
    }

    fn message_position(&self, message_id: i64) -> Result<(String, usize)> {
        self.position(message_id)
    }

    fn child_sessions(&self, parent_id: &str) -> Result<Vec<String>> {
        self.children(parent_id)
    }

    fn search(&self, query: &baton_store::SearchQuery) -> Result<Vec<baton_store::SearchHit>> {
        self.search_messages(query).map_err(StoreError::Search)
    }

    fn create_session(&self, new: NewSession) -> Result<String> {
        let id = new.id.clone().unwrap_or_else(new_session_id);
        let session = id.clone();
        self.write(move |tx| {
            let (new, id) = (new.clone(), session.clone());
            Box::pin(async move {
                let (new, id) = (&new, &id);
                if let Some(parent) = &new.parent_session_id {
                    require_session(tx, parent).await?;
                }
                tx.execute(
                    "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, \
                     started_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
                    &[
                        id,
                        &new.source,
                        &new.model,
                        &new.system_prompt,
                        &new.parent_session_id,
                        &new.started_at.unwrap_or_else(baton_store::session::now),
                    ],
                )
                .await?;
                Ok(())
            })
        })?;
        Ok(id)
    }

    fn end_session(&self, id: &str, reason: &str) -> Result<bool> {
        let (id, reason) = (id.to_string(), reason.to_string());
        self.write(move |tx| {
            let (id, reason) = (id.clone(), reason.clone());
            Box::pin(async move {
                let (id, reason) = (&id, &reason);
                let n = tx
                    .execute(
                        "UPDATE sessions SET ended_at = $1, end_reason = $2 \
                         WHERE id = $3 AND ended_at IS NULL",
                        &[&baton_store::session::now(), reason, id],
                    )
                    .await?;
                if n == 0 {
                    require_session(tx, id).await?;
                }
                Ok(n > 0)
            })
        })
    }

    fn get_session(&self, id: &str) -> Result<Option<Session>> {
        let id = id.to_string();
        self.read(move |client| async move { Ok(lineage::load_session(&**client, &id).await?) })
    }

    fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<ListedSession>> {
        self.listing(filter)
    }

    fn append_messages(&self, session_id: &str, messages: &[Message]) -> Result<()> {
        let id = session_id.to_string();
        if messages.is_empty() {
            return self.read(move |client| async move { require_session(&**client, &id).await });
        }
        let messages = std::sync::Arc::new(messages.to_vec());
        self.write(move |tx| {
            let (id, messages) = (id.clone(), messages.clone());
            Box::pin(
                async move { append_in_tx(tx, &id, &messages, baton_store::session::now()).await },
            )
        })
    }

    fn append_answer(
        &self,
        session_id: &str,
        messages: &[Message],
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        let id = session_id.to_string();
        let messages = std::sync::Arc::new(messages.to_vec());
        let usage = *usage;
        self.write(move |tx| {
            let (id, messages) = (id.clone(), messages.clone());
            Box::pin(async move {
                append_in_tx(tx, &id, &messages, baton_store::session::now()).await?;
                if add_usage_in_tx(tx, &id, &usage, cost_usd, 1).await? == 0 {
                    return Err(StoreError::NotFound { id }.into());
                }
                Ok(())
            })
        })
    }

    fn messages(&self, session_id: &str) -> Result<Vec<Message>> {
        let id = session_id.to_string();
        self.read(move |client| async move {
            require_session(&**client, &id).await?;
            let sql =
                format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY id");
            let rows = client.query(sql.as_str(), &[&id]).await?;
            rows.iter()
                .map(|r| messages::decode(&id, r).map_err(TxError::Store))
                .collect()
        })
    }

    fn add_usage(
        &self,
        session_id: &str,
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        let id = session_id.to_string();
        let usage = *usage;
        self.write(move |tx| {
            let id = id.clone();
            Box::pin(async move {
                if add_usage_in_tx(tx, &id, &usage, cost_usd, 1).await? == 0 {
                    return Err(StoreError::NotFound { id }.into());
                }
                Ok(())
            })
        })
    }

    fn set_title(&self, session_id: &str, raw: &str) -> Result<Option<String>> {
        let cleaned = clean_title(raw)?;
        let id = session_id.to_string();
        let title = cleaned.clone();
        self.write(move |tx| {
            let (id, title) = (id.clone(), title.clone());
            Box::pin(async move {
                let (id, title) = (&id, &title);
                require_session(tx, id).await?;
                set_title_in_tx(tx, id, title.as_deref()).await
            })
        })?;
        Ok(cleaned)
    }

    fn next_title_in_lineage(&self, raw: &str) -> Result<String> {
        let raw = raw.to_string();
        self.read(move |client| async move { next_title(&**client, &raw).await })
    }

    fn compression_tip(&self, id: &str) -> Result<String> {
        let id = id.to_string();
        self.read(move |client| async move { Ok(lineage::compression_tip(&**client, &id).await?) })
    }

    fn compression_chain(&self, id: &str) -> Result<Vec<String>> {
        let id = id.to_string();
        self.read(
            move |client| async move { Ok(lineage::compression_chain(&**client, &id).await?) },
        )
    }

    fn resolve_session(&self, id_or_title: &str) -> Result<Option<String>> {
        self.resolve(id_or_title)
    }

    fn delete_session(&self, id: &str) -> Result<bool> {
        let id = id.to_string();
        self.write(move |tx| {
            let id = id.clone();
            Box::pin(async move {
                let id = &id;
                // Children are detached by the foreign key (ON DELETE SET NULL), messages go
                // with their session (ON DELETE CASCADE).
                Ok(tx
                    .execute("DELETE FROM sessions WHERE id = $1", &[id])
                    .await?
                    > 0)
            })
        })
    }

    fn prune_sessions(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>> {
        self.prune(older_than, source)
    }

    fn prune_candidates(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>> {
        self.pruned_by(older_than, source)
    }

    fn delete_chain(&self, id: &str) -> Result<Vec<String>> {
        self.delete_whole_chain(id)
    }

    fn retitle_chain(&self, id: &str, raw: &str) -> Result<Vec<(String, Option<String>)>> {
        self.retitle(id, raw)
    }

    fn write_new_sessions(
        &self,
        batch: &[baton_store::SessionBatch<'_>],
    ) -> Result<Vec<(String, bool)>> {
        self.write_sessions(batch, true, Indexing::Inline)
    }

    fn write_new_sessions_deferred(
        &self,
        batch: &[baton_store::SessionBatch<'_>],
    ) -> Result<Vec<(String, bool)>> {
        self.write_sessions(batch, true, Indexing::Deferred)
    }

    fn index_backlog(&self) -> Result<usize> {
        self.unindexed_count()
    }

    fn catch_up_index(&self, limit: usize) -> Result<usize> {
        self.index_waiting_concurrently(limit)
    }

    fn get_meta(&self, key: &str) -> Result<Option<String>> {
        let key = key.to_string();
        self.read(move |client| async move {
            Ok(client
                .query_opt("SELECT value FROM state_meta WHERE key = $1", &[&key])
                .await?
                .and_then(|r| r.get(0)))
        })
    }

    fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        let (key, value) = (key.to_string(), value.to_string());
        self.write(move |tx| {
            let (key, value) = (key.clone(), value.clone());
            Box::pin(async move {
                let (key, value) = (&key, &value);
                tx.execute(
                    "INSERT INTO state_meta (key, value) VALUES ($1, $2) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[key, value],
                )
                .await?;
                Ok(())
            })
        })
    }
}
