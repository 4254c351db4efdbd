//! A tool call's JSON arguments, read for the few keys classification looks at.
//!
//! Classification needs a path, a command or a pattern; the arguments around them can be a
//! whole file being written or a long patch. Parsing them into a `serde_json::Value` built a
//! string and a map entry for every one of those, three times per call per compaction (a
//! tenth of compacting a real session, issue #17). Here the top level is split into keys and
//! raw value text without copying, and only a value that is asked for is decoded, borrowed
//! from the arguments unless it holds escapes.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The top-level entries of a JSON object, values undecoded. Empty when the arguments are
/// not a JSON object.
pub(super) struct Args<'a> {
    entries: Entries<'a>,
}

impl<'a> Args<'a> {
    pub(super) fn parse(arguments: &'a str) -> Self {
        let entries = serde_json::from_str(arguments).unwrap_or_default();
        Args { entries }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.0.is_empty()
    }

    fn raw(&self, key: &str) -> Option<&'a str> {
        // The last entry of a repeated key wins, as in serde_json's own maps.
        self.entries
            .0
            .iter()
            .rev()
            .find(|(k, _)| k.0 == key)
            .map(|(_, v)| v.get())
    }

    /// The first present string argument among `keys` (an array gives its first string); an
    /// empty string counts as absent.
    pub(super) fn str_arg(&self, keys: &[&str]) -> Option<Cow<'a, str>> {
        keys.iter().find_map(|k| {
            let raw = self.raw(k)?;
            match raw.as_bytes().first()? {
                b'"' => string(raw).filter(|s| !s.is_empty()),
                b'[' => list(raw).into_iter().find_map(string),
                _ => None,
            }
        })
    }

    /// The line count of the first present string argument among `keys` (as `str_arg`
    /// chooses it), counted without decoding the string.
    pub(super) fn line_count(&self, keys: &[&str]) -> Option<usize> {
        keys.iter().find_map(|k| {
            let raw = self.raw(k)?;
            match raw.as_bytes().first()? {
                b'"' if raw.len() > 2 => line_count(raw),
                b'[' => list(raw)
                    .into_iter()
                    .find(|r| r.starts_with('"'))
                    .and_then(line_count),
                _ => None,
            }
        })
    }

    /// The first present unsigned number among `keys`, as a JSON number or a numeric string.
    pub(super) fn num_arg(&self, keys: &[&str]) -> Option<u64> {
        keys.iter().find_map(|k| {
            let raw = self.raw(k)?;
            if raw.starts_with('"') {
                string(raw)?.trim().parse().ok()
            } else {
                raw.parse().ok()
            }
        })
    }

    /// The strings of an array argument (other items skipped); a string argument is returned
    /// as its one item, so callers can tell an array from a string.
    pub(super) fn words(&self, key: &str) -> Option<Words<'a>> {
        let raw = self.raw(key)?;
        match raw.as_bytes().first()? {
            b'"' => string(raw).map(Words::One),
            b'[' => Some(Words::Many(
                list(raw).into_iter().filter_map(string).collect(),
            )),
            _ => Some(Words::NotText),
        }
    }

    /// The first two items of a numeric array argument (`view_range: [5, 9]`).
    pub(super) fn range(&self, key: &str) -> (Option<u64>, Option<i64>) {
        let items = self.raw(key).map(list).unwrap_or_default();
        let start = items.first().and_then(|r| r.parse().ok());
        let end = items.get(1).and_then(|r| r.parse().ok());
        (start, end)
    }
}

/// An object's entries in order: a call's arguments hold a handful, which a vector looks up
/// faster than a map is built (one allocation instead of one per node).
#[derive(Default)]
struct Entries<'a>(Vec<(Key<'a>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Entries<'de>, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// An object key: borrowed from the arguments unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// What a string-or-array argument holds.
pub(super) enum Words<'a> {
    One(Cow<'a, str>),
    Many(Vec<Cow<'a, str>>),
    /// A number, an object or `null`.
    NotText,
}

/// A JSON string's value; `None` when `raw` is not a string. `raw` comes from a parse, so a
/// string without a backslash is its own value between the quotes (no copy, no second scan).
fn string(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
        return Some(Cow::Borrowed(inner));
    }
    // Escapes (`\n`, `\"`) need decoding into a new string.
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

/// `value.lines().count()` for the JSON string `raw`, read from its escaped form: counting
/// the lines of a file being written must not copy the file. A valid JSON string holds no raw
/// newline, so only its escapes are looked at, found with `memchr` (a byte-by-byte walk over
/// every written file was a twentieth of compacting a real session, issue #17).
fn line_count(raw: &str) -> Option<usize> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    let (mut newlines, mut ends_with_newline) = (0, false);
    // Where the text after the last escape read starts: a backslash before it is the second
    // half of an escaped backslash.
    let mut after = 0;
    for at in memchr::memchr_iter(b'\\', inner) {
        if at < after {
            continue;
        }
        let escape = inner.get(at + 1).copied();
        let is_newline = match escape {
            Some(b'n') => true,
            Some(b'u') => inner
                .get(at + 2..at + 6)
                .is_some_and(|hex| hex.eq_ignore_ascii_case(b"000a")),
            _ => false,
        };
        after = at + if escape == Some(b'u') { 6 } else { 2 };
        newlines += usize::from(is_newline);
        ends_with_newline = is_newline && after >= inner.len();
    }
    Some(newlines + usize::from(!inner.is_empty() && !ends_with_newline))
}

