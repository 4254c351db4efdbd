//! Where records come from: JSON Lines (one record per line) or one JSON array of records, the
//! layout LLaMA-Factory and most ShareGPT datasets ship as `.json`. Both are read as a stream:
//! memory holds a few records, never the file.
//!
//! A JSON array is parsed on a reader thread that hands each element over as soon as it is
//! parsed, through a bounded channel (so a slow pipeline stops the parser instead of letting it
//! run ahead). Each element is passed on as its exact source text with the whitespace between
//! tokens removed, so the output stays one record per line and numbers and escapes are never
//! re-encoded.
//!
//! A file's elements are found by the block reader of `formats/json_values.rs` and each is
//! checked by `serde_json` from its own bytes: `serde_json`'s own reader takes a byte at a time
//! through `io::Read`, and made a 78 MB array three times slower to compress than the same
//! records as JSON Lines (issue #17). Anything the quick reading does not expect hands over to
//! `serde_json`'s reader, which reads the file again from the start (passing over the elements
//! already handed on) and decides and reports as it always did.
//!
//! [`check_input`] is the up-front check the command runs before it creates any output: the
//! file must look like JSON Lines or a JSON array, an array must parse to its end, and the
//! first record must be a record (an object with `conversations` or `messages`).

use crate::formats::json_values::JsonValues;
pub use crate::trajectory::minify::minify;
use crate::trajectory::record::{Record, RecordError};
use serde::de::{Deserializer as _, IgnoredAny, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Records parsed ahead of the pipeline (the pipeline's own window bounds the rest).
const ARRAY_READ_AHEAD: usize = 4;

/// How the records of a file are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One record per line; numbers are line numbers.
    JsonLines,
    /// One JSON array of records; numbers are 1-based element positions.
    JsonArray,
}

impl Layout {
    /// How a record number is shown after the file name: `data.jsonl:12`, `data.json: record 12`.
    pub fn locate(self, file: &str, number: u64) -> String {
        match self {
            Layout::JsonLines => format!("{file}:{number}"),
            Layout::JsonArray => format!("{file}: record {number}"),
        }
    }
}

/// One record's raw bytes as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Line number (JSON Lines) or element position (array), 1-based.
    pub number: u64,
    /// The record's text, without a newline; for arrays, minified.
    pub bytes: Vec<u8>,
    /// Input bytes consumed since the previous item (progress display).
    pub input_bytes: u64,
}

/// A stream of records.
pub trait RecordSource {
    /// The next record, `None` at the end; an error ends the stream.
    fn next_item(&mut self) -> io::Result<Option<Item>>;
}

impl<S: RecordSource + ?Sized> RecordSource for &mut S {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        (**self).next_item()
    }
}

impl<S: RecordSource + ?Sized> RecordSource for Box<S> {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        (**self).next_item()
    }
}

/// JSON Lines: blank lines are counted (and their bytes added to the next item's) but yield
/// nothing; a UTF-8 byte order mark before the
/// first line is dropped.
#[derive(Debug)]
pub struct LineSource<R> {
    input: R,
    line: u64,
}

impl<R: BufRead> LineSource<R> {
    pub fn new(input: R) -> Self {
        LineSource { input, line: 0 }
    }
}

impl<R: BufRead> RecordSource for LineSource<R> {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        let mut consumed = 0u64;
        loop {
            let mut buf = Vec::new();
            let n = self.input.read_until(b'\n', &mut buf)?;
            if n == 0 {
                return Ok(None);
            }
            consumed += n as u64;
            self.line += 1;
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if self.line == 1 && buf.starts_with(BOM) {
                buf.drain(..BOM.len());
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(Item {
                number: self.line,
                bytes: buf,
                input_bytes: consumed,
            }));
        }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A JSON array of records, parsed on its own thread.
#[derive(Debug)]
pub struct ArraySource {
    rx: Receiver<io::Result<Item>>,
    thread: Option<JoinHandle<()>>,
    done: bool,
}

impl ArraySource {
    /// Starts parsing `input` (which may begin with a byte order mark) with `serde_json`'s
    /// reader.
    pub fn spawn<R: Read + Send + 'static>(input: R) -> io::Result<Self> {
        Self::start(move |tx| parse_array(input, 0, tx))
    }

