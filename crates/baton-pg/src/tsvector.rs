//! The search columns, built in Rust so they hold exactly the tokens the SQLite store's
//! indexes hold: no PostgreSQL text-search parser or dictionary is involved (its `simple`
//! parser splits `user_id` and CJK runs differently from FTS5's unicode61).
//!
//! - `words`: the unicode61 tokens of the message text (letters and digits; lowercased, Latin
//!   diacritics removed), and every pair of adjacent tokens as one lexeme (`'cargo test'`);
//! - `cjk`: the CJK index's bigram-column tokens and their adjacent pairs, and its single
//!   characters, as [`baton_store::cjk_index`] builds them;
//! - `search_len`: how many tokens the text has, for ranking.
//!
//! The vectors hold **no positions**. A phrase is found as the conjunction of its adjacent
//! pairs (`'cargo test' & 'test failed'`), which the GIN index answers exactly, so PostgreSQL
//! never rechecks a match against the stored vector. With positions, every phrase match and
//! every ranked candidate read its whole vector back from TOAST; on a million messages that
//! was most of a search's 80–250 ms. Ranking is by length instead of term frequency (see
//! [`crate::search`]). A phrase of three or more tokens can in principle match text holding
//! its pairs apart ("a b … b c" for "a b c"); the search checks its final hits for that.
//!
//! PostgreSQL refuses lexemes over 2,047 bytes and vectors whose lexemes pass 1 MB: longer
//! tokens are not indexed, and lexemes past [`MAX_VECTOR_BYTES`] are left out.

use baton_store::cjk_index::{MatchPlan, index_columns};
use baton_store::query::Term;
use bytes::{BufMut, BytesMut};
use rustc_hash::FxHashSet;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use unicode_normalization::UnicodeNormalization;

/// Longest lexeme PostgreSQL accepts, in bytes; longer tokens (base64 blobs, minified code,
/// a CJK paragraph without spaces, which unicode61 keeps as one token) are not indexed as
/// words: no query term that long is answered by the word index anyway (CJK terms go to the
/// bigram column, which has no long tokens).
pub const MAX_LEXEME_BYTES: usize = 2_046;
/// Budget for one vector's lexemes (PostgreSQL refuses more than 1 MB): lexemes beyond it
/// are not indexed.
pub const MAX_VECTOR_BYTES: usize = 900 * 1024;

/// The unicode61 tokens of `text`: runs of letters and digits, folded. An ASCII token (most
/// of them) is lowercased as it is read; others go through [`fold`].
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut ascii = true;
    let mut finish = |current: &mut String, ascii: bool| {
        let token = if ascii {
            current.clone()
        } else {
            fold(current)
        };
        out.push(token);
        current.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            current.push(c.to_ascii_lowercase());
        } else if !c.is_ascii() && c.is_alphanumeric() {
            current.push(c);
            ascii = false;
        } else if !current.is_empty() {
            finish(&mut current, ascii);
            ascii = true;
        }
    }
    if !current.is_empty() {
        finish(&mut current, ascii);
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

/// The lexeme for two adjacent tokens. A space never occurs inside a token, so a pair cannot
/// collide with a single token.
fn pair(a: &str, b: &str) -> String {
    let mut out = String::with_capacity(a.len() + b.len() + 1);
    out.push_str(a);
    out.push(' ');
    out.push_str(b);
    out
}

/// A `tsvector` without positions: its lexemes, unique and in PostgreSQL's order (bytewise,
/// which is `str`'s order), written one after another in one buffer. Sent to the server in
/// the binary format, so nothing is quoted, escaped or parsed as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TsVector {
    text: String,
    /// Where each lexeme ends in `text` (each starts where the previous one ends).
    ends: Vec<u32>,
}

impl TsVector {
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn lexemes(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(a, b)| &self.text[a as usize..b as usize])
    }

    /// The vector as `tsvector` text input (tests and diagnostics).
    pub fn literal(&self) -> String {
        let quoted: Vec<String> = self.lexemes().map(quote).collect();
        quoted.join(" ")
    }
}

/// The lexemes of one vector as they are found, each a span of one shared buffer: a
/// message's hundreds of tokens and pairs cost a few allocations instead of one each (a set
/// of owned strings, built lexeme by lexeme, was most of the cost of indexing a message).
#[derive(Default)]
struct Lexemes {
    text: String,
    /// `(start, end)` in `text`, in the order a vector over budget keeps them.
    spans: Vec<(usize, usize)>,
}

impl Lexemes {
    fn get(&self, (a, b): (usize, usize)) -> &str {
        &self.text[a..b]
    }

