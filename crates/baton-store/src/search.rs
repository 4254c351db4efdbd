//! Full-text search over `messages` using the two FTS5 tables of the
//! reference schema (`messages_fts` unicode61, `messages_fts_trigram`).
//!
//! Each sanitized term is answered by the index that can answer it
//! ([`Route`]): unicode61 + bm25 for words (plus a verified trigram
//! supplement so identifiers glued to CJK text are found), trigram for CJK
//! terms of >= 3 characters, the CJK unigram/bigram index
//! ([`crate::cjk_index`]) for 1-2 character CJK terms, and on a database without
//! that index (a reference `state.db` read as it is) a LIKE scan ranked by
//! occurrence count. Per-term scores are normalised to (0, 1] and
//! combined with the query's boolean structure (AND = intersection, OR =
//! union, NOT = difference), so mixed English + CJK queries keep AND
//! semantics. Ties are broken by recency.

use std::collections::HashSet;

use rusqlite::{Connection, params_from_iter, types::Value};
use serde::{Deserialize, Serialize};

use crate::query::{self, ParsedQuery, Route, Term};
use crate::search_core::{
    GroupHits, Row, TermHits, Via, find_match, normalise_into, rank, scan_scores,
};
pub use crate::search_core::{SNIPPET_CONTEXT_CHARS, TEXT_SCAN_BYTES};

mod hits;
mod words;

/// At most this many candidates are fetched per positive term: the newest matches, ranked by
/// bm25 among themselves. Scoring every match would cost time in proportion to how common a
/// term is across the whole history; the newest 2,000 keep a query's cost flat as history
/// grows, and recent context is what an agent searching its past usually needs.
pub const TERM_CANDIDATE_CAP: i64 = 2000;
/// Largest message content whose snippet FTS5's `snippet()` builds; beyond it the snippet is a
/// window over the first [`TEXT_SCAN_BYTES`] (`snippet()`'s cost grows with the square of the
/// number of matches in the message).
const SNIPPET_FTS_MAX_BYTES: usize = 8 * 1024;
/// Score weight of a word found only through the trigram supplement.
const SUPPLEMENT_WEIGHT: f64 = 0.6;
/// At most this many supplement candidates are verified. Each needs its text read, and the
/// supplement only catches identifiers glued to CJK text, so the best few hundred by bm25 are
/// plenty; without a cap a common word costs thousands of row reads at a million messages.
const SUPPLEMENT_CAP: i64 = 200;
/// Longest accepted query, in characters. Sanitizing and routing are per term, and each term
/// costs index lookups, so a pasted file as a query is refused with this limit named.
pub const MAX_QUERY_CHARS: usize = 1_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchQuery {
    pub text: String,
    /// Empty = any role.
    pub roles: Vec<String>,
    /// Session sources (`sessions.source`); empty = any.
    pub sources: Vec<String>,
    /// Only these sessions; empty = any.
    pub session_ids: Vec<String>,
    pub exclude_session_ids: Vec<String>,
    /// Inclusive lower bound on `messages.timestamp`.
    pub since: Option<f64>,
    /// Inclusive upper bound on `messages.timestamp`.
    pub until: Option<f64>,
    pub limit: usize,
    pub offset: usize,
}

impl Default for SearchQuery {
    fn default() -> Self {
        Self {
            text: String::new(),
            roles: Vec::new(),
            sources: Vec::new(),
            session_ids: Vec::new(),
            exclude_session_ids: Vec::new(),
            since: None,
            until: None,
            limit: 20,
            offset: 0,
        }
    }
}

impl SearchQuery {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub message_id: i64,
    pub session_id: String,
    pub role: String,
    pub timestamp: f64,
    pub source: String,
    /// Context around the match, the match marked `>>>` ... `<<<`.
    pub snippet: String,
    /// Higher is better; comparable within one result list only.
    pub score: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search for {query:?} failed: {source}")]
    Sqlite {
        query: String,
        #[source]
        source: rusqlite::Error,
    },
    /// A server-backed store's search failed (the store and what it said).
    #[error("search for {query:?} failed: {detail}")]
    Backend { query: String, detail: String },
    #[error(
        "search query is {chars} characters long; the limit is {max} characters \
         (search for a distinctive part of it instead)"
    )]
    QueryTooLong { chars: usize, max: usize },
}

/// Refuses a query over [`MAX_QUERY_CHARS`] (every backend applies the same limit).
pub fn check_length(q: &SearchQuery) -> Result<(), SearchError> {
    let chars = q.text.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(SearchError::QueryTooLong {
            chars,
            max: MAX_QUERY_CHARS,
        });
    }
    Ok(())
}

