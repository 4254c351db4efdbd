//! Finding the session a user means: by id, or by title the way resume does it.
//!
//! A compressed conversation is a chain of sessions whose titles are numbered ("Refactor auth",
//! "Refactor auth #2", "Refactor auth #3"). Naming any of those titles, or just the base title,
//! means the conversation, so it resolves to the chain's tip: the session that is still going.

use crate::error::{Result, StoreError};
use crate::lineage;
use crate::title::{self, escape_like, split_numbered};
use rusqlite::{Connection, params};
use std::collections::BTreeMap;

/// Shortest id prefix accepted when nothing matched exactly.
pub const MIN_ID_PREFIX: usize = 4;

/// A session matched by title, before lineage is applied.
pub struct TitleMatch {
    pub id: String,
    pub title: String,
    pub number: Option<u64>,
    pub started_at: f64,
}

impl TitleMatch {
    /// `found` as a match for `title`: the title itself, or `title #N` (the base compared
    /// without regard to ASCII case, like the reference's `LIKE`); `None` otherwise.
    pub fn of(title: &str, id: String, found: String, started_at: f64) -> Option<TitleMatch> {
        let number = if found == title {
            None
        } else {
            match split_numbered(&found) {
                (base, Some(n)) if base.eq_ignore_ascii_case(title) => Some(n),
                _ => return None,
            }
        };
        Some(TitleMatch {
            id,
            title: found,
            number,
            started_at,
        })
    }
}

/// The id `input` names, in this order:
/// 1. a session whose id is exactly `input`;
/// 2. sessions titled `input` (after cleaning) or numbered along it (`input #N`), each taken
///    to the tip of its compression chain. All of them lying on one chain gives that tip;
///    several chains is [`StoreError::Ambiguous`];
/// 3. a unique id prefix of at least [`MIN_ID_PREFIX`] characters (several: ambiguous).
///
/// `Ok(None)` when nothing matches.
pub fn resolve_session(conn: &Connection, input: &str) -> Result<Option<String>> {
    let exact: bool = conn
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")?
        .query_row([input], |r| r.get(0))?;
    if exact {
        return Ok(Some(input.to_string()));
    }
    if let Ok(Some(cleaned)) = title::clean_title(input) {
        let matches = title_matches(conn, &cleaned)?;
        if !matches.is_empty() {
            return by_lineage(conn, input, matches).map(Some);
        }
    }
    by_id_prefix(conn, input)
}

/// Sessions titled exactly `title`, or `title #N` (the base compared without regard to ASCII
/// case, like the reference's `LIKE`).
fn title_matches(conn: &Connection, title: &str) -> Result<Vec<TitleMatch>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, started_at FROM sessions \
         WHERE title = ?1 OR title LIKE ?2 ESCAPE '\\'",
    )?;
    let rows = stmt
        .query_map(params![title, format!("{} #%", escape_like(title))], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, found, started_at)| TitleMatch::of(title, id, found, started_at))
        .collect())
}

/// Groups title matches by the tip of their compression chain; one group is the answer.
fn by_lineage(conn: &Connection, input: &str, matches: Vec<TitleMatch>) -> Result<String> {
    let mut with_tips = Vec::with_capacity(matches.len());
    for m in matches {
        with_tips.push((lineage::compression_tip(conn, &m.id)?, m));
    }
    choose_tip(input, with_tips)
}

/// The one chain tip the title matches lead to; several tips is [`StoreError::Ambiguous`],
/// naming each (newest first) by the newest-numbered title that leads to it.
pub fn choose_tip(input: &str, with_tips: Vec<(String, TitleMatch)>) -> Result<String> {
    // tip -> the newest-numbered match leading to it (for naming candidates).
    let mut tips: BTreeMap<String, TitleMatch> = BTreeMap::new();
    for (tip, m) in with_tips {
        let newer = |old: &TitleMatch| {
            (m.number.unwrap_or(1), m.started_at) > (old.number.unwrap_or(1), old.started_at)
        };
        match tips.get(&tip) {
            Some(old) if !newer(old) => {}
            _ => {
                tips.insert(tip, m);
            }
        }
    }
    if tips.len() == 1
        && let Some(tip) = tips.keys().next()
    {
        return Ok(tip.clone());
    }
    let mut candidates: Vec<(f64, String)> = tips
        .into_iter()
        .map(|(tip, m)| {
            let shown = if tip == m.id {
                format!("{tip} ({:?})", m.title)
            } else {
                format!("{tip} ({:?} continues as this session)", m.title)
            };
            (m.started_at, shown)
        })
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Err(StoreError::Ambiguous {
        input: input.to_string(),
        candidates: candidates.into_iter().map(|(_, c)| c).collect(),
    })
}

/// The session a unique id prefix names (`ids`: up to six sessions whose id starts with
/// `input`, newest first).
pub fn choose_prefix(input: &str, ids: Vec<String>) -> Result<Option<String>> {
    match ids.len() {
        0 => Ok(None),
        1 => Ok(ids.into_iter().next()),
        _ => Err(StoreError::Ambiguous {
            input: input.to_string(),
            candidates: ids,
        }),
    }
}

fn by_id_prefix(conn: &Connection, input: &str) -> Result<Option<String>> {
    if input.chars().count() < MIN_ID_PREFIX {
        return Ok(None);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM sessions WHERE substr(id, 1, ?2) = ?1 \
         ORDER BY started_at DESC, id LIMIT 6",
    )?;
    let ids = stmt
        .query_map(params![input, input.chars().count() as i64], |r| {
            r.get::<_, String>(0)
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    choose_prefix(input, ids)
}