    /// Appends the unicode61 tokens of `source` ([`tokens`]); returns their spans.
    fn tokens_of(&mut self, source: &str) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        let mut start = self.text.len();
        let mut ascii = true;
        let mut close = |text: &mut String, start: &mut usize, ascii: bool| {
            if !ascii {
                let folded = fold(&text[*start..]);
                text.truncate(*start);
                text.push_str(&folded);
            }
            spans.push((*start, text.len()));
            *start = text.len();
        };
        for c in source.chars() {
            if c.is_ascii_alphanumeric() {
                self.text.push(c.to_ascii_lowercase());
            } else if !c.is_ascii() && c.is_alphanumeric() {
                self.text.push(c);
                ascii = false;
            } else if self.text.len() > start {
                close(&mut self.text, &mut start, ascii);
                ascii = true;
            }
        }
        if self.text.len() > start {
            close(&mut self.text, &mut start, ascii);
        }
        spans
    }

    /// Adds every pair of adjacent `tokens` as a lexeme, then the tokens themselves.
    fn add_with_pairs(&mut self, tokens: &[(usize, usize)]) {
        for w in tokens.windows(2) {
            let start = self.text.len();
            self.text.extend_from_within(w[0].0..w[0].1);
            self.text.push(' ');
            self.text.extend_from_within(w[1].0..w[1].1);
            self.spans.push((start, self.text.len()));
        }
        self.spans.extend_from_slice(tokens);
    }

    /// The vector: lexemes PostgreSQL would refuse left out, duplicates dropped (by hash,
    /// before sorting: long outputs repeat most of their tokens), and once the lexemes pass
    /// [`MAX_VECTOR_BYTES`], the later ones not indexed.
    fn into_vector(self) -> TsVector {
        let mut seen = FxHashSet::with_capacity_and_hasher(self.spans.len(), Default::default());
        let mut bytes = 0;
        let mut kept = Vec::with_capacity(self.spans.len());
        for &span in &self.spans {
            let lexeme = self.get(span);
            if lexeme.is_empty()
                || lexeme.len() > MAX_LEXEME_BYTES
                || bytes + lexeme.len() > MAX_VECTOR_BYTES
                || !seen.insert(lexeme)
            {
                continue;
            }
            bytes += lexeme.len();
            kept.push(span);
        }
        kept.sort_unstable_by(|x, y| self.get(*x).cmp(self.get(*y)));
        let mut text = String::with_capacity(bytes);
        let mut ends = Vec::with_capacity(kept.len());
        for span in kept {
            text.push_str(self.get(span));
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        TsVector { text, ends }
    }
}

impl ToSql for TsVector {
    /// PostgreSQL's `tsvector` binary input (`tsvectorrecv`): the lexeme count, then each
    /// lexeme NUL-terminated with its number of positions (zero).
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.put_i32(i32::try_from(self.ends.len())?);
        for lexeme in self.lexemes() {
            out.put_slice(lexeme.as_bytes());
            out.put_u8(0);
            out.put_u16(0);
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::TS_VECTOR
    }

    to_sql_checked!();
}

/// What a message contributes to the search columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchColumns {
    pub words: TsVector,
    pub cjk: TsVector,
    /// Tokens in the text (unicode61 tokens plus CJK characters), at least 1.
    pub len: i32,
}

impl SearchColumns {
    /// The columns of a message whose searchable text is `haystack`.
    pub fn of(haystack: &str) -> Self {
        let mut words = Lexemes::default();
        let tokens = words.tokens_of(haystack);
        let mut len = i32::try_from(tokens.len()).unwrap_or(i32::MAX);
        words.add_with_pairs(&tokens);
        let (uni, bi) = index_columns(haystack);
        let mut cjk = Lexemes::default();
        if !uni.is_empty() {
            let bigrams = cjk.tokens_of(&bi);
            cjk.add_with_pairs(&bigrams);
            let chars = cjk.tokens_of(&uni);
            len = len.saturating_add(i32::try_from(chars.len()).unwrap_or(i32::MAX));
            cjk.spans.extend(chars);
        }
        SearchColumns {
            words: words.into_vector(),
            cjk: cjk.into_vector(),
            len: len.max(1),
        }
    }
}

/// A lexeme quoted for `tsvector` / `tsquery` input.
fn quote(lexeme: &str) -> String {
    let mut out = String::with_capacity(lexeme.len() + 2);
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The query for a sequence of tokens: the token itself, or the conjunction of its adjacent
/// pairs; the last a prefix when asked. `None` when there is nothing to match.
fn sequence_query(tokens: &[String], prefix: bool) -> Option<String> {
    let lexemes: Vec<String> = match tokens {
        [] => return None,
        [one] => vec![one.clone()],
        _ => tokens.windows(2).map(|w| pair(&w[0], &w[1])).collect(),
    };
    let last = lexemes.len() - 1;
    let parts: Vec<String> = lexemes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i == last && prefix {
                format!("{}:*", quote(l))
            } else {
                quote(l)
            }
        })
        .collect();
    Some(parts.join(" & "))
}

/// The `words` query for a term without CJK (a word or a quoted phrase, maybe a prefix).
pub fn words_query(term: &Term) -> Option<String> {
    sequence_query(&tokens(&term.text), term.prefix)
}

