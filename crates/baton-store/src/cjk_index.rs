//! The index that answers CJK terms (`用户`, `配置`, `確認しました`, `검색`) and identifiers glued
//! to CJK text (`配置config_path文件`), in place of the reference's trigram table.
//!
//! unicode61 keeps a whole run of CJK text as one token, so it cannot find a word inside one.
//! The reference adds a trigram table over all text, which answers 3+ character terms but not
//! 1-2 character ones (the most common Chinese words are two characters), and which is the most
//! expensive part of every insert: about three times the write cost of the rest together, and
//! the largest table of the database.
//!
//! This index holds only the CJK side of each message, in two columns:
//! - `bi`: each CJK run as its overlapping bigrams, in order (`用户配置` -> `用户 户配 配置`; a
//!   one-character run as itself), with the Latin/digit runs glued to CJK text in between
//!   (`配置config_path文件` -> `配置 config_path 文件`). A CJK term of two or more characters is
//!   the phrase of its bigrams (`確認しました` -> `"確認 認し しま まし した"`), a glued
//!   identifier its own tokens;
//! - `uni`: every CJK character, for one-character terms.
//!
//! The table keeps its own copy of those two columns (it is not contentless): deleting a row
//! by rowid then works on every SQLite with FTS5, where a contentless table needs
//! `contentless_delete=1` (SQLite 3.43), which the SQLite Debian stable ships (3.40) cannot
//! parse, so the reference design's code could no longer delete messages from a database we
//! migrated. Only messages with CJK text get a row, so the copy costs nothing for English-only
//! history.
//!
//! The segmentation lives in Rust, not SQL, so another program inserting into `messages` (the
//! reference design's code, a plain `sqlite3` shell) cannot index its rows itself. A trigger
//! queues every inserted or edited message id in `messages_cjk_pending`; [`catch_up`] indexes
//! the queue on every write of ours and on every read-write open, and a search on a read-only
//! connection scans the queued rows directly, so the index is complete whoever inserted.
//! Deletes are a trigger too, so every path that removes messages keeps it in sync.

use crate::query::{Term, fts5_quote, is_cjk};
use rusqlite::{Connection, Transaction, params};

/// The table, the queue of messages it has not seen yet, and the triggers that keep both in
/// sync with `messages` whoever writes it. Plain SQL and FTS5 options SQLite 3.40 knows.
pub const CJK_FTS_SQL: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_cjk USING fts5(
    uni,
    bi,
    tokenize='unicode61'
);

CREATE TABLE IF NOT EXISTS messages_cjk_pending (
    id INTEGER PRIMARY KEY
);

CREATE TRIGGER IF NOT EXISTS messages_fts_cjk_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts_cjk WHERE rowid = old.id;
    DELETE FROM messages_cjk_pending WHERE id = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_cjk_pending_insert AFTER INSERT ON messages BEGIN
    INSERT OR IGNORE INTO messages_cjk_pending(id) VALUES (new.id);
END;

CREATE TRIGGER IF NOT EXISTS messages_cjk_pending_update
AFTER UPDATE OF content, tool_name, tool_calls ON messages BEGIN
    DELETE FROM messages_fts_cjk WHERE rowid = old.id;
    INSERT OR IGNORE INTO messages_cjk_pending(id) VALUES (new.id);
END;
"#;

/// The queue of message ids inserted or edited since the index last saw them.
pub const PENDING_TABLE: &str = "messages_cjk_pending";

pub const CJK_TABLE: &str = "messages_fts_cjk";

/// The two indexed columns of `text`: (`uni`, `bi`). Both empty when it has no CJK.
pub fn index_columns(text: &str) -> (String, String) {
    // Most messages have no CJK: skip splitting them into runs.
    if !text.chars().any(is_cjk) {
        return (String::new(), String::new());
    }
    let runs = runs(text);
    let mut uni = String::new();
    let mut bi = String::new();
    for (i, (kind, run)) in runs.iter().enumerate() {
        match kind {
            RunKind::Cjk => {
                for c in run {
                    push_token(&mut uni, &[*c]);
                }
                push_bigrams(&mut bi, run);
            }
            RunKind::Other => {
                let glued = (i > 0 && runs[i - 1].0 == RunKind::Cjk)
                    || runs.get(i + 1).is_some_and(|r| r.0 == RunKind::Cjk);
                if glued && run.iter().any(|c| c.is_alphanumeric()) {
                    push_token(&mut bi, run);
                }
            }
            RunKind::Space => {}
        }
    }
    (uni, bi)
}

/// Which column of the index a term is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Single CJK characters.
    Uni,
    /// Bigram runs and glued identifiers.
    Bi,
}