    /// Starts reading the file at `path` (which may begin with a byte order mark) element by
    /// element, each parsed from its own bytes; `serde_json`'s reader takes over at anything
    /// unexpected.
    pub fn spawn_file(path: &Path) -> io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let path = path.to_path_buf();
        Self::start(move |tx| read_array_file(file, &path, tx))
    }

    fn start(
        read: impl FnOnce(&SyncSender<io::Result<Item>>) + Send + 'static,
    ) -> io::Result<Self> {
        let (tx, rx) = sync_channel(ARRAY_READ_AHEAD);
        let thread = std::thread::Builder::new()
            .name("baton-array-reader".into())
            .spawn(move || read(&tx))?;
        Ok(ArraySource {
            rx,
            thread: Some(thread),
            done: false,
        })
    }
}

impl RecordSource for ArraySource {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        if self.done {
            return Ok(None);
        }
        match self.rx.recv() {
            Ok(Ok(item)) => Ok(Some(item)),
            Ok(Err(e)) => {
                self.done = true;
                Err(e)
            }
            // The reader finished (end of array) and dropped its sender.
            Err(_) => {
                self.done = true;
                if let Some(t) = self.thread.take()
                    && t.join().is_err()
                {
                    return Err(io::Error::other("the array reader stopped unexpectedly"));
                }
                Ok(None)
            }
        }
    }
}

impl Drop for ArraySource {
    fn drop(&mut self) {
        // Dropping the receiver makes the reader's next send fail, which stops it; waiting
        // here would block on a reader stuck in a slow read, so it is left to finish alone.
        self.thread.take();
    }
}

/// Counts the bytes the parser has consumed, for progress and positions.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The stream was abandoned by the consumer: stop quietly.
const STOPPED: &str = "baton: array reader stopped";

/// Why the quick reading of an array stopped before its end.
enum Quick {
    /// Something `serde_json`'s reader must read (and maybe refuse) itself.
    Unexpected,
    /// The consumer hung up.
    Stopped,
}

/// The elements of the JSON array `values` holds, in order, each handed as its bytes to `each`
/// with its position; `each` checks it with `serde_json` (`Quick::Unexpected` when that
/// fails) and may stop the reading. Returns how many there were, or stops at the first thing
/// `serde_json`'s reader could read differently or refuse: a trailing comma, bytes after the
/// array, a cut-short file or a read error.
fn quick_elements<R: Read>(
    values: &mut JsonValues<R>,
    mut each: impl FnMut(u64, &[u8]) -> Result<(), Quick>,
) -> Result<u64, Quick> {
    if values.next_token() != Some(b'[') {
        return Err(Quick::Unexpected);
    }
    let mut number = 0;
    if values.peek_token() == Some(b']') {
        values.next_token();
    } else {
        loop {
            let bytes = values.next_value().ok_or(Quick::Unexpected)?;
            number += 1;
            each(number, bytes)?;
            match values.next_token() {
                Some(b',') => {}
                Some(b']') => break,
                _ => return Err(Quick::Unexpected),
            }
        }
    }
    match values.next_token() {
        None => Ok(number),
        Some(_) => Err(Quick::Unexpected),
    }
}

/// An element as `serde_json`'s reader reads it for the stream: a `RawValue`, without a
/// nesting limit.
fn raw_element(bytes: &[u8]) -> Result<&RawValue, Quick> {
    serde_json::from_slice(bytes).map_err(|_| Quick::Unexpected)
}

/// [`ArraySource::spawn_file`]'s reader thread.
fn read_array_file(file: std::fs::File, path: &Path, tx: &SyncSender<io::Result<Item>>) {
    let count = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        inner: file,
        count: Arc::clone(&count),
    };
    let reader = match skip_bom(BufReader::with_capacity(1 << 16, counting)) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    // Blocks of the reader's size keep the progress counts as fine as they were.
    let mut values = JsonValues::with_block(reader, 1 << 16);
    let (mut last, mut sent) = (0u64, 0u64);
    let quick = quick_elements(&mut values, |number, bytes| {
        let raw = raw_element(bytes)?;
        let now = count.load(Ordering::Relaxed);
        let item = Item {
            number,
            bytes: minify(raw.get()),
            input_bytes: now.saturating_sub(last),
        };
        last = now;
        sent = number;
        tx.send(Ok(item)).map_err(|_| Quick::Stopped)
    });
    if let Err(Quick::Unexpected) = quick {
        match std::fs::File::open(path) {
            Ok(again) => parse_array(again, sent, tx),
            Err(e) => {
                let _ = tx.send(Err(e));
            }
        }
    }
}

