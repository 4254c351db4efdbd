//! Keeping huge tool results out of the context window.
//!
//! One `cat` of a log or one search over a large tree can return more text than the whole
//! context window holds. Two checks stop that:
//!
//! - [`ToolResultStore::persist_if_oversized`], right after a tool returns: a result over its
//!   tool's threshold is written to `$BATON_HOME/tool-results/` and replaced in the conversation
//!   by a `<persisted-output>` block (size, path, how to read ranges of the file, a preview).
//! - [`ToolResultStore::enforce_turn_budget`], after all results of one assistant turn: when
//!   they add up to more than the turn budget, the largest are spilled the same way until the
//!   total fits, because many medium results can overflow the window as surely as one huge one.
//!
//! Files are named after the tool call id, sanitized so no id can name a path outside the
//! folder, and written atomically (temporary file, fsync, rename) so a crash never leaves a
//! half-written result behind a block that points at it. [`ToolResultStore::sweep_expired`]
//! removes files once they are older than the retention period.

use crate::message::{Content, Message, Role};
use crate::truncate::{group_digits, preview};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Results longer than this many chars are persisted unless their tool has its own threshold.
pub const DEFAULT_RESULT_SIZE_CHARS: usize = 100_000;
/// The most chars all tool results of one assistant turn may take together.
pub const DEFAULT_TURN_BUDGET_CHARS: usize = 200_000;
/// How much of a persisted result stays visible in the context.
pub const DEFAULT_PREVIEW_CHARS: usize = 1_500;
/// How long persisted results are kept on disk: long enough to resume last week's session.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Tools whose results are never persisted. `read_file` is how the model reads a persisted
/// result back; persisting what it returns would send the model into a persist-read-persist loop.
pub const DEFAULT_EXEMPT_TOOLS: [&str; 1] = ["read_file"];
/// Name of the folder under `$BATON_HOME` that holds persisted results.
pub const TOOL_RESULTS_DIR: &str = "tool-results";
/// Opening tag of the block that replaces a persisted result.
pub const PERSISTED_OUTPUT_OPEN: &str = "<persisted-output>";
/// Closing tag of the block that replaces a persisted result.
pub const PERSISTED_OUTPUT_CLOSE: &str = "</persisted-output>";

/// The line of a block that names the saved file; [`persisted_path`] looks for it.
const PATH_LINE_PREFIX: &str = "Full text saved at: ";
/// Longest sanitized id kept before the hash suffix; keeps names well under filesystem limits.
const MAX_STEM_CHARS: usize = 120;
/// Hex digits of SHA-256 used to tell apart ids that sanitize to the same stem.
const HASH_HEX_DIGITS: usize = 12;
/// Lines suggested in the `sed` example: a page that fits comfortably in context.
const SUGGESTED_PAGE_LINES: usize = 200;

