//! Reading and writing conversation files, with errors that say where the problem is.

use crate::conversation::Conversation;
use crate::formats::detect::{Parsed, detect_parsed, parse_text};
use crate::formats::error::FormatError;
use crate::formats::transcript::Transcript;
use crate::formats::{
    Dialect, Document, FormatName, Layout, anthropic, claude_code, codex, gemini_cli, openai,
    sharegpt,
};
use crate::message::{Message, describe_value};
use serde_json::Value;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file that could not be read, parsed or written. Names the file, and the line (JSON Lines)
/// or record (JSON arrays of records) inside it.
#[derive(Debug)]
pub enum LoadError {
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    Format {
        path: Option<PathBuf>,
        /// 1-based line of a JSON Lines file.
        line: Option<usize>,
        /// 0-based record of a JSON array of records.
        record: Option<usize>,
        /// Boxed: keeps `Result<_, LoadError>` small on the happy path.
        source: Box<FormatError>,
    },
}

impl LoadError {
    /// The format problem, if this is one.
    pub fn format_error(&self) -> Option<&FormatError> {
        match self {
            LoadError::Format { source, .. } => Some(source.as_ref()),
            LoadError::Io { .. } => None,
        }
    }

    fn with_path(self, p: &Path) -> Self {
        match self {
            LoadError::Format {
                line,
                record,
                source,
                ..
            } => LoadError::Format {
                path: Some(p.to_path_buf()),
                line,
                record,
                source,
            },
            io => io,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
            LoadError::Format {
                path,
                line,
                record,
                source,
            } => {
                let name = path
                    .as_ref()
                    .map_or_else(|| "<input>".to_string(), |p| p.display().to_string());
                match (line, record, source.as_ref()) {
                    // A JSON syntax error already carries its line.
                    (
                        None,
                        None,
                        FormatError::Json {
                            line: Some(l),
                            column,
                            message,
                        },
                    ) => {
                        write!(f, "{name}:{l}:{column}: invalid JSON: {message}")
                    }
                    (
                        Some(l),
                        _,
                        FormatError::Json {
                            column, message, ..
                        },
                    ) => {
                        write!(f, "{name}:{l}:{column}: invalid JSON: {message}")
                    }
                    (Some(l), _, _) => write!(f, "{name}:{l}: {source}"),
                    (None, Some(r), _) => write!(f, "{name}: record {r}: {source}"),
                    (None, None, _) => write!(f, "{name}: {source}"),
                }
            }
        }
    }
}

/// `Display` already includes the underlying error's message, so `source()` is left empty:
/// error reporters that walk the chain would otherwise print it twice.
impl std::error::Error for LoadError {}

/// A format error at `line` (1-based) of JSON Lines, or with no position of its own.
pub(crate) fn format_error_at(line: Option<usize>, source: FormatError) -> LoadError {
    at(line, None)(source)
}

fn at(line: Option<usize>, record: Option<usize>) -> impl Fn(FormatError) -> LoadError {
    move |source| LoadError::Format {
        path: None,
        line,
        record,
        source: Box::new(source),
    }
}

/// Files up to this size are read whole and parsed from memory, which is several times
/// faster than parsing from a reader (serde_json reads a reader byte by byte); it was a third
/// of a `baton compress` of a real session (issue #17). Holding that much text while parsing
/// is a small, bounded cost; larger files are read in blocks and parsed message by message
/// from each message's bytes (`json_values.rs`).
const READ_WHOLE_UP_TO: u64 = 16 << 20;

