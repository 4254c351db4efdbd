//! Search on PostgreSQL with the SQLite store's semantics: the same query sanitizing
//! ([`baton_store::query`]), the same routing of each term to the index that can answer it,
//! and the same combination, ranking and snippets ([`baton_store::search_core`]). Only how a
//! term's candidates are found differs:
//!
//! - a word or phrase without CJK: `words @@ 'a' <-> 'b'` (GIN), ranked by `ts_rank` with
//!   length normalisation, plus the bigram column for identifiers glued to CJK text;
//! - a CJK term: `cjk @@` its bigram phrase (weight `A`) or its single character (`B`), GIN;
//! - a quoted phrase mixing CJK and Latin words across spaces, which neither index holds as
//!   one phrase: the candidates every part matches (each part through its index), verified
//!   against the text. Never a table scan.
//!
//! Like the SQLite search, each positive term fetches at most the newest
//! [`TERM_CANDIDATE_CAP`] matches, so a query's cost stays flat as history grows.

use crate::error::pg;
use crate::store::{PgStore, TxError};
use crate::tsvector::{cjk_query, glued_word_query, words_query};
use baton_store::cjk_index::match_plan;
use baton_store::query::{self, Route, Term};
use baton_store::search::{TERM_CANDIDATE_CAP, check_length};
use baton_store::search_core::{
    GroupHits, Row, TermHits, Via, find_match, normalise_into, rank, window_hit_snippet,
};
use baton_store::{SearchError, SearchHit, SearchQuery, StoreError};
use std::collections::{HashMap, HashSet};
use tokio_postgres::types::ToSql;

/// Score weight of a word found only through the bigram column (as in the SQLite search).
const SUPPLEMENT_WEIGHT: f64 = 0.6;
/// Candidates verified for a mixed CJK/Latin phrase.
const VERIFY_CAP: i64 = 500;

type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// The SQL filter clauses of a query, numbered from `first`.
fn filters(q: &SearchQuery, first: usize, params: &mut Params) -> String {
    let mut sql = String::new();
    let mut n = first;
    let mut list =
        |col: &str, not: bool, vals: &[String], params: &mut Params, sql: &mut String| {
            if vals.is_empty() {
                return;
            }
            let op = if not { "<> ALL" } else { "= ANY" };
            sql.push_str(&format!(" AND {col} {op}(${n})"));
            params.push(Box::new(vals.to_vec()));
            n += 1;
        };
    list("m.role", false, &q.roles, params, &mut sql);
    list("s.source", false, &q.sources, params, &mut sql);
    list("m.session_id", false, &q.session_ids, params, &mut sql);
    list(
        "m.session_id",
        true,
        &q.exclude_session_ids,
        params,
        &mut sql,
    );
    if let Some(t) = q.since {
        sql.push_str(&format!(" AND m.timestamp >= ${n}"));
        params.push(Box::new(t));
        n += 1;
    }
    if let Some(t) = q.until {
        sql.push_str(&format!(" AND m.timestamp <= ${n}"));
        params.push(Box::new(t));
    }
    sql
}

struct PgSearch<'a> {
    client: &'a deadpool_postgres::Object,
    q: &'a SearchQuery,
}