/// What went wrong touching the tool-results folder, with the path and the operation.
#[derive(Debug, thiserror::Error)]
pub enum ToolOutputError {
    #[error("could not {operation} `{}`: {source}", path.display())]
    Io {
        operation: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl ToolOutputError {
    fn io<'p>(operation: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> Self + 'p {
        move |source| ToolOutputError::Io {
            operation,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Size limits for tool results, all in chars (the unit the reference design budgets in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutputBudget {
    /// Threshold for tools without an entry in `tool_threshold_chars`.
    pub default_threshold_chars: usize,
    /// Per-tool thresholds, by tool name.
    pub tool_threshold_chars: BTreeMap<String, usize>,
    /// Tools whose results are never persisted, by either check.
    pub exempt_tools: BTreeSet<String>,
    /// Most chars one turn's tool results may take together.
    pub turn_budget_chars: usize,
    /// Chars of a persisted result shown in its block.
    pub preview_chars: usize,
    /// Age after which [`ToolResultStore::sweep_expired`] removes a file.
    pub retention: Duration,
}

impl Default for ToolOutputBudget {
    fn default() -> Self {
        ToolOutputBudget {
            default_threshold_chars: DEFAULT_RESULT_SIZE_CHARS,
            tool_threshold_chars: BTreeMap::new(),
            exempt_tools: DEFAULT_EXEMPT_TOOLS.iter().map(|t| t.to_string()).collect(),
            turn_budget_chars: DEFAULT_TURN_BUDGET_CHARS,
            preview_chars: DEFAULT_PREVIEW_CHARS,
            retention: DEFAULT_RETENTION,
        }
    }
}

impl ToolOutputBudget {
    /// The size above which `tool_name`'s results are persisted; `None` for exempt tools.
    pub fn threshold_for(&self, tool_name: &str) -> Option<usize> {
        if self.is_exempt(tool_name) {
            return None;
        }
        let own = self.tool_threshold_chars.get(tool_name).copied();
        Some(own.unwrap_or(self.default_threshold_chars))
    }

    pub fn is_exempt(&self, tool_name: &str) -> bool {
        self.exempt_tools.contains(tool_name)
    }
}

/// One result (or one text part of a result) that was written to disk and replaced by a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persisted {
    /// The tool call the result answered, when the message named one.
    pub tool_call_id: Option<String>,
    /// Index of the text part that was replaced, for list-valued content.
    pub part_index: Option<usize>,
    /// Absolute path of the file holding the full text.
    pub path: PathBuf,
    /// Length of the full text in chars.
    pub original_chars: usize,
    /// Length of the full text in bytes (the file's size).
    pub original_bytes: usize,
}

/// The `tool-results` folder under `$BATON_HOME`, and the budget that decides what goes there.
#[derive(Debug, Clone)]
pub struct ToolResultStore {
    dir: PathBuf,
    budget: ToolOutputBudget,
}

impl ToolResultStore {
    /// The store at `<baton_home>/tool-results`, with the default budget. Nothing is created on
    /// disk until a result is persisted.
    ///
    /// The path is made absolute here so blocks always name a file the model can open whatever
    /// the tool's working directory is.
    pub fn new(baton_home: impl AsRef<Path>) -> Self {
        let dir = baton_home.as_ref().join(TOOL_RESULTS_DIR);
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        ToolResultStore {
            dir,
            budget: ToolOutputBudget::default(),
        }
    }

    pub fn with_budget(mut self, budget: ToolOutputBudget) -> Self {
        self.budget = budget;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn budget(&self) -> &ToolOutputBudget {
        &self.budget
    }

    /// Persists `message` (the result of a call to `tool_name`) when its text is over the tool's
    /// threshold, replacing it in place with a `<persisted-output>` block.
    ///
    /// For list-valued content the largest text parts are persisted one at a time until the
    /// message fits; images and other parts stay. Returns what was persisted (empty when the
    /// result fit, the tool is exempt, or it already is a block). On error the message is left
    /// as it was; a host that still needs it smaller can fall back to
    /// [`crate::truncate::truncate_head_tail`].
    pub fn persist_if_oversized(
        &self,
        tool_name: &str,
        message: &mut Message,
    ) -> Result<Vec<Persisted>, ToolOutputError> {
        let Some(threshold) = self.budget.threshold_for(tool_name) else {
            return Ok(Vec::new());
        };
        let total = text_chars(message);
        if total <= threshold {
            return Ok(Vec::new());
        }
        let units = spillable_units(std::slice::from_ref(message), |_| true);
        self.spill_largest_until(std::slice::from_mut(message), units, total, threshold)
    }

    /// Spills the largest not-yet-persisted tool results of one turn until all of them together
    /// take at most the turn budget.
    ///
    /// Pass the turn's assistant message together with its tool results (for instance
    /// `&mut messages[assistant_index..]`): tool names are looked up from the assistant's tool
    /// calls (or a tool message's own `name`), so exempt tools are recognised and left alone.
    /// Only tool messages count towards the budget. Spilling stops early when nothing left can
    /// shrink, so the total may stay over budget if exempt results alone exceed it. On error,
    /// results spilled before the failure stay spilled; each block points at a complete file.
    pub fn enforce_turn_budget(
        &self,
        turn: &mut [Message],
    ) -> Result<Vec<Persisted>, ToolOutputError> {
        let total: usize = turn
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(text_chars)
            .sum();
        if total <= self.budget.turn_budget_chars {
            return Ok(Vec::new());
        }
        let names = tool_names_by_call_id(turn);
        let units = spillable_units(turn, |m| {
            m.role == Role::Tool && !self.budget.is_exempt(tool_name_of(m, &names))
        });
        self.spill_largest_until(turn, units, total, self.budget.turn_budget_chars)
    }

    /// Removes files in the folder whose modification time is more than the retention period
    /// before `now`, and returns how many were removed.
    ///
    /// Every regular file counts, including temporary files left by a crash mid-write; the
    /// folder belongs to Baton. A missing folder means there is nothing to sweep. Files with a
    /// modification time after `now` (clock skew) are kept.
    pub fn sweep_expired(&self, now: SystemTime) -> Result<usize, ToolOutputError> {
        let entries = match fs::read_dir(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            other => other.map_err(ToolOutputError::io("list", &self.dir))?,
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry.map_err(ToolOutputError::io("list", &self.dir))?;
            if self.remove_if_expired(&entry, now)? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn remove_if_expired(
        &self,
        entry: &fs::DirEntry,
        now: SystemTime,
    ) -> Result<bool, ToolOutputError> {
        let path = entry.path();
        let modified = match entry.metadata().and_then(|m| {
            if m.is_file() {
                m.modified().map(Some)
            } else {
                Ok(None)
            }
        }) {
            Ok(Some(modified)) => modified,
            Ok(None) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => {
                return Err(ToolOutputError::io("read the modification time of", &path)(
                    e,
                ));
            }
        };
        if !is_expired(modified, now, self.budget.retention) {
            return Ok(false);
        }
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(ToolOutputError::io("remove", &path)(e)),
        }
    }

    /// Spills `units` largest first while `total` is over `limit`, updating `total` by how much
    /// each block is shorter than the text it replaced.
    fn spill_largest_until(
        &self,
        messages: &mut [Message],
        mut units: Vec<Spillable>,
        mut total: usize,
        limit: usize,
    ) -> Result<Vec<Persisted>, ToolOutputError> {
        units.sort_by_key(|u| std::cmp::Reverse(u.chars));
        let mut persisted = Vec::new();
        for unit in units {
            if total <= limit {
                break;
            }
            let Some(message) = messages.get_mut(unit.message) else {
                continue;
            };
            if let Some((done, block_chars)) = self.spill(message, unit.part)? {
                total = total.saturating_sub(done.original_chars) + block_chars;
                persisted.push(done);
            }
        }
        Ok(persisted)
    }

    /// Writes one text of `message` to disk and puts its block in its place. Returns `None`
    /// without touching anything when the block would not be shorter than the text.
    fn spill(
        &self,
        message: &mut Message,
        part: Option<usize>,
    ) -> Result<Option<(Persisted, usize)>, ToolOutputError> {
        let Some(text) = unit_text(message, part).map(str::to_owned) else {
            return Ok(None);
        };
        let original_chars = text.chars().count();
        let id = file_id(message.tool_call_id.as_deref(), part, &text);
        let target = self.choose_target(&id, &text)?;
        let block = persisted_output_block(&target.path, &text, self.budget.preview_chars);
        let block_chars = block.chars().count();
        if block_chars >= original_chars {
            return Ok(None);
        }
        self.store(&target, &text)?;
        set_unit_text(message, part, block);
        let done = Persisted {
            tool_call_id: message.tool_call_id.clone(),
            part_index: part,
            path: target.path,
            original_chars,
            original_bytes: text.len(),
        };
        Ok(Some((done, block_chars)))
    }

    /// Picks the file for a result with file id `id`.
    ///
    /// An existing file with the same content is reused. An existing file with *different*
    /// content is left alone and the new result goes to a name that adds a hash of its content:
    /// some servers reuse tool call ids (`call_0` every turn), and overwriting would make an
    /// earlier block in the conversation point at the wrong output.
    fn choose_target(&self, id: &str, text: &str) -> Result<Target, ToolOutputError> {
        let stem = safe_file_name(id);
        let primary = self.dir.join(format!("{stem}.txt"));
        match existing_content(&primary, text)? {
            Existing::Absent => Ok(Target::fresh(primary)),
            Existing::Same => Ok(Target::reuse(primary)),
            Existing::Different => {
                let alternate = self.dir.join(format!("{stem}_{}.txt", short_hash(text)));
                match existing_content(&alternate, text)? {
                    Existing::Same => Ok(Target::reuse(alternate)),
                    Existing::Absent | Existing::Different => Ok(Target::fresh(alternate)),
                }
            }
        }
    }

    /// Writes a fresh target atomically, or refreshes a reused one's modification time so the
    /// retention period counts from its latest use.
    fn store(&self, target: &Target, text: &str) -> Result<(), ToolOutputError> {
        if target.reuse {
            return touch(&target.path);
        }
        fs::create_dir_all(&self.dir).map_err(ToolOutputError::io("create", &self.dir))?;
        write_atomically(&self.dir, &target.path, text)
    }
}

/// Where a result goes, and whether an identical copy is already there.
struct Target {
    path: PathBuf,
    reuse: bool,
}

impl Target {
    fn fresh(path: PathBuf) -> Self {
        Target { path, reuse: false }
    }

    fn reuse(path: PathBuf) -> Self {
        Target { path, reuse: true }
    }
}

enum Existing {
    Absent,
    Same,
    Different,
}

/// Compares a file on disk with `text`, reading it only when the sizes match.
fn existing_content(path: &Path, text: &str) -> Result<Existing, ToolOutputError> {
    let meta = match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Absent),
        other => other.map_err(ToolOutputError::io("inspect", path))?,
    };
    if meta.len() != text.len() as u64 {
        return Ok(Existing::Different);
    }
    let on_disk = fs::read(path).map_err(ToolOutputError::io("read", path))?;
    Ok(if on_disk == text.as_bytes() {
        Existing::Same
    } else {
        Existing::Different
    })
}

/// Temporary file in the same folder, data, fsync, rename over the target, fsync of the folder:
/// a reader sees either no file or the whole file, even after a crash.
///
/// The temporary file is created readable by its owner only (0600, whatever the umask), and
/// the rename keeps that. Unlike the user's own outputs (`formats::write_file` follows the
/// umask), a spilled result can hold secrets the tool happened to read (a `cat .env`, the
/// headers of a `curl -v`), so no one else on the machine may read it.
fn write_atomically(dir: &Path, path: &Path, text: &str) -> Result<(), ToolOutputError> {
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(ToolOutputError::io("create a temporary file in", dir))?;
    tmp.write_all(text.as_bytes())
        .map_err(ToolOutputError::io("write", tmp.path()))?;
    tmp.as_file()
        .sync_all()
        .map_err(ToolOutputError::io("sync", path))?;
    tmp.persist(path)
        .map_err(|e| ToolOutputError::io("move a temporary file to", path)(e.error))?;
    sync_dir(dir)
}

/// Makes the rename itself durable. Only Unix can open and fsync a directory.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), ToolOutputError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ToolOutputError::io("sync", dir))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), ToolOutputError> {
    Ok(())
}

fn touch(path: &Path) -> Result<(), ToolOutputError> {
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()))
        .map_err(ToolOutputError::io("update the modification time of", path))
}

fn is_expired(modified: SystemTime, now: SystemTime, retention: Duration) -> bool {
    now.duration_since(modified)
        .is_ok_and(|age| age > retention)
}

/// A file name stem for `id` that cannot leave the folder it is joined to.
///
/// Runs of chars other than ASCII letters, digits, `_`, `.` and `-` become one `_`, and `.`, `_`
/// and `-` are trimmed from both ends, so no separator, control char, `..` component or hidden
/// name survives. When that changed the id, or the stem is over 120 chars, the first 120 chars
/// get `_` and 12 hex digits of the id's SHA-256 appended, so distinct ids that sanitize alike
/// still get distinct files. An id with nothing left is named by its hash alone.
pub fn safe_file_name(id: &str) -> String {
    let cleaned = replace_unsafe_runs(id);
    let stem = cleaned.trim_matches(|c| matches!(c, '.' | '_' | '-'));
    if stem.is_empty() {
        return short_hash(id);
    }
    if stem == id && stem.len() <= MAX_STEM_CHARS {
        return stem.to_owned();
    }
    let kept: String = stem.chars().take(MAX_STEM_CHARS).collect();
    format!("{kept}_{}", short_hash(id))
}

fn replace_unsafe_runs(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    let mut in_run = false;
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out
}

fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex.chars().take(HASH_HEX_DIGITS).collect()
}

/// The id a result's file is named after: its tool call id (plus the part index for one part
/// of list content), or a hash of the text when the message names no call.
fn file_id(tool_call_id: Option<&str>, part: Option<usize>, text: &str) -> String {
    let base = match tool_call_id {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("result_{}", short_hash(text)),
    };
    match part {
        Some(i) => format!("{base}_part{i}"),
        None => base,
    }
}

/// The text that replaces a persisted result in the conversation.
///
/// It gives the model what it needs to carry on without the full text: how big the result was,
/// where it is, how to read a slice of it, and a preview long enough to decide whether it has to.
pub fn persisted_output_block(path: &Path, original: &str, preview_chars: usize) -> String {
    let chars = original.chars().count();
    let lines = original.lines().count();
    let shown = preview(original, preview_chars);
    let path_text = path.display().to_string();
    let mut block = format!(
        "{PERSISTED_OUTPUT_OPEN}\n\
         This tool result was too large to keep in context: {} characters, {} lines ({}).\n\
         {PATH_LINE_PREFIX}{path_text}\n\
         Read ranges of it with read_file (offset and limit), or in a shell with e.g. \
         `sed -n '1,{SUGGESTED_PAGE_LINES}p' {}`. The full result is in that file, so do not \
         run the tool again just to see the rest.\n\
         \n\
         Preview (first {} characters):\n{}",
        group_digits(chars),
        group_digits(lines),
        describe_bytes(original.len()),
        shell_quote(&path_text),
        group_digits(chars - shown.omitted_chars),
        shown.text,
    );
    if !shown.text.is_empty() && !shown.text.ends_with('\n') {
        block.push('\n');
    }
    if shown.has_more() {
        block.push_str(&format!(
            "[... {} more characters in the file ...]\n",
            group_digits(shown.omitted_chars)
        ));
    }
    block.push_str(PERSISTED_OUTPUT_CLOSE);
    block
}

/// The saved file's path, when `text` is a persisted-output block.
pub fn persisted_path(text: &str) -> Option<PathBuf> {
    if !is_persisted_block(text) {
        return None;
    }
    text.lines()
        .find_map(|line| line.strip_prefix(PATH_LINE_PREFIX))
        .map(PathBuf::from)
}

/// True when `text` is a block made by [`persisted_output_block`] (as opposed to output that
/// merely mentions the tag, such as a search through Baton's own sources).
pub fn is_persisted_block(text: &str) -> bool {
    let trimmed = text.trim();
    trimmed.starts_with(PERSISTED_OUTPUT_OPEN) && trimmed.ends_with(PERSISTED_OUTPUT_CLOSE)
}

/// `1,234 bytes`, or with KB / MB (binary, one decimal) once that reads better.
fn describe_bytes(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let exact = format!("{} bytes", group_digits(bytes));
    let kib = bytes as f64 / KIB;
    if kib < 1.0 {
        exact
    } else if kib < KIB {
        format!("{exact}, {kib:.1} KB")
    } else {
        format!("{exact}, {:.1} MB", kib / KIB)
    }
}

/// Single-quotes `s` for a POSIX shell, so a `$BATON_HOME` with spaces or quotes still gives a
/// command that works when pasted.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// One text that can be spilled on its own: a whole string content, or one text part of list
/// content.
struct Spillable {
    message: usize,
    part: Option<usize>,
    chars: usize,
}

/// The not-yet-persisted texts of the messages `eligible` accepts.
fn spillable_units(messages: &[Message], eligible: impl Fn(&Message) -> bool) -> Vec<Spillable> {
    let mut units = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if !eligible(message) {
            continue;
        }
        match &message.content {
            Some(Content::Text(text)) if !is_persisted_block(text) => units.push(Spillable {
                message: index,
                part: None,
                chars: text.chars().count(),
            }),
            Some(Content::Parts(parts)) => {
                for (part, p) in parts.iter().enumerate() {
                    if let Some(text) = p.text_value().filter(|t| !is_persisted_block(t)) {
                        units.push(Spillable {
                            message: index,
                            part: Some(part),
                            chars: text.chars().count(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    units
}

fn unit_text(message: &Message, part: Option<usize>) -> Option<&str> {
    match (&message.content, part) {
        (Some(Content::Text(text)), None) => Some(text),
        (Some(Content::Parts(parts)), Some(i)) => parts.get(i).and_then(|p| p.text_value()),
        _ => None,
    }
}

fn set_unit_text(message: &mut Message, part: Option<usize>, text: String) {
    match (&mut message.content, part) {
        (Some(Content::Text(old)), None) => *old = text,
        (Some(Content::Parts(parts)), Some(i)) => {
            if let Some(p) = parts.get_mut(i) {
                p.fields_mut()
                    .insert("text".into(), serde_json::Value::String(text));
            }
        }
        _ => {}
    }
}

fn text_chars(message: &Message) -> usize {
    message.content.as_ref().map_or(0, Content::text_chars)
}

/// Tool names by call id, from the assistant messages' tool calls.
fn tool_names_by_call_id(messages: &[Message]) -> HashMap<String, String> {
    messages
        .iter()
        .flat_map(Message::calls)
        .map(|c| (c.id.clone(), c.function.name.clone()))
        .collect()
}

/// The tool a result came from: its call's name, else the message's own `name`, else "".
fn tool_name_of<'a>(message: &'a Message, names: &'a HashMap<String, String>) -> &'a str {
    message
        .tool_call_id
        .as_ref()
        .and_then(|id| names.get(id))
        .or(message.name.as_ref())
        .map_or("", String::as_str)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::{ContentPart, ToolCall};
    use proptest::prelude::*;

    fn big(c: char, n: usize) -> String {
        let line: String = std::iter::repeat_n(c, 99)
            .chain(std::iter::once('\n'))
            .collect();
        line.repeat(n / 100) + &c.to_string().repeat(n % 100)
    }

    fn store() -> (tempfile::TempDir, ToolResultStore) {
        let home = tempfile::tempdir().unwrap();
        let store = ToolResultStore::new(home.path());
        (home, store)
    }

    fn assert_inside(store: &ToolResultStore, path: &Path) {
        assert_eq!(path.parent().unwrap(), store.dir());
        assert!(path.starts_with(store.dir()));
    }

    #[test]
    fn oversized_result_is_persisted_and_replaced() {
        let (_home, store) = store();
        let original = big('x', 150_000);
        let mut msg = Message::tool("call_abc", original.clone());
        let done = store.persist_if_oversized("terminal", &mut msg).unwrap();
        assert_eq!(done.len(), 1);
        let p = &done[0];
        assert_eq!(p.path, store.dir().join("call_abc.txt"));
        assert!(p.path.is_absolute());
        assert_eq!(p.original_chars, 150_000);
        assert_eq!(fs::read_to_string(&p.path).unwrap(), original);
        let text = msg.text();
        assert!(is_persisted_block(&text));
        assert!(text.chars().count() < 2_500);
        assert_eq!(persisted_path(&text).unwrap(), p.path);
        assert_eq!(msg.tool_call_id.as_deref(), Some("call_abc"));
    }

    #[test]
    fn read_file_is_exempt() {
        let (_home, store) = store();
        let original = big('r', 150_000);
        let mut msg = Message::tool("call_r", original.clone());
        assert!(
            store
                .persist_if_oversized("read_file", &mut msg)
                .unwrap()
                .is_empty()
        );
        assert_eq!(msg.text(), original);
        assert!(!store.dir().exists());
    }

    #[test]
    fn result_at_or_under_threshold_is_untouched() {
        let (_home, store) = store();
        let original = big('u', DEFAULT_RESULT_SIZE_CHARS);
        let mut msg = Message::tool("call_u", original.clone());
        assert!(
            store
                .persist_if_oversized("terminal", &mut msg)
                .unwrap()
                .is_empty()
        );
        assert_eq!(msg.text(), original);
    }

    #[test]
    fn per_tool_threshold_applies() {
        let (_home, store) = store();
        let mut budget = ToolOutputBudget::default();
        budget
            .tool_threshold_chars
            .insert("web_search".into(), 10_000);
        let store = store.with_budget(budget);
        let mut msg = Message::tool("call_w", big('w', 20_000));
        assert_eq!(
            store
                .persist_if_oversized("web_search", &mut msg)
                .unwrap()
                .len(),
            1
        );
        let mut other = Message::tool("call_t", big('t', 20_000));
        assert!(
            store
                .persist_if_oversized("terminal", &mut other)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn already_persisted_result_is_not_persisted_again() {
        let (_home, store) = store();
        let budget = ToolOutputBudget {
            default_threshold_chars: 100,
            ..ToolOutputBudget::default()
        };
        let store = store.with_budget(budget);
        let mut msg = Message::tool("call_p", big('p', 50_000));
        assert_eq!(
            store
                .persist_if_oversized("terminal", &mut msg)
                .unwrap()
                .len(),
            1
        );
        let block = msg.text();
        assert!(
            store
                .persist_if_oversized("terminal", &mut msg)
                .unwrap()
                .is_empty()
        );
        assert_eq!(msg.text(), block);
    }

    #[test]
    fn list_content_spills_text_parts_and_keeps_images() {
        let (_home, store) = store();
        let original = big('l', 120_000);
        let mut msg = Message::tool("call_l", "");
        msg.content = Some(Content::Parts(vec![
            ContentPart::text(original.clone()),
            ContentPart::image_url("data:image/png;base64,AAAA"),
        ]));
        let done = store.persist_if_oversized("browser", &mut msg).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].part_index, Some(0));
        assert_eq!(done[0].path, store.dir().join("call_l_part0.txt"));
        assert_eq!(fs::read_to_string(&done[0].path).unwrap(), original);
        let Some(Content::Parts(parts)) = &msg.content else {
            panic!("content changed shape")
        };
        assert!(is_persisted_block(parts[0].text_value().unwrap()));
        assert!(parts[1].is_image());
    }

    fn turn(sizes: &[(&str, &str, usize)]) -> Vec<Message> {
        let calls = sizes
            .iter()
            .map(|(id, name, _)| ToolCall::function(*id, *name, "{}"))
            .collect();
        let mut messages = vec![Message::assistant_tool_calls(calls)];
        for (i, (id, _, n)) in sizes.iter().enumerate() {
            let c = char::from(b'a' + i as u8);
            messages.push(Message::tool(*id, big(c, *n)));
        }
        messages
    }

    #[test]
    fn turn_budget_spills_largest_first_and_stops_under_budget() {
        let (_home, store) = store();
        let mut messages = turn(&[
            ("c1", "terminal", 60_000),
            ("c2", "terminal", 90_000),
            ("c3", "terminal", 80_000),
            ("c4", "terminal", 50_000),
        ]);
        let before: Vec<String> = messages.iter().map(Message::text).collect();
        let done = store.enforce_turn_budget(&mut messages).unwrap();
        // 280,000 in total: spilling c2 (90,000) leaves about 192,000, under budget.
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].tool_call_id.as_deref(), Some("c2"));
        assert!(is_persisted_block(&messages[2].text()));
        for i in [1, 3, 4] {
            assert_eq!(messages[i].text(), before[i]);
        }
        let total: usize = messages[1..].iter().map(text_chars).sum();
        assert!(total <= DEFAULT_TURN_BUDGET_CHARS);
    }

    #[test]
    fn turn_budget_spills_several_when_needed() {
        let (_home, store) = store();
        let mut messages = turn(&[
            ("c1", "terminal", 95_000),
            ("c2", "terminal", 96_000),
            ("c3", "terminal", 97_000),
            ("c4", "terminal", 98_000),
        ]);
        let done = store.enforce_turn_budget(&mut messages).unwrap();
        let ids: Vec<_> = done
            .iter()
            .map(|p| p.tool_call_id.clone().unwrap())
            .collect();
        assert_eq!(ids, ["c4", "c3"]);
        let total: usize = messages[1..].iter().map(text_chars).sum();
        assert!(total <= DEFAULT_TURN_BUDGET_CHARS);
    }

    #[test]
    fn turn_budget_leaves_exempt_tools_and_small_turns_alone() {
        let (_home, store) = store();
        let mut messages = turn(&[("c1", "read_file", 99_000), ("c2", "terminal", 99_000)]);
        assert!(store.enforce_turn_budget(&mut messages).unwrap().is_empty());

        let mut messages = turn(&[
            ("c1", "read_file", 99_000),
            ("c2", "read_file", 98_000),
            ("c3", "terminal", 20_000),
        ]);
        let done = store.enforce_turn_budget(&mut messages).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].tool_call_id.as_deref(), Some("c3"));
        assert!(!is_persisted_block(&messages[1].text()));
    }

    #[test]
    fn hostile_ids_stay_inside_the_folder() {
        let (home, store) = store();
        let budget = ToolOutputBudget {
            default_threshold_chars: 10,
            ..ToolOutputBudget::default()
        };
        let store = store.with_budget(budget);
        for id in [
            "../../etc/passwd",
            "a/b",
            "\u{0}x",
            "..",
            "",
            ".",
            "/abs",
            "a\\b",
            "x\ny",
        ] {
            let mut msg = Message::tool(id, big('h', 5_000));
            let done = store.persist_if_oversized("terminal", &mut msg).unwrap();
            assert_eq!(done.len(), 1, "id {id:?}");
            assert_inside(&store, &done[0].path);
            assert!(done[0].path.is_file());
        }
        let outside: Vec<_> = fs::read_dir(home.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(outside, [std::ffi::OsString::from(TOOL_RESULTS_DIR)]);
    }

    #[test]
    fn safe_file_name_rules() {
        assert_eq!(safe_file_name("call_abc-1.2"), "call_abc-1.2");
        let traversal = safe_file_name("../../etc/passwd");
        assert!(traversal.starts_with("etc_passwd_"));
        assert_eq!(traversal.len(), "etc_passwd_".len() + HASH_HEX_DIGITS);
        assert_eq!(safe_file_name(""), short_hash(""));
        assert_eq!(safe_file_name(".."), short_hash(".."));
        assert_ne!(safe_file_name("a/b"), safe_file_name("a:b"));
    }

    #[test]
    fn long_ids_are_hashed() {
        let id = "k".repeat(300);
        let name = safe_file_name(&id);
        assert_eq!(name.len(), MAX_STEM_CHARS + 1 + HASH_HEX_DIGITS);
        assert!(name.starts_with(&"k".repeat(MAX_STEM_CHARS)));
        assert_ne!(name, safe_file_name(&"k".repeat(301)));
    }

    #[test]
    fn reused_id_with_new_content_keeps_the_old_file() {
        let (_home, store) = store();
        let first = big('1', 120_000);
        let second = big('2', 120_000);
        let mut a = Message::tool("call_0", first.clone());
        let mut b = Message::tool("call_0", second.clone());
        let pa = store.persist_if_oversized("terminal", &mut a).unwrap();
        let pb = store.persist_if_oversized("terminal", &mut b).unwrap();
        assert_ne!(pa[0].path, pb[0].path);
        assert_eq!(fs::read_to_string(&pa[0].path).unwrap(), first);
        assert_eq!(fs::read_to_string(&pb[0].path).unwrap(), second);
        // The same result again reuses its file.
        let mut c = Message::tool("call_0", first);
        let pc = store.persist_if_oversized("terminal", &mut c).unwrap();
        assert_eq!(pc[0].path, pa[0].path);
    }

    #[test]
    fn sweep_removes_only_expired_files() {
        let (_home, store) = store();
        assert_eq!(store.sweep_expired(SystemTime::now()).unwrap(), 0);
        fs::create_dir_all(store.dir()).unwrap();
        let now = SystemTime::now();
        let day = Duration::from_secs(24 * 60 * 60);
        let set_age = |name: &str, age: Duration| {
            let path = store.dir().join(name);
            let f = fs::File::create(&path).unwrap();
            f.set_modified(now - age).unwrap();
            path
        };
        let old = set_age("old.txt", 8 * day);
        let fresh = set_age("fresh.txt", 6 * day);
        let orphan_tmp = set_age(".tmpXYZ", 30 * day);
        fs::create_dir(store.dir().join("subdir")).unwrap();
        assert_eq!(store.sweep_expired(now).unwrap(), 2);
        assert!(!old.exists());
        assert!(!orphan_tmp.exists());
        assert!(fresh.exists());
        assert!(store.dir().join("subdir").is_dir());
    }

    #[test]
    fn block_states_size_path_reading_hint_and_preview() {
        let path = Path::new("/home/me/.baton/tool-results/call_1.txt");
        let original = big('b', 123_456);
        let block = persisted_output_block(path, &original, DEFAULT_PREVIEW_CHARS);
        assert!(block.starts_with(PERSISTED_OUTPUT_OPEN));
        assert!(block.ends_with(PERSISTED_OUTPUT_CLOSE));
        assert!(block.contains("123,456 characters"));
        assert!(block.contains("123,456 bytes, 120.6 KB"));
        assert!(block.contains(&format!("{PATH_LINE_PREFIX}{}", path.display())));
        assert!(block.contains("read_file"));
        assert!(block.contains("sed -n '1,200p' '/home/me/.baton/tool-results/call_1.txt'"));
        let shown = preview(&original, DEFAULT_PREVIEW_CHARS);
        assert!(block.contains(shown.text));
        assert!(block.contains(&format!(
            "[... {} more characters in the file ...]",
            group_digits(shown.omitted_chars)
        )));
        assert_eq!(persisted_path(&block).unwrap(), path);
    }

    #[test]
    fn describe_bytes_picks_a_readable_unit() {
        assert_eq!(describe_bytes(900), "900 bytes");
        assert_eq!(describe_bytes(2_048), "2,048 bytes, 2.0 KB");
        assert_eq!(describe_bytes(3 * 1024 * 1024), "3,145,728 bytes, 3.0 MB");
    }

    #[test]
    fn shell_quote_escapes_single_quotes() {
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn mentioning_the_tag_is_not_a_block() {
        assert!(!is_persisted_block(
            "grep found <persisted-output> in src/lib.rs"
        ));
        assert_eq!(persisted_path("Full text saved at: /etc/passwd"), None);
    }

    proptest! {
        #[test]
        fn any_id_gives_a_plain_name_inside_the_folder(id in "\\PC*|[./\\\\\u{0}-\u{1f}a-z]{0,40}") {
            let name = safe_file_name(&id);
            prop_assert!(!name.is_empty());
            prop_assert!(name.len() <= MAX_STEM_CHARS + 1 + HASH_HEX_DIGITS);
            prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')));
            prop_assert!(!name.starts_with('.'));
            let dir = Path::new("/base/tool-results");
            let joined = dir.join(format!("{name}.txt"));
            prop_assert_eq!(joined.parent(), Some(dir));
        }
    }
}
