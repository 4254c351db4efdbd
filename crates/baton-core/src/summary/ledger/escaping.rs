//! The ledger's one-line escaping: what lets a command with a heredoc or a path with a space
//! at its end be rendered on one line and read back byte for byte.

/// One-line form of a value: backslash, newline, carriage return, tab and control characters
/// escaped, and whitespace at either end escaped so trimming cannot change the value.
pub fn escape(s: &str) -> String {
    escape_with(s, false)
}

/// [`escape`] for the inside of a code span: backticks are escaped too.
pub fn escape_code(s: &str) -> String {
    escape_with(s, true)
}

fn escape_with(s: &str, code: bool) -> String {
    escaped(s, code).into_owned()
}

/// [`escape_with`], borrowed when the text needs no escape (almost always).
pub(super) fn escaped(s: &str, code: bool) -> std::borrow::Cow<'_, str> {
    if is_plain(s, code) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(escape_chars(s, code))
}

/// [`escape_with`] a character at a time.
fn escape_chars(s: &str, code: bool) -> String {
    let last = s.chars().count().saturating_sub(1);
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '`' if code => out.push_str("\\`"),
            c if needs_code_point_escape(c, i == 0 || i == last) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether [`escape_with`] would copy `s` unchanged, read byte by byte: printable ASCII
/// without a backslash (or a backtick in code) and no space at either end. Most paths and
/// commands are, and escaping them a character at a time was 2% of a compaction (issue #17).
fn is_plain(s: &str, code: bool) -> bool {
    let bytes = s.as_bytes();
    let inner = |b: &u8| (0x20..0x7F).contains(b) && *b != b'\\' && !(code && *b == b'`');
    bytes.iter().all(inner)
        && bytes.first().is_none_or(|&b| b != b' ')
        && bytes.last().is_none_or(|&b| b != b' ')
}

fn needs_code_point_escape(c: char, at_edge: bool) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || (at_edge && c.is_whitespace())
}

/// Inverse of [`escape`] and [`escape_code`]; an unknown escape is kept as written.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (decoded, used) = decode_escape(after);
        match decoded {
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The character an escape stands for and how many bytes after the backslash it used.
fn decode_escape(after: &str) -> (Option<char>, usize) {
    let Some(c) = after.chars().next() else {
        return (None, 0);
    };
    let simple = match c {
        '\\' => Some('\\'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        '`' => Some('`'),
        _ => None,
    };
    if simple.is_some() {
        return (simple, 1);
    }
    if let Some(body) = after.strip_prefix("u{")
        && let Some(end) = body.find('}')
        && let Some(ch) = u32::from_str_radix(&body[..end], 16)
            .ok()
            .and_then(char::from_u32)
    {
        return (Some(ch), 2 + end + 1);
    }
    (None, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Copying plain text as it is gives what escaping it a character at a time gives.
        #[test]
        fn plain_text_is_copied_as_escaping_would_write_it(
            s in "[ -~\t\n\u{7f}\u{85}\u{2028}é`\\\\]{0,12}",
            code: bool,
        ) {
            prop_assert_eq!(escape_with(&s, code), escape_chars(&s, code));
        }
    }
}