/// How the index answers a term: the column, the text to match there as a phrase (tokenized
/// like the indexed text), and whether the last token is a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchPlan {
    pub column: Column,
    pub phrase: String,
    pub prefix: bool,
}

/// How this index finds `term`, or `None` when it cannot answer it exactly (a term without
/// CJK, or one whose CJK and Latin parts are separated by spaces, which the index does not
/// keep); the caller then scans. Shared by every backend that keeps this index.
pub fn match_plan(term: &Term) -> Option<MatchPlan> {
    let runs = runs(&term.text);
    if !runs.iter().any(|(k, _)| *k == RunKind::Cjk) {
        return None;
    }
    if let [(RunKind::Cjk, run)] = runs.as_slice()
        && run.len() == 1
    {
        return Some(MatchPlan {
            column: Column::Uni,
            phrase: run[0].to_string(),
            prefix: term.prefix,
        });
    }
    if runs.iter().any(|(k, _)| *k == RunKind::Space)
        && runs.iter().any(|(k, _)| *k == RunKind::Other)
    {
        return None;
    }
    let mut tokens = String::new();
    for (kind, run) in &runs {
        match kind {
            RunKind::Cjk => push_bigrams(&mut tokens, run),
            RunKind::Other => push_token(&mut tokens, run),
            RunKind::Space => {}
        }
    }
    Some(MatchPlan {
        column: Column::Bi,
        phrase: tokens,
        prefix: term.prefix,
    })
}

/// The FTS5 query that finds `term` in this index ([`match_plan`] in FTS5 syntax).
pub fn match_expr(term: &Term) -> Option<String> {
    let plan = match_plan(term)?;
    let column = match plan.column {
        Column::Uni => "uni",
        Column::Bi => "bi",
    };
    let star = if plan.prefix { "*" } else { "" };
    Some(format!("{column} : {}{star}", fts5_quote(&plan.phrase)))
}

/// The FTS5 query for a word glued to CJK text (its unicode61 tokens, as a phrase).
pub fn glued_word_expr(term: &Term) -> String {
    format!("bi : {}", term.fts5())
}

fn push_bigrams(out: &mut String, run: &[char]) {
    if run.len() == 1 {
        push_token(out, run);
    }
    for pair in run.windows(2) {
        push_token(out, pair);
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum RunKind {
    Cjk,
    Space,
    Other,
}

/// Maximal runs of CJK characters, whitespace, and everything else.
fn runs(text: &str) -> Vec<(RunKind, Vec<char>)> {
    let mut out: Vec<(RunKind, Vec<char>)> = Vec::new();
    for c in text.chars() {
        let kind = if is_cjk(c) {
            RunKind::Cjk
        } else if c.is_whitespace() {
            RunKind::Space
        } else {
            RunKind::Other
        };
        match out.last_mut() {
            Some((k, run)) if *k == kind => run.push(c),
            _ => out.push((kind, vec![c])),
        }
    }
    out
}

fn push_token(out: &mut String, chars: &[char]) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.extend(chars);
}

/// Indexes one message's searchable text (content, tool name and tool-call arguments, the
/// same text the other two indexes hold).
pub fn index_message(tx: &Transaction<'_>, id: i64, haystack: &str) -> rusqlite::Result<()> {
    let (uni, bi) = index_columns(haystack);
    if uni.is_empty() {
        return Ok(());
    }
    tx.prepare_cached("INSERT INTO messages_fts_cjk(rowid, uni, bi) VALUES (?1, ?2, ?3)")?
        .execute(params![id, uni, bi])?;
    Ok(())
}

/// The text of every message, as the indexes hold it (same concatenation as the FTS triggers).
const TEXT_SELECT: &str = "SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || \
     ' ' || COALESCE(tool_calls, '') FROM messages";

/// Creates the table, its queue and triggers, and indexes every stored message (the migration
/// to schema 13, and a database that lost the table).
pub fn create_and_backfill(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(CJK_FTS_SQL)?;
    {
        let mut stmt = tx.prepare(TEXT_SELECT)?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (id, text) = row?;
            index_message(tx, id, &text)?;
        }
    }
    tx.execute("DELETE FROM messages_cjk_pending", [])?;
    Ok(())
}

/// The migration to schema 14: a table created contentless (with `contentless_delete=1`,
/// which SQLite before 3.43 cannot parse) is rebuilt as a plain one; the queue and its
/// triggers are added where missing.
pub fn upgrade(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let sql: Option<String> = tx
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [CJK_TABLE],
            |r| r.get(0),
        )
        .ok();
    if sql.as_deref().is_some_and(|s| s.contains("contentless")) {
        tx.execute_batch(
            "DROP TRIGGER IF EXISTS messages_fts_cjk_delete;
             DROP TABLE IF EXISTS messages_fts_cjk;",
        )?;
    }
    if crate::schema::table_exists(tx, CJK_TABLE)? {
        tx.execute_batch(CJK_FTS_SQL)?;
        catch_up(tx)?;
        Ok(())
    } else {
        create_and_backfill(tx)
    }
}

