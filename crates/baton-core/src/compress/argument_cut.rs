//! Tool-call arguments with their long string leaves cut: an old call that wrote a whole file
//! keeps its path and the file's first characters, not the file.
//!
//! The result is defined as what parsing the arguments into a `serde_json::Value`, cutting its
//! leaves and serializing gives: compact, keys in their order, numbers as written. That path
//! decodes and allocates every string, whole files included, only to throw most of it away;
//! it was a tenth of compacting a real session (`perf record`, issue #17). [`Rewriter`] writes
//! the same text in one pass instead: structure and short strings are copied in serde_json's
//! compact form, a long leaf is decoded only as far as its cut, and the rest of it is skipped
//! eight bytes at a time while still checked as serde_json checks it (no raw control
//! character, every escape well formed). Whatever it does not copy exactly as serde_json would
//! (a repeated or escaped key, a surrogate escape, deep nesting, broken JSON) makes it give up,
//! and the arguments take the `Value` path, so the result never depends on which path ran.

use serde_json::Value;

/// Appended to a string leaf of tool-call arguments that was cut.
pub const ARGS_TRUNCATION_MARKER: &str = "...[truncated]";

/// Tool-call arguments with every string leaf longer than `leaf_max_chars` cut to that many
/// characters plus [`ARGS_TRUNCATION_MARKER`].
///
/// Returns `None` when the arguments are not a JSON object or array (they are then left exactly
/// as they are: slicing them could only make them worse) or when no leaf was long enough. The
/// result always parses; cutting it again returns `None`.
pub fn truncate_tool_call_args(arguments: &str, leaf_max_chars: usize) -> Option<String> {
    // A string's characters never outnumber the bytes of its JSON form, so arguments without
    // a long string token have nothing to cut: most calls skip the parse (issue #17).
    if !has_string_token_longer_than(arguments.as_bytes(), leaf_max_chars) {
        return None;
    }
    match Rewriter::rewrite(arguments, leaf_max_chars) {
        Ok(rewritten) => rewritten,
        Err(Unsure) => through_value(arguments, leaf_max_chars),
    }
}

/// The definition of [`truncate_tool_call_args`], and its path for whatever the rewriter
/// gives up on.
fn through_value(arguments: &str, leaf_max_chars: usize) -> Option<String> {
    let mut value: Value = serde_json::from_str(arguments).ok()?;
    if !(value.is_object() || value.is_array()) {
        return None;
    }
    if !cut_long_leaves(&mut value, leaf_max_chars) {
        return None;
    }
    serde_json::to_string(&value).ok()
}

/// Whether JSON text has a string token (key or value) with more than `max` bytes between
/// its quotes. Text that is not JSON may answer either way; it fails to parse after.
fn has_string_token_longer_than(json: &[u8], max: usize) -> bool {
    let mut at = 0;
    while let Some(i) = json.get(at..).and_then(|rest| memchr::memchr(b'"', rest)) {
        let open = at + i + 1;
        let close = closing_quote(json, open);
        if close - open > max {
            return true;
        }
        at = close + 1;
    }
    false
}

/// The index of the quote that closes the JSON string whose text starts at `at` (escapes
/// skipped), or the end of `json` when none does.
fn closing_quote(json: &[u8], mut at: usize) -> usize {
    while let Some(i) = json
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        if json[at + i] == b'"' {
            return at + i;
        }
        at += i + 2;
    }
    json.len()
}

fn cut_long_leaves(value: &mut Value, max_chars: usize) -> bool {
    match value {
        Value::String(s) => cut_leaf(s, max_chars),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| cut_long_leaves(v, max_chars) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| cut_long_leaves(v, max_chars) | changed),
        _ => false,
    }
}

/// Cuts one string; a leaf this function already cut comes out identical, hence unchanged.
/// The leaf's first `max_chars` characters are sliced, not collected one by one, and a long
/// leaf (a file's whole content) is read only as far as the cut.
fn cut_leaf(leaf: &mut String, max_chars: usize) -> bool {
    let Some((head_end, _)) = leaf.char_indices().nth(max_chars) else {
        return false;
    };
    if leaf[head_end..] == *ARGS_TRUNCATION_MARKER {
        return false;
    }
    leaf.truncate(head_end);
    leaf.push_str(ARGS_TRUNCATION_MARKER);
    true
}

