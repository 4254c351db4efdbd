//! Session titles: cleaning and lineage numbering ("Refactor auth" -> "Refactor auth #2").

use crate::error::{Result, StoreError};

/// Longest title accepted, in characters.
pub const MAX_TITLE_LENGTH: usize = 100;

/// Control characters except tab, newline and carriage return (those are whitespace and get
/// collapsed instead).
fn is_stripped_control(c: char) -> bool {
    matches!(c, '\u{00}'..='\u{08}' | '\u{0b}' | '\u{0c}' | '\u{0e}'..='\u{1f}' | '\u{7f}')
}

/// Zero-width, bidi-override and other invisible characters that make two titles look equal.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fffc}'
        | '\u{fff9}'..='\u{fffb}')
}

/// Cleans a title: strips control and invisible characters, collapses runs of whitespace to one
/// space, trims. `Ok(None)` when nothing is left (which clears a title). Longer than
/// [`MAX_TITLE_LENGTH`] characters after cleaning is an error rather than a silent cut, so two
/// long titles never collide on their shared prefix.
pub fn clean_title(raw: &str) -> Result<Option<String>> {
    let kept: String = raw
        .chars()
        .filter(|c| !is_stripped_control(*c) && !is_invisible(*c))
        .collect();
    let cleaned = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    if cleaned.is_empty() {
        return Ok(None);
    }
    let chars = cleaned.chars().count();
    if chars > MAX_TITLE_LENGTH {
        return Err(StoreError::TitleTooLong {
            chars,
            max: MAX_TITLE_LENGTH,
        });
    }
    Ok(Some(cleaned))
}

/// Splits `"Base #7"` into `("Base", Some(7))`; anything else is `(title, None)`.
pub fn split_numbered(title: &str) -> (&str, Option<u64>) {
    if let Some((base, num)) = title.rsplit_once(" #")
        && !num.is_empty()
        && num.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = num.parse::<u64>()
    {
        return (base, Some(n));
    }
    (title, None)
}

/// The next title in a lineage, given the base and every existing title that may belong to it.
/// The unnumbered original counts as #1.
pub fn next_numbered_title<'a>(base: &str, existing: impl IntoIterator<Item = &'a str>) -> String {
    let mut any = false;
    let mut max = 1;
    for title in existing {
        if title.eq_ignore_ascii_case(base) {
            any = true;
            continue;
        }
        if let (b, Some(n)) = split_numbered(title)
            && b.eq_ignore_ascii_case(base)
        {
            any = true;
            max = max.max(n);
        }
    }
    if any {
        format!("{base} #{}", max + 1)
    } else {
        base.to_string()
    }
}

/// The title a continuation of `raw` gets, numbered after every title already in its lineage.
pub(crate) fn next_title_in_lineage(conn: &rusqlite::Connection, raw: &str) -> Result<String> {
    let cleaned = clean_title(raw)?.unwrap_or_default();
    let (base, _) = split_numbered(&cleaned);
    let mut stmt = conn.prepare_cached(
        "SELECT title FROM sessions WHERE title = ?1 OR title LIKE ?2 ESCAPE '\\'",
    )?;
    let titles = stmt
        .query_map(
            rusqlite::params![base, format!("{} #%", escape_like(base))],
            |r| r.get::<_, String>(0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(next_numbered_title(base, titles.iter().map(String::as_str)))
}

/// Escapes `\`, `%` and `_` for a `LIKE ... ESCAPE '\'` pattern.
pub fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_strips_controls_and_invisibles_and_collapses_whitespace() {
        assert_eq!(
            clean_title("  Fix\u{0}  the\t\nbug\u{200b} 🐛 中文 ").unwrap(),
            Some("Fix the bug 🐛 中文".into())
        );
        assert_eq!(clean_title(" \u{feff} \n").unwrap(), None);
    }

    #[test]
    fn over_long_titles_are_refused_counting_characters() {
        assert!(clean_title(&"é".repeat(100)).unwrap().is_some());
        let err = clean_title(&"é".repeat(101)).unwrap_err();
        assert!(matches!(
            err,
            StoreError::TitleTooLong {
                chars: 101,
                max: 100
            }
        ));
    }

    #[test]
    fn numbering_follows_the_highest_existing_number() {
        assert_eq!(next_numbered_title("A", []), "A");
        assert_eq!(next_numbered_title("A", ["A"]), "A #2");
        assert_eq!(next_numbered_title("A", ["A", "A #2", "A #3"]), "A #4");
        assert_eq!(split_numbered("my project #2"), ("my project", Some(2)));
        assert_eq!(split_numbered("a #1 #2"), ("a #1", Some(2)));
        assert_eq!(split_numbered("issue #x"), ("issue #x", None));
    }

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(escape_like(r"50%_a\b"), r"50\%\_a\\b");
    }
}
