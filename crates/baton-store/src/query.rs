//! Query sanitizer: turns arbitrary user text into a small boolean query
//! (OR of AND-groups with optional negations) whose terms are always rendered
//! as quoted FTS5 phrases, so no user input can break FTS5 syntax.
//!
//! Honoured syntax:
//! - `"quoted phrases"` (balanced quotes only; a stray `"` is a separator),
//!   optionally followed by `*` for a prefix phrase;
//! - `deploy*` prefix terms;
//! - uppercase `AND` / `OR` / `NOT` *between two terms* (precedence as in FTS5:
//!   NOT > AND > OR; implicit AND between adjacent terms). Anything else that
//!   looks like an operator (`NEAR`, lowercase `and`, a dangling `AND`) is a
//!   plain word.
//!
//! Parentheses are separators (grouping is not honoured). Leading/trailing
//! punctuation of bare words is trimmed (`deploy?` -> `deploy`, `#123` ->
//! `123`); interior punctuation is kept, so `user_id`, `foo.bar`, `a-b`,
//! `alice@example.com` and `/etc/nginx.conf` become single quoted phrases.

/// Boolean operator written explicitly by the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Not,
}

/// Which index can answer a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// No CJK: unicode61 (bm25), supplemented by trigram for identifiers
    /// glued to CJK text.
    Word,
    /// Contains CJK and has >= 3 characters: trigram substring search.
    Substring,
    /// Contains CJK and has < 3 characters: trigram cannot match, scan path.
    Short,
}

/// One search term (a bare word or a quoted phrase).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The text to search for, as the user wrote it (minus trimmed punctuation).
    pub text: String,
    /// `deploy*` / `"foo bar"*`.
    pub prefix: bool,
    /// Written as a quoted phrase.
    pub phrase: bool,
}

impl Term {
    /// Which index answers this term.
    pub fn route(&self) -> Route {
        if !contains_cjk(&self.text) {
            Route::Word
        } else if self.text.chars().count() >= 3 {
            Route::Substring
        } else {
            Route::Short
        }
    }

    /// The term as an FTS5 string (always a quoted phrase, so it is
    /// syntactically inert), with `*` for prefix terms.
    pub fn fts5(&self) -> String {
        let mut s = fts5_quote(&self.text);
        if self.prefix {
            s.push('*');
        }
        s
    }
}

/// A conjunction: every `must` term matches and no `must_not` term does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    pub must: Vec<Term>,
    pub must_not: Vec<Term>,
}

/// A sanitized query: a disjunction of groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedQuery {
    pub groups: Vec<Group>,
}

impl ParsedQuery {
    /// True when nothing searchable is left.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Render the whole query as one FTS5 MATCH expression (every term a
    /// quoted phrase). Valid for both tables; the search itself evaluates
    /// terms per index, this is used for the unicode61 snippet and in tests.
    pub fn to_fts5(&self) -> Option<String> {
        if self.groups.is_empty() {
            return None;
        }
        let groups: Vec<String> = self
            .groups
            .iter()
            .map(|g| {
                let mut s = String::from("(");
                let must: Vec<String> = g.must.iter().map(Term::fts5).collect();
                s.push_str(&must.join(" AND "));
                for t in &g.must_not {
                    s.push_str(" NOT ");
                    s.push_str(&t.fts5());
                }
                s.push(')');
                s
            })
            .collect();
        Some(groups.join(" OR "))
    }
}

/// Quote text as an FTS5 string literal.
pub fn fts5_quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Han, kana, hangul (letters, not CJK punctuation).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF      // CJK unified
        | 0x3400..=0x4DBF    // ext A
        | 0x20000..=0x2EBEF  // ext B..F
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x3005..=0x3007    // 々 〆 〇
        | 0x3040..=0x309F    // hiragana
        | 0x30A0..=0x30FF    // katakana
        | 0x31F0..=0x31FF    // katakana ext
        | 0xFF66..=0xFF9F    // halfwidth katakana
        | 0x1100..=0x11FF    // hangul jamo
        | 0x3130..=0x318F    // hangul compatibility jamo
        | 0xAC00..=0xD7AF) // hangul syllables
}

pub fn contains_cjk(s: &str) -> bool {
    s.chars().any(is_cjk)
}

/// Characters that separate terms outside quotes.
fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '(' | ')')
        || (matches!(c as u32, 0x3000..=0x303F) && !is_cjk(c)) // CJK punctuation
        || matches!(
            c,
            '，' | '。' | '？' | '！' | '：' | '；' | '（' | '）' | '、' | '「' | '」'
        )
}

enum Item {
    Term(Term),
    Op(Op, String),
}

