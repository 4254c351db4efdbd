//! Costs for sessions that stored none: their tokens priced by `baton-core`'s price table,
//! or counted as unknown with the reason.
//!
//! Imported sessions and sessions of agents that do not price their calls have tokens and a
//! model but no cost. The reference re-prices them from tokens; so does this pass. What it
//! cannot price (no model, a model without a price, cached tokens without a cache price, no
//! usage recorded at all) stays unknown: `stats` prints "unknown", never `$0.0000`, and
//! `--json` has `null` with the reason.

use crate::error::Result;
use crate::stats::{KNOWN_COST, StatsQuery, UsageStats, strip_provider_prefix};
use baton_core::pricing::PriceTable;
use baton_core::usage::CanonicalUsage;
use rusqlite::{Connection, params};
use std::collections::BTreeMap;

/// Sessions without a stored cost, grouped by what pricing and reporting need (every store
/// reads these groups with its own SQL and prices them here).
#[derive(Debug, Clone, PartialEq)]
pub struct Unpriced {
    /// The raw model name, `None` when the session recorded none.
    pub model: Option<String>,
    pub source: String,
    /// `YYYY-MM-DD` of the sessions' start (UTC).
    pub day: String,
    pub usage: CanonicalUsage,
    pub sessions: u64,
}

pub(crate) fn unpriced(conn: &Connection, q: &StatsQuery) -> Result<Vec<Unpriced>> {
    let sql = format!(
        "SELECT NULLIF(TRIM(s.model), ''), s.source, date(s.started_at, 'unixepoch'), \
         SUM(COALESCE(s.input_tokens, 0)), SUM(COALESCE(s.output_tokens, 0)), \
         SUM(COALESCE(s.cache_read_tokens, 0)), SUM(COALESCE(s.cache_write_tokens, 0)), \
         SUM(COALESCE(s.reasoning_tokens, 0)), COUNT(*) \
         FROM sessions s \
         WHERE s.started_at >= ?1 AND (?2 IS NULL OR s.source = ?2) AND ({KNOWN_COST}) IS NULL \
         GROUP BY 1, 2, 3"
    );
    let n = |r: &rusqlite::Row<'_>, i| -> rusqlite::Result<u64> {
        Ok(u64::try_from(r.get::<_, Option<i64>>(i)?.unwrap_or(0)).unwrap_or(0))
    };
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(params![q.since(), q.source], |r| {
            Ok(Unpriced {
                model: r.get(0)?,
                source: r.get(1)?,
                day: r.get(2)?,
                usage: CanonicalUsage {
                    input: n(r, 3)?,
                    output: n(r, 4)?,
                    cache_read: n(r, 5)?,
                    cache_write: n(r, 6)?,
                    reasoning: n(r, 7)?,
                },
                sessions: n(r, 8)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Why some sessions' cost is unknown: reason → sessions.
#[derive(Debug, Default)]
struct Reasons(BTreeMap<String, u64>);

impl Reasons {
    fn add(&mut self, reason: &str, sessions: u64) {
        *self.0.entry(reason.to_string()).or_insert(0) += sessions;
    }

    /// `3 sessions: no price for model `x` (…); 1 session: no model recorded`, or `None`.
    fn summary(&self) -> Option<String> {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(reason, n)| {
                format!(
                    "{} session{}: {reason}",
                    baton_core::truncate::group_digits(*n),
                    if *n == 1 { "" } else { "s" }
                )
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Prices `rows` with `prices` into `stats`: a priced group's cost is added where it belongs
/// and its sessions stop counting as unknown; the rest keep their reason. Totals whose every
/// session stays unknown become `None`.
pub fn apply(stats: &mut UsageStats, rows: Vec<Unpriced>, prices: &PriceTable) {
    let mut overall = Reasons::default();
    let mut by_model: BTreeMap<String, Reasons> = BTreeMap::new();
    let mut by_source: BTreeMap<String, Reasons> = BTreeMap::new();
    for row in rows {
        let model_key =
            strip_provider_prefix(row.model.as_deref().unwrap_or("unknown")).to_string();
        let priced = if row.usage.is_zero() && row.model.is_some() {
            Err("no token usage recorded".to_string())
        } else {
            prices
                .cost(row.model.as_deref(), &row.usage)
                .map_err(|e| e.to_string())
        };
        match priced {
            Ok(cost) => {
                let o = &mut stats.overview;
                add_known(
                    &mut o.cost_usd,
                    &mut o.sessions_unknown_cost,
                    cost.usd,
                    row.sessions,
                );
                if let Some(m) = stats.by_model.iter_mut().find(|m| m.model == model_key) {
                    add_known(
                        &mut m.cost_usd,
                        &mut m.sessions_unknown_cost,
                        cost.usd,
                        row.sessions,
                    );
                }
                if let Some(s) = stats.by_source.iter_mut().find(|s| s.source == row.source) {
                    add_known(
                        &mut s.cost_usd,
                        &mut s.sessions_unknown_cost,
                        cost.usd,
                        row.sessions,
                    );
                }
                if let Some(d) = stats.by_day.iter_mut().find(|d| d.date == row.day) {
                    add_known(
                        &mut d.cost_usd,
                        &mut d.sessions_unknown_cost,
                        cost.usd,
                        row.sessions,
                    );
                }
            }
            Err(reason) => {
                overall.add(&reason, row.sessions);
                by_model
                    .entry(model_key)
                    .or_default()
                    .add(&reason, row.sessions);
                by_source
                    .entry(row.source)
                    .or_default()
                    .add(&reason, row.sessions);
            }
        }
    }
    let o = &mut stats.overview;
    finish(&mut o.cost_usd, o.sessions_unknown_cost, o.sessions);
    o.cost_unknown_reason = overall.summary();
    for m in &mut stats.by_model {
        finish(&mut m.cost_usd, m.sessions_unknown_cost, m.sessions);
        m.cost_unknown_reason = by_model.get(&m.model).and_then(Reasons::summary);
    }
    for s in &mut stats.by_source {
        finish(&mut s.cost_usd, s.sessions_unknown_cost, s.sessions);
        s.cost_unknown_reason = by_source.get(&s.source).and_then(Reasons::summary);
    }
    for d in &mut stats.by_day {
        finish(&mut d.cost_usd, d.sessions_unknown_cost, d.sessions);
    }
}

fn add_known(cost: &mut Option<f64>, unknown: &mut u64, usd: f64, sessions: u64) {
    *cost = Some(cost.unwrap_or(0.0) + usd);
    *unknown = unknown.saturating_sub(sessions);
}

/// No known cost at all is `None`, not a zero sum.
fn finish(cost: &mut Option<f64>, unknown: u64, sessions: u64) {
    if sessions > 0 && unknown >= sessions {
        *cost = None;
    }
}
