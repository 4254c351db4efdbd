//! JSON text read as serde_json reads it, without building anything: where a value ends, with
//! the text checked as serde_json checks it, or [`Unsure`] for whatever it does not vouch for.
//!
//! Tool-call arguments are read on the hot path of a compaction (a call's few keys for its
//! action, its long string leaves cut), and a written file's content or an edit's old and new
//! text is most of their bytes. Skipping those strings a vector at a time (`memchr` for quotes
//! and escapes, a separate pass for control bytes that the compiler vectorizes) is several
//! times faster than serde_json's eight-bytes-at-a-time scan. A reader built on these answers
//! exactly what serde_json would for the text they accept, and gives the rest (a surrogate
//! escape, deep nesting, anything malformed) to serde_json, so its result never depends on
//! which path ran.

#[cfg(target_arch = "x86_64")]
mod string_blocks;

#[cfg(any(test, not(target_arch = "x86_64")))]
use crate::two_bytes::TwoBytes;

/// The text holds something these readers do not vouch for: serde_json decides.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unsure;

/// Deepest nesting followed (serde_json refuses past 128).
pub(crate) const MAX_DEPTH: usize = 100;

/// `at` moved past JSON whitespace (the four bytes serde_json skips).
pub(crate) fn skip_whitespace(src: &[u8], mut at: usize) -> usize {
    while matches!(src.get(at), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the value starting at `at` ends (one past its last byte), the value checked as
/// serde_json checks a value it skips: strings without raw control bytes and with well-formed
/// escapes, numbers in JSON's grammar, `true`, `false`, `null`, and containers of those.
/// `depth` is the containers the value sits in.
pub(crate) fn value_end(src: &[u8], at: usize, depth: usize) -> Result<usize, Unsure> {
    match src.get(at) {
        Some(b'"') => checked_string_end(src, at + 1).map(|close| close + 1),
        Some(b'{') => container_end(src, at, depth, b'}'),
        Some(b'[') => container_end(src, at, depth, b']'),
        Some(b'-' | b'0'..=b'9') => number_end(src, at),
        Some(b't') => literal_end(src, at, b"true"),
        Some(b'f') => literal_end(src, at, b"false"),
        Some(b'n') => literal_end(src, at, b"null"),
        _ => Err(Unsure),
    }
}

/// The end of the object or array opening at `at` and closing with `close`.
fn container_end(src: &[u8], at: usize, depth: usize, close: u8) -> Result<usize, Unsure> {
    if depth >= MAX_DEPTH {
        return Err(Unsure);
    }
    let mut at = skip_whitespace(src, at + 1);
    if src.get(at) == Some(&close) {
        return Ok(at + 1);
    }
    loop {
        if close == b'}' {
            // A key: its end, then the colon.
            if src.get(at) != Some(&b'"') {
                return Err(Unsure);
            }
            at = skip_whitespace(src, checked_string_end(src, at + 1)? + 1);
            if src.get(at) != Some(&b':') {
                return Err(Unsure);
            }
            at = skip_whitespace(src, at + 1);
        }
        at = skip_whitespace(src, value_end(src, at, depth + 1)?);
        match src.get(at) {
            Some(b',') => at = skip_whitespace(src, at + 1),
            Some(&b) if b == close => return Ok(at + 1),
            _ => return Err(Unsure),
        }
    }
}

/// The end of the number starting at `at`: `-`? (`0` | `[1-9][0-9]*`) (`.[0-9]+`)?
/// (`[eE][+-]?[0-9]+`)?. A digit right after a leading `0` is left to whatever follows, which
/// refuses it.
pub(crate) fn number_end(src: &[u8], mut at: usize) -> Result<usize, Unsure> {
    let digits_from = |at: usize| {
        let end = at
            + src.get(at..).map_or(0, |rest| {
                rest.iter().take_while(|b| b.is_ascii_digit()).count()
            });
        if end == at { Err(Unsure) } else { Ok(end) }
    };
    if src.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match src.get(at) {
        Some(b'0') => at + 1,
        Some(b'1'..=b'9') => digits_from(at)?,
        _ => return Err(Unsure),
    };
    if src.get(at) == Some(&b'.') {
        at = digits_from(at + 1)?;
    }
    if matches!(src.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(src.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        at = digits_from(at)?;
    }
    Ok(at)
}

fn literal_end(src: &[u8], at: usize, word: &[u8]) -> Result<usize, Unsure> {
    match src.get(at..at + word.len()) {
        Some(found) if found == word => Ok(at + word.len()),
        _ => Err(Unsure),
    }
}

/// The closing quote of the JSON string whose text goes on at `from`, the text checked as
/// serde_json checks a string: no raw control byte, every escape well formed (a surrogate
/// escape is left to serde_json). The dropped part of a written file has an escape on every
/// line: on x86_64 the string is read 64 bytes at a time (`json_check/string_blocks.rs`),
/// elsewhere one escape at a time.
pub(crate) fn checked_string_end(src: &[u8], from: usize) -> Result<usize, Unsure> {
    #[cfg(target_arch = "x86_64")]
    return string_blocks::string_end(src, from);
    #[cfg(not(target_arch = "x86_64"))]
    escape_by_escape_end(src, from)
}

/// [`checked_string_end`] one escape at a time: where there are no SSE2 masks, and the block
/// scan's reference in its tests. Escapes are found with `memchr` and control bytes in one
/// separate pass, which the compiler vectorizes: stopping at either kind of byte in one scan
/// was a twentieth of compacting a real session (`perf record`, real3, issue #17).
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(crate) fn escape_by_escape_end(src: &[u8], from: usize) -> Result<usize, Unsure> {
    let search = TwoBytes::new(b'"', b'\\');
    let mut at = from;
    let close = loop {
        let rest = src.get(at..).ok_or(Unsure)?;
        let special = at + search.find(rest).ok_or(Unsure)?;
        if src[special] == b'"' {
            break special;
        }
        at = special + escape_at(src, special)?.1;
    };
    if has_control_byte(&src[from..close]) {
        return Err(Unsure);
    }
    Ok(close)
}

/// The value serde_json reads from the JSON string `raw` (its quotes included): its escapes
/// decoded with [`escape_at`], its runs copied as [`next_special`] finds them. Decoding a call's
/// escaped command through serde_json was 3% of a real session's pass (issue #17). `Unsure`
/// for what `escape_at` leaves to serde_json and for anything but one well-formed string.
pub(crate) fn decoded_string(raw: &str) -> Result<String, Unsure> {
    let src = raw.as_bytes();
    if src.len() < 2 || src[0] != b'"' {
        return Err(Unsure);
    }
    let mut out = String::with_capacity(src.len() - 2);
    let mut at = 1;
    // Runs between escapes are short in a command or a code edit: found eight bytes at a
    // time, not with a `memchr` call each.
    loop {
        let special = next_special(src, at).ok_or(Unsure)?;
        out.push_str(&raw[at..special]);
        match src[special] {
            // The closing quote must be the last byte: `raw` is one string.
            b'"' if special + 1 == src.len() => return Ok(out),
            b'\\' => {
                let (c, len) = escape_at(src, special)?;
                out.push(c);
                at = special + len;
            }
            // A quote before the end, or a raw control byte (which serde_json refuses).
            _ => return Err(Unsure),
        }
    }
}

/// Whether `text` holds a byte below 0x20, tested a block at a time without an early exit
/// inside a block, so the test is vectorized.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn has_control_byte(text: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let blocks = text.chunks_exact(BLOCK);
    let rest = blocks.remainder();
    blocks
        .into_iter()
        .any(|block| block.iter().fold(false, |found, &b| found | (b < 0x20)))
        || rest.iter().any(|&b| b < 0x20)
}

/// The character the escape at `at` (a backslash) stands for, and its length in bytes. A
/// surrogate (half of a pair, or alone) is left to serde_json.
pub(crate) fn escape_at(src: &[u8], at: usize) -> Result<(char, usize), Unsure> {
    let c = match src.get(at + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let hex = src.get(at + 2..at + 6).ok_or(Unsure)?;
            let code = hex.iter().try_fold(0u32, |code, &h| {
                char::from(h)
                    .to_digit(16)
                    .map(|d| code * 16 + d)
                    .ok_or(Unsure)
            })?;
            return char::from_u32(code).map(|c| (c, 6)).ok_or(Unsure);
        }
        _ => return Err(Unsure),
    };
    Ok((c, 2))
}

/// The first byte at or after `from` that ends a plain run inside a JSON string: a quote, a
/// backslash or a control byte. Eight bytes are tested at a time, since most of a long leaf
/// is plain text.
pub(crate) fn next_special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // Flags the zero bytes of `v`; wrong flags only ever sit above a right one.
    let zeros = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flags = zeros(w ^ (ONES * u64::from(b'"')))
            | zeros(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::IgnoredAny;

    /// serde_json's answer: whether `text` is one JSON value (whitespace around allowed).
    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<IgnoredAny>(text).is_ok()
    }

    proptest! {
        /// A string decoded here is the string serde_json reads, and only serde_json's
        /// strings are decoded.
        #[test]
        fn a_decoded_string_is_serde_jsons(
            text in prop_oneof![
                "\"[a-zé\\\\\"/bfnrtu0-9 ]{0,16}\"".prop_map(String::from),
                jsonish(),
            ],
        ) {
            if let Ok(decoded) = decoded_string(&text) {
                prop_assert_eq!(serde_json::from_str::<String>(&text).ok(), Some(decoded));
            }
        }

        /// Every string serde_json writes is decoded here, to what was written.
        #[test]
        fn every_written_string_decodes_to_itself(value in any::<String>()) {
            let text = serde_json::to_string(&value).unwrap();
            prop_assert_eq!(decoded_string(&text), Ok(value));
        }
    }

    #[test]
    fn strings_with_escapes_decode_and_broken_ones_are_left_to_serde() {
        assert_eq!(
            decoded_string(r#""a\nb \"c\" \u00e9\\""#),
            Ok("a\nb \"c\" é\\".to_string())
        );
        assert_eq!(decoded_string(r#""plain""#), Ok("plain".to_string()));
        for broken in [
            r#""\""#,
            r#""a"b""#,
            "\"",
            "\"\u{1}\"",
            r#""\ud83d\ude00""#,
            r#""\x""#,
        ] {
            assert_eq!(decoded_string(broken), Err(Unsure), "{broken}");
        }
    }

    /// The checker's answer for one value with whitespace around it: `None` when unsure.
    fn checked(text: &str) -> Option<bool> {
        let src = text.as_bytes();
        let at = skip_whitespace(src, 0);
        match value_end(src, at, 0) {
            Ok(end) => Some(skip_whitespace(src, end) == src.len()),
            Err(Unsure) => None,
        }
    }

    /// JSON-like text: valid values, then often broken by a cut, an inserted byte or a
    /// swapped one.
    fn jsonish() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
            "\"[a-z\\\\\"/bfnrtu0-9]{0,12}\"".prop_map(String::from),
            "-?(0|[1-9][0-9]{0,4})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "[0-9.eE+-]{1,6}",
            Just("true".to_string()),
            Just("fals".to_string()),
            Just("null".to_string()),
        ];
        let value = leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(" , "))),
                proptest::collection::vec(("[a-z\"\\\\]{0,4}", inner), 0..4).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\":\n{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        });
        (value, 0..3usize, any::<prop::sample::Index>(), any::<u8>()).prop_map(
            |(text, how, at, byte)| {
                let mut bytes = text.into_bytes();
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    match how {
                        1 => bytes.truncate(i),
                        2 => bytes.insert(i, byte & 0x7f),
                        _ => {}
                    }
                }
                String::from_utf8(bytes).unwrap_or_default()
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Where the checker answers, it answers as serde_json does.
        #[test]
        fn what_the_checker_accepts_serde_json_accepts(text in jsonish()) {
            if let Some(accepted) = checked(&text) {
                prop_assert_eq!(accepted, serde_accepts(&text), "{:?}", text);
            }
        }
    }

    #[test]
    fn common_values_are_checked_without_serde_json() {
        for text in [
            r#"{"a": [1, -2.5e+3, true, false, null, {"b": "c\n\"d\" \u00e9"}], "e": {}}"#,
            "[]",
            "0",
            "\"\"",
        ] {
            assert_eq!(checked(text), Some(true), "{text}");
        }
        for text in [
            "\"a\u{1}\"",
            "01",
            "[1,]",
            "{\"a\" 1}",
            "tru",
            "-",
            "1.",
            "1e",
        ] {
            assert_ne!(checked(text), Some(true), "{text}");
            assert!(!serde_accepts(text), "{text}");
        }
        // A surrogate escape and deep nesting are left to serde_json.
        assert_eq!(checked(r#""\ud800""#), None);
        assert_eq!(checked(&"[".repeat(MAX_DEPTH + 1)), None);
    }
}
