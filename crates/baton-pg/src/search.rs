//! Search on PostgreSQL with the SQLite store's semantics: the same query sanitizing
//! ([`baton_store::query`]), the same routing of each term to the index that can answer it,
//! and the same combination, ranking and snippets ([`baton_store::search_core`]). Only how a
//! term's candidates are found differs:
//!
//! - a word or phrase without CJK: `words @@ 'a b' & 'b c'` (its adjacent pairs, GIN), scored
//!   by the message's length ([`length_score`]), plus the bigram column for identifiers glued
//!   to CJK text;
//! - a CJK term: `cjk @@` the pairs of its bigrams, or its bigram or single character, GIN;
//! - a quoted phrase mixing CJK and Latin words across spaces, which neither index holds as
//!   one phrase: the candidates every part matches (each part through its index), verified
//!   against the text. Never a table scan.
//!
//! Like the SQLite search, each positive term fetches a bounded number of its newest matches
//! ([`PG_TERM_CANDIDATE_CAP`]), so a query's cost stays flat as history grows. A phrase of
//! three or more tokens is matched by its pairs, so the final hits are checked for the whole
//! sequence ([`crate::tsvector`] explains why the vectors hold pairs, not positions).

use crate::deferred_index::WAITING;
use crate::error::pg;
use crate::messages::haystack_of;
use crate::search_window::{FIRST_WINDOW, next_window, window_by_range};
use crate::store::{PgStore, TxError};
use crate::tsvector::{
    bigram_tokens, cjk_query, glued_word_query, holds_sequence, tokens, words_query,
};
use baton_store::cjk_index::match_plan;
use baton_store::query::{self, Route, Term};
use baton_store::search::check_length;
use baton_store::search_core::{
    GroupHits, Row, TermHits, Via, find_match, normalise_into, rank, scan_scores,
    window_hit_snippet,
};
use baton_store::title::escape_like;
use baton_store::{SearchError, SearchHit, SearchQuery, StoreError};
use std::collections::{HashMap, HashSet};
use tokio_postgres::types::ToSql;

/// Score weight of a word found only through the bigram column (as in the SQLite search).
const SUPPLEMENT_WEIGHT: f64 = 0.6;
/// Newest matches a positive term is ranked among: half the SQLite store's
/// [`baton_store::search::TERM_CANDIDATE_CAP`]. SQLite reads a candidate's id and rank from
/// its index; PostgreSQL visits the candidate's row for both (~5 µs each, most of an English
/// search at a million messages).
pub const PG_TERM_CANDIDATE_CAP: i64 = 1_000;

/// Candidates verified for a mixed CJK/Latin phrase.
const VERIFY_CAP: i64 = 500;

/// A match's score from its message's token count: `ts_rank`'s length normalisation
/// (`1 / (1 + ln len)`) with every matched term counted once. Term frequency would need each
/// candidate's vector read back from TOAST, which cost more than the rest of a search.
fn length_score(len: i32) -> f64 {
    1.0 / (1.0 + f64::from(len.max(1)).ln())
}

type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// The SQL filter clauses of a query, their parameters numbered from `first`.
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
    client: &'a deadpool_postgres::Transaction<'a>,
    q: &'a SearchQuery,
    /// The newest message id when the search started (the windows' upper end).
    newest: i64,
    /// Messages wait for the indexes ([`crate::deferred_index`]): they are read directly,
    /// so results are complete while the indexes catch up.
    waiting: bool,
}

