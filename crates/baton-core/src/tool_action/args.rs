//! A tool call's JSON arguments, read for the few keys classification looks at.
//!
//! Classification needs a path, a command or a pattern; the arguments around them can be a
//! whole file being written or a long patch. Parsing them into a `serde_json::Value` built a
//! string and a map entry for every one of those, three times per call per compaction (a
//! tenth of compacting a real session, issue #17). Here the top level is split into keys and
//! raw value text without copying, and only a value that is asked for is decoded, borrowed
//! from the arguments unless it holds escapes.

use crate::json_check::{Unsure, decoded_string, next_special, skip_whitespace, value_end};
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
        Args {
            entries: Entries::read(arguments),
        }
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
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
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

/// An object's entries in order, each key (borrowed unless it holds escapes) with its value's
/// raw text: a call's arguments hold a handful, which a vector looks up faster than a map is
/// built (one allocation instead of one per node).
#[derive(Default)]
struct Entries<'a>(Vec<(Cow<'a, str>, &'a str)>);

impl<'a> Entries<'a> {
    /// The entries serde_json reads from `arguments` (none when they are not a JSON object):
    /// read here where the text is what [`scanned_entries`] vouches for, by serde_json
    /// otherwise.
    fn read(arguments: &'a str) -> Self {
        scanned_entries(arguments).unwrap_or_else(|Unsure| {
            serde_json::from_str::<SerdeEntries>(arguments)
                .map(|read| Entries(read.0.into_iter().map(|(k, v)| (k.0, v.get())).collect()))
                .unwrap_or_default()
        })
    }
}

/// The entries of `arguments` read by `json_check` (each value's end found with its text
/// checked as serde_json checks it), or `Unsure` for serde_json to decide: an escaped key or
/// anything `json_check` does not vouch for. Skipping a written file's content this way is
/// several times faster than serde_json's scan, and was most of classifying an `Edit` or a
/// `Write` (issue #17).
fn scanned_entries(arguments: &str) -> Result<Entries<'_>, Unsure> {
    let src = arguments.as_bytes();
    let text = |from: usize, to: usize| arguments.get(from..to).ok_or(Unsure);
    let mut at = skip_whitespace(src, 0);
    if src.get(at) != Some(&b'{') {
        // serde_json refuses anything but an object for a map.
        return Ok(Entries::default());
    }
    let mut entries = Vec::with_capacity(4);
    at = skip_whitespace(src, at + 1);
    if src.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            if src.get(at) != Some(&b'"') {
                return Err(Unsure);
            }
            // A key ends at its quote; a backslash or a control byte first is left to serde.
            let close = next_special(src, at + 1).ok_or(Unsure)?;
            if src[close] != b'"' {
                return Err(Unsure);
            }
            let key = text(at + 1, close)?;
            at = skip_whitespace(src, close + 1);
            if src.get(at) != Some(&b':') {
                return Err(Unsure);
            }
            at = skip_whitespace(src, at + 1);
            let end = value_end(src, at, 1)?;
            entries.push((Cow::Borrowed(key), text(at, end)?));
            at = skip_whitespace(src, end);
            match src.get(at) {
                Some(b',') => at = skip_whitespace(src, at + 1),
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
    }
    if skip_whitespace(src, at) != src.len() {
        return Err(Unsure);
    }
    Ok(Entries(entries))
}

/// [`Entries`] as serde_json reads them, for the text `scanned_entries` leaves to it.
struct SerdeEntries<'a>(Vec<(Key<'a>, &'a RawValue)>);

impl<'de> Deserialize<'de> for SerdeEntries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = SerdeEntries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<SerdeEntries<'de>, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(SerdeEntries(entries))
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
    // Escapes (`\n`, `\"`) need decoding into a new string; serde_json decides what
    // `decoded_string` leaves to it.
    decoded_string(raw)
        .or_else(|Unsure| serde_json::from_str::<String>(raw).map_err(|_| Unsure))
        .ok()
        .map(Cow::Owned)
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
    scanned_list(raw).unwrap_or_else(|Unsure| {
        serde_json::from_str::<Vec<&RawValue>>(raw)
            .map(|items| items.into_iter().map(RawValue::get).collect())
            .unwrap_or_default()
    })
}