/// Parses the array `input` holds with `serde_json`'s reader, handing on the elements after
/// the first `skip` (those a quick reading handed on already).
fn parse_array<R: Read>(input: R, skip: u64, tx: &SyncSender<io::Result<Item>>) {
    let count = Arc::new(AtomicU64::new(0));
    let reader = match skip_bom(BufReader::with_capacity(1 << 16, input)) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    let counting = Counting {
        inner: reader,
        count: Arc::clone(&count),
    };
    let mut de = serde_json::Deserializer::from_reader(counting);
    let visitor = ElementVisitor {
        tx,
        count: &count,
        last: 0,
        skip,
    };
    let result = de.deserialize_seq(visitor).and_then(|()| de.end());
    if let Err(e) = result {
        if e.to_string().starts_with(STOPPED) {
            return;
        }
        let _ = tx.send(Err(json_error(e)));
    }
}

fn json_error(e: serde_json::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Drops a UTF-8 byte order mark, which `serde_json` rejects.
fn skip_bom<R: BufRead>(mut r: R) -> io::Result<R> {
    if r.fill_buf()?.starts_with(BOM) {
        r.consume(BOM.len());
    }
    Ok(r)
}

struct ElementVisitor<'a> {
    tx: &'a SyncSender<io::Result<Item>>,
    count: &'a AtomicU64,
    last: u64,
    /// Elements parsed but not handed on.
    skip: u64,
}

impl<'de> Visitor<'de> for ElementVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of records")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut number = 0u64;
        while number < self.skip && seq.next_element::<IgnoredAny>()?.is_some() {
            number += 1;
            self.last = self.count.load(Ordering::Relaxed);
        }
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            number += 1;
            let now = self.count.load(Ordering::Relaxed);
            let item = Item {
                number,
                bytes: minify(raw.get()),
                input_bytes: now.saturating_sub(self.last),
            };
            self.last = now;
            if self.tx.send(Ok(item)).is_err() {
                return Err(serde::de::Error::custom(STOPPED));
            }
        }
        Ok(())
    }
}

/// What the up-front check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputCheck {
    pub layout: Layout,
    /// Records in an array (JSON Lines are not counted up front).
    pub records: Option<u64>,
}

/// Decides the layout of `path` and refuses, before anything is written, a file that cannot
/// be read as records: not JSON Lines or an array, an array that does not parse to its end,
/// or a first record that is not a record. The error names the file and where.
pub fn check_input(path: &Path) -> Result<InputCheck, String> {
    let label = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {label}: {e}"))?;
    let mut reader = skip_bom(BufReader::with_capacity(1 << 16, file))
        .map_err(|e| format!("cannot read {label}: {e}"))?;
    let first = first_non_space(&mut reader).map_err(|e| format!("cannot read {label}: {e}"))?;
    let expected = "expected JSON Lines (one record per line) or a JSON array of records, each \
                    an object with `conversations` (ShareGPT) or `messages` (OpenAI)";
    match first {
        None => Ok(InputCheck {
            layout: Layout::JsonLines,
            records: None,
        }),
        Some(b'[') => {
            let records = quick_scan(reader)
                .unwrap_or_else(|| {
                    // Read again with serde_json's reader, which decides and reports.
                    let again = std::fs::File::open(path).map_err(ArrayProblem::Io)?;
                    scan_array(
                        skip_bom(BufReader::with_capacity(1 << 16, again))
                            .map_err(ArrayProblem::Io)?,
                    )
                })
                .map_err(|e| match e {
                    ArrayProblem::Io(e) => format!("cannot read {label}: {e}"),
                    ArrayProblem::Json(e) => {
                        format!("{label}: not a readable JSON array of records: {e}; {expected}")
                    }
                    ArrayProblem::FirstRecord(e) => format!(
                        "{}: not a trajectory record: {e}; {expected}",
                        Layout::JsonArray.locate(&label, 1)
                    ),
                })?;
            Ok(InputCheck {
                layout: Layout::JsonArray,
                records: Some(records),
            })
        }
        Some(b'{') => {
            let file =
                std::fs::File::open(path).map_err(|e| format!("cannot read {label}: {e}"))?;
            let mut lines = LineSource::new(BufReader::new(file));
            if let Some(item) = lines
                .next_item()
                .map_err(|e| format!("cannot read {label}: {e}"))?
            {
                refuse_non_record(&item.bytes).map_err(|e| {
                    let hint = if matches!(e, RecordError::Json(_)) {
                        " (a single JSON document spread over several lines is not JSON Lines)"
                    } else {
                        ""
                    };
                    format!(
                        "{}: not a trajectory record: {e}{hint}; {expected}",
                        Layout::JsonLines.locate(&label, item.number)
                    )
                })?;
            }
            Ok(InputCheck {
                layout: Layout::JsonLines,
                records: None,
            })
        }
        Some(other) => Err(format!(
            "{label} is not a dataset of records: it starts with {}; {expected}",
            describe_start(other)
        )),
    }
}

