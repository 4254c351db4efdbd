//! What the ledger reads of a single message or text: whether it is a request, a reply or a
//! summary, its text, whether a command's output reports failure, and its questions.

use super::{
    FAILURE_MAX_CHARS, FAILURE_MAX_LINES, QUESTION_MAX_CHARS, SUMMARY_MARKER_KEY, SUMMARY_PREFIXES,
    sentences,
};
use crate::message::{Content, Message, Role};
use crate::summary::failure_report::reads_as_failure;
use crate::{synthetic, tool_action};

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
    let head = m.leading_text().trim_start();
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

/// Whether any text of the message is non-blank.
fn has_text(m: &Message) -> bool {
    !m.leading_text().trim().is_empty()
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
