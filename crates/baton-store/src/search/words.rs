//! A group's words, fetched together from the word index, and what the index cannot hold
//! (messages waiting for it, words glued to CJK text).

use std::collections::HashSet;

use super::{SUPPLEMENT_CAP, SUPPLEMENT_WEIGHT, ScanOf, Searcher, TERM_CANDIDATE_CAP};
use crate::query::{Route, Term};
use crate::search_core::{TermHits, Via, normalise_into};

/// A word's raw scores from outside the word index.
pub(super) struct BeyondIndex {
    /// Messages waiting for the word index.
    waiting: Vec<(i64, f64)>,
    /// Messages where the word is glued to CJK text.
    glued: Vec<(i64, f64)>,
}

impl BeyondIndex {
    pub(super) fn add_to(self, hits: &mut TermHits) {
        normalise_into(hits, self.waiting, 1.0, Via::Window);
        normalise_into(hits, self.glued, SUPPLEMENT_WEIGHT, Via::Window);
    }
}

impl Searcher<'_> {
    /// The hits of a group's positive terms.
    ///
    /// Two or more words are fetched together, as one FTS5 `AND`: the candidates are then the
    /// newest messages holding every word, ranked by the conjunction's bm25. Fetched word by
    /// word, each word's newest [`TERM_CANDIDATE_CAP`] would be intersected afterwards, and a
    /// common word's newest matches can leave out every message that also holds the rarer one
    /// (`cargo test` found 9 of the 48 messages holding both at 207k messages), at twice the
    /// scoring cost.
    pub(super) fn must_hits(&self, must: &[Term]) -> rusqlite::Result<Vec<(Term, TermHits)>> {
        let words: Vec<&Term> = must.iter().filter(|t| t.route() == Route::Word).collect();
        if words.len() < 2 {
            return must
                .iter()
                .map(|t| Ok((t.clone(), self.term_hits(t, TERM_CANDIDATE_CAP)?)))
                .collect();
        }
        let mut word_hits = self.joint_word_hits(&words)?.into_iter();
        let mut out = Vec::with_capacity(must.len());
        for t in must {
            let hits = match t.route() {
                Route::Word => word_hits.next().unwrap_or_default(),
                _ => self.term_hits(t, TERM_CANDIDATE_CAP)?,
            };
            out.push((t.clone(), hits));
        }
        Ok(out)
    }

    /// Each of `words`' hits, fetched together: the newest messages holding every word as an
    /// index token, plus each word's matches from outside the index.
    fn joint_word_hits(&self, words: &[&Term]) -> rusqlite::Result<Vec<TermHits>> {
        let every_word = words
            .iter()
            .map(|t| t.fts5())
            .collect::<Vec<_>>()
            .join(" AND ");
        let joint = self.fts_scores("messages_fts", &every_word, None, TERM_CANDIDATE_CAP)?;
        let beyond = words
            .iter()
            .map(|t| self.beyond_the_word_index(t, TERM_CANDIDATE_CAP))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        // A message can hold one word as a token and another only glued to CJK text, which
        // the joint fetch cannot see: a message another word's supplement found is looked up
        // in this word's index, and ranks as the weakest joint match. A full joint fetch ends
        // at its oldest id, and older messages are past the cap anyway.
        let in_joint: HashSet<i64> = joint.iter().map(|(id, _)| *id).collect();
        let window_start = if joint.len() as i64 >= TERM_CANDIDATE_CAP {
            joint.iter().map(|(id, _)| *id).min().unwrap_or(i64::MIN)
        } else {
            i64::MIN
        };
        let glued: Vec<HashSet<i64>> = beyond
            .iter()
            .map(|b| {
                b.glued
                    .iter()
                    .map(|(id, _)| *id)
                    .filter(|id| *id > window_start && !in_joint.contains(id))
                    .collect()
            })
            .collect();
        let weakest = joint.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        let weakest = if weakest.is_finite() { weakest } else { 1.0 };
        let mut word_hits = Vec::with_capacity(words.len());
        for (i, (t, beyond)) in words.iter().zip(beyond).enumerate() {
            let found_by_others: HashSet<i64> = glued
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, ids)| ids.iter().copied())
                .filter(|id| !glued[i].contains(id))
                .collect();
            let mut raw = joint.clone();
            let held = self.word_index_holds(t, &found_by_others)?;
            raw.extend(held.into_iter().map(|id| (id, weakest)));
            let mut hits = TermHits::new();
            normalise_into(&mut hits, raw, 1.0, Via::Fts);
            beyond.add_to(&mut hits);
            word_hits.push(hits);
        }
        Ok(word_hits)
    }

    /// The messages among `ids` whose word index holds `term`: the word's index matches
    /// between the smallest and the largest id, without bm25 (which would count the word's
    /// document frequency over its whole posting list first). One lookup per id costs more:
    /// each opens every index segment again.
    fn word_index_holds(&self, term: &Term, ids: &HashSet<i64>) -> rusqlite::Result<Vec<i64>> {
        let (Some(&low), Some(&high)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid BETWEEN ? AND ?",
        )?;
        let rows = stmt.query_map(rusqlite::params![term.fts5(), low, high], |r| {
            r.get::<_, i64>(0)
        })?;
        let mut held = Vec::new();
        for id in rows {
            let id = id?;
            if ids.contains(&id) {
                held.push(id);
            }
        }
        Ok(held)
    }

    /// A word's matches the word index does not hold: messages waiting for it, and
    /// identifiers glued to CJK text (`配置config_path文件`), which are not unicode61 tokens,
    /// found by substring and kept where the match is not inside a longer Latin word.
    pub(super) fn beyond_the_word_index(
        &self,
        term: &Term,
        cap: i64,
    ) -> rusqlite::Result<BeyondIndex> {
        let waiting = if self.word_queue {
            self.scan(term, cap, ScanOf::WordQueue)?
        } else {
            Vec::new()
        };
        let glued = if term.text.chars().count() >= 3 {
            self.supplement(term, cap.min(SUPPLEMENT_CAP))?
        } else {
            Vec::new()
        };
        Ok(BeyondIndex { waiting, glued })
    }
}
