//! The search columns as PostgreSQL text literals, built in Rust so they hold exactly the
//! tokens the SQLite store's indexes hold: no PostgreSQL text-search parser or dictionary is
//! involved (its `simple` parser splits `user_id` and CJK runs differently from FTS5's
//! unicode61).
//!
//! - `words`: unicode61 tokens of the message text (letters and digits; lowercased, Latin
//!   diacritics removed), with positions, so a phrase is `a <-> b`;
//! - `cjk`: the CJK index's bigram column tokens (weight `A`) then its single characters
//!   (weight `B`), as [`baton_store::cjk_index`] builds them.
//!
//! PostgreSQL caps positions at 16,383 and a `tsvector` at 1 MB; tokens past
//! [`MAX_POSITIONS`] are not indexed (the SQLite search also examines only the first 64 KiB
//! of a message for snippets), and each token keeps at most 255 positions.

use baton_store::cjk_index::{MatchPlan, index_columns};
use baton_store::query::Term;
use std::collections::BTreeMap;
use unicode_normalization::UnicodeNormalization;

/// Positions PostgreSQL can store.
pub const MAX_POSITIONS: usize = 16_383;
/// Positions kept per token (PostgreSQL's own limit is 256).
const MAX_POSITIONS_PER_TOKEN: usize = 255;
/// Longest lexeme PostgreSQL accepts, in bytes; longer tokens (base64 blobs, minified code,
/// a CJK paragraph without spaces, which unicode61 keeps as one token) are not indexed as
/// words: no query term that long is answered by the word index anyway (CJK terms go to the
/// bigram column, which has no long tokens).
pub const MAX_LEXEME_BYTES: usize = 2_046;
/// Budget for one `tsvector` (PostgreSQL refuses more than 1 MB): lexemes beyond it are not
/// indexed.
const MAX_VECTOR_BYTES: usize = 900 * 1024;

/// The unicode61 tokens of `text`: runs of letters and digits, folded.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            current.push(c);
        } else if !current.is_empty() {
            out.push(fold(&current));
            current.clear();
        }
    }
    if !current.is_empty() {
        out.push(fold(&current));
    }
    out
}

/// Lowercase, Latin diacritics removed (unicode61's `remove_diacritics`).
fn fold(token: &str) -> String {
    let lower = token.to_lowercase();
    if lower.is_ascii() {
        return lower;
    }
    lower
        .nfd()
        .filter(|c| !('\u{0300}'..='\u{036f}').contains(c))
        .nfc()
        .collect()
}

/// A `tsvector` literal of `tokens` at positions 1, 2, …, each labelled `weight` (`None`: D).
/// Positions are kept as numbers and written once at the end (this runs for every stored
/// message).
fn vector_literal(groups: &[(&[String], Option<char>)]) -> String {
    use std::fmt::Write as _;
    let mut lexemes: BTreeMap<&str, Vec<(u16, Option<char>)>> = BTreeMap::new();
    let mut position = 0usize;
    let mut bytes = 0usize;
    for (tokens, weight) in groups {
        for token in *tokens {
            position += 1;
            if position > MAX_POSITIONS {
                break;
            }
            if token.len() > MAX_LEXEME_BYTES {
                continue;
            }
            if !lexemes.contains_key(token.as_str()) {
                bytes += token.len() + 16;
                if bytes > MAX_VECTOR_BYTES {
                    continue;
                }
            }
            let entry = lexemes.entry(token.as_str()).or_default();
            if entry.len() < MAX_POSITIONS_PER_TOKEN {
                // At most MAX_POSITIONS (16,383): fits a u16.
                entry.push((position as u16, *weight));
            }
        }
    }
    let mut out = String::with_capacity(bytes + lexemes.len() * 8);
    for (lexeme, positions) in lexemes {
        if !out.is_empty() {
            out.push(' ');
        }
        quote_into(&mut out, lexeme);
        out.push(':');
        for (k, (p, w)) in positions.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
            if let Some(w) = w {
                out.push(*w);
            }
        }
    }
    out
}

/// A lexeme quoted for `tsvector` / `tsquery` input.
fn quote(lexeme: &str) -> String {
    let mut out = String::with_capacity(lexeme.len() + 2);
    quote_into(&mut out, lexeme);
    out
}

