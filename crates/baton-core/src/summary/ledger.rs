//! The task ledger: task state extracted mechanically from tool calls, never from a model.
//!
//! Artifact tracking (which files were read or changed, which command failed) is what every
//! published compactor loses first, because it hands those facts to a summarizer that may drop
//! them. The ledger is kept beside the conversation instead: it is updated from tool calls and
//! their results, rendered verbatim into every summary, and parsed back from the previous
//! summary at the next compaction, so its facts survive any number of compactions whatever the
//! summarizer writes.
//!
//! The rendered block is plain markdown a model can read, and exact: `parse(render(x)) == x`.
//! Newlines, backslashes, control characters and (inside code spans) backticks are escaped, so
//! a command with a heredoc or a path with a space at its end still reads back byte for byte.

use super::sentences::sentences;
use crate::message::{Content, Message, Role, ToolCall};
use crate::summary::failure_report::reads_as_failure;
use crate::summary::sections;
use crate::summary::span_calls::{SpanCall, SpanCalls};
use crate::synthetic;
use crate::tool_action::{self, ToolAction};
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;

/// Longest active task kept verbatim (the compressor uses the same limit).
pub const ACTIVE_TASK_MAX_CHARS: usize = 1_400;
/// Commands kept; older ones are trimmed and counted, never silently. The block is rendered
/// into summaries of a few thousand tokens, so this stays well below "every command ever".
pub const MAX_COMMANDS: usize = 25;
/// Longest command kept (its first line): heredocs that write whole files would otherwise
/// fill the summary.
pub const MAX_COMMAND_CHARS: usize = 120;
/// Files read kept; older ones are trimmed and counted. Modified files are never trimmed.
pub const MAX_FILES_READ: usize = 100;
/// Open user asks kept (the newest win).
pub const MAX_OPEN_ASKS: usize = 10;
/// Longest open ask kept.
pub const MAX_ASK_CHARS: usize = 500;
/// Longest error excerpt kept for the last failure.
pub const FAILURE_MAX_CHARS: usize = 500;
const FAILURE_MAX_LINES: usize = 8;
const QUESTION_MAX_CHARS: usize = 300;

/// Extra key the compressor sets on the summary message it installs.
pub const SUMMARY_MARKER_KEY: &str = "_baton_summary";
/// How compaction summaries begin when they carry no marker key: ours, and Claude Code's.
const SUMMARY_PREFIXES: [&str; 2] = [
    "[CONTEXT COMPACTION",
    "This session is being continued from a previous conversation",
];

const ACTIVE_TASK_LINE: &str = "- Active task:";
const FILES_READ_LINE: &str = "- Files read:";
const FILES_MODIFIED_LINE: &str = "- Files modified:";
const COMMANDS_LINE: &str = "- Commands:";
const LAST_FAILURE_LINE: &str = "- Last failure:";
const OPEN_ASKS_LINE: &str = "- Open asks:";
const ITEM_PREFIX: &str = "  - ";
const ARROW: &str = " → ";

/// One distinct command and how it went the last time it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRecord {
    pub command: String,
    /// Exit status of the latest run, when its output reported one.
    pub exit_code: Option<i32>,
    /// How many times it ran (repeat runs collapse into one record).
    pub count: u32,
}

/// The most recent failing command and the start of its error output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub command: String,
    /// First lines of the output, at most [`FAILURE_MAX_CHARS`] characters.
    pub error: String,
}

/// Task state that must survive compaction verbatim. Lists are in first-seen order without
/// duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskLedger {
    pub active_task: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub commands: Vec<CommandRecord>,
    pub last_failure: Option<Failure>,
    pub open_asks: Vec<String>,
    /// Files read that were trimmed by [`MAX_FILES_READ`]; the rendered block states the count.
    #[serde(default)]
    pub files_read_omitted: u32,
    /// Commands trimmed by [`MAX_COMMANDS`]; the rendered block states the count.
    #[serde(default)]
    pub commands_omitted: u32,
}

/// A tool call and the tool message that answered it (`None` when no answer followed).
#[derive(Debug, Clone, Copy)]
pub struct PairedCall<'a> {
    pub call: &'a ToolCall,
    pub result: Option<&'a Message>,
}

impl TaskLedger {
    /// Updates the ledger from messages appended since the last call (cost O(new messages)).
    ///
    /// A tool call is paired with the tool messages that follow its assistant message, so an
    /// exchange split across two calls loses its results (the call itself is still recorded).
    pub fn observe<M: Borrow<Message> + Sync>(&mut self, messages: &[M]) {
        self.observe_calls(messages, &SpanCalls::new(messages, None));
    }

    /// [`observe`](Self::observe) with `messages`' tool calls already paired and judged
    /// ([`SpanCalls::new`] of exactly `messages`): a compaction pass hands the ledger the list
    /// the summary reads too, so each command's output is judged once.
    pub fn observe_calls<M: Borrow<Message>>(&mut self, messages: &[M], calls: &SpanCalls<'_>) {
        let mut last_failed = None;
        for call in calls.as_slice() {
            if self.record_call(call) {
                last_failed = Some(call);
            }
        }
        if let Some(call) = last_failed {
            self.note_failure(call);
        }
        self.observe_requests(messages);
    }

    /// Records what `call` read, ran and modified; true when it is a recorded command that
    /// failed (the latest of those is the ledger's last failure).
    fn record_call(&mut self, call: &SpanCall<'_>) -> bool {
        let failed = match &*call.action {
            ToolAction::Read { path, .. } => {
                self.note_read(path);
                false
            }
            ToolAction::Command { command } => {
                self.note_run(command, call.exit_code()) && call.failed()
            }
            _ => false,
        };
        for path in call.action.modified_paths() {
            self.note_modified(path);
        }
        failed
    }

