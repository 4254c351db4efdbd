//! The index that answers 1–2 character CJK terms (`用户`, `配置`, `設定`, `검색`).
//!
//! Neither reference index can: unicode61 keeps a whole run of CJK text as one token, and the
//! trigram tokenizer needs at least three characters. Scanning every message with `LIKE` works
//! on a small database but grows with the whole history (seconds at a million messages).
//!
//! So each message that contains CJK text gets one row in `messages_fts_cjk` listing the
//! unigrams and bigrams of its CJK runs as space-separated tokens: `用户配置` is indexed as
//! `用 户 配 置 用户 户配 配置`. A one-character term is then one unigram token lookup and a
//! two-character term one bigram token lookup, with bm25 ranking by how often the gram occurs.
//! The table is contentless (the text is never read back; snippets come from `messages`) and
//! rows are written by [`index_message`] on insert, since the segmentation lives in Rust, not
//! SQL. Deletes are a trigger, so every path that removes messages keeps it in sync.
//!
//! Messages without CJK text get no row, so the index costs nothing for English-only history.

use crate::query::is_cjk;
use rusqlite::{Connection, Transaction, params};

/// The table, contentless with deletes enabled, and the trigger that keeps deletes in sync.
pub const CJK_FTS_SQL: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_cjk USING fts5(
    grams,
    content='',
    contentless_delete=1,
    tokenize='unicode61'
);

CREATE TRIGGER IF NOT EXISTS messages_fts_cjk_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts_cjk WHERE rowid = old.id;
END;
"#;

pub const CJK_TABLE: &str = "messages_fts_cjk";

/// What the index holds for `text`: the unigram and bigram tokens of every CJK run, and the
/// Latin/digit runs glued to CJK text (`配置config_path文件` -> `config_path`), which unicode61
/// cannot see because it reads the whole glued run as one token. Space-separated; empty when
/// the text has no CJK characters.
pub fn cjk_grams(text: &str) -> String {
    let runs = runs(text);
    let mut out = String::new();
    for (i, (kind, run)) in runs.iter().enumerate() {
        match kind {
            RunKind::Cjk => {
                for c in run {
                    push_token(&mut out, &[*c]);
                }
                for pair in run.windows(2) {
                    push_token(&mut out, pair);
                }
            }
            RunKind::Other => {
                let glued = (i > 0 && runs[i - 1].0 == RunKind::Cjk)
                    || runs.get(i + 1).is_some_and(|r| r.0 == RunKind::Cjk);
                if glued && run.iter().any(|c| c.is_alphanumeric()) {
                    push_token(&mut out, run);
                }
            }
            RunKind::Space => {}
        }
    }
    out
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
    let grams = cjk_grams(haystack);
    if grams.is_empty() {
        return Ok(());
    }
    tx.prepare_cached("INSERT INTO messages_fts_cjk(rowid, grams) VALUES (?1, ?2)")?
        .execute(params![id, grams])?;
    Ok(())
}

/// Creates the table and indexes every stored message (the migration to schema 13).
pub fn create_and_backfill(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(CJK_FTS_SQL)?;
    let mut stmt = tx.prepare(
        "SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' || \
         COALESCE(tool_calls, '') FROM messages",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, text) = row?;
        index_message(tx, id, &text)?;
    }
    Ok(())
}

/// Whether the database has the index (a reference-design database opened read-only does not;
/// search then falls back to scanning).
pub fn is_present(conn: &Connection) -> rusqlite::Result<bool> {
    crate::schema::table_exists(conn, CJK_TABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_become_unigrams_and_bigrams() {
        assert_eq!(cjk_grams("用户配置"), "用 户 配 置 用户 户配 配置");
    }

    #[test]
    fn latin_runs_split_cjk_runs_and_are_kept_when_glued() {
        assert_eq!(
            cjk_grams("改config_path文件。设定 and more"),
            "改 config_path 文 件 文件 设 定 设定"
        );
        assert_eq!(cjk_grams("no cjk here"), "");
        assert_eq!(cjk_grams("用户 README 文件"), "用 户 用户 文 件 文件");
    }

    #[test]
    fn kana_and_hangul_are_indexed() {
        assert_eq!(cjk_grams("テスト"), "テ ス ト テス スト");
        assert_eq!(cjk_grams("검색"), "검 색 검색");
    }
}