/// Reads and parses a conversation file. `forced` overrides detection.
pub fn load_file(path: &Path, forced: Option<FormatName>) -> Result<Document, LoadError> {
    // A large file holding one record or message array is parsed as it is read, without
    // holding its text (`compress` of a large conversation then holds it once); any other
    // file, and any error, is read whole below, which decides and reports as before.
    if forced.is_none()
        && std::fs::metadata(path).is_ok_and(|m| m.len() > READ_WHOLE_UP_TO)
        && let Ok(file) = std::fs::File::open(path)
        && let Some(document) = super::typed::document_from_reader(file)
    {
        return Ok(document);
    }
    let io_error = |source| LoadError::Io {
        path: path.to_path_buf(),
        action: "read",
        source,
    };
    let bytes = std::fs::read(path).map_err(io_error)?;
    parse_document(utf8_text(&bytes).map_err(io_error)?, forced).map_err(|e| e.with_path(path))
}

/// `bytes` as text, checked with SIMD: `std`'s check was 0.13–0.15 ms of a ~5 ms
/// `baton compress` of a real session (real3, real4: 20 µs with `simdutf8`), 3 ms of a 13 MB
/// file (0.6 ms); issue #17. An error names the first byte that is not UTF-8.
fn utf8_text(bytes: &[u8]) -> Result<&str, std::io::Error> {
    simdutf8::basic::from_utf8(bytes).map_err(|_| {
        // The fast check says only that the text is not UTF-8; `std`'s says where.
        let at = std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), |_| bytes.len());
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text: byte {at} is not valid UTF-8"),
        )
    })
}

/// Parses conversation text. `forced` overrides the detected dialect, and its layout (for the
/// names that imply one) must match the text's structure.
pub fn parse_document(text: &str, forced: Option<FormatName>) -> Result<Document, LoadError> {
    if forced.is_none() {
        if let Some(document) = message_lines(text)? {
            return Ok(document);
        }
        if let Some(document) = super::typed::document(text) {
            return Ok(document);
        }
    }
    parse_general(text, forced)
}

/// The general reader: the text as a `Value` tree, detection on it, then conversion. Every
/// input and every error goes through here unless a faster reader took it as it is.
pub(crate) fn parse_general(text: &str, forced: Option<FormatName>) -> Result<Document, LoadError> {
    let parsed = parse_text(text).map_err(at(None, None))?;
    let detected = detect_parsed(&parsed);
    let transcript = match (forced, &detected) {
        (Some(f), _) => f.transcript(),
        (None, Ok(d)) => d.transcript,
        (None, Err(_)) => None,
    };
    if let Some(t) = transcript {
        return Ok(Document {
            dialect: Dialect::OpenAi,
            layout: Layout::Object,
            conversations: vec![load_transcript(t, parsed)?],
            transcript: Some(t),
        });
    }
    let (dialect, layout) = match (forced, detected) {
        (None, Ok(d)) => (d.dialect, d.layout),
        (None, Err(e)) => return Err(at(None, None)(e)),
        (Some(f), detected) => {
            let structural = structural_layout(&parsed, detected.ok().map(|d| d.layout));
            check_forced_layout(f, structural).map_err(at(None, None))?;
            (f.dialect(), f.layout().unwrap_or(structural))
        }
    };
    let conversations = match parsed {
        Parsed::Single(value) => single_value(dialect, layout, value)?,
        Parsed::Lines(lines) => lines_value(dialect, layout, lines)?,
    };
    Ok(Document {
        dialect,
        layout,
        conversations,
        transcript: None,
    })
}

/// Lines detection looks at before deciding a file is JSON Lines of OpenAI messages.
const DETECT_LINES: usize = 64;