/// [`list`] read by `json_check`, or `Unsure` for serde_json to decide. `raw` is a value
/// already read whole, so only its items are looked for.
fn scanned_list(raw: &str) -> Result<Vec<&str>, Unsure> {
    let src = raw.as_bytes();
    if src.first() != Some(&b'[') {
        return Err(Unsure);
    }
    let mut items = Vec::new();
    let mut at = skip_whitespace(src, 1);
    if src.get(at) == Some(&b']') {
        return if at + 1 == src.len() {
            Ok(items)
        } else {
            Err(Unsure)
        };
    }
    loop {
        let end = value_end(src, at, 1)?;
        items.push(raw.get(at..end).ok_or(Unsure)?);
        at = skip_whitespace(src, end);
        match src.get(at) {
            Some(b',') => at = skip_whitespace(src, at + 1),
            Some(b']') if at + 1 == src.len() => return Ok(items),
            _ => return Err(Unsure),
        }
    }
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

    /// serde_json's reading of `arguments`, as `Entries::read` falls back to it.
    fn serde_reading(arguments: &str) -> Vec<(String, String)> {
        serde_json::from_str::<SerdeEntries>(arguments)
            .map(|read| {
                read.0
                    .into_iter()
                    .map(|(k, v)| (k.0.into_owned(), v.get().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Tool-call arguments: objects of strings (escapes, Unicode, control characters),
    /// numbers, literals and nested values, often broken by a cut or an inserted byte.
    fn arguments() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
            "\"[a-z\\\\\"/bfnrtu0-9\u{1}é]{0,12}\"".prop_map(String::from),
            "-?(0|[1-9][0-9]{0,4})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "[0-9.eE+-]{1,6}",
            Just("true".to_string()),
            Just("nul".to_string()),
        ];
        let value = leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                proptest::collection::vec(("[a-z]{0,3}", inner), 0..3).prop_map(|members| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        });
        let key = "[a-z_\\\\\"é]{0,6}";
        (
            proptest::collection::vec((key, value), 0..5),
            0..3usize,
            any::<proptest::sample::Index>(),
            any::<u8>(),
        )
            .prop_map(|(members, how, at, byte)| {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\" : {v}"))
                    .collect();
                let mut bytes = format!(" {{ {} }}\n", members.join(" ,\n")).into_bytes();
                let i = at.index(bytes.len());
                match how {
                    1 => bytes.truncate(i),
                    2 => bytes.insert(i, byte & 0x7f),
                    _ => {}
                }
                String::from_utf8(bytes).unwrap_or_default()
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3_000))]

        /// Whatever arguments `scanned_entries` reads, it reads as serde_json does: the same
        /// keys, in order, with the same raw values (and none where serde_json refuses them).
        #[test]
        fn scanned_entries_are_serde_jsons(text in arguments()) {
            if let Ok(scanned) = scanned_entries(&text) {
                let scanned: Vec<(String, String)> = scanned
                    .0
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                proptest::prop_assert_eq!(scanned, serde_reading(&text), "{:?}", text);
            }
        }

        /// The same for an array argument's items.
        #[test]
        fn scanned_lists_are_serde_jsons(text in arguments()) {
            let serde = |raw: &str| -> Vec<String> {
                serde_json::from_str::<Vec<&RawValue>>(raw)
                    .map(|items| items.iter().map(|i| i.get().to_string()).collect())
                    .unwrap_or_default()
            };
            for (_, raw) in scanned_entries(&text).map(|e| e.0).unwrap_or_default() {
                if let Ok(items) = scanned_list(raw) {
                    let items: Vec<String> = items.iter().map(|i| i.to_string()).collect();
                    proptest::prop_assert_eq!(items, serde(raw), "{:?}", raw);
                }
            }
        }
    }

    /// Plain arguments are read without serde_json; an escaped key is left to it.
    #[test]
    fn plain_arguments_are_scanned_and_escaped_keys_are_not() {
        let text = r#"{"file_path": "src/a.rs", "old_string": "fn a() {\n}\n", "n": [1, 2.5e3, null, {"x": true}]}"#;
        let scanned = scanned_entries(text).unwrap();
        assert_eq!(scanned.0.len(), 3);
        assert_eq!(scanned.0[2].1, r#"[1, 2.5e3, null, {"x": true}]"#);
        assert!(scanned_entries(r#"{"file\u005fpath":"x.rs"}"#).is_err());
        assert_eq!(scanned_list(scanned.0[2].1).unwrap().len(), 4);
    }

    #[test]
    fn anything_but_an_object_has_no_entries() {
        for text in ["[1,2]", "\"cargo test\"", "{not json", ""] {
            assert!(Args::parse(text).is_empty(), "{text}");
        }
    }
}
