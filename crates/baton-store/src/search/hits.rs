//! The page of results: each ranked message's row and its snippet.

use std::collections::HashMap;

use super::{SNIPPET_FTS_MAX_BYTES, SearchHit, Searcher};
use crate::query::Term;
use crate::search_core::{GroupHits, Ranked, Row, TermHits, Via, window_hit_snippet};

/// A ranked message's stored fields.
struct Fetched {
    session_id: String,
    role: String,
    timestamp: f64,
    source: String,
    row: Row,
}

impl Searcher<'_> {
    /// The ranked messages as hits, in rank order. FTS5 snippets are made for the whole page in
    /// one statement per distinct match expression (one for most queries): a statement per hit
    /// set the terms' index iterators up again for each, a tenth of a search process.
    pub(super) fn hits(
        &self,
        ranked: Vec<Ranked>,
        groups: &[GroupHits],
    ) -> rusqlite::Result<Vec<SearchHit>> {
        let mut page = Vec::with_capacity(ranked.len());
        for (id, score, gi) in ranked {
            page.push((id, score, gi, self.fetch(id)?));
        }
        let mut by_expression: HashMap<String, Vec<i64>> = HashMap::new();
        for (id, _, gi, fetched) in &page {
            if let Some(expression) = snippet_expression(*id, &fetched.row, &groups[*gi].must) {
                by_expression.entry(expression).or_default().push(*id);
            }
        }
        let mut snippets = HashMap::new();
        for (expression, ids) in &by_expression {
            snippets.extend(self.fts_snippets(expression, ids)?);
        }
        Ok(page
            .into_iter()
            .map(|(id, score, gi, f)| SearchHit {
                message_id: id,
                snippet: snippets
                    .remove(&id)
                    .unwrap_or_else(|| window_hit_snippet(id, &f.row, &groups[gi].must)),
                session_id: f.session_id,
                role: f.role,
                timestamp: f.timestamp,
                source: f.source,
                score,
            })
            .collect())
    }

    /// The stored fields of message `id`, which an index just named. The search reads one
    /// snapshot, so a message the index names and `messages` lacks is a damaged index, and it
    /// is reported as damage (naming the file) rather than as a bare "no rows".
    fn fetch(&self, id: i64) -> rusqlite::Result<Fetched> {
        self.conn
            .prepare_cached(
                "SELECT m.session_id, m.role, m.timestamp, s.source, COALESCE(m.content, ''), \
                 COALESCE(m.tool_name, ''), COALESCE(m.tool_calls, '') \
                 FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?",
            )?
            .query_row([id], |r| {
                Ok(Fetched {
                    session_id: r.get(0)?,
                    role: r.get(1)?,
                    timestamp: r.get(2)?,
                    source: r.get(3)?,
                    row: Row {
                        content: r.get(4)?,
                        tool_name: r.get(5)?,
                        tool_calls: r.get(6)?,
                    },
                })
            })
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                    Some(format!(
                        "the full-text index names message {id}, which is not stored with its session"
                    )),
                ),
                other => other,
            })
    }

    /// FTS5's snippet of each of `ids` that `expression` matches. The ids are read from the
    /// index between the smallest and the largest, and `+rowid` keeps the id list out of the
    /// index plan (as a constraint, each id would be its own index lookup again).
    fn fts_snippets(&self, expression: &str, ids: &[i64]) -> rusqlite::Result<Vec<(i64, String)>> {
        let (Some(&low), Some(&high)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok(Vec::new());
        };
        let list = serde_json::to_string(ids).unwrap_or_default();
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid, snippet(messages_fts, 0, '>>>', '<<<', '...', 24) FROM messages_fts \
             WHERE messages_fts MATCH ? AND rowid BETWEEN ? AND ? \
             AND +rowid IN (SELECT value FROM json_each(?))",
        )?;
        let rows = stmt.query_map(rusqlite::params![expression, low, high, list], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?.trim().to_string(),
            ))
        })?;
        rows.collect()
    }
}

/// The match expression FTS5 makes a message's snippet from: the terms the word index found it
/// by. `None` when the window snippet is used instead: a message with tool calls, one no term
/// found through the index, or one longer than [`SNIPPET_FTS_MAX_BYTES`].
fn snippet_expression(id: i64, row: &Row, terms: &[(Term, TermHits)]) -> Option<String> {
    if !row.tool_calls.is_empty() || row.content.len() > SNIPPET_FTS_MAX_BYTES {
        return None;
    }
    let fts_terms: Vec<String> = terms
        .iter()
        .filter(|(_, h)| h.get(&id).is_some_and(|x| x.via == Via::Fts))
        .map(|(t, _)| t.fts5())
        .collect();
    (!fts_terms.is_empty()).then(|| fts_terms.join(" OR "))
}