    /// `call` (a failed command) as the last failure: its command and the first lines of its
    /// output, quoted redacted. Only the latest failure is kept, so only its output is read.
    fn note_failure(&mut self, call: &SpanCall<'_>) {
        let ToolAction::Command { command } = &*call.action else {
            return;
        };
        self.last_failure = Some(Failure {
            command: command_key(command),
            error: error_excerpt(call.quoted_result().unwrap_or_default()),
        });
    }

    /// The open asks and the active task, as reading `messages` in order leaves them: each
    /// real request becomes the active task and an open ask, each reply clears the open asks,
    /// and the latest request's questions are asked again.
    ///
    /// Read from the end: only the requests after the last reply are still open, and only the
    /// latest one is the task, so replaying just those gives the same ledger. Reading every
    /// message copied and clipped each of a long span's thousands of requests (and touched each
    /// one's text, cold: 4% of `synth_100k`'s pass, `perf record`, issue #17).
    fn observe_requests<M: Borrow<Message>>(&mut self, messages: &[M]) {
        // The requests after the last reply, newest first.
        let mut open = Vec::new();
        let mut last_reply = None;
        for (i, m) in messages.iter().map(Borrow::borrow).enumerate().rev() {
            if is_reply(m) {
                last_reply = Some(i);
                break;
            }
            if is_real_request(m) {
                open.push(i);
            }
        }
        if last_reply.is_some() {
            self.open_asks.clear();
        }
        let mut latest = None;
        for &i in open.iter().rev() {
            let text = messages[i].borrow().text();
            self.push_ask(text.trim());
            latest = Some(text);
        }
        let latest = latest.or_else(|| {
            let before_reply = &messages[..last_reply.unwrap_or(0)];
            let i = before_reply
                .iter()
                .rposition(|m| is_real_request(m.borrow()))?;
            Some(messages[i].borrow().text())
        });
        if let Some(text) = latest {
            self.active_task = Some(clip(&text, ACTIVE_TASK_MAX_CHARS));
            for q in questions(&text) {
                self.push_ask(&q);
            }
        }
    }

    fn note_read(&mut self, path: &str) {
        if path.is_empty() || self.files_read.iter().any(|p| p == path) {
            return;
        }
        self.files_read.push(path.to_string());
        if self.files_read.len() > MAX_FILES_READ {
            self.files_read.remove(0);
            self.files_read_omitted = self.files_read_omitted.saturating_add(1);
        }
    }

    fn note_modified(&mut self, path: &str) {
        if !path.is_empty() && !self.files_modified.iter().any(|p| p == path) {
            self.files_modified.push(path.to_string());
        }
    }

    /// A run of `command` whose output reported `exit_code`; false (nothing recorded) for a
    /// blank command.
    fn note_run(&mut self, command: &str, exit_code: Option<i32>) -> bool {
        let command = command_key(command);
        if command.is_empty() {
            return false;
        }
        self.add_command(CommandRecord {
            command,
            exit_code,
            count: 1,
        });
        true
    }

    /// Collapses a repeat run into the existing record (latest exit status wins) and trims the
    /// oldest commands past [`MAX_COMMANDS`].
    fn add_command(&mut self, record: CommandRecord) {
        match self
            .commands
            .iter_mut()
            .find(|c| c.command == record.command)
        {
            Some(existing) => {
                existing.count = existing.count.saturating_add(record.count);
                existing.exit_code = record.exit_code;
            }
            None => self.commands.push(record),
        }
        if self.commands.len() > MAX_COMMANDS {
            let excess = self.commands.len() - MAX_COMMANDS;
            self.commands.drain(..excess);
            self.commands_omitted = self.commands_omitted.saturating_add(excess as u32);
        }
    }

    /// Adds an open ask unless it is blank or already covered by one (a question inside a
    /// request already listed adds nothing).
    fn push_ask(&mut self, ask: &str) {
        let ask = clip(ask.trim(), MAX_ASK_CHARS);
        if ask.is_empty() || self.open_asks.iter().any(|a| a.contains(&ask)) {
            return;
        }
        self.open_asks.push(ask);
        if self.open_asks.len() > MAX_OPEN_ASKS {
            self.open_asks.remove(0);
        }
    }

    /// Folds an older ledger in: older facts come first, newer statuses win. Open asks are
    /// unioned rather than replaced, because dropping a user's request is worse than showing
    /// one that was already answered.
    pub fn merge(&mut self, older: &TaskLedger) {
        let newer = std::mem::take(self);
        let mut merged = older.clone();
        for path in &newer.files_read {
            merged.note_read(path);
        }
        merged.files_read_omitted = merged
            .files_read_omitted
            .saturating_add(newer.files_read_omitted);
        for path in &newer.files_modified {
            merged.note_modified(path);
        }
        for record in newer.commands {
            merged.add_command(record);
        }
        merged.commands_omitted = merged
            .commands_omitted
            .saturating_add(newer.commands_omitted);
        merged.active_task = newer.active_task.or(merged.active_task);
        merged.last_failure = newer.last_failure.or(merged.last_failure);
        for ask in &newer.open_asks {
            merged.push_ask(ask);
        }
        *self = merged;
    }