/// The raw items of a JSON array; empty when `raw` is not one.
fn list(raw: &str) -> Vec<&str> {
    serde_json::from_str::<Vec<&RawValue>>(raw)
        .map(|items| items.into_iter().map(RawValue::get).collect())
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_are_borrowed_and_escaped_ones_decoded() {
        let args = Args::parse(r#"{"path":"src/a.rs","content":"a\nb","n":"7"}"#);
        assert!(matches!(
            args.str_arg(&["path"]),
            Some(Cow::Borrowed("src/a.rs"))
        ));
        assert_eq!(args.str_arg(&["content"]).as_deref(), Some("a\nb"));
        assert_eq!(args.num_arg(&["n"]), Some(7));
    }

    /// Counting lines on the escaped form gives what decoding and `lines()` give.
    #[test]
    fn lines_are_counted_as_decoded_text_counts_them() {
        for text in [
            r"",
            r"a",
            r"a\n",
            r"\n",
            r"a\nb",
            r"a\r\nb\r\n",
            r"\n\n\n",
            r"é\nü\tx\\n",
            r"x\u000ay",
            r"x\u000Ay\u000a",
            r#"q\"\n\""#,
            r"x\\ny",
            r"\\u000a",
        ] {
            let raw = format!("\"{text}\"");
            let decoded: String = serde_json::from_str(&raw).unwrap();
            assert_eq!(line_count(&raw), Some(decoded.lines().count()), "{raw}");
        }
    }

    proptest::proptest! {
        /// Any text, escaped as serde_json writes it or with newlines and other characters as
        /// `\u` escapes: the count is what decoding and `lines()` give.
        #[test]
        fn any_escaped_text_counts_as_its_decoded_lines(
            text in "[anu0\\\\\"\n\r\t é/]{0,40}",
            unicode_escapes in proptest::bool::ANY,
        ) {
            let mut raw = serde_json::to_string(&text).unwrap();
            if unicode_escapes {
                raw = raw.replace("\\n", "\\u000A").replace('a', "\\u0061");
            }
            let decoded: String = serde_json::from_str(&raw).unwrap();
            proptest::prop_assert_eq!(line_count(&raw), Some(decoded.lines().count()), "{}", raw);
        }
    }

    #[test]
    fn a_repeated_key_reads_as_its_last_value() {
        let args = Args::parse(r#"{"path":"a.rs","n":1,"path":"b.rs"}"#);
        assert_eq!(args.str_arg(&["path"]).as_deref(), Some("b.rs"));
        let parsed: serde_json::Value =
            serde_json::from_str(r#"{"path":"a.rs","path":"b.rs"}"#).unwrap();
        assert_eq!(parsed["path"], "b.rs", "serde_json's own maps agree");
    }

    #[test]
    fn escaped_keys_are_still_found() {
        let args = Args::parse(r#"{"file\u005fpath":"x.rs"}"#);
        assert_eq!(args.str_arg(&["file_path"]).as_deref(), Some("x.rs"));
    }

    #[test]
    fn empty_strings_and_other_types_fall_through_to_the_next_key() {
        let args = Args::parse(r#"{"a":"","b":3,"c":["",  "y"],"d":{"e":1}}"#);
        assert_eq!(args.str_arg(&["a", "b", "d", "c"]).as_deref(), Some(""));
        assert_eq!(args.str_arg(&["a", "b", "d"]), None);
        assert_eq!(args.num_arg(&["a", "d", "b"]), Some(3));
        assert!(matches!(args.words("d"), Some(Words::NotText)));
    }

    #[test]
    fn negative_and_fractional_numbers_are_not_counts() {
        let args = Args::parse(r#"{"a":-1,"b":1.5,"r":[5,-1]}"#);
        assert_eq!(args.num_arg(&["a"]), None);
        assert_eq!(args.num_arg(&["b"]), None);
        assert_eq!(args.range("r"), (Some(5), Some(-1)));
    }

    #[test]
    fn anything_but_an_object_has_no_entries() {
        for text in ["[1,2]", "\"cargo test\"", "{not json", ""] {
            assert!(Args::parse(text).is_empty(), "{text}");
        }
    }
}
