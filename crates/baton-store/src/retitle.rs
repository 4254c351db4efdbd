//! Giving a session, or the compression chain it belongs to, a new title.
//!
//! A compression chain is one conversation whose sessions are titled along a numbered lineage
//! ("Refactor auth", "Refactor auth #2", ...), and a title names the chain: resolving the base
//! title finds its newest session. So a title is set on the whole chain at once (root gets the
//! base, each continuation the next number), and a base that another session or chain already
//! uses, plain or numbered, is refused: the two would read as one lineage and a title could no
//! longer name either.

use crate::error::{Result, StoreError};
use crate::lineage;
use crate::sqlite::SqliteStore;
use crate::title::{clean_title, escape_like, split_numbered};
use rusqlite::{Connection, OptionalExtension, params};

/// The session outside `chain` whose title belongs to the lineage of `title` (the same
/// title, its base, or a numbered title of that base), if any: `(title, session id)`.
pub fn lineage_conflict(
    conn: &Connection,
    title: &str,
    chain: &[String],
) -> Result<Option<(String, String)>> {
    let (base, _) = split_numbered(title);
    let mut stmt = conn.prepare_cached(
        "SELECT title, id FROM sessions WHERE (title = ?1 OR title = ?2 \
         OR title LIKE ?3 ESCAPE '\\') ORDER BY started_at, id",
    )?;
    let rows = stmt
        .query_map(
            params![title, base, format!("{} #%", escape_like(base))],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .find(|(t, id)| is_lineage_conflict(t, id, title, chain)))
}

/// Whether the stored title `t` of session `id` belongs to the lineage of `title` (the same
/// title, its base, or a numbered title of that base) while `id` is outside `chain`. Shared by
/// every store.
pub fn is_lineage_conflict(t: &str, id: &str, title: &str, chain: &[String]) -> bool {
    let (base, _) = split_numbered(title);
    let (t_base, t_number) = split_numbered(t);
    !chain.iter().any(|c| c == id)
        && (t == title || t == base || (t_number.is_some() && t_base.eq_ignore_ascii_case(base)))
}

/// The title a chain of `len` sessions takes from the cleaned title `t` (a numbered title on
/// a chain would number twice, "A #2 #2", so the chain takes its base), and each session's
/// title, root first: the base, then `base #2`, `base #3`, …
pub fn chain_titles(t: &str, len: usize) -> (String, Vec<Option<String>>) {
    let (base, number) = split_numbered(t);
    let base = if len > 1 && number.is_some() { base } else { t };
    let titles = (0..len)
        .map(|i| {
            Some(if i == 0 {
                base.to_string()
            } else {
                format!("{base} #{}", i + 1)
            })
        })
        .collect();
    (base.to_string(), titles)
}

/// Refuses `raw` as the title of a new session (or of the sessions `own`) when it is too long
/// or its lineage is taken by another session. Returns the cleaned title (`None` for a blank
/// one).
pub fn check_new_title(conn: &Connection, raw: &str, own: &[String]) -> Result<Option<String>> {
    let Some(cleaned) = clean_title(raw)? else {
        return Ok(None);
    };
    if let Some((title, other_id)) = lineage_conflict(conn, &cleaned, own)? {
        return Err(StoreError::TitleInUse { title, other_id });
    }
    Ok(Some(cleaned))
}

impl SqliteStore {
    /// Titles the compression chain containing `id`: its root `raw` (cleaned), each
    /// continuation numbered after it; a blank `raw` clears them. All or nothing. Returns each
    /// session of the chain, root first, with its new title.
    pub fn retitle_chain(&self, id: &str, raw: &str) -> Result<Vec<(String, Option<String>)>> {
        let cleaned = clean_title(raw)?;
        self.write(|tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |r| r.get(0))
                .optional()?;
            if exists.is_none() {
                return Err(StoreError::NotFound { id: id.to_string() });
            }
            let chain = lineage::compression_chain(tx, id)?;
            let titles: Vec<Option<String>> = match &cleaned {
                None => vec![None; chain.len()],
                Some(t) => {
                    let (base, titles) = chain_titles(t, chain.len());
                    if let Some((title, other_id)) = lineage_conflict(tx, &base, &chain)? {
                        return Err(StoreError::TitleInUse { title, other_id });
                    }
                    titles
                }
            };
            let mut clear = tx.prepare_cached("UPDATE sessions SET title = NULL WHERE id = ?1")?;
            for sid in &chain {
                clear.execute([sid])?;
            }
            let mut set = tx.prepare_cached("UPDATE sessions SET title = ?1 WHERE id = ?2")?;
            for (sid, t) in chain.iter().zip(&titles) {
                set.execute(params![t, sid])?;
            }
            Ok(chain.iter().cloned().zip(titles).collect())
        })
    }
}