/// JSON Lines of OpenAI messages — the shape of the largest files — converted one line at a
/// time: each line's `Value` is dropped as soon as its message is built, instead of holding a
/// `Value` tree for every line of the file (with `preserve_order` and `arbitrary_precision`
/// that tree took ~20× the file's size). Detection reads the first lines; any other shape, or
/// a first line that does not parse, goes the general way (which reports errors as before).
fn message_lines(text: &str) -> Result<Option<Document>, LoadError> {
    let Some(first) = crate::byte_scan::first_nonblank_line(text) else {
        return Ok(None);
    };
    if first.len() >= text.trim_end().len() {
        return Ok(None);
    }
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let mut prefix = Vec::new();
    for (i, line) in lines.clone().take(DETECT_LINES) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => prefix.push((i + 1, v)),
            Err(_) if prefix.is_empty() => return Ok(None),
            Err(_) => break,
        }
    }
    let detected = match detect_parsed(&Parsed::Lines(prefix)) {
        Ok(d) => d,
        Err(_) => return Ok(None),
    };
    if detected.transcript.is_some()
        || detected.layout != Layout::MessageLines
        || detected.dialect != Dialect::OpenAi
    {
        return Ok(None);
    }
    let mut messages = Vec::new();
    for (index, (i, line)) in lines.by_ref().enumerate() {
        if let Ok(message) = serde_json::from_str::<Message>(line) {
            messages.push(message);
            continue;
        }
        // The general reader, for the error naming the line and the field.
        let value = serde_json::from_str::<Value>(line)
            .map_err(|e| at(Some(i + 1), None)(crate::formats::detect::line_error(&e, i + 1)))?;
        let message = Message::from_value(value, index)
            .map_err(|e| at(Some(i + 1), None)(FormatError::from(e)))?;
        messages.push(message);
    }
    messages.shrink_to_fit();
    Ok(Some(Document {
        dialect: Dialect::OpenAi,
        layout: Layout::MessageLines,
        conversations: vec![Conversation::new(messages)],
        transcript: None,
    }))
}

/// Imports an agent-CLI transcript: JSON Lines for Claude Code and Codex (a single object is
/// taken as a one-line file), one JSON object for Gemini CLI.
fn load_transcript(t: Transcript, parsed: Parsed) -> Result<Conversation, LoadError> {
    let lines = match (t, parsed) {
        (Transcript::GeminiCli, Parsed::Single(v)) => {
            return gemini_cli::from_session(&v).map_err(at(None, None));
        }
        (Transcript::GeminiCli, Parsed::Lines(_)) => {
            return Err(at(None, None)(FormatError::UnknownFormat {
                hint: "format `gemini-cli` was forced, but the file is JSON Lines; expected one \
                       session object ({sessionId, messages})"
                    .into(),
            }));
        }
        (_, Parsed::Lines(lines)) => lines,
        (_, Parsed::Single(v @ Value::Object(_))) => vec![(1, v)],
        (_, Parsed::Single(v)) => {
            return Err(at(None, None)(FormatError::UnknownFormat {
                hint: format!(
                    "format `{t}` was forced, but the file holds {}; expected JSON Lines of \
                     transcript records",
                    describe_value(&v)
                ),
            }));
        }
    };
    match t {
        Transcript::ClaudeCode => claude_code::from_lines(&lines, None),
        _ => codex::from_lines(&lines),
    }
}

/// The layout implied by the text's structure alone (for forced formats, where detection of
/// the dialect may have failed or disagreed).
fn structural_layout(parsed: &Parsed, detected: Option<Layout>) -> Layout {
    if let Some(l) = detected {
        return l;
    }
    match parsed {
        Parsed::Single(Value::Array(items)) => match items.first() {
            Some(Value::Object(o))
                if o.contains_key("messages") || o.contains_key("conversations") =>
            {
                Layout::ObjectArray
            }
            _ => Layout::MessageArray,
        },
        Parsed::Single(_) => Layout::Object,
        Parsed::Lines(lines) => match lines.first() {
            Some((_, Value::Object(o))) if o.contains_key("role") => Layout::MessageLines,
            _ => Layout::ObjectLines,
        },
    }
}

fn check_forced_layout(forced: FormatName, structural: Layout) -> Result<(), FormatError> {
    match forced.layout() {
        Some(want) if want != structural => Err(FormatError::UnknownFormat {
            hint: format!(
                "format `{forced}` was forced, but the file is {}",
                layout_description(structural)
            ),
        }),
        _ => Ok(()),
    }
}