impl PgSearch<'_> {
    /// `(id, score)` of the newest messages whose `column` matches `tsquery`, at most `cap`
    /// (`-1`: all, for negated terms). Through the GIN index, newest first, in windows of ids
    /// going back from the newest ([`next_window`]): a common term is answered from the newest
    /// rows without visiting the heap pages of every match in history. The vectors hold no
    /// positions, so the index answers exactly and no stored vector is read back; the score is
    /// [`length_score`] of the row's `search_len`.
    ///
    /// The order is `id + 0`, not `id`: ordered by the key itself, the planner walks the
    /// primary key backwards testing every row's vector (read from TOAST) against the query,
    /// which took 370 ms for a phrase with a few thousand matches; by an expression it takes
    /// the GIN bitmap and sorts what matched.
    async fn indexed(
        &self,
        column: &'static str,
        tsquery: &str,
        cap: i64,
    ) -> Result<Vec<(i64, f64)>, tokio_postgres::Error> {
        let condition = Condition::default().and_any(&[(column, tsquery.to_string())]);
        self.matching(&condition, cap).await
    }

    /// [`Self::indexed`] for any [`Condition`] over the search columns.
    async fn matching(
        &self,
        condition: &Condition,
        cap: i64,
    ) -> Result<Vec<(i64, f64)>, tokio_postgres::Error> {
        let sessions = if self.q.sources.is_empty() {
            ""
        } else {
            " JOIN sessions s ON s.id = m.session_id"
        };
        // `$1`, `$2`: the window; then the tsqueries; then the filters; then the limit.
        let (where_sql, queries) = condition.sql(3);
        let mut params: Params = queries
            .into_iter()
            .map(|q| Box::new(q) as Box<dyn ToSql + Sync + Send>)
            .collect();
        let filter_sql = filters(self.q, params.len() + 3, &mut params);
        let limit_param = params.len() + 3;
        // The window's bounds on `id` (the primary key's range) or on `id + 0` (a filter on
        // the rows the term's bitmap names): see [`window_by_range`].
        let sql_with = |id: &str| {
            format!(
                "SELECT m.id, m.search_len FROM messages m{sessions} \
                 WHERE {where_sql} AND {id} > $1 AND {id} <= $2{filter_sql} \
                 ORDER BY m.id + 0 DESC LIMIT ${limit_param}"
            )
        };
        let (by_range, by_filter) = (sql_with("m.id"), sql_with("m.id + 0"));
        let mut hits = Vec::new();
        let mut hi = self.newest;
        let mut window = FIRST_WINDOW;
        loop {
            let lo = hi.saturating_sub(window).max(0);
            let covered = self.newest - hi;
            let sql = if window_by_range(hi - lo, hi, covered, hits.len() as i64) {
                &by_range
            } else {
                &by_filter
            };
            let need = if cap < 0 {
                i64::MAX
            } else {
                cap - hits.len() as i64
            };
            let mut all: Vec<&(dyn ToSql + Sync)> = vec![&lo, &hi];
            all.extend(params.iter().map(|p| &**p as &(dyn ToSql + Sync)));
            all.push(&need);
            let rows = self.client.query(sql.as_str(), &all).await?;
            hits.extend(
                rows.iter()
                    .map(|r| (r.get::<_, i64>(0), length_score(r.get::<_, i32>(1)))),
            );
            if lo <= 0 || (cap >= 0 && hits.len() as i64 >= cap) {
                return Ok(hits);
            }
            window = next_window(self.newest - lo, hits.len() as i64, cap - hits.len() as i64);
            hi = lo;
        }
    }

    /// Every message matching one term, scored in (0, 1].
    async fn term_hits(&self, term: &Term, cap: i64) -> Result<TermHits, tokio_postgres::Error> {
        let mut hits = TermHits::new();
        match term.route() {
            Route::Word => {
                // The word index and the glued-identifier supplement, concurrently (one
                // connection pipelines both).
                let words = async {
                    match words_query(term) {
                        Some(q) => self.indexed("words", &q, cap).await,
                        None => Ok(Vec::new()),
                    }
                };
                let glued = async {
                    match glued_word_query(term).filter(|_| term.text.chars().count() >= 3) {
                        Some(q) => self.indexed("cjk", &q, cap).await,
                        None => Ok(Vec::new()),
                    }
                };
                let (words, glued) = futures_util::future::try_join(words, glued).await?;
                normalise_into(&mut hits, words, 1.0, Via::Fts);
                normalise_into(&mut hits, glued, SUPPLEMENT_WEIGHT, Via::Window);
                if self.waiting {
                    let waiting = self.waiting_matches(term, cap, true).await?;
                    normalise_into(&mut hits, waiting, 1.0, Via::Window);
                }
            }
            Route::Substring | Route::Short => {
                let raw = match match_plan(term).as_ref().and_then(cjk_query) {
                    Some(q) => {
                        let mut raw = self.indexed("cjk", &q, cap).await?;
                        if self.waiting {
                            raw.extend(self.waiting_matches(term, cap, false).await?);
                        }
                        raw
                    }
                    None => self.verified_phrase(term, cap).await?,
                };
                normalise_into(&mut hits, raw, 1.0, Via::Window);
            }
        }
        Ok(hits)
    }

    /// Messages waiting for the indexes that hold `term`, newest first, at most `cap` (`-1`:
    /// all), scored as the SQLite store scores a scan. `whole_word`: the match must be a whole
    /// word or word prefix, as it is for the word index; otherwise a substring, as for the
    /// CJK index. The server narrows the rows by `ILIKE` (the partial index of waiting rows
    /// bounds what it reads), the text decides.
    async fn waiting_matches(
        &self,
        term: &Term,
        cap: i64,
        whole_word: bool,
    ) -> Result<Vec<(i64, f64)>, tokio_postgres::Error> {
        let sessions = if self.q.sources.is_empty() {
            ""
        } else {
            " JOIN sessions s ON s.id = m.session_id"
        };
        let mut params: Params = vec![Box::new(format!("%{}%", escape_like(&term.text)))];
        let filter_sql = filters(self.q, 2, &mut params);
        let limit_param = params.len() + 1;
        let sql = format!(
            "SELECT m.id, COALESCE(m.content, ''), COALESCE(m.tool_name, ''), \
             COALESCE(m.tool_calls, '') FROM messages m{sessions} \
             WHERE m.{WAITING} AND (m.content ILIKE $1 OR m.tool_name ILIKE $1 \
             OR m.tool_calls ILIKE $1){filter_sql} ORDER BY m.id DESC LIMIT ${limit_param}"
        );
        let limit: Option<i64> = (cap >= 0).then_some(cap);
        let mut all: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        all.push(&limit);
        let rows = self.client.query(sql.as_str(), &all).await?;
        let scanned: Vec<(i64, String)> = rows
            .iter()
            .map(|r| {
                let row = Row {
                    content: r.get(1),
                    tool_name: r.get(2),
                    tool_calls: r.get(3),
                };
                (r.get::<_, i64>(0), row.haystack())
            })
            .filter(|(_, hay)| {
                !whole_word || find_match(hay, &term.text, Some(term.prefix)).is_some()
            })
            .collect();
        Ok(scan_scores(&scanned, &term.text))
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
            let must = match conjunction(&group.must) {
                // Every term through the indexes: the group's matches in one statement, so
                // the newest candidates are those holding every term (ranking is by length,
                // the same for each term of a message).
                // (Waiting messages are matched term by term, so not while any wait.)
                Some(condition) if group.must.len() > 1 && !self.waiting => {
                    let found = self.matching(&condition, PG_TERM_CANDIDATE_CAP).await?;
                    let mut hits = TermHits::new();
                    normalise_into(&mut hits, found, 1.0, Via::Fts);
                    group
                        .must
                        .iter()
                        .map(|t| (t.clone(), hits.clone()))
                        .collect()
                }
                _ => {
                    let mut must = Vec::new();
                    for t in &group.must {
                        must.push((t.clone(), self.term_hits(t, PG_TERM_CANDIDATE_CAP).await?));
                    }
                    must
                }
            };
            let mut must_not = HashSet::new();
            for t in &group.must_not {
                must_not.extend(self.term_hits(t, -1).await?.into_keys());
            }
            groups.push(GroupHits { must, must_not });
        }
        // Long phrases are matched by their pairs; over-fetch a little for the hits whose
        // pairs turn out to be apart.
        let long_phrases = groups
            .iter()
            .any(|g| g.must.iter().any(|(t, _)| needs_sequence_check(t)));
        let slack = if long_phrases { SEQUENCE_SLACK } else { 0 };
        let ranked = rank(&groups, self.q.offset, self.q.limit + slack);
        let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        let mut rows = self.rows(&ids).await?;
        let mut out = Vec::with_capacity(ranked.len());
        for (id, score, gi) in ranked {
            if out.len() == self.q.limit {
                break;
            }
            let Some(stored) = rows.remove(&id) else {
                continue;
            };
            if long_phrases && !holds_long_phrases(&stored.row, &groups[gi].must) {
                continue;
            }
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

/// A boolean condition over the search columns: a conjunction of disjunctions, each
/// disjunct a column matching a tsquery.
#[derive(Debug, Default, Clone)]
struct Condition {
    all: Vec<Vec<(&'static str, String)>>,
}

impl Condition {
    /// The condition and also one of `any`.
    fn and_any(mut self, any: &[(&'static str, String)]) -> Self {
        self.all.push(any.to_vec());
        self
    }

    /// The SQL, its tsqueries numbered from `$first`, and those tsqueries in order.
    fn sql(&self, first: usize) -> (String, Vec<String>) {
        let mut queries = Vec::new();
        let clauses: Vec<String> = self
            .all
            .iter()
            .map(|any| {
                let parts: Vec<String> = any
                    .iter()
                    .map(|(column, q)| {
                        queries.push(q.clone());
                        format!(
                            "m.{column} @@ ${}::text::tsquery",
                            first + queries.len() - 1
                        )
                    })
                    .collect();
                format!("({})", parts.join(" OR "))
            })
            .collect();
        (clauses.join(" AND "), queries)
    }
}

/// The condition for messages holding every term of `must`, when each term is answered by
/// the indexes alone (a word through `words` or glued to CJK text, a CJK term through
/// `cjk`); `None` when one needs checking against the text.
fn conjunction(must: &[Term]) -> Option<Condition> {
    let mut condition = Condition::default();
    for term in must {
        let any: Vec<(&'static str, String)> = match term.route() {
            Route::Word => {
                let mut any = vec![("words", words_query(term)?)];
                if let Some(q) = glued_word_query(term).filter(|_| term.text.chars().count() >= 3) {
                    any.push(("cjk", q));
                }
                any
            }
            Route::Substring | Route::Short => {
                vec![("cjk", match_plan(term).as_ref().and_then(cjk_query)?)]
            }
        };
        condition = condition.and_any(&any);
    }
    Some(condition)
}

/// Hits ranked beyond the limit when a long phrase's hits are checked.
const SEQUENCE_SLACK: usize = 10;

/// The tokens a term's pair conjunction stands for, and whether the last is a prefix, when
/// there are three or more (two tokens are one pair, matched exactly). `bigrams`: the tokens
/// are the bigram column's, not words.
fn long_sequence(term: &Term) -> Option<(Vec<String>, bool, bool)> {
    let (want, prefix, bigrams) = match term.route() {
        Route::Word => (tokens(&term.text), term.prefix, false),
        Route::Substring | Route::Short => {
            let plan = match_plan(term)?;
            (tokens(&plan.phrase), plan.prefix, true)
        }
    };
    (want.len() >= 3).then_some((want, prefix, bigrams))
}

fn needs_sequence_check(term: &Term) -> bool {
    long_sequence(term).is_some()
}

/// Whether the message holds each long phrase of `must` in a row, not only its pairs. The
/// whole stored text is checked, as the index holds all of it.
fn holds_long_phrases(row: &Row, must: &[(Term, TermHits)]) -> bool {
    let text = haystack_of(
        Some(&row.content),
        Some(&row.tool_name),
        Some(&row.tool_calls),
    );
    // Each tokenization of the text is made at most once per hit, whatever the terms.
    let words = std::cell::OnceCell::new();
    let bigram_stream = std::cell::OnceCell::new();
    must.iter().all(|(term, _)| {
        let Some((want, prefix, bigrams)) = long_sequence(term) else {
            return true;
        };
        // The term written out in the text holds its tokens in a row: the common case,
        // answered without tokenizing a message that may be a long tool output.
        if bigrams && text.contains(term.text.as_str()) {
            return true;
        }
        let in_words = || holds_sequence(words.get_or_init(|| tokens(&text)), &want, prefix);
        let in_bigrams = || {
            holds_sequence(
                bigram_stream.get_or_init(|| bigram_tokens(&text)),
                &want,
                prefix,
            )
        };
        (!bigrams && in_words()) || in_bigrams()
    })
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
        self.read(move |mut client| async move {
            // Read-only, and with plain index scans off for the candidate statements: given an id range
            // and a common term, the planner prefers walking the primary key and testing each
            // row's vector (read back from TOAST; 75 ms for 20,000 rows) over intersecting the
            // GIN bitmap with the range (15 ms), because it does not know what the test costs.
            let tx = client.transaction().await?;
            let state = tx
                .query_one(
                    &format!(
                        "SELECT COALESCE(MAX(id), 0), \
                         EXISTS(SELECT 1 FROM messages WHERE {WAITING}) FROM messages"
                    ),
                    &[],
                )
                .await?;
            let (newest, waiting): (i64, bool) = (state.get(0), state.get(1));
            tx.batch_execute("SET TRANSACTION READ ONLY; SET LOCAL enable_indexscan = off")
                .await?;
            PgSearch {
                client: &tx,
                q: &query,
                newest,
                waiting,
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