    /// Facts the quality gate requires verbatim in every summary: the active task, every file
    /// path, every failing command.
    pub fn facts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |s: &str| {
            if !s.trim().is_empty() && !out.iter().any(|o| o == s) {
                out.push(s.to_string());
            }
        };
        if let Some(task) = &self.active_task {
            add(task);
        }
        self.files_modified.iter().for_each(|p| add(p));
        self.files_read.iter().for_each(|p| add(p));
        self.failing_commands().for_each(&mut add);
        if let Some(f) = &self.last_failure {
            add(&f.command);
        }
        out
    }

    /// Commands whose latest run reported a non-zero exit status.
    pub fn failing_commands(&self) -> impl Iterator<Item = &str> {
        self.commands
            .iter()
            .filter(|c| c.exit_code.is_some_and(|code| code != 0))
            .map(|c| c.command.as_str())
    }

    /// The block that goes at the end of every summary, starting with
    /// [`sections::TASK_LEDGER`]. One fact per line so a model (and [`TaskLedger::parse`]) can
    /// read it; values are escaped onto one line.
    pub fn render(&self) -> String {
        // Written into one string: the block is rendered for every summary and again by the
        // quality gate, and a string per line, per item and per escape, then joined, made the
        // two renders ~4% of a real session's pass (real1, a non-LTO profile).
        let mut out = String::with_capacity(1024);
        out.push_str(sections::TASK_LEDGER);
        if let Some(task) = &self.active_task {
            out.push('\n');
            out.push_str(ACTIVE_TASK_LINE);
            out.push(' ');
            out.push_str(&escaped(task, false));
        }
        let read_note = omitted_note(self.files_read_omitted, "files");
        write_list(&mut out, FILES_READ_LINE, &self.files_read, read_note);
        write_list(&mut out, FILES_MODIFIED_LINE, &self.files_modified, None);
        let command_note = omitted_note(self.commands_omitted, "commands");
        write_header(
            &mut out,
            COMMANDS_LINE,
            self.commands.is_empty(),
            command_note,
        );
        for c in &self.commands {
            out.push('\n');
            out.push_str(ITEM_PREFIX);
            write_command(&mut out, c);
        }
        out.push('\n');
        out.push_str(LAST_FAILURE_LINE);
        match &self.last_failure {
            Some(f) => {
                out.push_str(" `");
                out.push_str(&escaped(&f.command, true));
                out.push('`');
                out.push_str(ARROW);
                out.push_str(&escaped(&f.error, false));
            }
            None => out.push_str(" none"),
        }
        write_list(&mut out, OPEN_ASKS_LINE, &self.open_asks, None);
        out
    }

    /// Reads a block written by [`TaskLedger::render`] back, from its heading up to the next
    /// `## ` heading. `None` when there is no ledger heading. Lines it does not recognise (a
    /// model's commentary) are skipped.
    pub fn parse(rendered: &str) -> Option<TaskLedger> {
        let mut lines = rendered
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l));
        lines.find(|l| l.trim_end() == sections::TASK_LEDGER)?;
        let mut ledger = TaskLedger::default();
        let mut list: Option<ListKind> = None;
        for line in lines.take_while(|l| !l.starts_with("## ")) {
            // A trailing empty item loses its space when the summary body is trimmed.
            let item = line
                .strip_prefix(ITEM_PREFIX)
                .or((line == "  -").then_some(""));
            if let Some(item) = item {
                if let Some(kind) = list {
                    ledger.push_parsed_item(kind, item);
                }
                continue;
            }
            list = ledger.parse_header(line);
        }
        Some(ledger)
    }

    /// Applies one top-level line; returns the list its items (if any) belong to.
    fn parse_header(&mut self, line: &str) -> Option<ListKind> {
        if let Some(v) = header_value(line, ACTIVE_TASK_LINE) {
            self.active_task = Some(unescape(v));
            None
        } else if let Some(v) = header_value(line, FILES_READ_LINE) {
            self.files_read_omitted = parse_omitted(v);
            Some(ListKind::FilesRead)
        } else if header_value(line, FILES_MODIFIED_LINE).is_some() {
            Some(ListKind::FilesModified)
        } else if let Some(v) = header_value(line, COMMANDS_LINE) {
            self.commands_omitted = parse_omitted(v);
            Some(ListKind::Commands)
        } else if let Some(v) = header_value(line, LAST_FAILURE_LINE) {
            self.last_failure = parse_failure(v);
            None
        } else if header_value(line, OPEN_ASKS_LINE).is_some() {
            Some(ListKind::OpenAsks)
        } else {
            None
        }
    }

    fn push_parsed_item(&mut self, kind: ListKind, item: &str) {
        match kind {
            ListKind::FilesRead => self.files_read.push(unescape(item)),
            ListKind::FilesModified => self.files_modified.push(unescape(item)),
            ListKind::OpenAsks => self.open_asks.push(unescape(item)),
            ListKind::Commands => {
                if let Some(record) = parse_command(item) {
                    self.commands.push(record);
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum ListKind {
    FilesRead,
    FilesModified,
    Commands,
    OpenAsks,
}

/// A list's header line, then one escaped item per line.
fn write_list(out: &mut String, label: &str, items: &[String], note: Option<String>) {
    write_header(out, label, items.is_empty(), note);
    for item in items {
        out.push('\n');
        out.push_str(ITEM_PREFIX);
        out.push_str(&escaped(item, false));
    }
}

/// A list's header line: the label, then the omission note, `none` when the list is empty, or
/// nothing.
fn write_header(out: &mut String, label: &str, empty: bool, note: Option<String>) {
    out.push('\n');
    out.push_str(label);
    match (note, empty) {
        (Some(note), _) => {
            out.push(' ');
            out.push_str(&note);
        }
        (None, true) => out.push_str(" none"),
        (None, false) => {}
    }
}

fn omitted_note(count: u32, noun: &str) -> Option<String> {
    (count > 0).then(|| format!("… {count} earlier {noun} omitted"))
}

fn parse_omitted(value: &str) -> u32 {
    value
        .strip_prefix("… ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The value after `label` (one separating space removed), when `line` is that header.
fn header_value<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(label)?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// "`cmd` → exit 1 (×3)"; the status is left out when the output printed none.
fn write_command(out: &mut String, c: &CommandRecord) {
    use std::fmt::Write as _;
    out.push('`');
    out.push_str(&escaped(&c.command, true));
    out.push('`');
    // Writing into a `String` cannot fail.
    if let Some(code) = c.exit_code {
        let _ = write!(out, "{ARROW}exit {code}");
    }
    if c.count != 1 {
        let _ = write!(out, " (×{})", c.count);
    }
}

fn parse_command(item: &str) -> Option<CommandRecord> {
    let (command, rest) = split_code_span(item)?;
    let (status, count) = match rest.rsplit_once(" (×") {
        Some((status, n)) => (status, n.strip_suffix(')')?.parse().ok()?),
        None => (rest, 1),
    };
    let exit_code = match status {
        "" => None,
        s => Some(s.strip_prefix(ARROW)?.strip_prefix("exit ")?.parse().ok()?),
    };
    Some(CommandRecord {
        command,
        exit_code,
        count,
    })
}

/// How a command is kept: its first non-blank line, at most [`MAX_COMMAND_CHARS`], with `…`
/// when anything was cut. Repeat runs compare equal on this form.
pub fn command_key(command: &str) -> String {
    let trimmed = command.trim();
    let first = trimmed.lines().next().unwrap_or("").trim_end();
    if first.len() == trimmed.len() && first.chars().count() <= MAX_COMMAND_CHARS {
        first.to_string()
    } else {
        format!("{}…", clip(first, MAX_COMMAND_CHARS - 1))
    }
}

fn parse_failure(value: &str) -> Option<Failure> {
    let (command, rest) = split_code_span(value)?;
    let error = match rest.strip_prefix(ARROW) {
        Some(error) => error,
        None if rest == ARROW.trim_end() => "",
        None => return None,
    };
    Some(Failure {
        command,
        error: unescape(error),
    })
}

/// Splits "`escaped code`rest" at the first unescaped closing backtick.
fn split_code_span(s: &str) -> Option<(String, &str)> {
    let inner = s.strip_prefix('`')?;
    let mut escaped = false;
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '`' => return Some((unescape(&inner[..i]), &inner[i + 1..])),
            _ => {}
        }
    }
    None
}

/// One-line form of a value: backslash, newline, carriage return, tab and control characters
/// escaped, and whitespace at either end escaped so trimming cannot change the value.
pub fn escape(s: &str) -> String {
    escape_with(s, false)
}

/// [`escape`] for the inside of a code span: backticks are escaped too.
pub fn escape_code(s: &str) -> String {
    escape_with(s, true)
}

fn escape_with(s: &str, code: bool) -> String {
    escaped(s, code).into_owned()
}

/// [`escape_with`], borrowed when the text needs no escape (almost always).
fn escaped(s: &str, code: bool) -> std::borrow::Cow<'_, str> {
    if is_plain(s, code) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(escape_chars(s, code))
}

/// [`escape_with`] a character at a time.
fn escape_chars(s: &str, code: bool) -> String {
    let last = s.chars().count().saturating_sub(1);
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '`' if code => out.push_str("\\`"),
            c if needs_code_point_escape(c, i == 0 || i == last) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether [`escape_with`] would copy `s` unchanged, read byte by byte: printable ASCII
/// without a backslash (or a backtick in code) and no space at either end. Most paths and
/// commands are, and escaping them a character at a time was 2% of a compaction (issue #17).
fn is_plain(s: &str, code: bool) -> bool {
    let bytes = s.as_bytes();
    let inner = |b: &u8| (0x20..0x7F).contains(b) && *b != b'\\' && !(code && *b == b'`');
    bytes.iter().all(inner)
        && bytes.first().is_none_or(|&b| b != b' ')
        && bytes.last().is_none_or(|&b| b != b' ')
}

fn needs_code_point_escape(c: char, at_edge: bool) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || (at_edge && c.is_whitespace())
}

/// Inverse of [`escape`] and [`escape_code`]; an unknown escape is kept as written.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (decoded, used) = decode_escape(after);
        match decoded {
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The character an escape stands for and how many bytes after the backslash it used.
fn decode_escape(after: &str) -> (Option<char>, usize) {
    let Some(c) = after.chars().next() else {
        return (None, 0);
    };
    let simple = match c {
        '\\' => Some('\\'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        '`' => Some('`'),
        _ => None,
    };
    if simple.is_some() {
        return (simple, 1);
    }
    if let Some(body) = after.strip_prefix("u{")
        && let Some(end) = body.find('}')
        && let Some(ch) = u32::from_str_radix(&body[..end], 16)
            .ok()
            .and_then(char::from_u32)
    {
        return (Some(ch), 2 + end + 1);
    }
    (None, 0)
}

/// Whether `fact` appears in `text` as written or in its rendered (escaped) form.
pub fn fact_appears_in(text: &str, fact: &str) -> bool {
    let holds = |form: &str| memchr::memmem::find(text.as_bytes(), form.as_bytes()).is_some();
    // An escaped form equal to the fact was searched for already.
    let escaped_holds = |form: String| form != fact && holds(&form);
    holds(fact) || escaped_holds(escape(fact)) || escaped_holds(escape_code(fact))
}

/// Pairs every tool call in `messages` with its result: the tool messages right after an
/// assistant message answer its calls, by id when the id matches an unanswered call and by
/// position otherwise. Ids are only compared within one exchange because some agents reuse
/// them across a conversation.
pub fn pair_tool_calls<M: Borrow<Message>>(messages: &[M]) -> Vec<PairedCall<'_>> {
    let mut out = Vec::new();
    pair_tool_calls_from(messages, 0..messages.len(), &mut out);
    out
}

/// [`pair_tool_calls`] for the exchanges that start in `range` of `messages` (their results
/// may lie past it), appended to `out`. The ranges of a split of `messages` together give its
/// pairs in order, so a long span is paired on several threads: tool messages at a range's
/// start answer an exchange the range before started (or none), and are passed over, as the
/// whole walk passes over a tool message that starts no exchange.
pub fn pair_tool_calls_from<'a, M: Borrow<Message>>(
    messages: &'a [M],
    range: std::ops::Range<usize>,
    out: &mut Vec<PairedCall<'a>>,
) {
    let mut i = range.start;
    while i < range.end {
        let m: &Message = messages[i].borrow();
        i += 1;
        if m.role != Role::Assistant || !m.has_tool_calls() {
            continue;
        }
        let end = messages[i..]
            .iter()
            .position(|r| r.borrow().role != Role::Tool)
            .map_or(messages.len(), |p| i + p);
        pair_exchange(m.calls(), &messages[i..end], out);
        i = end;
    }
}

/// One exchange's calls paired with its `results`, appended to `out` in call order.
fn pair_exchange<'a, M: Borrow<Message>>(
    calls: &'a [ToolCall],
    results: &'a [M],
    out: &mut Vec<PairedCall<'a>>,
) {
    let first = out.len();
    out.extend(calls.iter().map(|call| PairedCall { call, result: None }));
    let slots = &mut out[first..];
    for r in results.iter().map(Borrow::borrow) {
        let by_id = r.tool_call_id.as_deref().and_then(|id| {
            slots
                .iter()
                .position(|s| s.result.is_none() && s.call.id == id)
        });
        if let Some(k) = by_id.or_else(|| slots.iter().position(|s| s.result.is_none())) {
            slots[k].result = Some(r);
        }
    }
}

/// Whether a user message is something to act on: not blank, not a compaction summary, not a
/// row the agent injected (slash-command markup, notifications, reminders, interruption
/// markers: see [`crate::synthetic`]). Injected rows are never the task, the goal or a decision.
pub fn is_real_request(m: &Message) -> bool {
    m.role == Role::User && has_text(m) && !is_summary(m) && !synthetic::is_synthetic(m)
}

/// Whether an assistant message says something (and is not a summary installed in that role).
pub fn is_reply(m: &Message) -> bool {
    m.role == Role::Assistant && has_text(m) && !is_summary(m)
}

/// Whether a message is a compaction summary: marked by the compressor, or starting with a
/// known summary prefix.
pub fn is_summary(m: &Message) -> bool {
    let head = leading_text(m).trim_start();
    m.extra.contains_key(SUMMARY_MARKER_KEY) || SUMMARY_PREFIXES.iter().any(|p| head.starts_with(p))
}

/// The message's text, borrowed when it is a plain string (the common case for tool results,
/// which can be megabytes).
pub fn message_text(m: &Message) -> std::borrow::Cow<'_, str> {
    match &m.content {
        Some(Content::Text(s)) => std::borrow::Cow::Borrowed(s),
        _ => std::borrow::Cow::Owned(m.text()),
    }
}

/// The message's first text, borrowed: prefix checks must not copy a multi-megabyte result.
fn leading_text(m: &Message) -> &str {
    match &m.content {
        Some(Content::Text(s)) => s,
        Some(Content::Parts(parts)) => parts
            .iter()
            .find_map(|p| p.text_value().filter(|t| !t.trim().is_empty()))
            .unwrap_or(""),
        _ => "",
    }
}

/// Whether any text of the message is non-blank.
fn has_text(m: &Message) -> bool {
    !leading_text(m).trim().is_empty()
}

/// Whether a command's output reports failure: a non-zero exit status, or (when no status is
/// printed, as Claude Code does on success) an output that reads as a failure.
pub fn command_failed(result: &str) -> bool {
    command_failed_with(tool_action::exit_code(result), result)
}

/// [`command_failed`] for an output whose exit status (`tool_action::exit_code`) has already
/// been read: reading it is a scan of the output's ends.
pub fn command_failed_with(exit_code: Option<i32>, result: &str) -> bool {
    match exit_code {
        Some(code) => code != 0,
        None => reads_as_failure(result),
    }
}

/// First non-blank lines of an error output, at most [`FAILURE_MAX_CHARS`] characters.
pub fn error_excerpt(result: &str) -> String {
    let lines: Vec<&str> = result
        .trim()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(FAILURE_MAX_LINES)
        .collect();
    clip(&lines.join("\n"), FAILURE_MAX_CHARS)
}

/// Question sentences of a user message (ending in `?` or `？`), each at most 300 characters.
pub fn questions(text: &str) -> Vec<String> {
    questions_among(sentences(text))
}

/// The questions among a text's [`sentences`], clipped as [`questions`] clips them.
pub fn questions_among<'s>(sentences: impl IntoIterator<Item = &'s str>) -> Vec<String> {
    sentences
        .into_iter()
        .filter(|s| s.ends_with('?') || s.ends_with('？'))
        .map(|s| clip(s, QUESTION_MAX_CHARS))
        .collect()
}