/// Search messages. A query with nothing searchable returns `Ok(vec![])`.
pub fn search(conn: &Connection, q: &SearchQuery) -> Result<Vec<SearchHit>, SearchError> {
    let wrap = |source| SearchError::Sqlite {
        query: q.text.clone(),
        source,
    };
    check_length(q)?;
    let parsed = query::parse(&q.text);
    if parsed.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    // One read transaction for every statement of the search: one snapshot, and the file
    // locks and change checks SQLite makes at the start of each implicit transaction are made
    // once instead of some thirty times. Inside a caller's transaction, that one is used.
    let snapshot = if conn.is_autocommit() {
        Some(conn.unchecked_transaction().map_err(wrap)?)
    } else {
        None
    };
    let indexes = Indexes::of(conn).map_err(wrap)?;
    let hits = Searcher {
        conn,
        q,
        cjk_index: indexes.cjk,
        trigram: indexes.trigram,
        cjk_queue: indexes.cjk_waiting,
        word_queue: indexes.words_waiting,
    }
    .run(&parsed)
    .map_err(wrap)?;
    if let Some(snapshot) = snapshot {
        // Nothing was written: ending the transaction only releases the snapshot.
        snapshot.rollback().map_err(wrap)?;
    }
    Ok(hits)
}

/// The indexes a database has, and whether messages wait for one, learnt in two statements
/// instead of one per question: each statement costs a parse and a plan, and a search process
/// runs only a dozen or so.
struct Indexes {
    cjk: bool,
    trigram: bool,
    cjk_waiting: bool,
    words_waiting: bool,
}

impl Indexes {
    fn of(conn: &Connection) -> rusqlite::Result<Indexes> {
        let cjk_queue = crate::cjk_index::PENDING_TABLE;
        let word_queue = crate::deferred_index::WORD_QUEUE;
        let mut tables = HashSet::new();
        let mut stmt = conn.prepare_cached(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?, ?, ?, ?)",
        )?;
        let names = stmt.query_map(
            [
                crate::cjk_index::CJK_TABLE,
                "messages_fts_trigram",
                cjk_queue,
                word_queue,
            ],
            |r| r.get::<_, String>(0),
        )?;
        for name in names {
            tables.insert(name?);
        }
        let cjk = tables.contains(crate::cjk_index::CJK_TABLE);
        // A queue's table can be missing (older schemas): only present ones are asked.
        let waiting = |table: &str| {
            if tables.contains(table) {
                format!("EXISTS(SELECT 1 FROM {table})")
            } else {
                "0".to_string()
            }
        };
        let (cjk_waiting, words_waiting) = conn.query_row(
            &format!("SELECT {}, {}", waiting(cjk_queue), waiting(word_queue)),
            [],
            |r| Ok((r.get::<_, bool>(0)?, r.get::<_, bool>(1)?)),
        )?;
        Ok(Indexes {
            cjk,
            trigram: tables.contains("messages_fts_trigram"),
            cjk_waiting: cjk && cjk_waiting,
            words_waiting,
        })
    }
}

struct Searcher<'a> {
    conn: &'a Connection,
    q: &'a SearchQuery,
    /// The database has the CJK unigram/bigram index (ours do; reference databases do not).
    cjk_index: bool,
    /// The database has the reference's trigram table (reference databases do; ours do not).
    trigram: bool,
    /// Rows wait for the CJK index (inserted by another program since our last write); on a
    /// read-only connection nobody indexes them, so they are scanned.
    cjk_queue: bool,
    /// Messages wait for the word index (a bulk import's rows before the catch-up reaches
    /// them); they are scanned, so results are complete while the index catches up.
    word_queue: bool,
}

/// Which rows a scan reads.
#[derive(Clone, Copy)]
enum ScanOf {
    /// Every message (a term no index answers).
    All,
    /// The messages the CJK index has not seen yet.
    CjkQueue,
    /// The messages the word index has not seen yet; a match must be a whole word (or a word
    /// prefix), as it would be for the index.
    WordQueue,
    /// The messages the CJK index has not seen yet, for a word glued to CJK text: a whole
    /// word too.
    CjkQueueWords,
}