impl PgSearch<'_> {
    /// `(id, ts_rank)` of messages whose `column` matches `tsquery`, newest first, at most
    /// `cap` (`-1`: all).
    async fn indexed(
        &self,
        column: &str,
        tsquery: &str,
        cap: i64,
    ) -> Result<Vec<(i64, f64)>, tokio_postgres::Error> {
        let mut params: Params = vec![Box::new(tsquery.to_string())];
        let filter_sql = filters(self.q, 2, &mut params);
        let limit = if cap < 0 {
            String::new()
        } else {
            format!(" LIMIT {cap}")
        };
        let sql = format!(
            "SELECT m.id, ts_rank(m.{column}, $1::text::tsquery, 1)::float8 FROM messages m \
             JOIN sessions s ON s.id = m.session_id \
             WHERE m.{column} @@ $1::text::tsquery{filter_sql} ORDER BY m.id DESC{limit}"
        );
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| &**p as _).collect();
        let rows = self.client.query(sql.as_str(), &refs).await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Every message matching one term, scored in (0, 1].
    async fn term_hits(&self, term: &Term, cap: i64) -> Result<TermHits, tokio_postgres::Error> {
        let mut hits = TermHits::new();
        match term.route() {
            Route::Word => {
                if let Some(q) = words_query(term) {
                    let raw = self.indexed("words", &q, cap).await?;
                    normalise_into(&mut hits, raw, 1.0, Via::Fts);
                }
                if term.text.chars().count() >= 3
                    && let Some(q) = glued_word_query(term)
                {
                    let raw = self.indexed("cjk", &q, cap).await?;
                    normalise_into(&mut hits, raw, SUPPLEMENT_WEIGHT, Via::Window);
                }
            }
            Route::Substring | Route::Short => {
                let raw = match match_plan(term).as_ref().and_then(cjk_query) {
                    Some(q) => self.indexed("cjk", &q, cap).await?,
                    None => self.verified_phrase(term, cap).await?,
                };
                normalise_into(&mut hits, raw, 1.0, Via::Window);
            }
        }
        Ok(hits)
    }

    /// A phrase neither index holds whole (CJK and Latin words across spaces): the messages
    /// every word of it matches, through the indexes, that contain the phrase.
    async fn verified_phrase(
        &self,
        term: &Term,
        cap: i64,
    ) -> Result<Vec<(i64, f64)>, tokio_postgres::Error> {
        let mut candidates: Option<HashSet<i64>> = None;
        for part in term.text.split_whitespace() {
            let sub = Term {
                text: part.to_string(),
                prefix: false,
                phrase: false,
            };
            let found: HashSet<i64> = Box::pin(self.term_hits(&sub, VERIFY_CAP))
                .await?
                .into_keys()
                .collect();
            candidates = Some(match candidates {
                None => found,
                Some(c) => c.intersection(&found).copied().collect(),
            });
        }
        let ids: Vec<i64> = candidates.unwrap_or_default().into_iter().collect();
        let rows = self.rows(&ids).await?;
        let mut out: Vec<(i64, f64)> = rows
            .into_iter()
            .filter(|(_, r)| find_match(&r.row.haystack(), &term.text, None).is_some())
            .map(|(id, _)| (id, 1.0))
            .collect();
        out.sort_by_key(|hit| std::cmp::Reverse(hit.0));
        if cap >= 0 {
            out.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
        }
        Ok(out)
    }

    /// The stored fields a hit shows, by id.
    async fn rows(&self, ids: &[i64]) -> Result<HashMap<i64, Stored>, tokio_postgres::Error> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = self
            .client
            .query(
                "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, \
                 COALESCE(m.content, ''), COALESCE(m.tool_name, ''), COALESCE(m.tool_calls, '') \
                 FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ANY($1)",
                &[&ids],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    Stored {
                        session_id: r.get(1),
                        role: r.get(2),
                        timestamp: r.get(3),
                        source: r.get(4),
                        row: Row {
                            content: r.get(5),
                            tool_name: r.get(6),
                            tool_calls: r.get(7),
                        },
                    },
                )
            })
            .collect())
    }

    async fn run(&self) -> Result<Vec<SearchHit>, tokio_postgres::Error> {
        let parsed = query::parse(&self.q.text);
        if parsed.is_empty() || self.q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut groups = Vec::with_capacity(parsed.groups.len());
        for group in &parsed.groups {
            let mut must = Vec::new();
            for t in &group.must {
                must.push((t.clone(), self.term_hits(t, TERM_CANDIDATE_CAP).await?));
            }
            let mut must_not = HashSet::new();
            for t in &group.must_not {
                must_not.extend(self.term_hits(t, -1).await?.into_keys());
            }
            groups.push(GroupHits { must, must_not });
        }
        let ranked = rank(&groups, self.q.offset, self.q.limit);
        let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        let mut rows = self.rows(&ids).await?;
        let mut out = Vec::with_capacity(ranked.len());
        for (id, score, gi) in ranked {
            let Some(stored) = rows.remove(&id) else {
                continue;
            };
            out.push(SearchHit {
                message_id: id,
                snippet: window_hit_snippet(id, &stored.row, &groups[gi].must),
                session_id: stored.session_id,
                role: stored.role,
                timestamp: stored.timestamp,
                source: stored.source,
                score,
            });
        }
        Ok(out)
    }
}

struct Stored {
    session_id: String,
    role: String,
    timestamp: f64,
    source: String,
    row: Row,
}

impl PgStore {
    /// Searches stored messages (see the module docs). A query with nothing searchable
    /// returns no hits.
    pub fn search_messages(&self, q: &SearchQuery) -> Result<Vec<SearchHit>, SearchError> {
        check_length(q)?;
        let query = q.clone();
        let text = q.text.clone();
        let name = self.name().to_string();
        self.read(move |client| async move {
            PgSearch {
                client: &client,
                q: &query,
            }
            .run()
            .await
            .map_err(|e| TxError::Store(pg(&name, e)))
        })
        .map_err(|e| SearchError::Backend {
            query: text,
            detail: match e {
                StoreError::Backend { detail, .. } => detail,
                other => other.to_string(),
            },
        })
    }
}
