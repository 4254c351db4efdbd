//! One pass over tool-call arguments writing what [`super::through_value`] writes: serde_json's
//! compact form with long string leaves cut, or `Unsure` where it cannot be sure of that.

use super::ARGS_TRUNCATION_MARKER;
// The rewriter meets something it does not copy exactly as serde_json would: `Unsure`.
use crate::json_check::{MAX_DEPTH, Unsure, checked_string_end, escape_at, next_special};

/// Most keys of one object the rewriter checks for repeats (one by one).
const MAX_KEYS: usize = 64;

/// One pass over JSON text writing it in serde_json's compact form with long leaves cut.
pub(super) struct Rewriter<'a> {
    src: &'a [u8],
    at: usize,
    out: Vec<u8>,
    max_chars: usize,
    cut_any: bool,
}

impl<'a> Rewriter<'a> {
    /// What [`super::through_value`] gives for `arguments`, or `Unsure`.
    pub(super) fn rewrite(arguments: &'a str, max_chars: usize) -> Result<Option<String>, Unsure> {
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
        let close = checked_string_end(src, dropped)?;
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