impl Searcher<'_> {
    fn filters(&self, sql: &mut String, params: &mut Vec<Value>) {
        let q = self.q;
        let mut in_list = |col: &str, not: bool, vals: &[String]| {
            if vals.is_empty() {
                return;
            }
            let marks = vec!["?"; vals.len()].join(",");
            let neg = if not { "NOT " } else { "" };
            sql.push_str(&format!(" AND {col} {neg}IN ({marks})"));
            params.extend(vals.iter().map(|v| Value::Text(v.clone())));
        };
        in_list("m.role", false, &q.roles);
        in_list("s.source", false, &q.sources);
        in_list("m.session_id", false, &q.session_ids);
        in_list("m.session_id", true, &q.exclude_session_ids);
        if let Some(t) = q.since {
            sql.push_str(" AND m.timestamp >= ?");
            params.push(Value::Real(t));
        }
        if let Some(t) = q.until {
            sql.push_str(" AND m.timestamp <= ?");
            params.push(Value::Real(t));
        }
    }

    fn run(&self, parsed: &ParsedQuery) -> rusqlite::Result<Vec<SearchHit>> {
        let mut groups = Vec::with_capacity(parsed.groups.len());
        for group in &parsed.groups {
            let must = self.must_hits(&group.must)?;
            let mut must_not = HashSet::new();
            for t in &group.must_not {
                must_not.extend(self.term_hits(t, -1)?.into_keys());
            }
            groups.push(GroupHits { must, must_not });
        }
        self.hits(rank(&groups, self.q.offset, self.q.limit), &groups)
    }

    /// Every message matching one term, scored in (0, 1].
    fn term_hits(&self, term: &Term, cap: i64) -> rusqlite::Result<TermHits> {
        let mut hits = TermHits::new();
        match term.route() {
            Route::Word => {
                let raw = self.fts_scores("messages_fts", &term.fts5(), None, cap)?;
                normalise_into(&mut hits, raw, 1.0, Via::Fts);
                self.beyond_the_word_index(term, cap)?.add_to(&mut hits);
            }
            Route::Substring | Route::Short => {
                let raw = match self.cjk_index.then(|| crate::cjk_index::match_expr(term)) {
                    Some(Some(expr)) => {
                        let mut raw =
                            self.fts_scores(crate::cjk_index::CJK_TABLE, &expr, None, cap)?;
                        if self.cjk_queue {
                            raw.extend(self.scan(term, cap, ScanOf::CjkQueue)?);
                        }
                        raw
                    }
                    _ if term.route() == Route::Substring && self.trigram => {
                        let m = query::fts5_quote(&term.text);
                        self.fts_scores("messages_fts_trigram", &m, None, cap)?
                    }
                    _ => self.scan(term, cap, ScanOf::All)?,
                };
                normalise_into(&mut hits, raw, 1.0, Via::Window);
            }
        }
        Ok(hits)
    }

    /// `(id, -bm25)` for a MATCH on one FTS table, optionally excluding the
    /// rows matched by `exclude_u61` on the unicode61 table.
    fn fts_scores(
        &self,
        table: &str,
        matcher: &str,
        exclude_u61: Option<&str>,
        cap: i64,
    ) -> rusqlite::Result<Vec<(i64, f64)>> {
        Ok(self
            .fts_rows(table, matcher, exclude_u61, cap, false)?
            .into_iter()
            .map(|(id, s, _)| (id, s))
            .collect())
    }

    /// Whether any filter needs columns of `messages` or `sessions`.
    fn has_filters(&self) -> bool {
        let q = self.q;
        !q.roles.is_empty()
            || !q.sources.is_empty()
            || !q.session_ids.is_empty()
            || !q.exclude_session_ids.is_empty()
            || q.since.is_some()
            || q.until.is_some()
    }

    /// The newest `cap` matches of `matcher` with their bm25 scores.
    ///
    /// Rows come in rowid order, newest first, so FTS5 stops after `cap` and scores only those:
    /// the cost of a term stays flat however often it occurs in the whole history, where
    /// `ORDER BY rank` would score every match. `messages` is joined only when a filter or the
    /// text needs it, since each joined row costs a B-tree lookup into a wide table.
    fn fts_rows(
        &self,
        table: &str,
        matcher: &str,
        exclude_u61: Option<&str>,
        cap: i64,
        with_text: bool,
    ) -> rusqlite::Result<Vec<(i64, f64, Option<Row>)>> {
        let mut sql = if with_text || self.has_filters() {
            let text_cols = if with_text {
                "COALESCE(m.content, ''), COALESCE(m.tool_name, ''), COALESCE(m.tool_calls, '')"
            } else {
                "NULL, NULL, NULL"
            };
            let sessions = if self.q.sources.is_empty() {
                ""
            } else {
                " JOIN sessions s ON s.id = m.session_id"
            };
            format!(
                "SELECT {table}.rowid, -bm25({table}), {text_cols} \
                 FROM {table} JOIN messages m ON m.id = {table}.rowid{sessions} \
                 WHERE {table} MATCH ?"
            )
        } else {
            format!(
                "SELECT {table}.rowid, -bm25({table}), NULL, NULL, NULL \
                 FROM {table} WHERE {table} MATCH ?"
            )
        };
        let mut params = vec![Value::Text(matcher.to_string())];
        if let Some(ex) = exclude_u61 {
            sql.push_str(&format!(
                " AND {table}.rowid NOT IN \
                 (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)"
            ));
            params.push(Value::Text(ex.to_string()));
        }
        self.filters(&mut sql, &mut params);
        // The limit is written into the statement, not bound: FTS5 reads a bound limit's value
        // when planning, so binding it made SQLite prepare every FTS statement twice (a tenth
        // of a search process). The caps are a few constants, so the statements still cache.
        sql.push_str(&format!(" ORDER BY {table}.rowid DESC LIMIT {cap}"));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(params), |r| {
            let row = if with_text {
                Some(Row {
                    content: r.get(2)?,
                    tool_name: r.get(3)?,
                    tool_calls: r.get(4)?,
                })
            } else {
                None
            };
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?, row))
        })?;
        rows.collect()
    }

    /// Matches of a word that unicode61 cannot see because it is glued to CJK text
    /// (`配置config_path文件`).
    ///
    /// With the CJK index these are its Latin tokens (the index keeps the Latin runs that touch
    /// CJK text), one small lookup. Without it (a reference database), trigram substring matches
    /// that unicode61 missed, kept only when the occurrence is bounded (not inside a longer
    /// Latin word); that needs each candidate's text, hence the small cap.
    fn supplement(&self, term: &Term, cap: i64) -> rusqlite::Result<Vec<(i64, f64)>> {
        if self.cjk_index {
            let expr = crate::cjk_index::glued_word_expr(term);
            let mut raw = self.fts_scores(crate::cjk_index::CJK_TABLE, &expr, None, cap)?;
            if self.cjk_queue {
                raw.extend(self.scan(term, cap, ScanOf::CjkQueueWords)?);
            }
            return Ok(raw);
        }
        if !self.trigram {
            return Ok(Vec::new());
        }
        let m = query::fts5_quote(&term.text);
        let rows = self.fts_rows("messages_fts_trigram", &m, Some(&term.fts5()), cap, true)?;
        Ok(rows
            .into_iter()
            .filter(|(_, _, row)| {
                row.as_ref().is_some_and(|row| {
                    find_match(&row.haystack(), &term.text, Some(term.prefix)).is_some()
                })
            })
            .map(|(id, s, _)| (id, s))
            .collect())
    }

    /// LIKE scan for terms no index holds (1-2 character CJK terms on a reference database,
    /// rows an index has not seen yet), scored by saturated, length-normalised occurrence
    /// count (BM25-style tf).
    fn scan(&self, term: &Term, cap: i64, of: ScanOf) -> rusqlite::Result<Vec<(i64, f64)>> {
        let pat = format!("%{}%", crate::title::escape_like(&term.text));
        let mut sql = String::from(
            "SELECT m.id, COALESCE(m.content, ''), COALESCE(m.tool_name, ''), \
             COALESCE(m.tool_calls, '') FROM messages m JOIN sessions s ON s.id = m.session_id \
             WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' \
             OR m.tool_calls LIKE ? ESCAPE '\\')",
        );
        match of {
            ScanOf::All => {}
            ScanOf::CjkQueue | ScanOf::CjkQueueWords => {
                sql.push_str(" AND m.id IN (SELECT id FROM messages_cjk_pending)")
            }
            ScanOf::WordQueue => sql.push_str(" AND m.id IN (SELECT id FROM messages_fts_pending)"),
        }
        let mut params = vec![Value::Text(pat); 3];
        self.filters(&mut sql, &mut params);
        sql.push_str(" ORDER BY m.timestamp DESC, m.id DESC LIMIT ?");
        params.push(Value::Integer(cap));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(params), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Row {
                    content: r.get(1)?,
                    tool_name: r.get(2)?,
                    tool_calls: r.get(3)?,
                },
            ))
        })?;
        let mut scanned = Vec::new();
        for r in rows {
            let (id, row) = r?;
            let hay = row.haystack();
            if matches!(of, ScanOf::WordQueue | ScanOf::CjkQueueWords)
                && find_match(&hay, &term.text, Some(term.prefix)).is_none()
            {
                continue;
            }
            scanned.push((id, hay));
        }
        Ok(scan_scores(&scanned, &term.text))
    }
}
