//! Usage statistics over a time window: what `baton sessions stats` (the reference's
//! `/insights`) reports. Every figure is aggregated in SQL; Rust only merges model names that
//! differ by provider prefix and the two tool-count sources.
//!
//! A session belongs to the window when it *started* inside it (`started_at >= now - days`),
//! and all of its messages, tokens and cost count with it. Compression children are sessions
//! of their own here, as in the reference: their tokens are real API usage.

use crate::error::Result;
use crate::session;
use baton_core::pricing::PriceTable;
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many tools [`UsageStats::top_tools`] keeps.
pub const TOP_TOOLS: usize = 15;

/// Windows up to this many days get one [`DayStats`] row per day from the window's first day;
/// longer windows start their daily series at the first session instead.
pub const DENSE_SERIES_MAX_DAYS: u32 = 366;

const SECS_PER_DAY: f64 = 86_400.0;

/// The window to compute statistics over.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsQuery {
    /// Sessions started in the last `days` days.
    pub days: u32,
    /// Only sessions of this source (`cli`, `api_server`, ...).
    pub source: Option<String>,
    /// The end of the window, Unix seconds (the current time unless a test pins it).
    pub now: f64,
}

impl StatsQuery {
    /// The last `days` days, every source, ending now.
    pub fn last_days(days: u32) -> Self {
        StatsQuery {
            days,
            source: None,
            now: session::now(),
        }
    }

    /// Start of the window, Unix seconds.
    pub fn since(&self) -> f64 {
        self.now - f64::from(self.days) * SECS_PER_DAY
    }
}

