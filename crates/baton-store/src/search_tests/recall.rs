//! Recall@5 per query class over a mixed-language corpus.
//!
//! Relevance is decided by an independent oracle (a naive scan of the
//! message text), not by the index: a message is relevant to a query when it
//! contains every needle (`W` = case-insensitive, Latin-word-bounded; `S` =
//! case-insensitive substring).

use super::{db, msg_tool, session};

#[path = "../../tests/suite/corpus.rs"]
mod corpus;
use corpus::{N, QUERIES};

fn oracle(hay: &str, needles: &[N]) -> bool {
    corpus::oracle(hay, needles, crate::query::is_cjk)
}
use crate::search::{SearchQuery, search};

/// On a reference-design database: 1-2 character CJK terms go through the LIKE scan.
#[test]
fn recall_at_5_per_class_is_at_least_0_9_on_a_reference_database() {
    recall_per_class(false);
}

/// On our schema: the same corpus indexed by the v13 migration's backfill and no trigram table,
/// so every CJK term and glued identifier is answered by the bigram index.
#[test]
fn recall_at_5_per_class_is_at_least_0_9_with_the_cjk_index() {
    recall_per_class(true);
}

fn recall_per_class(with_cjk_index: bool) {
    let conn = db();
    let sessions = corpus::SESSIONS;
    for (i, (id, src)) in sessions.iter().enumerate() {
        session(&conn, id, src, i as f64 * 1000.0);
    }
    let mut corpus: Vec<(i64, String)> = Vec::new();
    let mut ts = 0.0;
    let mut add = |role: &str, content: &str, tn: Option<&str>, tc: Option<&str>, k: usize| {
        ts += 1.0;
        let sid = sessions[k % sessions.len()].0;
        let id = msg_tool(&conn, sid, role, content, tn, tc, ts);
        let hay = format!("{content} {} {}", tn.unwrap_or(""), tc.unwrap_or(""));
        corpus.push((id, hay));
    };
    for (k, (role, c, tn, tc)) in corpus::entries().into_iter().enumerate() {
        add(role, c, tn, tc, k);
    }
    assert!(corpus.len() >= 200, "corpus has {} messages", corpus.len());
    if with_cjk_index {
        super::with_cjk_index(&conn);
        let indexed: i64 = conn
            .query_row("SELECT count(*) FROM messages_fts_cjk", [], |r| r.get(0))
            .unwrap();
        assert!(indexed > 50, "backfill indexed only {indexed} messages");
    }
    assert_eq!(crate::cjk_index::is_present(&conn).unwrap(), with_cjk_index);

    let mut classes: Vec<(&str, f64, usize, f64)> = Vec::new();
    let mut failures = Vec::new();
    for (class, text, needles) in QUERIES {
        let relevant: Vec<i64> = corpus
            .iter()
            .filter(|(_, h)| oracle(h, needles))
            .map(|(id, _)| *id)
            .collect();
        assert!(!relevant.is_empty(), "no relevant message for {text:?}");
        let mut q = SearchQuery::new(*text);
        q.limit = 5;
        let top: Vec<i64> = search(&conn, &q)
            .unwrap()
            .iter()
            .map(|h| h.message_id)
            .collect();
        let found = relevant.iter().filter(|id| top.contains(id)).count();
        let recall = found as f64 / relevant.len().min(5) as f64;
        // Baseline: the whole sanitized query on unicode61 only (what a
        // single-table FTS search gives), for comparison.
        let fts = crate::query::parse(text).to_fts5().unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT 5",
            )
            .unwrap();
        let base: Vec<i64> = stmt
            .query_map([&fts], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let base_found = relevant.iter().filter(|id| base.contains(id)).count();
        let base_recall = base_found as f64 / relevant.len().min(5) as f64;
        if recall < 1.0 {
            failures.push(format!(
                "{class}: {text:?} recall {recall:.2} rel={relevant:?} top={top:?}"
            ));
        }
        match classes.iter_mut().find(|c| c.0 == *class) {
            Some(c) => {
                c.1 += recall;
                c.2 += 1;
                c.3 += base_recall;
            }
            None => classes.push((class, recall, 1, base_recall)),
        }
    }
    println!(
        "corpus: {} messages, {} queries, CJK index: {with_cjk_index}",
        corpus.len(),
        QUERIES.len()
    );
    println!(
        "{:<18} {:>7} {:>9} {:>22}",
        "class", "queries", "recall@5", "baseline unicode61-only"
    );
    for (class, sum, n, base) in &classes {
        println!(
            "{class:<18} {n:>7} {:>9.3} {:>22.3}",
            sum / *n as f64,
            base / *n as f64
        );
    }
    for f in &failures {
        println!("miss: {f}");
    }
    for (class, sum, n, _) in &classes {
        assert!(*n >= 6, "class {class} has only {n} queries");
        assert!(sum / *n as f64 >= 0.9, "class {class} recall@5 below 0.9");
    }
}