fn quote_into(out: &mut String, lexeme: &str) {
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// The `words` column of a message whose searchable text is `haystack`.
pub fn words_vector(haystack: &str) -> String {
    let tokens = tokens(haystack);
    vector_literal(&[(&tokens, None)])
}

/// The `cjk` column: empty for text without CJK.
pub fn cjk_vector(haystack: &str) -> String {
    let (uni, bi) = index_columns(haystack);
    if uni.is_empty() {
        return String::new();
    }
    let bi = tokens(&bi);
    let uni = tokens(&uni);
    vector_literal(&[(&bi, Some('A')), (&uni, Some('B'))])
}

/// A phrase query over `tokens` (`a <-> b`), the last a prefix when asked. `None` when there
/// is nothing to match.
fn phrase_query(tokens: &[String], prefix: bool) -> Option<String> {
    if tokens.is_empty() {
        return None;
    }
    let last = tokens.len() - 1;
    let parts: Vec<String> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if i == last && prefix {
                format!("{}:*", quote(t))
            } else {
                quote(t)
            }
        })
        .collect();
    Some(parts.join(" <-> "))
}

/// The `words` query for a term without CJK (a word or a quoted phrase, maybe a prefix).
pub fn words_query(term: &Term) -> Option<String> {
    phrase_query(&tokens(&term.text), term.prefix)
}

/// The `cjk` query for a term the CJK index answers. The query leaves the weights out: a
/// weight restriction makes PostgreSQL recheck every GIN match against the stored vector
/// (read from TOAST), and it changes nothing here — bigrams and glued words only occur in
/// the bigram part (`A`), and a single character in the bigram part (a one-character run)
/// is also in the character part (`B`).
pub fn cjk_query(plan: &MatchPlan) -> Option<String> {
    phrase_query(&tokens(&plan.phrase), plan.prefix)
}

/// The `cjk` query for a word glued to CJK text (`配置config_path文件` finds `config_path`).
pub fn glued_word_query(term: &Term) -> Option<String> {
    phrase_query(&tokens(&term.text), term.prefix)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn term(text: &str, prefix: bool) -> Term {
        Term {
            text: text.into(),
            prefix,
            phrase: false,
        }
    }

    #[test]
    fn tokens_split_like_unicode61_and_fold_case_and_diacritics() {
        assert_eq!(
            tokens("Deploy user_id to /etc/nginx.conf"),
            ["deploy", "user", "id", "to", "etc", "nginx", "conf"]
        );
        assert_eq!(tokens("Café RÉSUMÉ"), ["cafe", "resume"]);
        assert_eq!(tokens("用户配置 done"), ["用户配置", "done"]);
    }

    #[test]
    fn vectors_quote_lexemes_and_keep_positions() {
        assert_eq!(
            words_vector("it's a test, a test"),
            "'a':3,5 'it':1 's':2 'test':4,6"
        );
        assert_eq!(words_vector(r"back\slash"), r"'back':1 'slash':2");
        assert_eq!(words_vector("o'brien"), "'brien':2 'o':1");
        assert_eq!(cjk_vector("no cjk here"), "");
        let cjk = cjk_vector("用户配置");
        for piece in [
            "'用户':1A",
            "'户配':2A",
            "'配置':3A",
            "'用':4B",
            "'户':5B",
            "'置':7B",
        ] {
            assert!(cjk.contains(piece), "{piece} in {cjk}");
        }
    }

    #[test]
    fn lexemes_postgresql_refuses_are_left_out_and_vectors_stay_under_a_megabyte() {
        let long = "a".repeat(MAX_LEXEME_BYTES + 1);
        assert_eq!(words_vector(&format!("ok {long} fine")), "'fine':3 'ok':1");
        let many: String = (0..200_000).map(|i| format!("w{i} ")).collect();
        let v = words_vector(&many);
        assert!(v.len() < 1024 * 1024, "{}", v.len());
    }

    #[test]
    fn queries_are_phrases_with_prefix_and_weight_labels() {
        assert_eq!(
            words_query(&term("user_id", false)).as_deref(),
            Some("'user' <-> 'id'")
        );
        assert_eq!(
            words_query(&term("depl", true)).as_deref(),
            Some("'depl':*")
        );
        let plan = baton_store::cjk_index::match_plan(&term("確認しました", false)).unwrap();
        assert_eq!(
            cjk_query(&plan).as_deref(),
            Some("'確認' <-> '認し' <-> 'しま' <-> 'まし' <-> 'した'")
        );
        let one = baton_store::cjk_index::match_plan(&term("用", false)).unwrap();
        assert_eq!(cjk_query(&one).as_deref(), Some("'用'"));
        assert_eq!(words_query(&term("!!!", false)), None);
    }
}