/// Everything `stats` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageStats {
    pub days: u32,
    pub source: Option<String>,
    /// Window start and end, Unix seconds.
    pub since: f64,
    pub until: f64,
    pub overview: Overview,
    /// Sorted by total tokens, then sessions, descending.
    pub by_model: Vec<ModelStats>,
    /// Sorted by sessions, then total tokens, descending.
    pub by_source: Vec<SourceStats>,
    /// One row per UTC day, oldest first, days without sessions included as zeros.
    pub by_day: Vec<DayStats>,
    /// The [`TOP_TOOLS`] most used tools, most used first.
    pub top_tools: Vec<ToolCount>,
    /// Size of the database's main file (page count × page size).
    pub db_size_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    pub sessions: u64,
    /// Sum of the sessions' message counters.
    pub messages: u64,
    /// Sum of the sessions' tool-call counters.
    pub tool_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Reasoning tokens are part of the output tokens; reported, not added to the total.
    pub reasoning_tokens: u64,
    /// Input + output + cache read + cache write, as the reference counts it.
    pub total_tokens: u64,
    /// Sum of the known costs: a session's actual cost, else its stored estimate, else its
    /// tokens priced by the price table. `None` when no session's cost is known.
    pub cost_usd: Option<f64>,
    /// Sessions whose cost is not known (no stored cost, and no price or no usage).
    pub sessions_unknown_cost: u64,
    /// Why, when some cost is unknown: each reason with its session count.
    pub cost_unknown_reason: Option<String>,
    /// Wall-clock time of ended sessions (those with `ended_at > started_at`), in hours.
    pub total_hours: f64,
    /// Average duration of those ended sessions, in seconds; `None` when none ended.
    pub avg_duration_secs: Option<f64>,
    /// Stored message rows by role.
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_messages: u64,
    /// Start time of the first and last session in the window, Unix seconds.
    pub first_started_at: Option<f64>,
    pub last_started_at: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelStats {
    /// Model name without its provider prefix (`openai/gpt-4o` -> `gpt-4o`); `unknown` when
    /// the session recorded none.
    pub model: String,
    pub sessions: u64,
    pub total_tokens: u64,
    pub tool_calls: u64,
    /// `None` when no session's cost is known (see [`Overview::cost_usd`]).
    pub cost_usd: Option<f64>,
    pub sessions_unknown_cost: u64,
    pub cost_unknown_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceStats {
    pub source: String,
    pub sessions: u64,
    pub messages: u64,
    pub total_tokens: u64,
    /// `None` when no session's cost is known (see [`Overview::cost_usd`]).
    pub cost_usd: Option<f64>,
    pub sessions_unknown_cost: u64,
    pub cost_unknown_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayStats {
    /// `YYYY-MM-DD`, UTC, of the sessions' start.
    pub date: String,
    pub sessions: u64,
    pub messages: u64,
    pub total_tokens: u64,
    /// `None` when the day has sessions and none of their costs is known.
    pub cost_usd: Option<f64>,
    pub sessions_unknown_cost: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCount {
    pub tool: String,
    pub count: u64,
    /// Share of all counted tool uses, 0-100.
    pub percent: f64,
}

/// The sessions of the window: `?1` = since, `?2` = source or NULL.
const WINDOW: &str = "s.started_at >= ?1 AND (?2 IS NULL OR s.source = ?2)";

const TOTAL_TOKENS: &str = "COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0) \
     + COALESCE(s.cache_read_tokens, 0) + COALESCE(s.cache_write_tokens, 0)";

/// A session's stored cost; `NULL` when none is stored or the reference design stored its
/// placeholder (an estimate of 0 with `cost_status = 'unknown'`).
pub(crate) const KNOWN_COST: &str = "CASE WHEN s.cost_status = 'unknown' THEN NULL \
     ELSE COALESCE(s.actual_cost_usd, s.estimated_cost_usd) END";

/// Computes the statistics of `query`'s window, pricing sessions without a stored cost by
/// the built-in price table.
pub fn usage_stats(conn: &Connection, query: &StatsQuery) -> Result<UsageStats> {
    usage_stats_priced(conn, query, &PriceTable::builtin())
}

/// [`usage_stats`] with `prices` (the built-in table with `config.toml`'s overrides).
pub fn usage_stats_priced(
    conn: &Connection,
    query: &StatsQuery,
    prices: &PriceTable,
) -> Result<UsageStats> {
    let mut stats = stored_costs(conn, query)?;
    let unpriced = crate::stats_cost::unpriced(conn, query)?;
    crate::stats_cost::apply(&mut stats, unpriced, prices);
    Ok(stats)
}

/// The statistics with stored costs only; sessions without one are counted as unknown.
fn stored_costs(conn: &Connection, query: &StatsQuery) -> Result<UsageStats> {
    let overview = overview(conn, query)?;
    let series_start = series_start(query, &overview);
    Ok(UsageStats {
        days: query.days,
        source: query.source.clone(),
        since: query.since(),
        until: query.now,
        by_model: by_model(conn, query)?,
        by_source: by_source(conn, query)?,
        by_day: by_day(conn, query, series_start)?,
        top_tools: top_tools(conn, query)?,
        db_size_bytes: db_size(conn)?,
        overview,
    })
}

/// Where the daily series starts: the window's first day, or for windows longer than
/// [`DENSE_SERIES_MAX_DAYS`] the first session's. Shared by every store.
pub fn series_start(query: &StatsQuery, overview: &Overview) -> f64 {
    if query.days <= DENSE_SERIES_MAX_DAYS {
        query.since()
    } else {
        overview.first_started_at.unwrap_or(query.now)
    }
}

fn count(r: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, Option<i64>>(i)?.unwrap_or(0)).unwrap_or(0))
}

fn money(r: &Row<'_>, i: usize) -> rusqlite::Result<f64> {
    Ok(r.get::<_, Option<f64>>(i)?.unwrap_or(0.0))
}

/// A sum of stored costs; made `None` later when every session's cost stays unknown.
fn known_money(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<f64>> {
    Ok(Some(money(r, i)?))
}

fn overview(conn: &Connection, q: &StatsQuery) -> Result<Overview> {
    let sql = format!(
        "SELECT COUNT(*), SUM(COALESCE(s.message_count, 0)), SUM(COALESCE(s.tool_call_count, 0)), \
         SUM(COALESCE(s.input_tokens, 0)), SUM(COALESCE(s.output_tokens, 0)), \
         SUM(COALESCE(s.cache_read_tokens, 0)), SUM(COALESCE(s.cache_write_tokens, 0)), \
         SUM(COALESCE(s.reasoning_tokens, 0)), SUM({TOTAL_TOKENS}), \
         SUM({KNOWN_COST}), SUM({KNOWN_COST} IS NULL), \
         SUM(CASE WHEN s.ended_at > s.started_at THEN s.ended_at - s.started_at END), \
         AVG(CASE WHEN s.ended_at > s.started_at THEN s.ended_at - s.started_at END), \
         MIN(s.started_at), MAX(s.started_at) \
         FROM sessions s WHERE {WINDOW}"
    );
    let mut o = conn.query_row(&sql, params![q.since(), q.source], |r| {
        Ok(Overview {
            sessions: count(r, 0)?,
            messages: count(r, 1)?,
            tool_calls: count(r, 2)?,
            input_tokens: count(r, 3)?,
            output_tokens: count(r, 4)?,
            cache_read_tokens: count(r, 5)?,
            cache_write_tokens: count(r, 6)?,
            reasoning_tokens: count(r, 7)?,
            total_tokens: count(r, 8)?,
            cost_usd: known_money(r, 9)?,
            sessions_unknown_cost: count(r, 10)?,
            total_hours: money(r, 11)? / 3600.0,
            avg_duration_secs: r.get(12)?,
            first_started_at: r.get(13)?,
            last_started_at: r.get(14)?,
            ..Overview::default()
        })
    })?;
    let roles = format!(
        "SELECT m.role, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id \
         WHERE {WINDOW} AND m.role IN ('user', 'assistant', 'tool') GROUP BY m.role"
    );
    let mut stmt = conn.prepare(&roles)?;
    let rows = stmt.query_map(params![q.since(), q.source], |r| {
        Ok((r.get::<_, String>(0)?, count(r, 1)?))
    })?;
    for row in rows {
        match row? {
            (role, n) if role == "user" => o.user_messages = n,
            (role, n) if role == "assistant" => o.assistant_messages = n,
            (_, n) => o.tool_messages = n,
        }
    }
    Ok(o)
}

/// `openai/gpt-4o` -> `gpt-4o`; `openrouter/anthropic/claude` -> `claude`.
pub fn strip_provider_prefix(model: &str) -> &str {
    match model.rsplit('/').next() {
        Some(name) if !name.is_empty() => name,
        _ => model,
    }
}

fn by_model(conn: &Connection, q: &StatsQuery) -> Result<Vec<ModelStats>> {
    let sql = format!(
        "SELECT COALESCE(NULLIF(TRIM(s.model), ''), 'unknown'), COUNT(*), SUM({TOTAL_TOKENS}), \
         SUM(COALESCE(s.tool_call_count, 0)), SUM({KNOWN_COST}), SUM({KNOWN_COST} IS NULL) \
         FROM sessions s WHERE {WINDOW} GROUP BY 1"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![q.since(), q.source], |r| {
        Ok(ModelStats {
            model: r.get(0)?,
            sessions: count(r, 1)?,
            total_tokens: count(r, 2)?,
            tool_calls: count(r, 3)?,
            cost_usd: known_money(r, 4)?,
            sessions_unknown_cost: count(r, 5)?,
            cost_unknown_reason: None,
        })
    })?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(merge_models(rows))
}

/// Rows per raw model name merged by stripped name (`gpt-4o` and `openai/gpt-4o` are one
/// model), most tokens first. Shared by every store.
pub fn merge_models(rows: Vec<ModelStats>) -> Vec<ModelStats> {
    let mut merged: BTreeMap<String, ModelStats> = BTreeMap::new();
    for row in rows {
        let name = strip_provider_prefix(&row.model).to_string();
        let entry = merged.entry(name.clone()).or_insert(ModelStats {
            model: name,
            sessions: 0,
            total_tokens: 0,
            tool_calls: 0,
            cost_usd: Some(0.0),
            sessions_unknown_cost: 0,
            cost_unknown_reason: None,
        });
        entry.sessions += row.sessions;
        entry.total_tokens += row.total_tokens;
        entry.tool_calls += row.tool_calls;
        entry.cost_usd = Some(entry.cost_usd.unwrap_or(0.0) + row.cost_usd.unwrap_or(0.0));
        entry.sessions_unknown_cost += row.sessions_unknown_cost;
    }
    let mut out: Vec<ModelStats> = merged.into_values().collect();
    out.sort_by(|a, b| {
        (b.total_tokens, b.sessions)
            .cmp(&(a.total_tokens, a.sessions))
            .then_with(|| a.model.cmp(&b.model))
    });
    out
}

fn by_source(conn: &Connection, q: &StatsQuery) -> Result<Vec<SourceStats>> {
    let sql = format!(
        "SELECT s.source, COUNT(*), SUM(COALESCE(s.message_count, 0)), SUM({TOTAL_TOKENS}), \
         SUM({KNOWN_COST}), SUM({KNOWN_COST} IS NULL) FROM sessions s WHERE {WINDOW} \
         GROUP BY s.source ORDER BY 2 DESC, 4 DESC, 1"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(params![q.since(), q.source], |r| {
            Ok(SourceStats {
                source: r.get(0)?,
                sessions: count(r, 1)?,
                messages: count(r, 2)?,
                total_tokens: count(r, 3)?,
                cost_usd: known_money(r, 4)?,
                sessions_unknown_cost: count(r, 5)?,
                cost_unknown_reason: None,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Every UTC day from `series_start`'s day to the window end's day, with the sessions started
/// on it (zeros for quiet days).
fn by_day(conn: &Connection, q: &StatsQuery, series_start: f64) -> Result<Vec<DayStats>> {
    let sql = format!(
        "WITH RECURSIVE days(d) AS ( \
             SELECT date(?3, 'unixepoch') \
             UNION ALL SELECT date(d, '+1 day') FROM days WHERE d < date(?4, 'unixepoch') \
         ), \
         per_day AS ( \
             SELECT date(s.started_at, 'unixepoch') AS d, COUNT(*) AS n, \
                 SUM(COALESCE(s.message_count, 0)) AS msgs, SUM({TOTAL_TOKENS}) AS tokens, \
                 SUM({KNOWN_COST}) AS cost, SUM({KNOWN_COST} IS NULL) AS unknown \
             FROM sessions s WHERE {WINDOW} GROUP BY 1 \
         ) \
         SELECT days.d, p.n, p.msgs, p.tokens, p.cost, p.unknown FROM days \
         LEFT JOIN per_day p ON p.d = days.d ORDER BY days.d"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(params![q.since(), q.source, series_start, q.now], |r| {
            Ok(DayStats {
                date: r.get(0)?,
                sessions: count(r, 1)?,
                messages: count(r, 2)?,
                total_tokens: count(r, 3)?,
                cost_usd: known_money(r, 4)?,
                sessions_unknown_cost: count(r, 5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Tool uses counted two ways, as the reference does: tool-result rows (`role = 'tool'` with a
/// `tool_name`) and the function names of assistant `tool_calls`. A tool's count is the larger
/// of the two, so a call and its result are not counted twice, and a database that only has
/// one of the two still counts every use.
fn top_tools(conn: &Connection, q: &StatsQuery) -> Result<Vec<ToolCount>> {
    let results = format!(
        "SELECT m.tool_name, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id \
         WHERE {WINDOW} AND m.role = 'tool' AND m.tool_name IS NOT NULL AND m.tool_name != '' \
         GROUP BY m.tool_name"
    );
    let calls = format!(
        "SELECT name, COUNT(*) FROM ( \
             SELECT CASE WHEN j.type = 'object' \
                 THEN json_extract(j.value, '$.function.name') END AS name \
             FROM messages m JOIN sessions s ON s.id = m.session_id, \
             json_each(CASE WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array' \
                 THEN m.tool_calls ELSE '[]' END) j \
             WHERE {WINDOW} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL \
         ) WHERE typeof(name) = 'text' AND name != '' GROUP BY name"
    );
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for sql in [results, calls] {
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params![q.since(), q.source], |r| {
            Ok((r.get::<_, String>(0)?, count(r, 1)?))
        })?;
        for row in rows {
            let (tool, n) = row?;
            let c = counts.entry(tool).or_insert(0);
            *c = (*c).max(n);
        }
    }
    Ok(top_tools_of(counts))
}

/// The [`TOP_TOOLS`] most used tools of `counts` (tool → uses), with their share. Shared by
/// every store.
pub fn top_tools_of(counts: BTreeMap<String, u64>) -> Vec<ToolCount> {
    let total: u64 = counts.values().sum();
    let mut out: Vec<ToolCount> = counts
        .into_iter()
        .map(|(tool, count)| ToolCount {
            tool,
            count,
            percent: if total == 0 {
                0.0
            } else {
                count as f64 * 100.0 / total as f64
            },
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tool.cmp(&b.tool)));
    out.truncate(TOP_TOOLS);
    out
}

fn db_size(conn: &Connection) -> Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_prefixes_are_stripped() {
        assert_eq!(strip_provider_prefix("openai/gpt-4o"), "gpt-4o");
        assert_eq!(
            strip_provider_prefix("openrouter/anthropic/claude-sonnet-4"),
            "claude-sonnet-4"
        );
        assert_eq!(strip_provider_prefix("gpt-4o"), "gpt-4o");
        assert_eq!(strip_provider_prefix("odd/"), "odd/");
    }
}