/// Indexes every message queued since the index last saw them (rows another program inserted
/// or edited, and ours) and empties the queue. Returns how many were indexed.
pub fn catch_up(tx: &Transaction<'_>) -> rusqlite::Result<usize> {
    catch_up_selected(tx, "")
}

/// Indexes the queued messages from id `first` on: what one write of ours just inserted.
pub fn catch_up_from(tx: &Transaction<'_>, first: i64) -> rusqlite::Result<usize> {
    catch_up_selected(tx, &format!("WHERE p.id >= {first}"))
}

/// Indexes up to `limit` of the oldest queued messages (a bounded share of a backlog).
pub fn catch_up_oldest(tx: &Transaction<'_>, limit: usize) -> rusqlite::Result<usize> {
    catch_up_selected(tx, &format!("ORDER BY p.id LIMIT {limit}"))
}

/// Indexes the queued messages `selection` (a clause over `p`, the queue; numbers only, never
/// text from outside) picks, and takes them off the queue.
fn catch_up_selected(tx: &Transaction<'_>, selection: &str) -> rusqlite::Result<usize> {
    let queued: Vec<(i64, Option<String>)> = {
        let sql = format!(
            "SELECT p.id, COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' ' || \
             COALESCE(m.tool_calls, '') FROM messages_cjk_pending p \
             LEFT JOIN messages m ON m.id = p.id {selection}"
        );
        let mut stmt = tx.prepare(&sql)?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    if queued.is_empty() {
        return Ok(0);
    }
    let mut done = tx.prepare_cached("DELETE FROM messages_cjk_pending WHERE id = ?1")?;
    for (id, text) in &queued {
        // A queued id whose message is gone (deleted since) has nothing to index.
        if let Some(text) = text {
            index_message(tx, *id, text)?;
        }
        done.execute([id])?;
    }
    Ok(queued.len())
}

/// Whether the database has the index (a reference-design database opened read-only does not;
/// search then falls back to scanning).
pub fn is_present(conn: &Connection) -> rusqlite::Result<bool> {
    crate::schema::table_exists(conn, CJK_TABLE)
}

/// Whether the database has the queue of messages not yet indexed (schema 14 and later); a
/// read-only search scans the queued rows, which only a writer can index.
pub fn has_queue(conn: &Connection) -> rusqlite::Result<bool> {
    crate::schema::table_exists(conn, PENDING_TABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str, prefix: bool) -> Term {
        Term {
            text: text.into(),
            prefix,
            phrase: text.contains(' '),
        }
    }

    #[test]
    fn runs_become_unigrams_and_ordered_bigrams() {
        let (uni, bi) = index_columns("用户配置");
        assert_eq!(uni, "用 户 配 置");
        assert_eq!(bi, "用户 户配 配置");
    }

    #[test]
    fn glued_latin_runs_sit_between_the_bigrams_and_loose_ones_are_left_out() {
        let (uni, bi) = index_columns("改config_path文件。设定 and more 天");
        assert_eq!(uni, "改 文 件 设 定 天");
        assert_eq!(bi, "改 config_path 文件 设定 天");
        assert_eq!(index_columns("no cjk here"), (String::new(), String::new()));
    }

    #[test]
    fn kana_and_hangul_are_indexed() {
        assert_eq!(index_columns("テスト").1, "テス スト");
        assert_eq!(index_columns("검색").1, "검색");
    }

    #[test]
    fn terms_become_the_phrase_of_their_bigrams() {
        assert_eq!(
            match_expr(&term("用", false)).as_deref(),
            Some("uni : \"用\"")
        );
        assert_eq!(
            match_expr(&term("用户", false)).as_deref(),
            Some("bi : \"用户\"")
        );
        assert_eq!(
            match_expr(&term("確認しました", false)).as_deref(),
            Some("bi : \"確認 認し しま まし した\"")
        );
        assert_eq!(
            match_expr(&term("配置config_path", false)).as_deref(),
            Some("bi : \"配置 config_path\"")
        );
        assert_eq!(
            match_expr(&term("配置", true)).as_deref(),
            Some("bi : \"配置\"*")
        );
        assert_eq!(match_expr(&term("deploy", false)), None);
        assert_eq!(match_expr(&term("用户 config", false)), None);
    }
}
