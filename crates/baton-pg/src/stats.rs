//! `sessions stats` on PostgreSQL: the SQLite store's figures ([`baton_store::stats`]) with
//! the same window, grouping and pricing, aggregated in PostgreSQL's SQL. Merging model names,
//! ranking tools, the daily series' start and pricing sessions without a stored cost are
//! `baton-store`'s shared code; only the reading is here.

use crate::store::PgStore;
use baton_core::pricing::PriceTable;
use baton_core::usage::CanonicalUsage;
use baton_store::stats::{merge_models, series_start, top_tools_of};
use baton_store::stats_cost::{Unpriced, apply};
use baton_store::{DayStats, ModelStats, Overview, Result, SourceStats, StatsQuery, UsageStats};
use std::collections::BTreeMap;
use tokio_postgres::{GenericClient, Row};

type PgResult<T> = std::result::Result<T, tokio_postgres::Error>;

/// Sessions started in the window, of the source when one is given (`$1`, `$2`).
const WINDOW: &str = "s.started_at >= $1 AND ($2::text IS NULL OR s.source = $2)";
const TOTAL_TOKENS: &str = "(s.input_tokens + s.output_tokens + s.cache_read_tokens \
     + s.cache_write_tokens)";
/// The store keeps one cost column; `NULL` is unknown.
const KNOWN_COST: &str = "s.estimated_cost_usd";
/// `YYYY-MM-DD` (UTC) of a Unix time.
fn utc_day(expr: &str) -> String {
    format!("to_char(to_timestamp({expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
}

fn n(r: &Row, i: usize) -> u64 {
    let v: Option<i64> = r.get(i);
    u64::try_from(v.unwrap_or(0)).unwrap_or(0)
}

fn money(r: &Row, i: usize) -> f64 {
    r.get::<_, Option<f64>>(i).unwrap_or(0.0)
}

async fn overview(c: &impl GenericClient, q: &StatsQuery) -> PgResult<Overview> {
    let sql = format!(
        "SELECT COUNT(*), SUM(s.message_count)::int8, SUM(s.tool_call_count)::int8, \
         SUM(s.input_tokens)::int8, SUM(s.output_tokens)::int8, SUM(s.cache_read_tokens)::int8, \
         SUM(s.cache_write_tokens)::int8, SUM(s.reasoning_tokens)::int8, \
         SUM({TOTAL_TOKENS})::int8, SUM({KNOWN_COST}), \
         COUNT(*) FILTER (WHERE {KNOWN_COST} IS NULL), \
         SUM(s.ended_at - s.started_at) FILTER (WHERE s.ended_at > s.started_at), \
         AVG(s.ended_at - s.started_at) FILTER (WHERE s.ended_at > s.started_at), \
         MIN(s.started_at), MAX(s.started_at) FROM sessions s WHERE {WINDOW}"
    );
    let r = c.query_one(sql.as_str(), &[&q.since(), &q.source]).await?;
    let mut o = Overview {
        sessions: n(&r, 0),
        messages: n(&r, 1),
        tool_calls: n(&r, 2),
        input_tokens: n(&r, 3),
        output_tokens: n(&r, 4),
        cache_read_tokens: n(&r, 5),
        cache_write_tokens: n(&r, 6),
        reasoning_tokens: n(&r, 7),
        total_tokens: n(&r, 8),
        cost_usd: Some(money(&r, 9)),
        sessions_unknown_cost: n(&r, 10),
        total_hours: money(&r, 11) / 3600.0,
        avg_duration_secs: r.get(12),
        first_started_at: r.get(13),
        last_started_at: r.get(14),
        ..Overview::default()
    };
    let roles = format!(
        "SELECT m.role, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id \
         WHERE {WINDOW} AND m.role IN ('user', 'assistant', 'tool') GROUP BY m.role"
    );
    for r in c.query(roles.as_str(), &[&q.since(), &q.source]).await? {
        let role: String = r.get(0);
        match role.as_str() {
            "user" => o.user_messages = n(&r, 1),
            "assistant" => o.assistant_messages = n(&r, 1),
            _ => o.tool_messages = n(&r, 1),
        }
    }
    Ok(o)
}

async fn by_model(c: &impl GenericClient, q: &StatsQuery) -> PgResult<Vec<ModelStats>> {
    let sql = format!(
        "SELECT COALESCE(NULLIF(TRIM(s.model), ''), 'unknown'), COUNT(*), \
         SUM({TOTAL_TOKENS})::int8, SUM(s.tool_call_count)::int8, SUM({KNOWN_COST}), \
         COUNT(*) FILTER (WHERE {KNOWN_COST} IS NULL) FROM sessions s WHERE {WINDOW} GROUP BY 1"
    );
    let rows = c.query(sql.as_str(), &[&q.since(), &q.source]).await?;
    Ok(merge_models(
        rows.iter()
            .map(|r| ModelStats {
                model: r.get(0),
                sessions: n(r, 1),
                total_tokens: n(r, 2),
                tool_calls: n(r, 3),
                cost_usd: Some(money(r, 4)),
                sessions_unknown_cost: n(r, 5),
                cost_unknown_reason: None,
            })
            .collect(),
    ))
}

async fn by_source(c: &impl GenericClient, q: &StatsQuery) -> PgResult<Vec<SourceStats>> {
    let sql = format!(
        "SELECT s.source, COUNT(*), SUM(s.message_count)::int8, SUM({TOTAL_TOKENS})::int8, \
         SUM({KNOWN_COST}), COUNT(*) FILTER (WHERE {KNOWN_COST} IS NULL) \
         FROM sessions s WHERE {WINDOW} GROUP BY s.source ORDER BY 2 DESC, 4 DESC, 1"
    );
    let rows = c.query(sql.as_str(), &[&q.since(), &q.source]).await?;
    Ok(rows
        .iter()
        .map(|r| SourceStats {
            source: r.get(0),
            sessions: n(r, 1),
            messages: n(r, 2),
            total_tokens: n(r, 3),
            cost_usd: Some(money(r, 4)),
            sessions_unknown_cost: n(r, 5),
            cost_unknown_reason: None,
        })
        .collect())
}

/// Every UTC day from `start`'s to the window end's, quiet days included.
async fn by_day(c: &impl GenericClient, q: &StatsQuery, start: f64) -> PgResult<Vec<DayStats>> {
    let day = utc_day("s.started_at");
    let sql = format!(
        "WITH days AS ( \
             SELECT to_char(d, 'YYYY-MM-DD') AS d FROM generate_series( \
                 (to_timestamp($3) AT TIME ZONE 'UTC')::date, \
                 (to_timestamp($4) AT TIME ZONE 'UTC')::date, interval '1 day') AS d \
         ), per_day AS ( \
             SELECT {day} AS d, COUNT(*) AS n, SUM(s.message_count)::int8 AS msgs, \
                 SUM({TOTAL_TOKENS})::int8 AS tokens, SUM({KNOWN_COST}) AS cost, \
                 COUNT(*) FILTER (WHERE {KNOWN_COST} IS NULL) AS unknown \
             FROM sessions s WHERE {WINDOW} GROUP BY 1 \
         ) \
         SELECT days.d, p.n, p.msgs, p.tokens, p.cost, p.unknown FROM days \
         LEFT JOIN per_day p ON p.d = days.d ORDER BY days.d"
    );
    let rows = c
        .query(sql.as_str(), &[&q.since(), &q.source, &start, &q.now])
        .await?;
    Ok(rows
        .iter()
        .map(|r| DayStats {
            date: r.get(0),
            sessions: n(r, 1),
            messages: n(r, 2),
            total_tokens: n(r, 3),
            cost_usd: Some(money(r, 4)),
            sessions_unknown_cost: n(r, 5),
        })
        .collect())
}

/// Tool uses counted as the SQLite store counts them: tool-result rows and the function
/// names of assistant `tool_calls`, the larger of the two per tool.
async fn top_tools(
    c: &impl GenericClient,
    q: &StatsQuery,
) -> PgResult<Vec<baton_store::ToolCount>> {
    let results = format!(
        "SELECT m.tool_name, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id \
         WHERE {WINDOW} AND m.role = 'tool' AND m.tool_name IS NOT NULL AND m.tool_name <> '' \
         GROUP BY m.tool_name"
    );
    // The store writes `tool_calls` as a JSON array (the codec's encoding); anything else is
    // skipped rather than cast.
    let calls = format!(
        "SELECT f.value->'function'->>'name', COUNT(*) FROM messages m \
         JOIN sessions s ON s.id = m.session_id, \
         LATERAL jsonb_array_elements(m.tool_calls::jsonb) AS f(value) \
         WHERE {WINDOW} AND m.role = 'assistant' AND m.tool_calls LIKE '[%' \
         AND jsonb_typeof(f.value) = 'object' \
         AND COALESCE(f.value->'function'->>'name', '') <> '' GROUP BY 1"
    );
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for sql in [results, calls] {
        for r in c.query(sql.as_str(), &[&q.since(), &q.source]).await? {
            let e = counts.entry(r.get(0)).or_insert(0);
            *e = (*e).max(n(&r, 1));
        }
    }
    Ok(top_tools_of(counts))
}

async fn unpriced(c: &impl GenericClient, q: &StatsQuery) -> PgResult<Vec<Unpriced>> {
    let day = utc_day("s.started_at");
    let sql = format!(
        "SELECT NULLIF(TRIM(s.model), ''), s.source, {day}, SUM(s.input_tokens)::int8, \
         SUM(s.output_tokens)::int8, SUM(s.cache_read_tokens)::int8, \
         SUM(s.cache_write_tokens)::int8, SUM(s.reasoning_tokens)::int8, COUNT(*) \
         FROM sessions s WHERE {WINDOW} AND {KNOWN_COST} IS NULL GROUP BY 1, 2, 3"
    );
    let rows = c.query(sql.as_str(), &[&q.since(), &q.source]).await?;
    Ok(rows
        .iter()
        .map(|r| Unpriced {
            model: r.get(0),
            source: r.get(1),
            day: r.get(2),
            usage: CanonicalUsage {
                input: n(r, 3),
                output: n(r, 4),
                cache_read: n(r, 5),
                cache_write: n(r, 6),
                reasoning: n(r, 7),
            },
            sessions: n(r, 8),
        })
        .collect())
}

/// Bytes of the store's tables with their TOAST and indexes.
async fn db_size(c: &impl GenericClient) -> PgResult<u64> {
    let r = c
        .query_one(
            "SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0)::int8 \
             FROM unnest(ARRAY['sessions', 'messages', 'state_meta', 'baton_schema']) AS t",
            &[],
        )
        .await?;
    Ok(n(&r, 0))
}

impl PgStore {
    /// [`baton_store::SessionStore::stats`].
    pub(crate) fn usage_stats(
        &self,
        query: &StatsQuery,
        prices: &PriceTable,
    ) -> Result<UsageStats> {
        let q = query.clone();
        let prices = prices.clone();
        self.read(move |client| async move {
            let c = &**client;
            let overview = overview(c, &q).await?;
            let start = series_start(&q, &overview);
            let mut stats = UsageStats {
                days: q.days,
                source: q.source.clone(),
                since: q.since(),
                until: q.now,
                by_model: by_model(c, &q).await?,
                by_source: by_source(c, &q).await?,
                by_day: by_day(c, &q, start).await?,
                top_tools: top_tools(c, &q).await?,
                db_size_bytes: db_size(c).await?,
                overview,
            };
            apply(&mut stats, unpriced(c, &q).await?, &prices);
            Ok(stats)
        })
    }
}
