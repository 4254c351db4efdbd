//! Reading a file conversation by conversation, so what a reader holds is bounded by the
//! largest conversation, not by the file.
//!
//! JSON Lines of conversation records (one conversation per line: the shared corpus, dataset
//! dumps, exports) are read a line at a time: each conversation is handed on and dropped
//! before the next line is read. Every other layout holds one conversation (a transcript, a
//! message array or lines, a single record), or is a JSON array of records, and is read whole
//! by [`super::parse_document`], as before.

use super::detect::{Parsed, detect_parsed, line_error};
use super::load::{LoadError, format_error_at, record};
use super::{Dialect, FormatName, Layout, Shape, parse_document};
use crate::conversation::Conversation;
use serde_json::Value;
use std::io::BufRead;

/// Lines read to decide whether the input can be streamed (the same number detection reads).
const DETECT_LINES: usize = 64;

/// Why reading stopped: the input, or the consumer.
#[derive(Debug)]
pub enum StreamError<E> {
    /// The input could not be read or parsed (with its line or record).
    Load(LoadError),
    /// The consumer returned this error.
    Consumer(E),
}

/// Calls `each(shape, conversation)` for every conversation of `input`, in order. `forced`
/// overrides detection (then the input is read whole). A conversation is parsed only after
/// the ones before it were consumed, so an error at line N comes after N-1 lines' worth of
/// calls: a consumer that writes as it goes has written those.
pub fn for_each_conversation<R: BufRead, E>(
    mut input: R,
    forced: Option<FormatName>,
    mut each: impl FnMut(&Shape, Conversation) -> Result<(), E>,
) -> Result<(), StreamError<E>> {
    let io = |source| {
        StreamError::Load(LoadError::Io {
            path: "<input>".into(),
            action: "read",
            source,
        })
    };
    // The first lines, kept as text in case the input has to be read whole after all.
    let mut head = String::new();
    let mut values = Vec::new();
    let mut line_no = 0;
    while values.len() < DETECT_LINES {
        let start = head.len();
        if input.read_line(&mut head).map_err(io)? == 0 {
            break;
        }
        line_no += 1;
        let line = head[start..].trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => values.push((line_no, v)),
            Err(_) => {
                values.clear();
                break;
            }
        }
    }
    let shape = match streamable(&values, forced) {
        Some(shape) => shape,
        None => {
            input.read_to_string(&mut head).map_err(io)?;
            let doc = parse_document(&head, forced).map_err(StreamError::Load)?;
            let shape = doc.shape();
            for conversation in doc.conversations {
                each(&shape, conversation).map_err(StreamError::Consumer)?;
            }
            return Ok(());
        }
    };
    drop(head);
    let handle =
        |line: usize, value: Value, each: &mut dyn FnMut(&Shape, Conversation) -> Result<(), E>| {
            let conversation = record(shape.dialect, value)
                .map_err(|e| StreamError::Load(format_error_at(Some(line), e)))?;
            each(&shape, conversation).map_err(StreamError::Consumer)
        };
    for (line, value) in values {
        handle(line, value, &mut each)?;
    }
    let mut buf = String::new();
    loop {
        buf.clear();
        if input.read_line(&mut buf).map_err(io)? == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        if shape.dialect == Dialect::OpenAi
            && let Some(conversation) = super::typed::record_line(text)
        {
            each(&shape, conversation).map_err(StreamError::Consumer)?;
            continue;
        }
        let value = serde_json::from_str::<Value>(text).map_err(|e| {
            StreamError::Load(format_error_at(Some(line_no), line_error(&e, line_no)))
        })?;
        handle(line_no, value, &mut each)?;
    }
}

/// The shape of input whose first lines are `values`, when it is JSON Lines of conversation
/// records (more than one line, detected, not forced); `None` when it must be read whole.
fn streamable(values: &[(usize, Value)], forced: Option<FormatName>) -> Option<Shape> {
    if forced.is_some() || values.len() < 2 {
        return None;
    }
    let detected = detect_parsed(&Parsed::Lines(values.to_vec())).ok()?;
    (detected.transcript.is_none() && detected.layout == Layout::ObjectLines).then_some(Shape {
        dialect: detected.dialect,
        layout: detected.layout,
        transcript: None,
    })
}

/// Checks that every line of JSON Lines `input` is valid JSON, without building anything
/// (about a tenth of the cost of parsing): run over every input before a streaming import
/// writes, so a file with a syntax error is reported before anything is stored. Input whose
/// first line is not a JSON value on its own (one document over many lines) is not JSON
/// Lines; it is parsed whole before its first conversation is handed on, so nothing is
/// checked here.
pub fn check_lines<R: BufRead>(mut input: R) -> Result<(), LoadError> {
    let mut buf = String::new();
    let mut line_no = 0;
    let mut first = true;
    loop {
        buf.clear();
        let n = input.read_line(&mut buf).map_err(|source| LoadError::Io {
            path: "<input>".into(),
            action: "read",
            source,
        })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            if first {
                return Ok(());
            }
            return Err(format_error_at(Some(line_no), line_error(&e, line_no)));
        }
        first = false;
    }
}