/// The `cjk` query for a term the CJK index answers.
pub fn cjk_query(plan: &MatchPlan) -> Option<String> {
    sequence_query(&tokens(&plan.phrase), plan.prefix)
}

/// The `cjk` query for a word glued to CJK text (`配置config_path文件` finds `config_path`).
pub fn glued_word_query(term: &Term) -> Option<String> {
    sequence_query(&tokens(&term.text), term.prefix)
}

/// Whether `have` holds the tokens `want` in a row (the last as a prefix when `prefix`): the
/// exact phrase test that the pair conjunction approximates for three or more tokens.
pub fn holds_sequence(have: &[String], want: &[String], prefix: bool) -> bool {
    let Some(last) = want.len().checked_sub(1) else {
        return true;
    };
    have.windows(want.len()).any(|w| {
        w[..last] == want[..last]
            && if prefix {
                w[last].starts_with(&want[last])
            } else {
                w[last] == want[last]
            }
    })
}

/// The bigram-column tokens of `text` (what `cjk` pairs are built from).
pub fn bigram_tokens(text: &str) -> Vec<String> {
    tokens(&index_columns(text).1)
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
    fn vectors_hold_tokens_and_adjacent_pairs_without_positions() {
        let c = SearchColumns::of("it's a test, a test");
        assert_eq!(
            c.words.literal(),
            "'a' 'a test' 'it' 'it s' 's' 's a' 'test' 'test a'"
        );
        assert_eq!(c.len, 6);
        assert_eq!(
            SearchColumns::of(r"back\slash").words.literal(),
            r"'back' 'back slash' 'slash'"
        );
        assert_eq!(
            SearchColumns::of("o'brien").words.literal(),
            "'brien' 'o' 'o brien'"
        );
        assert!(SearchColumns::of("no cjk here").cjk.is_empty());
        let cjk = SearchColumns::of("用户配置");
        let lexemes: Vec<&str> = cjk.cjk.lexemes().collect();
        for piece in [
            "用户",
            "户配",
            "配置",
            "用户 户配",
            "户配 配置",
            "用",
            "户",
            "配",
            "置",
        ] {
            assert!(lexemes.contains(&piece), "{piece} in {lexemes:?}");
        }
        // One unicode61 token (the CJK run) and four characters.
        assert_eq!(cjk.len, 5);
    }

    #[test]
    fn lexemes_postgresql_refuses_are_left_out_and_vectors_stay_under_a_megabyte() {
        let long = "a".repeat(MAX_LEXEME_BYTES + 1);
        assert_eq!(
            SearchColumns::of(&format!("ok {long} fine"))
                .words
                .literal(),
            "'fine' 'ok'"
        );
        let many: String = (0..200_000).map(|i| format!("w{i} ")).collect();
        let v = SearchColumns::of(&many).words;
        let bytes: usize = v.lexemes().map(str::len).sum();
        assert!(bytes <= MAX_VECTOR_BYTES, "{bytes}");
    }

    #[test]
    fn binary_form_is_count_then_nul_terminated_lexemes_without_positions() {
        let v = SearchColumns::of("b a").words;
        let mut out = BytesMut::new();
        v.to_sql(&Type::TS_VECTOR, &mut out).unwrap();
        assert_eq!(&out[..], b"\0\0\0\x03a\0\0\0b\0\0\0b a\0\0\0".as_slice());
    }

    #[test]
    fn queries_are_pair_conjunctions_with_prefix() {
        assert_eq!(
            words_query(&term("user_id", false)).as_deref(),
            Some("'user id'")
        );
        assert_eq!(
            words_query(&term("depl", true)).as_deref(),
            Some("'depl':*")
        );
        assert_eq!(
            words_query(&term("cargo test fail", true)).as_deref(),
            Some("'cargo test' & 'test fail':*")
        );
        let plan = baton_store::cjk_index::match_plan(&term("確認しました", false)).unwrap();
        assert_eq!(
            cjk_query(&plan).as_deref(),
            Some("'確認 認し' & '認し しま' & 'しま まし' & 'まし した'")
        );
        let one = baton_store::cjk_index::match_plan(&term("用", false)).unwrap();
        assert_eq!(cjk_query(&one).as_deref(), Some("'用'"));
        assert_eq!(words_query(&term("!!!", false)), None);
    }

    #[test]
    fn sequences_are_checked_in_order() {
        let have = tokens("a b x b c");
        assert!(!holds_sequence(&have, &tokens("a b c"), false));
        assert!(holds_sequence(&have, &tokens("x b c"), false));
        assert!(holds_sequence(&have, &tokens("x b"), true));
        assert!(holds_sequence(
            &tokens("cargo testing"),
            &tokens("cargo test"),
            true
        ));
        assert!(!holds_sequence(
            &tokens("cargo testing"),
            &tokens("cargo test"),
            false
        ));
    }
}