fn layout_description(layout: Layout) -> &'static str {
    match layout {
        Layout::MessageArray => "a JSON array of messages",
        Layout::MessageLines => "JSON Lines of messages",
        Layout::Object => "a single JSON object",
        Layout::ObjectArray => "a JSON array of records",
        Layout::ObjectLines => "JSON Lines of records",
    }
}

fn single_value(
    dialect: Dialect,
    layout: Layout,
    value: Value,
) -> Result<Vec<Conversation>, LoadError> {
    match (layout, value) {
        (Layout::ObjectArray, Value::Array(records)) => records
            .into_iter()
            .enumerate()
            .map(|(i, r)| record(dialect, r).map_err(at(None, Some(i))))
            .collect(),
        (Layout::MessageLines, v) => {
            // A lone message object.
            lines_value(dialect, layout, vec![(1, v)])
        }
        (_, v) => record(dialect, v).map(|c| vec![c]).map_err(at(None, None)),
    }
}

fn lines_value(
    dialect: Dialect,
    layout: Layout,
    lines: Vec<(usize, Value)>,
) -> Result<Vec<Conversation>, LoadError> {
    match (layout, dialect) {
        (Layout::MessageLines, Dialect::OpenAi) => {
            let mut messages = Vec::with_capacity(lines.len());
            for (i, (line, v)) in lines.into_iter().enumerate() {
                let m = Message::from_value(v, i)
                    .map_err(|e| at(Some(line), None)(FormatError::from(e)))?;
                messages.push(m);
            }
            Ok(vec![Conversation::new(messages)])
        }
        (Layout::MessageLines, _) => {
            let items = Value::Array(lines.into_iter().map(|(_, v)| v).collect());
            record(dialect, items)
                .map(|c| vec![c])
                .map_err(at(None, None))
        }
        _ => lines
            .into_iter()
            .map(|(line, v)| record(dialect, v).map_err(at(Some(line), None)))
            .collect(),
    }
}

/// One conversation in `dialect`: an object record, or a bare array of messages / turns.
pub(crate) fn record(dialect: Dialect, value: Value) -> Result<Conversation, FormatError> {
    let mut conv = record_as_written(dialect, value)?;
    crate::synthetic::restore_flags(&mut conv);
    Ok(conv)
}

fn record_as_written(dialect: Dialect, value: Value) -> Result<Conversation, FormatError> {
    match dialect {
        Dialect::Anthropic => anthropic::from_anthropic(&value),
        Dialect::ShareGpt => sharegpt::from_sharegpt(&value),
        Dialect::OpenAi => match value {
            Value::Object(obj) => openai::conversation_from_object(obj),
            Value::Array(items) => openai::messages_from_array(items).map(Conversation::new),
            other => Err(FormatError::Shape {
                at: String::new(),
                expected: "a conversation object or an array of messages".into(),
                found: describe_value(&other),
            }),
        },
    }
}

/// Writes `text` to `path` so a crash never leaves a half-written file where the user's data
/// was, and so that writing never replaces something that is not a plain file:
///
/// - a regular file (or a new one) is replaced atomically: temporary file in the same folder,
///   fsync when it replaces a file the user had (see the comment there), rename;
/// - a symlink stays a symlink: the file it names is replaced that way (or created);
/// - anything else (`/dev/null`, a FIFO, a terminal, `/dev/stdout` and other links to a
///   process's descriptors under `/proc`) is opened and written through. A rename there would
///   put a regular file in place of the device node or pipe (as root, turning `/dev/null` into
///   a 0600 file for every program on the machine) or write to a file the descriptor no longer
///   refers to.
///
/// The file gets the permissions any other program's output would: a new file is created with
/// mode 0666 less the umask (0644 under the usual umask 022), and a replaced file keeps its
/// mode. A plain temporary file would be 0600, and the rename would carry that over, leaving
/// compacted conversations and exports unreadable to the group the user shares them with.
/// (The tool-output spill store keeps 0600 on purpose: see `tool_output`.)
pub fn write_file(path: &Path, text: &str) -> Result<(), LoadError> {
    write_file_with(path, |out| out.write_all(text.as_bytes()))
}