/// The rewriter met something it does not copy exactly as serde_json would.
#[derive(Debug)]
struct Unsure;

/// Deepest nesting the rewriter follows (serde_json refuses past 128).
const MAX_DEPTH: usize = 100;

/// Most keys of one object the rewriter checks for repeats (one by one).
const MAX_KEYS: usize = 64;

/// One pass over JSON text writing it in serde_json's compact form with long leaves cut.
struct Rewriter<'a> {
    src: &'a [u8],
    at: usize,
    out: Vec<u8>,
    max_chars: usize,
    cut_any: bool,
}

impl<'a> Rewriter<'a> {
    /// What [`through_value`] gives for `arguments`, or `Unsure`.
    fn rewrite(arguments: &'a str, max_chars: usize) -> Result<Option<String>, Unsure> {
        let mut w = Rewriter {
            src: arguments.as_bytes(),
            at: 0,
            out: Vec::with_capacity(arguments.len().min(1024)),
            max_chars,
            cut_any: false,
        };
        w.skip_whitespace();
        if !matches!(w.peek(), Some(b'{' | b'[')) {
            // Valid or not, anything but an object or an array is left as it is.
            return Ok(None);
        }
        w.value(0)?;
        w.skip_whitespace();
        if w.at != w.src.len() {
            return Err(Unsure);
        }
        if !w.cut_any {
            return Ok(None);
        }
        // Old calls keep their cut arguments for the rest of the pass: no spare capacity.
        w.out.shrink_to_fit();
        String::from_utf8(w.out).map(Some).map_err(|_| Unsure)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.at).copied()
    }

    /// Takes `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<(), Unsure> {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string_value(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(Unsure),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Unsure> {
        if self.opens_empty(depth, b'}')? {
            return Ok(());
        }
        // serde_json keeps a repeated key's first place and its last value: not a copy.
        let mut keys: Vec<&'a [u8]> = Vec::new();
        loop {
            self.skip_whitespace();
            let key = self.plain_key()?;
            if keys.len() >= MAX_KEYS || keys.contains(&key) {
                return Err(Unsure);
            }
            keys.push(key);
            self.out.push(b'"');
            self.out.extend_from_slice(key);
            self.out.extend_from_slice(b"\":");
            self.skip_whitespace();
            if !self.eat(b':') {
                return Err(Unsure);
            }
            self.skip_whitespace();
            self.value(depth + 1)?;
            if self.closes(b'}')? {
                return Ok(());
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Unsure> {
        if self.opens_empty(depth, b']')? {
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            self.value(depth + 1)?;
            if self.closes(b']')? {
                return Ok(());
            }
        }
    }

    /// Copies the opening bracket of a container at `depth`, and its `close` too when the
    /// container is empty (then `true`).
    fn opens_empty(&mut self, depth: usize, close: u8) -> Result<bool, Unsure> {
        if depth >= MAX_DEPTH {
            return Err(Unsure);
        }
        self.out.push(self.src[self.at]);
        self.at += 1;
        self.skip_whitespace();
        let empty = self.eat(close);
        if empty {
            self.out.push(close);
        }
        Ok(empty)
    }

    /// Copies what follows a member: a comma (`false`: another member follows) or the
    /// container's `close` (`true`).
    fn closes(&mut self, close: u8) -> Result<bool, Unsure> {
        self.skip_whitespace();
        let next = self.peek().ok_or(Unsure)?;
        if next != b',' && next != close {
            return Err(Unsure);
        }
        self.at += 1;
        self.out.push(next);
        Ok(next == close)
    }

    /// A key without escapes, as its bytes; any other key is left to serde_json.
    fn plain_key(&mut self) -> Result<&'a [u8], Unsure> {
        let src = self.src;
        if !self.eat(b'"') {
            return Err(Unsure);
        }
        let close = next_special(src, self.at).ok_or(Unsure)?;
        if src[close] != b'"' {
            return Err(Unsure);
        }
        let key = &src[self.at..close];
        self.at = close + 1;
        Ok(key)
    }

    /// A number as serde_json (with `arbitrary_precision`) writes it back: as written, but
    /// with its exponent marked `e` and signed.
    fn number(&mut self) -> Result<(), Unsure> {
        let start = self.at;
        self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(Unsure),
        }
        if self.eat(b'.') {
            let digits = self.at;
            self.skip_digits();
            if self.at == digits {
                return Err(Unsure);
            }
        }
        self.out.extend_from_slice(&self.src[start..self.at]);
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            self.out.push(b'e');
            match self.peek() {
                Some(sign @ (b'+' | b'-')) => {
                    self.at += 1;
                    self.out.push(sign);
                }
                _ => self.out.push(b'+'),
            }
            let digits = self.at;
            self.skip_digits();
            if self.at == digits {
                return Err(Unsure);
            }
            self.out.extend_from_slice(&self.src[digits..self.at]);
        }
        Ok(())
    }

    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Unsure> {
        if !self.src[self.at..].starts_with(word) {
            return Err(Unsure);
        }
        self.at += word.len();
        self.out.extend_from_slice(word);
        Ok(())
    }

    /// A string value: copied in serde_json's form up to `max_chars` characters; past that,
    /// checked to its end and replaced by the marker.
    fn string_value(&mut self) -> Result<(), Unsure> {
        let src = self.src;
        self.at += 1;
        self.out.push(b'"');
        let mut chars = 0;
        loop {
            let special = next_special(src, self.at).ok_or(Unsure)?;
            let run = &src[self.at..special];
            match chars_within(run, self.max_chars - chars) {
                Ok(n) => {
                    self.out.extend_from_slice(run);
                    chars += n;
                    self.at = special;
                }
                Err(cut) => {
                    self.out.extend_from_slice(&run[..cut]);
                    self.at += cut;
                    return self.past_the_cut();
                }
            }
            match src[special] {
                b'"' => {
                    self.at += 1;
                    self.out.push(b'"');
                    return Ok(());
                }
                b'\\' if chars == self.max_chars => return self.past_the_cut(),
                b'\\' => {
                    let (c, len) = escape_at(src, special)?;
                    push_escaped(&mut self.out, c);
                    chars += 1;
                    self.at = special + len;
                }
                // A raw control character: serde_json refuses the arguments.
                _ => return Err(Unsure),
            }
        }
    }

    /// The rest of a leaf longer than `max_chars`, from its first dropped character: checked
    /// to the closing quote and written as the marker (a leaf cut before keeps its marker and
    /// counts as unchanged).
    fn past_the_cut(&mut self) -> Result<(), Unsure> {
        let src = self.src;
        let dropped = self.at;
        let close = loop {
            let special = next_special(src, self.at).ok_or(Unsure)?;
            match src[special] {
                b'"' => break special,
                b'\\' => self.at = special + escape_at(src, special)?.1,
                _ => return Err(Unsure),
            }
        };
        self.cut_any |= !reads_as_marker(&src[dropped..close]);
        self.out
            .extend_from_slice(ARGS_TRUNCATION_MARKER.as_bytes());
        self.out.push(b'"');
        self.at = close + 1;
        Ok(())
    }
}

