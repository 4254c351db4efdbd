//! [`PgStore`]: the [`SessionStore`] trait on PostgreSQL. Every write is one transaction,
//! retried on serialization failures and deadlocks; connections come from a pool.

use crate::bridge::Bridge;
use crate::error::{is_retryable, pg, pool};
use crate::lineage::{self, SESSION_COLUMNS, session_from_row};
use crate::messages::{self, MESSAGE_COLUMNS};
use baton_core::Message;
use baton_core::usage::CanonicalUsage;
use baton_store::continuation::ChildSettings;
use baton_store::resolve::{MIN_ID_PREFIX, TitleMatch, choose_prefix, choose_tip};
use baton_store::title::{clean_title, escape_like, next_numbered_title, split_numbered};
use baton_store::transfer::{ImportOutcome, SessionExport, checksum};
use baton_store::{
    ListedSession, NewSession, Result, Session, SessionFilter, SessionStore, StoreError,
    end_reason, new_session_id,
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

    /// The trait's `start_continuation_with`: the parent row is locked (`FOR UPDATE`), so two
    /// hosts compacting one session cannot both continue it.
    fn continue_session(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &ChildSettings,
    ) -> Result<String> {
        let parent_id = parent_id.to_string();
        let messages = std::sync::Arc::new(messages.to_vec());
        let settings = settings.clone();
        let child_id = new_session_id();
        let child = child_id.clone();
        self.write(move |tx| {
            let (parent_id, messages, settings, child) = (
                parent_id.clone(),
                messages.clone(),
                settings.clone(),
                child.clone(),
            );
            Box::pin(async move {
                let (parent_id, messages, settings, child) =
                    (&parent_id, messages.as_slice(), &settings, &child);
                let row = tx
                    .query_opt(
                        "SELECT source, model, system_prompt, title, ended_at, end_reason \
                         FROM sessions WHERE id = $1 FOR UPDATE",
                        &[parent_id],
                    )
                    .await?
                    .ok_or_else(|| StoreError::NotFound {
                        id: parent_id.clone(),
                    })?;
                let source: String = row.get(0);
                let model: Option<String> = row.get(1);
                let system_prompt: Option<String> = row.get(2);
                let title: Option<String> = row.get(3);
                let ended_at: Option<f64> = row.get(4);
                let reason: Option<String> = row.get(5);
                if reason.as_deref() == Some(end_reason::COMPRESSION) {
                    let existing = tx
                        .query_opt(
                            "SELECT id FROM sessions WHERE parent_session_id = $1 \
                             ORDER BY started_at DESC LIMIT 1",
                            &[parent_id],
                        )
                        .await?
                        .map(|r| r.get(0));
                    return Err(StoreError::AlreadyContinued {
                        id: parent_id.clone(),
                        child: existing,
                    }
                    .into());
                }
                let now = baton_store::session::now();
                let ended = ended_at.unwrap_or(now);
                tx.execute(
                    "UPDATE sessions SET ended_at = $1, end_reason = 'compression' WHERE id = $2",
                    &[&ended, parent_id],
                )
                .await?;
                let child_title = match &title {
                    Some(t) => Some(next_title(tx, t).await?),
                    None => None,
                };
                tx.execute(
                    "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, \
                     started_at, title) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        child,
                        &source,
                        &settings.model.clone().or(model),
                        &settings.system_prompt.clone().or(system_prompt),
                        parent_id,
                        &now.max(ended),
                        &child_title,
                    ],
                )
                .await?;
                append_in_tx(tx, child, messages, now.max(ended)).await?;
                Ok(())
            })
        })?;
        Ok(child_id)
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
async fn next_title(
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
async fn append_in_tx(
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

/// A session with its messages and timestamps.
async fn export_in(
    client: &impl tokio_postgres::GenericClient,
    id: &str,
) -> std::result::Result<Option<SessionExport>, TxError> {
    let Some(session) = lineage::load_session(client, id).await? else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS}, timestamp FROM messages WHERE session_id = $1 ORDER BY id"
    );
    let rows = client.query(sql.as_str(), &[&id]).await?;
    let mut decoded = Vec::with_capacity(rows.len());
    let mut timestamps = Vec::with_capacity(rows.len());
    for row in &rows {
        decoded.push(messages::decode(id, row).map_err(TxError::Store)?);
        timestamps.push(row.get::<_, f64>(14));
    }
    Ok(Some(SessionExport {
        session,
        messages: decoded,
        timestamps,
    }))
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
        self.read(move |client| async move { export_in(&**client, &id).await })
    }

    fn import_session(&self, export: &SessionExport) -> Result<ImportOutcome> {
        let export = std::sync::Arc::new(export.clone());
        self.write(move |tx| {
            let export = export.clone();
            Box::pin(async move {
                let s = &export.session;
                let parent_present = match &s.parent_session_id {
                    Some(p) => tx
                        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[p])
                        .await?
                        .is_some(),
                    None => false,
                };
                let parent = s.parent_session_id.clone().filter(|_| parent_present);
                let inserted = tx
                    .execute(
                        "INSERT INTO sessions (id, source, user_id, model, system_prompt, \
                         parent_session_id, started_at, ended_at, end_reason, message_count, \
                         tool_call_count, input_tokens, output_tokens, cache_read_tokens, \
                         cache_write_tokens, reasoning_tokens, estimated_cost_usd, title, \
                         api_call_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
                         $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT (id) DO NOTHING",
                        &[
                            &s.id,
                            &s.source,
                            &s.user_id,
                            &s.model,
                            &s.system_prompt,
                            &parent,
                            &s.started_at,
                            &s.ended_at,
                            &s.end_reason,
                            &s.message_count,
                            &s.tool_call_count,
                            &s.input_tokens,
                            &s.output_tokens,
                            &s.cache_read_tokens,
                            &s.cache_write_tokens,
                            &s.reasoning_tokens,
                            &s.estimated_cost_usd,
                            &s.title,
                            &s.api_call_count,
                        ],
                    )
                    .await?;
                if inserted == 0 {
                    let existing = export_in(tx, &s.id).await?;
                    return match existing {
                        Some(e) if checksum(&e) == checksum(&export) => {
                            Ok(ImportOutcome::AlreadyPresent)
                        }
                        _ => Err(StoreError::CopyConflict { id: s.id.clone() }.into()),
                    };
                }
                let stamps = export.timestamps.clone();
                let started = s.started_at;
                let mut names = HashMap::new();
                messages::insert(
                    tx,
                    &s.id,
                    &export.messages,
                    &move |k| stamps.get(k).copied().unwrap_or(started),
                    &mut names,
                )
                .await?;
                Ok(ImportOutcome::written(s, parent.is_some()))
            })
        })
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
        let filter = filter.clone();
        self.read(move |client| async move {
            let mut clauses = Vec::new();
            if !filter.include_children {
                clauses.push(baton_store::lineage::ROOTS_AND_BRANCHES_SQL);
            }
            if filter.source.is_some() {
                clauses.push("s.source = $1");
            }
            let where_sql = if clauses.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", clauses.join(" AND "))
            };
            let columns = SESSION_COLUMNS
                .split(", ")
                .map(|c| format!("s.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT {columns} FROM sessions s {where_sql} \
                 ORDER BY s.started_at DESC, s.id DESC LIMIT {} OFFSET {}",
                filter.limit, filter.offset
            );
            let rows = match &filter.source {
                Some(source) => client.query(sql.as_str(), &[source]).await?,
                None => client.query(sql.as_str(), &[]).await?,
            };
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let session = session_from_row(&row);
                let (session, root) =
                    lineage::project_tip(&**client, session, filter.include_children).await?;
                let first = root.clone().unwrap_or_else(|| session.id.clone());
                let contents: Vec<String> = client
                    .query(
                        "SELECT content FROM messages WHERE session_id = $1 AND role = 'user' \
                         AND content IS NOT NULL AND btrim(content) <> '' \
                         ORDER BY timestamp, id LIMIT 20",
                        &[&first],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                let newest: Option<f64> = client
                    .query_one(
                        "SELECT MAX(timestamp) FROM messages WHERE session_id = $1",
                        &[&session.id],
                    )
                    .await?
                    .get(0);
                let last_active = [newest, session.ended_at]
                    .into_iter()
                    .flatten()
                    .fold(session.started_at, f64::max);
                out.push(ListedSession {
                    session,
                    lineage_root_id: root,
                    last_active,
                    preview: baton_store::preview::first_user_line_of(&contents),
                });
            }
            Ok(out)
        })
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
        let input = id_or_title.to_string();
        self.read(move |client| async move {
            let exact = client
                .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&input])
                .await?;
            if exact.is_some() {
                return Ok(Some(input));
            }
            if let Ok(Some(cleaned)) = clean_title(&input) {
                let rows = client
                    .query(
                        "SELECT id, title, started_at FROM sessions \
                         WHERE title = $1 OR lower(title) LIKE lower($2) ESCAPE '\\'",
                        &[&cleaned, &format!("{} #%", escape_like(&cleaned))],
                    )
                    .await?;
                let matches: Vec<TitleMatch> = rows
                    .iter()
                    .filter_map(|r| TitleMatch::of(&cleaned, r.get(0), r.get(1), r.get(2)))
                    .collect();
                if !matches.is_empty() {
                    let mut with_tips = Vec::with_capacity(matches.len());
                    for m in matches {
                        with_tips.push((lineage::compression_tip(&**client, &m.id).await?, m));
                    }
                    return Ok(Some(choose_tip(&input, with_tips)?));
                }
            }
            if input.chars().count() < MIN_ID_PREFIX {
                return Ok(None);
            }
            let ids: Vec<String> = client
                .query(
                    "SELECT id FROM sessions WHERE left(id, $2) = $1 \
                     ORDER BY started_at DESC, id LIMIT 6",
                    &[&input, &(input.chars().count() as i32)],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            Ok(choose_prefix(&input, ids)?)
        })
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
        self.write_sessions(batch, true)
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
