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
use crate::message::Message;
use crate::summary::sections;
use crate::summary::span_calls::{SpanCall, SpanCalls};
use crate::tool_action::ToolAction;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;

mod escaping;
mod message_reads;
mod pairing;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests;

use escaping::escaped;
pub use escaping::{escape, escape_code, unescape};
pub use message_reads::{
    clip, command_failed, command_failed_with, error_excerpt, is_real_request, is_reply,
    is_summary, message_text, questions, questions_among,
};
pub use pairing::{PairedCall, pair_tool_calls, pair_tool_calls_from};

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

/// Whether `fact` appears in `text` as written or in its rendered (escaped) form.
pub fn fact_appears_in(text: &str, fact: &str) -> bool {
    let holds = |form: &str| memchr::memmem::find(text.as_bytes(), form.as_bytes()).is_some();
    // An escaped form equal to the fact was searched for already.
    let escaped_holds = |form: String| form != fact && holds(&form);
    holds(fact) || escaped_holds(escape(fact)) || escaped_holds(escape_code(fact))
}