/// [`write_file`] for content that `write` produces piece by piece, so that a long output
/// never has to be held whole in memory ([`crate::formats::Document::write_text`]). The file
/// is handed over unbuffered: a writer of many small pieces buffers them itself, in a writer
/// of a concrete type, since each call through `dyn Write` is an indirect call.
/// An error from `write` leaves the path as it was (or, written through, as far as it got).
pub fn write_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), LoadError> {
    match output_target(path) {
        Target::Replace(file) => replace_file(path, &file, write),
        Target::WriteThrough => write_through(path, write),
    }
}

/// How `write_file` writes a path.
enum Target {
    /// Atomically replace (or create) this regular file: the path itself or, for a symlink,
    /// the file at the end of its chain of links.
    Replace(PathBuf),
    /// Open the path as it is and write into it.
    WriteThrough,
}

/// Follows `path`'s chain of symlinks by hand, so that a link living under `/proc` (what
/// `/dev/stdout` and `/dev/fd/N` lead to) is seen as a descriptor and written through rather
/// than resolved to a file name whose replacement the descriptor would never see.
fn output_target(path: &Path) -> Target {
    /// The kernel's own limit on links followed in one lookup.
    const MAX_LINKS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(m) => m,
            // Nothing there yet (a new file, or a dangling link's target): create it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Target::Replace(current);
            }
            // Let opening the path report the problem.
            Err(_) => return Target::WriteThrough,
        };
        if meta.file_type().is_file() {
            return Target::Replace(current);
        }
        if !meta.file_type().is_symlink() {
            return Target::WriteThrough;
        }
        let parent = match current.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if in_proc(&parent) {
            return Target::WriteThrough;
        }
        let Ok(link) = std::fs::read_link(&current) else {
            return Target::WriteThrough;
        };
        current = if link.is_absolute() {
            link
        } else {
            parent.join(link)
        };
    }
    // A loop of links: opening reports it.
    Target::WriteThrough
}

/// True for a folder of `/proc` (where links name open descriptors, not files).
fn in_proc(dir: &Path) -> bool {
    dir.canonicalize().is_ok_and(|d| d.starts_with("/proc"))
}

/// Writes into `path` as it is (device, FIFO, descriptor): no temporary file, no rename, no
/// fsync (which devices and pipes refuse).
fn write_through(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), LoadError> {
    let io = |action: &'static str| {
        move |source| LoadError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .create(true)
        .open(path)
        .map_err(io("open"))?;
    write(&mut file).map_err(io("write"))
}

/// Atomically replaces the regular file `file` (what `path` names, after its links) with
/// what `write` writes; errors name `path`, the name the user gave.
fn replace_file(
    path: &Path,
    file: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), LoadError> {
    let io = |action: &'static str| {
        move |source| LoadError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // `open(2)` applies the umask to this mode, exactly as for a file the user creates.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(io("create a temporary file"))?;
    let existing = std::fs::metadata(file).ok().filter(|m| m.is_file());
    if let Some(existing) = &existing {
        std::fs::set_permissions(tmp.path(), existing.permissions())
            .map_err(io("copy the permissions of"))?;
    }
    write(tmp.as_file_mut()).map_err(io("write"))?;
    // The rename is atomic either way: a killed process leaves the old file or the new one,
    // never half of one. What `fsync` adds is surviving a power loss or kernel crash, after
    // which a rename that reached the disk before the data leaves an empty file. That loses
    // something only when a file was there: a new file is at worst missing or empty, and the
    // command is run again. The flush was 0.4–0.9 ms of a 5 ms `baton compress` to ext4 here,
    // the largest part of such a process not spent computing (issue #17).
    if existing.is_some() {
        tmp.as_file().sync_all().map_err(io("sync"))?;
    }
    tmp.persist(file).map_err(|e| io("replace")(e.error))?;
    Ok(())
}