/// The first `max` characters of `s` (never splits a character).
pub fn clip(s: &str, max: usize) -> String {
    match crate::truncate::char_start(s, max) {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An assistant message calling `(id, tool, JSON arguments)`.
    pub(crate) fn calls(list: &[(&str, &str, &str)]) -> Message {
        let calls = list
            .iter()
            .map(|(id, name, args)| ToolCall::function(*id, *name, *args));
        Message::assistant_tool_calls(calls.collect())
    }

    fn observed(messages: &[Message]) -> TaskLedger {
        let mut ledger = TaskLedger::default();
        ledger.observe(messages);
        ledger
    }

    fn claude_code_transcript() -> Vec<Message> {
        let mut look = calls(&[
            ("toolu_1", "Read", r#"{"file_path":"/repo/src/parser.rs"}"#),
            (
                "toolu_2",
                "Bash",
                r#"{"command":"cargo test","description":"run"}"#,
            ),
        ]);
        look.content = Some(crate::message::Content::Text("I'll look first.".into()));
        vec![
            Message::system("You are Claude Code."),
            Message::user("Fix the failing test in src/parser.rs. Don't change the public API."),
            look,
            Message::tool("toolu_1", "     1\tpub fn parse(s: &str) -> Ast {"),
            Message::tool(
                "toolu_2",
                "Exit code 1\nerror[E0308]: mismatched types\n --> src/parser.rs:10:5",
            ),
            calls(&[(
                "toolu_3",
                "Edit",
                r#"{"file_path":"/repo/src/parser.rs","old_string":"a","new_string":"b"}"#,
            )]),
            Message::tool("toolu_3", "The file /repo/src/parser.rs has been updated."),
            calls(&[(
                "toolu_4",
                "Write",
                r#"{"file_path":"/repo/tests/parser_test.rs","content":"x"}"#,
            )]),
            Message::tool("toolu_4", "File created successfully"),
            calls(&[("toolu_5", "Bash", r#"{"command":"cargo test"}"#)]),
            Message::tool("toolu_5", "test result: ok. 3 passed; 0 failed"),
            Message::assistant("All tests pass now."),
            Message::user("Can you also update the README? And what about the CHANGELOG?"),
        ]
    }

    #[test]
    fn claude_code_transcript_records_files_commands_and_the_failure() {
        let ledger = observed(&claude_code_transcript());
        assert_eq!(ledger.files_read, vec!["/repo/src/parser.rs"]);
        assert_eq!(
            ledger.files_modified,
            vec!["/repo/src/parser.rs", "/repo/tests/parser_test.rs"]
        );
        let runs = CommandRecord {
            command: "cargo test".into(),
            exit_code: None,
            count: 2,
        };
        assert_eq!(ledger.commands, vec![runs]);
        let failure = ledger.last_failure.clone().unwrap();
        assert_eq!(failure.command, "cargo test");
        assert!(failure.error.starts_with("Exit code 1\nerror[E0308]"));
        let ask = "Can you also update the README? And what about the CHANGELOG?";
        assert_eq!(ledger.active_task.as_deref(), Some(ask));
        assert_eq!(ledger.open_asks, vec![ask]);
        assert!(ledger.facts().contains(&"cargo test".to_string()));
    }

    #[test]
    fn codex_transcript_reads_exit_codes_and_patch_paths() {
        let patch = r#"{"input":"*** Begin Patch\n*** Update File: app/x.py\n@@\n-a\n+b\n*** Add File: app/y.py\n+c\n*** End Patch"}"#;
        let ledger = observed(&[
            Message::user("make the import work"),
            calls(&[("call_a", "exec_command", r#"{"cmd":"pytest -q"}"#)]),
            Message::tool(
                "call_a",
                "Chunk ID: 1\nProcess exited with code 2\nOutput:\nE   ImportError: x",
            ),
            calls(&[("call_b", "apply_patch", patch)]),
            Message::tool(
                "call_b",
                "Success. Updated the following files:\nM app/x.py",
            ),
            calls(&[("call_c", "shell", r#"{"command":["bash","-lc","ls app"]}"#)]),
            Message::tool("call_c", "x.py\ny.py\nProcess exited with code 0"),
        ]);
        assert_eq!(ledger.files_modified, vec!["app/x.py", "app/y.py"]);
        assert_eq!(ledger.commands[0].exit_code, Some(2));
        assert_eq!(
            (
                ledger.commands[1].command.as_str(),
                ledger.commands[1].exit_code
            ),
            ("ls app", Some(0))
        );
        assert_eq!(ledger.last_failure.as_ref().unwrap().command, "pytest -q");
        assert_eq!(
            ledger.failing_commands().collect::<Vec<_>>(),
            vec!["pytest -q"]
        );
    }

    #[test]
    fn repeated_ids_pair_within_their_own_exchange() {
        let messages = [
            calls(&[
                ("call_0", "Bash", r#"{"command":"make a"}"#),
                ("call_1", "Bash", r#"{"command":"make b"}"#),
            ]),
            // Results arrive out of order: ids decide.
            Message::tool("call_1", "exit code: 3"),
            Message::tool("call_0", "exit code: 0"),
            calls(&[("call_0", "Bash", r#"{"command":"make c"}"#)]),
            Message::tool("call_0", "exit code: 7"),
        ];
        let results: Vec<String> = pair_tool_calls(&messages)
            .iter()
            .map(|p| p.result.unwrap().text())
            .collect();
        assert_eq!(
            results,
            vec!["exit code: 0", "exit code: 3", "exit code: 7"]
        );
        let ledger = observed(&messages);
        let codes: Vec<Option<i32>> = ledger.commands.iter().map(|c| c.exit_code).collect();
        assert_eq!(codes, vec![Some(0), Some(3), Some(7)]);
        assert_eq!(ledger.last_failure.unwrap().command, "make c");
    }

    #[test]
    fn observe_is_incremental() {
        let transcript = claude_code_transcript();
        let mut parts = observed(&transcript[..5]);
        parts.observe(&transcript[5..]);
        assert_eq!(parts, observed(&transcript));
    }

    #[test]
    fn active_task_skips_summaries_and_blanks_and_keeps_the_limit() {
        let mut marked = Message::user("anything");
        marked
            .extra
            .insert(SUMMARY_MARKER_KEY.into(), serde_json::json!(true));
        let summary = Message::user("[CONTEXT COMPACTION] earlier turns were compacted");
        let ledger = observed(&[
            Message::user("real ask"),
            summary,
            marked,
            Message::user("   "),
        ]);
        assert_eq!(ledger.active_task.as_deref(), Some("real ask"));
        let long = "é".repeat(ACTIVE_TASK_MAX_CHARS + 50);
        let task = observed(&[Message::user(long.clone())])
            .active_task
            .unwrap();
        assert_eq!(
            task,
            long.chars().take(ACTIVE_TASK_MAX_CHARS).collect::<String>()
        );
    }

    fn summary_in_assistant_role() -> Message {
        let mut m = Message::assistant("earlier turns, summarized");
        m.extra
            .insert(SUMMARY_MARKER_KEY.into(), serde_json::json!(true));
        m
    }

    #[test]
    fn an_assistant_reply_closes_earlier_asks_but_not_questions_of_the_latest_message() {
        let ledger = observed(&[
            Message::user("first thing"),
            Message::assistant("done"),
            Message::user("Why is it slow? Please profile it."),
            Message::assistant("Looking."),
        ]);
        assert_eq!(ledger.open_asks, vec!["Why is it slow?"]);
        let summarized = observed(&[Message::user("Profile it."), summary_in_assistant_role()]);
        assert_eq!(summarized.open_asks, vec!["Profile it."]);
    }

    #[test]
    fn command_cap_trims_oldest_and_says_so() {
        let mut ledger = TaskLedger::default();
        for i in 0..(MAX_COMMANDS + 37) {
            ledger.note_run(&format!("echo {i}"), Some(0));
        }
        ledger.observe(&[
            Message::assistant_tool_calls(vec![ToolCall::function(
                "h",
                "Bash",
                r#"{"command":"cat <<EOF\nlong heredoc\nEOF"}"#,
            )]),
            Message::tool("h", "exit code: 1"),
        ]);
        assert_eq!(
            (ledger.commands.len(), ledger.commands_omitted),
            (MAX_COMMANDS, 38)
        );
        assert!(
            ledger
                .render()
                .contains("- Commands: … 38 earlier commands omitted")
        );
        assert_eq!(ledger.last_failure.as_ref().unwrap().command, "cat <<EOF…");
    }

    #[test]
    fn render_example_is_stable() {
        let ledger = observed(&claude_code_transcript());
        let expected = "## Task Ledger
- Active task: Can you also update the README? And what about the CHANGELOG?
- Files read:
  - /repo/src/parser.rs
- Files modified:
  - /repo/src/parser.rs
  - /repo/tests/parser_test.rs
- Commands:
  - `cargo test` (×2)
- Last failure: `cargo test` → Exit code 1\\nerror[E0308]: mismatched types\\n --> src/parser.rs:10:5
- Open asks:
  - Can you also update the README? And what about the CHANGELOG?";
        assert_eq!(ledger.render(), expected);
        assert_eq!(TaskLedger::parse(expected), Some(ledger));
    }

    #[test]
    fn parse_reads_empty_ledgers_stops_at_the_next_heading_and_skips_commentary() {
        let empty = TaskLedger::default().render();
        assert!(empty.contains("- Files modified: none"));
        assert_eq!(TaskLedger::parse(&empty), Some(TaskLedger::default()));
        assert_eq!(TaskLedger::parse("no ledger here"), None);
        let ledger = TaskLedger {
            files_modified: vec!["a.rs".into()],
            ..TaskLedger::default()
        };
        let text = format!(
            "## Goal\nx\n\n{}\ncommentary\n\n## Active Task\n- Files modified:\n  - b.rs",
            ledger.render()
        );
        assert_eq!(TaskLedger::parse(&text), Some(ledger));
    }

    #[test]
    fn merge_keeps_older_facts_first_and_newer_statuses() {
        let make = |exit_code, count| CommandRecord {
            command: "make".into(),
            exit_code,
            count,
        };
        let older = TaskLedger {
            active_task: Some("old task".into()),
            files_read: vec!["a".into(), "b".into()],
            files_modified: vec!["m1".into()],
            commands: vec![make(Some(1), 2)],
            ..TaskLedger::default()
        };
        let mut newer = TaskLedger {
            files_read: vec!["b".into(), "c".into()],
            files_modified: vec!["m2".into(), "m1".into()],
            commands: vec![make(Some(0), 1)],
            open_asks: vec!["new ask".into()],
            ..TaskLedger::default()
        };
        newer.merge(&older);
        assert_eq!(newer.active_task.as_deref(), Some("old task"));
        assert_eq!(
            (newer.files_read.len(), newer.files_modified.clone()),
            (3, vec!["m1".into(), "m2".into()])
        );
        assert_eq!(newer.commands, vec![make(Some(0), 3)]);
        assert_eq!(newer.open_asks, vec!["new ask"]);
    }

    fn text() -> impl Strategy<Value = String> {
        let pieces = [
            "`",
            "\n",
            "\\",
            " ",
            "\r\n",
            "## ",
            "  - ",
            " → ",
            " (×2)",
            "… 3 earlier files omitted",
            "none",
            "\\u{41}",
            "\u{2028}",
        ];
        let piece = prop_oneof![
            proptest::sample::select(pieces.to_vec()).prop_map(String::from),
            "\\PC{1,4}",
            any::<char>().prop_map(String::from)
        ];
        proptest::collection::vec(piece, 0..6).prop_map(|p| p.concat())
    }

    fn ledgers() -> impl Strategy<Value = TaskLedger> {
        use proptest::{collection::vec, option::of};
        let command =
            (text(), of(any::<i32>()), any::<u32>()).prop_map(|(command, exit_code, count)| {
                CommandRecord {
                    command,
                    exit_code,
                    count,
                }
            });
        let failure = (text(), text()).prop_map(|(command, error)| Failure { command, error });
        let lists = (
            vec(text(), 0..4),
            vec(text(), 0..4),
            vec(command, 0..4),
            vec(text(), 0..3),
        );
        (of(text()), lists, of(failure), 0u32..50, 0u32..50).prop_map(
            |(
                active_task,
                (files_read, files_modified, commands, open_asks),
                last_failure,
                r,
                c,
            )| TaskLedger {
                active_task,
                files_read,
                files_modified,
                commands,
                last_failure,
                open_asks,
                files_read_omitted: r,
                commands_omitted: c,
            },
        )
    }

    proptest! {
        /// Copying plain text as it is gives what escaping it a character at a time gives.
        #[test]
        fn plain_text_is_copied_as_escaping_would_write_it(
            s in "[ -~\t\n\u{7f}\u{85}\u{2028}é`\\\\]{0,12}",
            code: bool,
        ) {
            prop_assert_eq!(escape_with(&s, code), escape_chars(&s, code));
        }


        #[test]
        fn render_then_parse_is_exact(ledger in ledgers()) {
            let rendered = ledger.render();
            let parsed = TaskLedger::parse(&rendered);
            prop_assert_eq!(parsed.as_ref(), Some(&ledger));
            prop_assert_eq!(parsed.map(|p| p.render()), Some(rendered.clone()));
            // The compressor trims summary bodies; the block must not care.
            let trimmed = TaskLedger::parse(rendered.trim());
            prop_assert_eq!(trimmed.as_ref(), Some(&ledger));
            prop_assert!(rendered.lines().skip(1).all(|l| !l.starts_with("## ")));
            for fact in ledger.facts() {
                prop_assert!(fact_appears_in(&rendered, &fact), "{:?}", fact);
            }
        }
    }

    /// The longest conversation of the Claude Code dataset: every Edit/Write target must be
    /// in `files_modified`, and the ledger must read back exactly.
    #[test]
    fn real_claude_code_transcript_tracks_every_modified_file() {
        let Some(messages) = longest_real_conversation() else {
            return;
        };
        let ledger = observed(&messages);
        assert!(!ledger.files_modified.is_empty());
        let edits = messages
            .iter()
            .flat_map(Message::calls)
            .filter(|c| matches!(c.function.name.as_str(), "Edit" | "Write" | "MultiEdit"));
        for c in edits {
            let args: serde_json::Value = serde_json::from_str(&c.function.arguments).unwrap();
            let path = args["file_path"].as_str().unwrap();
            assert!(ledger.files_modified.iter().any(|p| p == path), "{path}");
        }
        assert_eq!(TaskLedger::parse(&ledger.render()).unwrap(), ledger);
    }

    pub(crate) fn longest_real_conversation() -> Option<Vec<Message>> {
        let path = "/work/shared/data/normalized/spotter-claude-code.jsonl";
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skipping real-data test: {path} is absent");
            return None;
        };
        let records = text.lines().filter(|l| !l.trim().is_empty());
        let raw = records
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["messages"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .max_by_key(Vec::len)?;
        Some(
            raw.into_iter()
                .enumerate()
                .map(|(i, v)| Message::from_value(v, i).unwrap())
                .collect(),
        )
    }

    /// The definition `observe_requests` replays from the end: every message read in order.
    fn observe_requests_in_order(ledger: &mut TaskLedger, messages: &[Message]) {
        for m in messages {
            match m.role {
                Role::User if is_real_request(m) => {
                    let text = m.text();
                    ledger.active_task = Some(clip(&text, ACTIVE_TASK_MAX_CHARS));
                    ledger.push_ask(text.trim());
                }
                Role::Assistant if is_reply(m) => ledger.open_asks.clear(),
                _ => {}
            }
        }
        let latest = messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User && is_real_request(m));
        if let Some(latest) = latest {
            for q in questions(&latest.text()) {
                ledger.push_ask(&q);
            }
        }
    }

    proptest! {
        /// Reading the requests from the end leaves the ledger (open asks, active task) as
        /// reading every message in order does, whatever the mix of requests, replies, tool
        /// turns, injected texts and summaries, and whatever asks were open before.
        #[test]
        fn requests_read_from_the_end_leave_what_reading_in_order_leaves(
            kinds in proptest::collection::vec((0u8..7, 0usize..5), 0..24),
            open_before in proptest::collection::vec("[a-c ?]{0,6}", 0..4),
        ) {
            let texts = [
                "fix the build",
                "why does it fail? look at the log.",
                "  ",
                "and the tests? also the docs?",
                "fix the build",
            ];
            let messages: Vec<Message> = kinds
                .iter()
                .map(|&(kind, t)| match kind {
                    0 | 1 => Message::user(texts[t]),
                    2 => Message::assistant(texts[t]),
                    3 => Message::assistant_tool_calls(vec![ToolCall::function("c", "Bash", "{}")]),
                    4 => Message::tool("c", texts[t]),
                    5 => Message::user(format!("<system-reminder>{}</system-reminder>", texts[t])),
                    _ => Message::user(format!("{}\n{}", SUMMARY_PREFIXES[0], texts[t])),
                })
                .collect();
            let before = TaskLedger {
                open_asks: open_before,
                active_task: Some("earlier".into()),
                ..TaskLedger::default()
            };
            let (mut expected, mut got) = (before.clone(), before);
            observe_requests_in_order(&mut expected, &messages);
            got.observe_requests(&messages);
            prop_assert_eq!(got.open_asks, expected.open_asks);
            prop_assert_eq!(got.active_task, expected.active_task);
        }
    }

    proptest! {
        /// Pairing a split of the messages range by range gives the whole walk's pairs, in
        /// order, wherever the splits fall (inside an exchange's results, on an orphan result).
        #[test]
        fn pairs_of_ranges_are_the_pairs_of_the_whole(
            kinds in proptest::collection::vec((0u8..5, 0usize..3), 0..30),
            cuts in proptest::collection::vec(0usize..30, 0..5),
        ) {
            let ids = ["a", "b", "c"];
            let messages: Vec<Message> = kinds
                .iter()
                .map(|&(kind, k)| match kind {
                    0 => Message::user("go"),
                    1 => Message::assistant_tool_calls(
                        ids[..=k].iter().map(|id| ToolCall::function(*id, "Bash", "{}")).collect(),
                    ),
                    2 | 3 => Message::tool(ids[k], "out"),
                    _ => Message::assistant("done"),
                })
                .collect();
            let key = |pairs: &[PairedCall<'_>]| -> Vec<(usize, Option<usize>)> {
                let at = |m: &Message| messages.iter().position(|x| std::ptr::eq(x, m));
                pairs
                    .iter()
                    .map(|p| {
                        let call = messages
                            .iter()
                            .position(|m| m.calls().iter().any(|c| std::ptr::eq(c, p.call)));
                        (call.unwrap_or(usize::MAX), p.result.and_then(at))
                    })
                    .collect()
            };
            let whole = pair_tool_calls(&messages);
            let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c.min(messages.len())).collect();
            bounds.push(0);
            bounds.push(messages.len());
            bounds.sort_unstable();
            let mut split = Vec::new();
            for w in bounds.windows(2) {
                pair_tool_calls_from(&messages, w[0]..w[1], &mut split);
            }
            prop_assert_eq!(key(&split), key(&whole));
        }
    }
}