/// A record whose turns do not read (an unknown role…) is still a record: the pipeline's
/// `--on-error` handles it. Anything else means the file is not a dataset.
fn refuse_non_record(bytes: &[u8]) -> Result<(), RecordError> {
    match Record::parse(bytes) {
        Ok(_) | Err(RecordError::Turns(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

fn describe_start(b: u8) -> String {
    match b {
        b'"' => "a JSON string".into(),
        b'-' | b'0'..=b'9' => "a number".into(),
        b't' | b'f' => "a boolean".into(),
        b'n' => "null".into(),
        0x20..=0x7e => format!("`{}`", b as char),
        _ => format!("the byte 0x{b:02x}"),
    }
}

fn first_non_space<R: BufRead>(r: &mut R) -> io::Result<Option<u8>> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if let Some(pos) = buf.iter().position(|b| !b.is_ascii_whitespace()) {
            return Ok(Some(buf[pos]));
        }
        let n = buf.len();
        r.consume(n);
    }
}

enum ArrayProblem {
    Io(io::Error),
    Json(serde_json::Error),
    FirstRecord(RecordError),
}

/// [`scan_array`] by the quick reading (see the module documentation); `None` when
/// `serde_json`'s reader must decide.
fn quick_scan<R: Read>(reader: R) -> Option<Result<u64, ArrayProblem>> {
    let mut values = JsonValues::new(reader);
    let mut first = None;
    // As `scan_array` reads them: the first element as text, the others only checked.
    let records = quick_elements(&mut values, |number, bytes| {
        if number == 1 {
            first = refuse_non_record(raw_element(bytes)?.get().as_bytes()).err();
        } else {
            serde_json::from_slice::<IgnoredAny>(bytes).map_err(|_| Quick::Unexpected)?;
        }
        Ok(())
    })
    .ok()?;
    Some(match first {
        Some(e) => Err(ArrayProblem::FirstRecord(e)),
        None => Ok(records),
    })
}

/// Parses the whole array without keeping it: the first element as text (it must be a
/// record), the rest skipped. Returns the number of elements.
fn scan_array<R: Read>(reader: R) -> Result<u64, ArrayProblem> {
    struct Scan {
        first: Option<RecordError>,
    }
    impl<'de> Visitor<'de> for &mut Scan {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON array of records")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
            let Some(first) = seq.next_element::<Box<RawValue>>()? else {
                return Ok(0);
            };
            self.first = refuse_non_record(first.get().as_bytes()).err();
            let mut n = 1u64;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    let mut scan = Scan { first: None };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let result = de
        .deserialize_seq(&mut scan)
        .and_then(|n| de.end().map(|()| n));
    if let Some(e) = scan.first {
        return Err(ArrayProblem::FirstRecord(e));
    }
    result.map_err(ArrayProblem::Json)
}

/// Opens `path` as a stream of records in `layout`.
pub fn open_source(path: &Path, layout: Layout) -> io::Result<Box<dyn RecordSource>> {
    Ok(match layout {
        Layout::JsonLines => {
            let file = std::fs::File::open(path)?;
            Box::new(LineSource::new(BufReader::with_capacity(1 << 16, file)))
        }
        Layout::JsonArray => Box::new(ArraySource::spawn_file(path)?),
    })
}

#[cfg(test)]
mod tests;