fn has_searchable(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

fn bare_term(raw: &str) -> Option<Term> {
    let edge = |c: char| !c.is_alphanumeric() && c != '*';
    let t = raw.trim_matches(edge);
    let prefix = t.ends_with('*');
    let t = t.trim_matches(|c: char| !c.is_alphanumeric());
    if !has_searchable(t) {
        return None;
    }
    Some(Term {
        text: t.to_string(),
        prefix: prefix && !contains_cjk(t),
        phrase: false,
    })
}

fn lex(input: &str) -> Vec<Item> {
    let chars: Vec<char> = input.chars().collect();
    let mut items = Vec::new();
    let mut buf = String::new();
    let flush = |buf: &mut String, items: &mut Vec<Item>| {
        if buf.is_empty() {
            return;
        }
        let op = match buf.as_str() {
            "AND" => Some(Op::And),
            "OR" => Some(Op::Or),
            "NOT" => Some(Op::Not),
            _ => None,
        };
        match op {
            Some(op) => items.push(Item::Op(op, buf.clone())),
            None => {
                if let Some(t) = bare_term(buf) {
                    items.push(Item::Term(t));
                }
            }
        }
        buf.clear();
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            if let Some(rel) = chars[i + 1..].iter().position(|&x| x == '"') {
                flush(&mut buf, &mut items);
                let end = i + 1 + rel;
                let inner: String = chars[i + 1..end].iter().collect();
                let mut prefix = false;
                i = end + 1;
                if chars.get(i) == Some(&'*') {
                    prefix = true;
                    i += 1;
                }
                // Normalise whitespace inside the phrase.
                let inner = inner.split_whitespace().collect::<Vec<_>>().join(" ");
                if has_searchable(&inner) {
                    items.push(Item::Term(Term {
                        prefix: prefix && !contains_cjk(&inner),
                        text: inner,
                        phrase: true,
                    }));
                }
                continue;
            }
            // Unbalanced quote: a separator.
            flush(&mut buf, &mut items);
        } else if is_separator(c) {
            flush(&mut buf, &mut items);
        } else {
            buf.push(c);
        }
        i += 1;
    }
    flush(&mut buf, &mut items);
    items
}

/// Sanitize user text into a [`ParsedQuery`]. Never fails; an input with
/// nothing searchable gives an empty query.
pub fn parse(input: &str) -> ParsedQuery {
    let items = lex(input);
    // Resolve operators: a run of operators between two terms acts as its
    // last member; a leading or trailing run is made of plain words.
    let mut resolved: Vec<Result<Term, Op>> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        match &items[i] {
            Item::Term(t) => {
                resolved.push(Ok(t.clone()));
                i += 1;
            }
            Item::Op(..) => {
                let start = i;
                while i < items.len() && matches!(items[i], Item::Op(..)) {
                    i += 1;
                }
                let between = start > 0 && i < items.len();
                if between {
                    if let Item::Op(op, _) = &items[i - 1] {
                        resolved.push(Err(*op));
                    }
                } else {
                    for item in &items[start..i] {
                        if let Item::Op(_, word) = item {
                            resolved.push(Ok(Term {
                                text: word.clone(),
                                prefix: false,
                                phrase: false,
                            }));
                        }
                    }
                }
            }
        }
    }

    let mut groups = Vec::new();
    let mut cur = Group::default();
    let mut negate = false;
    for r in resolved {
        match r {
            Ok(t) => {
                if negate {
                    cur.must_not.push(t);
                } else {
                    cur.must.push(t);
                }
                negate = false;
            }
            Err(Op::Or) => {
                groups.push(std::mem::take(&mut cur));
                negate = false;
            }
            Err(Op::And) => negate = false,
            Err(Op::Not) => negate = true,
        }
    }
    groups.push(cur);
    groups.retain(|g| !g.must.is_empty());
    ParsedQuery { groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(q: &ParsedQuery) -> Vec<Vec<String>> {
        q.groups
            .iter()
            .map(|g| g.must.iter().map(|t| t.text.clone()).collect())
            .collect()
    }

    #[test]
    fn identifiers_stay_one_term() {
        let q = parse("user_id foo.bar a-b alice@example.com /etc/nginx/nginx.conf");
        assert_eq!(
            texts(&q),
            vec![vec![
                "user_id",
                "foo.bar",
                "a-b",
                "alice@example.com",
                "etc/nginx/nginx.conf"
            ]]
        );
    }

    #[test]
    fn operators_only_between_terms() {
        let q = parse("a OR b NOT c");
        assert_eq!(q.groups.len(), 2);
        assert_eq!(q.groups[1].must_not[0].text, "c");
        let q = parse("NOT a AND");
        assert_eq!(texts(&q), vec![vec!["NOT", "a", "AND"]]);
        let q = parse("a AND OR b");
        assert_eq!(texts(&q), vec![vec!["a"], vec!["b"]]);
        let q = parse("a near b and c");
        assert_eq!(texts(&q), vec![vec!["a", "near", "b", "and", "c"]]);
    }

    #[test]
    fn phrases_and_prefixes() {
        let q = parse("\"connection refused\" deploy* \"foo bar\"* \"unbalanced");
        let g = &q.groups[0];
        assert!(g.must[0].phrase && !g.must[0].prefix);
        assert!(g.must[1].prefix && g.must[1].text == "deploy");
        assert!(g.must[2].prefix && g.must[2].phrase);
        assert_eq!(g.must[3].text, "unbalanced");
    }

    #[test]
    fn nothing_searchable_is_empty() {
        assert!(parse("  \" ( ) * - @ ? ").is_empty());
        assert!(parse("NOT").groups.len() == 1);
    }

    #[test]
    fn routing_by_cjk_length() {
        let q = parse("用户 数据库 猫 config 配置config_path文件");
        let r: Vec<Route> = q.groups[0].must.iter().map(Term::route).collect();
        assert_eq!(
            r,
            vec![
                Route::Short,
                Route::Substring,
                Route::Short,
                Route::Word,
                Route::Substring
            ]
        );
    }
}
