//! Minifying a record's JSON text: the whitespace between tokens removed, strings (and so
//! every escape) and numbers left exactly as written, so an array's elements are written one
//! record per line without being re-encoded.

use crate::byte_scan::closing_quote;

/// Removes the whitespace between the tokens of valid JSON text, leaving strings (and so
/// every escape) and numbers exactly as written. Strings are copied whole, their ends found
/// with `memchr`: a byte at a time, this was a tenth of compressing an array dataset
/// (`perf record`, issue #17).
pub fn minify(json: &str) -> Vec<u8> {
    let bytes = json.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        // Between strings: tokens and the whitespace to drop.
        let quote = memchr::memchr(b'"', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        out.extend(
            bytes[at..quote]
                .iter()
                .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')),
        );
        if quote == bytes.len() {
            break;
        }
        let end = (closing_quote(bytes, quote + 1) + 1).min(bytes.len());
        out.extend_from_slice(&bytes[quote..end]);
        at = end;
    }
    out
}

/// [`minify`] a byte at a time: what it replaced, kept as its test's oracle.
#[cfg(test)]
fn minify_bytewise(json: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in json.as_bytes() {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
            out.push(b);
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Copying strings whole drops exactly the bytes the byte-at-a-time walk dropped, in
        /// text with escapes, quotes and whitespace anywhere (even cut inside a string).
        #[test]
        fn minify_agrees_with_the_bytewise_walk(text in "[ \t\r\n\"\\\\a{}:,é0-9\\[\\]]{0,40}") {
            proptest::prop_assert_eq!(minify(&text), minify_bytewise(&text));
        }
    }
}
