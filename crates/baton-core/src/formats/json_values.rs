//! Reading a large JSON file one value at a time, each value parsed from its own bytes.
//!
//! `serde_json` parses a slice several times faster than a reader: its reader takes the input
//! a byte at a time through `io::Read`, and was half of a `baton compress` of the 86 MB
//! `synth_100k` conversation (issue #17). Reading the whole file first would be as fast but
//! hold the text beside the parsed conversation. So a large record or message array is read
//! in blocks, each message's bytes are found by a structural scan (strings skipped with
//! `memchr`, brackets counted), and each message is parsed from those bytes: the file's text
//! is held one block (and one value) at a time.
//!
//! The scan only finds where values end; `serde_json` still checks every value it is handed,
//! and anything the scan does not expect (a trailing comma, a missing colon, bytes after the
//! end) ends reading with `None`, so the caller falls back to its general reader, which
//! decides and reports as it always did.
//!
//! Used for large conversation files (`typed.rs`) and for datasets shipped as one JSON array
//! of records (`trajectory/source.rs`).

use std::io::Read;

/// Bytes read at a time.
const BLOCK: usize = 1 << 20;

/// `serde_json`'s recursion limit: a value nested this deep, counting the levels around it,
/// is refused (the general reader then reports it).
pub(crate) const MAX_NESTING: usize = 127;

/// A reader of JSON structure: single bytes, and whole values as bytes.
pub(crate) struct JsonValues<R> {
    reader: R,
    buf: Vec<u8>,
    /// How deeply the last value [`Self::next_value`] returned nests (0 for a scalar).
    depth: usize,
    /// The next unread byte of `buf`.
    at: usize,
    /// The reader is exhausted.
    done: bool,
    /// Bytes read at a time ([`BLOCK`]; tests read a byte or a few at a time).
    block: usize,
}

impl<R: Read> JsonValues<R> {
    pub(crate) fn new(reader: R) -> Self {
        Self::with_block(reader, BLOCK)
    }

    pub(crate) fn with_block(reader: R, block: usize) -> Self {
        JsonValues {
            reader,
            buf: Vec::with_capacity(block),
            depth: 0,
            at: 0,
            done: false,
            block: block.max(1),
        }
    }

    /// The next byte that is not JSON whitespace, consumed; `None` at the end (or on a read
    /// error, which the general reader then meets and reports).
    pub(crate) fn next_token(&mut self) -> Option<u8> {
        loop {
            while let Some(&b) = self.buf.get(self.at) {
                self.at += 1;
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Some(b);
                }
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// The next non-whitespace byte, left unread.
    pub(crate) fn peek_token(&mut self) -> Option<u8> {
        let b = self.next_token()?;
        self.at -= 1;
        Some(b)
    }

    /// The bytes of the next value (after any whitespace), consumed; `None` when the input ends
    /// before the value does. The value is not checked beyond finding its end.
    pub(crate) fn next_value(&mut self) -> Option<&[u8]> {
        // Offsets below count from `self.at`, the value's first byte: a fill moves the unread
        // bytes to the front of the buffer, and offsets from there stay valid.
        self.depth = 0;
        let len = match self.peek_token()? {
            b'"' => self.string_end(1)?,
            b'{' | b'[' => self.container_end()?,
            _ => self.scalar_end(),
        };
        let value = &self.buf[self.at..self.at + len];
        self.at += len;
        Some(value)
    }

    /// How deeply the last value read nests: `serde_json` refuses values nested deeper than
    /// its recursion limit, which counts the levels around a value too.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The offset just past the quote closing the string whose text starts at `off`.
    fn string_end(&mut self, mut off: usize) -> Option<usize> {
        loop {
            let rest = &self.buf[self.at + off..];
            match memchr::memchr2(b'"', b'\\', rest) {
                Some(i) if rest[i] == b'"' => return Some(off + i + 1),
                // An escape: the escaped byte is skipped, whatever it is.
                Some(i) => {
                    off += i + 2;
                    self.byte(off - 1)?;
                }
                None => {
                    off = self.buf.len() - self.at;
                    if !self.fill() {
                        return None;
                    }
                }
            }
        }
    }

    /// The offset just past the bracket closing the object or array that starts the value.
    /// Brackets of either kind are counted alike; a mismatch is `serde_json`'s to refuse.
    fn container_end(&mut self) -> Option<usize> {
        let (mut depth, mut off) = (0usize, 0usize);
        loop {
            match self.byte(off)? {
                b'{' | b'[' => {
                    depth += 1;
                    self.depth = self.depth.max(depth);
                }
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(off + 1);
                    }
                }
                b'"' => {
                    off = self.string_end(off + 1)?;
                    continue;
                }
                _ => {}
            }
            off += 1;
        }
    }

    /// The length of a number, `true`, `false` or `null`: up to the next delimiter or the end.
    fn scalar_end(&mut self) -> usize {
        let mut off = 0;
        while let Some(b) = self.byte(off) {
            if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            off += 1;
        }
        off
    }

    /// The byte `off` past the unread start, reading more input when needed.
    fn byte(&mut self, off: usize) -> Option<u8> {
        while self.at + off >= self.buf.len() {
            if !self.fill() {
                return None;
            }
        }
        Some(self.buf[self.at + off])
    }

    /// Reads another block after the unread bytes, first dropping the bytes before them.
    /// False when the input is exhausted.
    fn fill(&mut self) -> bool {
        if self.done {
            return false;
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let len = self.buf.len();
        self.buf.resize(len + self.block, 0);
        let read = loop {
            match self.reader.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break 0,
            }
        };
        self.buf.truncate(len + read);
        self.done = read == 0;
        read > 0
    }
}