/// The characters of `run` (UTF-8 without quotes, escapes or control bytes) when there are at
/// most `room`, else the byte offset of the character past `room`.
fn chars_within(run: &[u8], room: usize) -> Result<usize, usize> {
    if run.len() <= room {
        return Ok(run.iter().filter(|&&b| !is_continuation(b)).count());
    }
    let mut chars = 0;
    for (i, &b) in run.iter().enumerate() {
        if !is_continuation(b) {
            if chars == room {
                return Err(i);
            }
            chars += 1;
        }
    }
    Ok(chars)
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// Whether the dropped text of a leaf, still in JSON form, is exactly the marker.
fn reads_as_marker(escaped: &[u8]) -> bool {
    let marker = ARGS_TRUNCATION_MARKER.as_bytes();
    if escaped == marker || !escaped.contains(&b'\\') {
        return escaped == marker;
    }
    // Escapes spell the marker out in at most six bytes a character.
    if escaped.len() > 6 * marker.len() {
        return false;
    }
    let mut quoted = Vec::with_capacity(escaped.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(escaped);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).is_ok_and(|s| s == ARGS_TRUNCATION_MARKER)
}

/// The character the escape at `at` (a backslash) stands for, and its length in bytes. A
/// surrogate (half of a pair, or alone) is left to serde_json.
fn escape_at(src: &[u8], at: usize) -> Result<(char, usize), Unsure> {
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

/// `c` inside a JSON string as serde_json writes it.
fn push_escaped(out: &mut Vec<u8>, c: char) {
    let short = match c {
        '"' => Some(b'"'),
        '\\' => Some(b'\\'),
        '\u{8}' => Some(b'b'),
        '\u{c}' => Some(b'f'),
        '\n' => Some(b'n'),
        '\r' => Some(b'r'),
        '\t' => Some(b't'),
        _ => None,
    };
    if let Some(letter) = short {
        out.extend_from_slice(&[b'\\', letter]);
    } else if (c as u32) < 0x20 {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let code = c as usize;
        out.extend_from_slice(b"\\u00");
        out.extend_from_slice(&[HEX[code >> 4], HEX[code & 0xF]]);
    } else {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// The first byte at or after `from` that ends a plain run inside a JSON string: a quote, a
/// backslash or a control byte. Eight bytes are tested at a time, since most of a long leaf
/// is plain text.
fn next_special(bytes: &[u8], from: usize) -> Option<usize> {
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

    /// Skipping the parse for arguments without a long string token never changes the
    /// result: checked against always parsing, on escapes, multi-byte text, nesting, keys and
    /// broken JSON around the limit.
    #[test]
    fn the_long_token_scan_only_skips_arguments_with_nothing_to_cut() {
        let mut cases = vec![
            r#"{"command":"ls"}"#.to_string(),
            r#"["a","b"]"#.to_string(),
            "not json".to_string(),
            r#"{"unterminated": "abc"#.to_string(),
            r#"{"a": 12345678901234567890}"#.to_string(),
        ];
        for n in [7, 8, 9, 10, 11] {
            let s = "x".repeat(n);
            let e = "é".repeat(n);
            let esc = "\\n".repeat(n);
            cases.push(format!(r#"{{"content":"{s}"}}"#));
            cases.push(format!(r#"{{"content":"{e}"}}"#));
            cases.push(format!(r#"{{"content":"{esc}"}}"#));
            cases.push(format!(r#"{{"{s}":1}}"#));
            cases.push(format!(r#"{{"a":{{"b":["{s}", "q\\"{s}"]}}}}"#));
        }
        for case in &cases {
            assert_eq!(
                truncate_tool_call_args(case, 8),
                through_value(case, 8),
                "{case}"
            );
        }
    }

    /// JSON text for a generated tree, written in one of many styles: each choice comes from
    /// `style`, so one tree is tried with compact and spaced separators, characters raw or
    /// `\u` escaped (either case of hex), `\/`, short escapes, and numbers as written.
    #[derive(Clone, Debug)]
    enum Node {
        Object(Vec<(String, Node)>),
        Array(Vec<Node>),
        Text(String),
        Number(&'static str),
        Word(&'static str),
    }

    const NUMBERS: [&str; 12] = [
        "0",
        "-0",
        "7",
        "-12",
        "1.50",
        "-0.0",
        "1E5",
        "2e-7",
        "3.25E+10",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890.5e3",
    ];

    fn arb_node() -> impl Strategy<Value = Node> {
        let text = prop::collection::vec(
            prop::sample::select(vec![
                "a",
                "Z",
                " ",
                "é",
                "日本",
                "😀",
                "\"",
                "\\",
                "/",
                "\n",
                "\t",
                "\r",
                "\u{8}",
                "\u{c}",
                "\u{1}",
                "\u{1f}",
                "\u{7f}",
                "\u{2028}",
                "x",
                "...[truncated]",
            ]),
            0..14,
        )
        .prop_map(|parts| parts.concat());
        let leaf = prop_oneof![
            4 => text.prop_map(Node::Text),
            1 => prop::sample::select(NUMBERS.to_vec()).prop_map(Node::Number),
            1 => prop::sample::select(vec!["true", "false", "null"]).prop_map(Node::Word),
        ];
        leaf.prop_recursive(4, 24, 5, |inner| {
            let key = prop::sample::select(vec!["a", "b", "path", "content", "é", "k\"q", "n\\m"]);
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Node::Array),
                prop::collection::vec((key.prop_map(String::from), inner), 0..5)
                    .prop_map(Node::Object),
            ]
        })
    }

    /// A small deterministic generator of style choices.
    struct Style(u64);

    impl Style {
        fn pick(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn space(&mut self, out: &mut String) {
            out.push_str(["", "", " ", "\n  ", "\t", "\r\n"][self.pick(6) as usize]);
        }

        fn string(&mut self, text: &str, out: &mut String) {
            out.push('"');
            for c in text.chars() {
                let code = c as u32;
                match (c, self.pick(4)) {
                    ('"', _) => out.push_str("\\\""),
                    ('\\', _) => out.push_str("\\\\"),
                    ('/', 0) => out.push_str("\\/"),
                    ('\n', 1) => out.push_str("\\u000A"),
                    ('\n', _) => out.push_str("\\n"),
                    ('\t', _) => out.push_str("\\t"),
                    ('\r', _) => out.push_str("\\r"),
                    ('\u{8}', _) => out.push_str("\\b"),
                    ('\u{c}', _) => out.push_str("\\f"),
                    (_, _) if code < 0x20 => out.push_str(&format!("\\u{code:04x}")),
                    (_, 0) if code > 0xFFFF => {
                        let v = code - 0x10000;
                        let (hi, lo) = (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                        out.push_str(&format!("\\u{hi:04x}\\u{lo:04X}"));
                    }
                    (_, 1) if code <= 0xFFFF => out.push_str(&format!("\\u{code:04X}")),
                    (_, 2) if code <= 0xFFFF => out.push_str(&format!("\\u{code:04x}")),
                    _ => out.push(c),
                }
            }
            out.push('"');
        }

        fn write(&mut self, node: &Node, out: &mut String) {
            self.space(out);
            match node {
                Node::Text(t) => self.string(t, out),
                Node::Number(n) => out.push_str(n),
                Node::Word(w) => out.push_str(w),
                Node::Array(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        self.write(item, out);
                        self.space(out);
                    }
                    out.push(']');
                }
                Node::Object(fields) => {
                    out.push('{');
                    for (i, (key, value)) in fields.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        self.space(out);
                        // Keys as agents write them: escaped only where JSON needs it.
                        out.push_str(&serde_json::to_string(key).unwrap());
                        self.space(out);
                        out.push(':');
                        self.write(value, out);
                        self.space(out);
                    }
                    out.push('}');
                }
            }
        }
    }

    /// Breaks well-formed text in one of the ways serde_json refuses (or, for a raw
    /// control byte, a way the scan must notice inside a string).
    fn broken(text: &str, how: u64, at: u64) -> String {
        let cut = text.floor_char_boundary(at as usize % (text.len() + 1));
        match how {
            0 => text[..cut].to_string(),
            1 => format!("{}\u{1}{}", &text[..cut], &text[cut..]),
            2 => format!("{}\\x{}", &text[..cut], &text[cut..]),
            3 => format!("{},", text),
            4 => format!("{} x", text),
            _ => format!("{}\\ud800{}", &text[..cut], &text[cut..]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The rewriter's result is the `Value` path's, byte for byte, for every style of
        /// writing the same arguments and for broken ones; and where the text is whole and
        /// free of what the rewriter leaves to serde_json, the rewriter answers itself.
        #[test]
        fn the_rewriter_writes_what_the_value_path_writes(
            root in arb_node().prop_map(|n| match n {
                Node::Object(_) | Node::Array(_) => n,
                other => Node::Array(vec![other]),
            }),
            seed in 1u64..u64::MAX,
            max in 0usize..12,
            breakage in prop::option::weighted(0.2, (0u64..6, any::<u64>())),
        ) {
            let mut text = String::new();
            Style(seed).write(&root, &mut text);
            if let Some((how, at)) = breakage {
                text = broken(&text, how, at);
            }
            prop_assert_eq!(truncate_tool_call_args(&text, max), through_value(&text, max), "{}", text);
            let left_to_serde = text.contains("\\u") && text.to_lowercase().contains("\\ud")
                || text.contains("\"k\\\"q\"") || text.contains("\"n\\\\m\"")
                || breakage.is_some();
            if !left_to_serde && !has_repeated_keys(&root) {
                prop_assert!(Rewriter::rewrite(&text, max).is_ok(), "gave up on {}", text);
            }
        }
    }

    fn has_repeated_keys(node: &Node) -> bool {
        match node {
            Node::Object(fields) => {
                let mut keys: Vec<&String> = fields.iter().map(|(k, _)| k).collect();
                keys.sort();
                keys.windows(2).any(|w| w[0] == w[1])
                    || fields.iter().any(|(_, v)| has_repeated_keys(v))
            }
            Node::Array(items) => items.iter().any(has_repeated_keys),
            _ => false,
        }
    }

    /// What the rewriter leaves to serde_json, and a leaf cut before, each give the `Value`
    /// path's answer.
    #[test]
    fn what_the_rewriter_leaves_to_serde_json_still_comes_out_right() {
        let long = "x".repeat(30);
        for text in [
            format!(r#"{{"a":"{long}","a":"{long}"}}"#),
            format!(r#"{{"k\"q":"{long}"}}"#),
            format!(r#"{{"a":"\ud83d\ude00{long}"}}"#),
            format!(r#"{{"a":"{long}\ud83d\ude00"}}"#),
            format!(r#"{{"a":"{long}\ud800"}}"#),
            format!(r#"{{"a":"{long}"}} trailing"#),
            format!("{{\"a\":\"{long}\u{1}\"}}"),
            format!(r#"{{"a":"{long}\q"}}"#),
            format!("{}\"{long}\"{}", "[".repeat(101), "]".repeat(101)),
            format!(r#"{{"a":"{}{ARGS_TRUNCATION_MARKER}"}}"#, "y".repeat(10)),
            format!(r#"{{"a":"{}\u002e..[truncated]"}}"#, "y".repeat(10)),
            format!(r#"{{"a":"{}...[truncated]!"}}"#, "y".repeat(10)),
            format!(r#"{{"a": 1e5, "b": "{long}", "c": [true, false, null, -0.5E-3]}}"#),
        ] {
            assert_eq!(
                truncate_tool_call_args(&text, 10),
                through_value(&text, 10),
                "{text}"
            );
        }
        let cut_before = format!(r#"{{"a":"{}{ARGS_TRUNCATION_MARKER}"}}"#, "y".repeat(10));
        assert_eq!(truncate_tool_call_args(&cut_before, 10), None);
        let spelled = format!(r#"{{"a":"{}\u002e..[truncated]"}}"#, "y".repeat(10));
        assert_eq!(truncate_tool_call_args(&spelled, 10), None);
    }

    /// Every tool call's arguments in the shared corpus come out as the `Value` path writes
    /// them, at the pass's limit and at a small one that cuts nearly every leaf, and the
    /// rewriter answers nearly all of them itself.
    #[test]
    fn corpus_arguments_come_out_as_the_value_path_writes_them() {
        let dir = format!(
            "{}/../../../shared/data/normalized",
            env!("CARGO_MANIFEST_DIR")
        );
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("note: {dir} not found; skipping the corpus arguments test");
            return;
        };
        let (mut calls, mut answered) = (0, 0);
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let record: Value = serde_json::from_str(line).unwrap();
                let messages = record["messages"].as_array().cloned().unwrap_or_default();
                for call in messages
                    .iter()
                    .filter_map(|m| m["tool_calls"].as_array())
                    .flatten()
                {
                    let Some(arguments) = call["function"]["arguments"].as_str() else {
                        continue;
                    };
                    calls += 1;
                    for max in [200, 5] {
                        assert_eq!(
                            truncate_tool_call_args(arguments, max),
                            through_value(arguments, max),
                            "{}: {arguments}",
                            path.display()
                        );
                    }
                    answered += usize::from(Rewriter::rewrite(arguments, 5).is_ok());
                }
            }
        }
        assert!(calls > 1000, "{calls} calls");
        assert!(answered * 100 >= calls * 95, "{answered} of {calls}");
    }

    #[test]
    fn the_word_scan_finds_the_first_special_byte() {
        let text = "abcdefgh\u{e9}ijklmnopq\"rs\\t\u{1}";
        let first = |from: usize| next_special(text.as_bytes(), from);
        assert_eq!(first(0), text.find('"'));
        assert_eq!(first(text.find('"').unwrap() + 1), text.find('\\'));
        assert_eq!(first(text.len() - 1), Some(text.len() - 1));
        assert_eq!(next_special(b"plain text without any", 0), None);
        assert_eq!(next_special(b"\x7f\xff\x80 ok \x1f", 0), Some(7));
    }
}
