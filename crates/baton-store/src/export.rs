//! Exporting transcripts as JSONL: one message per line, in baton's message format (the same
//! format baton's loaders read), so an export can be fed straight back in.
//!
//! A compression chain is one conversation stored as several sessions, each continuation
//! starting with the compacted view of its parent (head, summary, kept tail) before its own new
//! messages. Concatenating the stored rows repeats every kept tail and puts summaries in the
//! middle, which no provider accepts, so the chain export is the full original history
//! instead: the root's messages, then each continuation's messages after its compacted view.
//! The stored rows as they are remain available ([`ExportScope::ChainRaw`]).

use crate::SessionStore;
use crate::error::{Result, StoreError};
use baton_core::compress::markers::{is_summary_message, strip_baton_metadata};
use baton_core::compress::sanitize::{SequenceError, validate_sequence};
use baton_core::{Message, Role};
use std::io::Write;

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportScope {
    /// The messages of this one session (for a continuation: its compacted view and what
    /// followed, the latest compacted view of its chain when it is the tip).
    Session,
    /// The compression chain containing it as one conversation: the full original history,
    /// in order, checked to be a valid message sequence.
    Chain,
    /// Every stored row of every session of the chain, root first, as they are.
    ChainRaw,
}

/// Writes the transcript of `id` to `out` as JSONL and returns the number of messages written.
pub fn export_jsonl(
    store: &dyn SessionStore,
    id: &str,
    scope: ExportScope,
    mut out: impl Write,
) -> Result<usize> {
    let messages = match scope {
        ExportScope::Session => store.messages(id)?,
        ExportScope::Chain => chain_history(store, id)?,
        ExportScope::ChainRaw => {
            let mut all = Vec::new();
            for sid in store.compression_chain(id)? {
                all.extend(store.messages(&sid)?);
            }
            all
        }
    };
    let io = |source| StoreError::Export {
        id: id.to_string(),
        source,
    };
    for m in &messages {
        // An export may be sent to a provider as it is: Baton's own markers (`_baton_summary`,
        // the synthetic flags) stay in the store; a summary is recognised again by its text.
        // `--raw` is the stored rows exactly.
        let line = if scope == ExportScope::ChainRaw {
            m.to_json()
        } else {
            let mut m = m.clone();
            strip_baton_metadata(&mut m);
            m.to_json()
        };
        out.write_all(line.as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(messages.len())
}

/// The full original history of the chain containing `id`: the root's messages, then each
/// continuation's messages after its compacted view. Refused when the result is not a valid
/// sequence (a tool result without its call, say), naming the first problem.
pub fn chain_history(store: &dyn SessionStore, id: &str) -> Result<Vec<Message>> {
    let mut history: Vec<Message> = Vec::new();
    let mut joins = Vec::new();
    for (i, sid) in store.compression_chain(id)?.iter().enumerate() {
        let rows = store.messages(sid)?;
        if i == 0 {
            history = rows;
        } else {
            let start = after_compacted_view(&history, &rows);
            joins.push(history.len());
            history.extend(rows.into_iter().skip(start));
        }
    }
    check_joined(&history, &joins).map_err(|e| StoreError::InvalidChain {
        id: id.to_string(),
        detail: e.to_string(),
    })?;
    Ok(history)
}

/// [`validate_sequence`] over the joined history, except that two messages of one role in a
/// row *inside* one session are accepted as stored: transcripts hold them (an interrupted
/// request and its retry), providers merge them, and they are the session's own history, not
/// something joining produced. At a join they are an error, as is any broken call/result
/// pairing anywhere. Indexes in the error are those of the joined history.
fn check_joined(history: &[Message], joins: &[usize]) -> std::result::Result<(), SequenceError> {
    // The history without the earlier message of each same-role pair inside a session; tool
    // pairing is unaffected, since a dropped message is followed by one of the same role.
    let kept: Vec<usize> = (0..history.len())
        .filter(|&i| {
            let next = i + 1;
            next >= history.len()
                || joins.contains(&next)
                || history[next].role != history[i].role
                || history[i].role == Role::Tool
                || history[i].role.is_instruction()
                || history[i].has_tool_calls()
        })
        .collect();
    let view: Vec<Message> = kept.iter().map(|&i| history[i].clone()).collect();
    let at = |i: usize| kept.get(i).copied().unwrap_or(i);
    validate_sequence(&view).map_err(|e| match e {
        SequenceError::ResultWithoutCall {
            index,
            tool_call_id,
        } => SequenceError::ResultWithoutCall {
            index: at(index),
            tool_call_id,
        },
        SequenceError::UnmatchedResult {
            index,
            assistant,
            tool_call_id,
        } => SequenceError::UnmatchedResult {
            index: at(index),
            assistant: at(assistant),
            tool_call_id,
        },
        SequenceError::UnansweredCall { index, call_id } => SequenceError::UnansweredCall {
            index: at(index),
            call_id,
        },
        SequenceError::RepeatedRole { index, role } => SequenceError::RepeatedRole {
            index: at(index),
            role,
        },
        SequenceError::NoUserMessage => SequenceError::NoUserMessage,
    })
}

/// Where a continuation's own messages start: after its compacted view, which is a head, a
/// summary, possibly the latest user request repeated after it, and the kept tail, a run that
/// repeats the end of the history so far. The view ends where the longest such run ends; a
/// view with no kept tail ends after the copies of earlier messages that follow its summary.
/// A continuation without a summary (a compaction that only dropped messages) has the same
/// shape without one: its view starts after the head it shares with the history.
fn after_compacted_view(history: &[Message], child: &[Message]) -> usize {
    let start = match child.iter().position(is_summary_message) {
        Some(s) => s + 1,
        None => child
            .iter()
            .zip(history)
            .take_while(|(a, b)| same(a, b))
            .count(),
    };
    let Some(last) = history.last() else {
        return start;
    };
    // Each place the history's last message reappears could end the kept tail; the one with
    // the longest run of the history's end before it does.
    let tail_end = (start..child.len())
        .filter(|&e| same(&child[e], last))
        .map(|e| {
            let run = child[start..=e]
                .iter()
                .rev()
                .zip(history.iter().rev())
                .take_while(|(a, b)| same(a, b))
                .count();
            (run, e)
        })
        .max_by_key(|&(run, e)| (run, std::cmp::Reverse(e)));
    match tail_end {
        Some((_, e)) => e + 1,
        None => {
            start
                + child[start..]
                    .iter()
                    .take_while(|m| history.iter().any(|h| same(m, h)))
                    .count()
        }
    }
}

/// The same message for this purpose: role and the ids tying calls to results, and the text
/// except for tool results, which the compressor may replace by a one-line stub inside the
/// kept tail (`[Read] read src/x.rs lines 1-147 (4,803 chars)`). Other fields (metadata,
/// reasoning) may differ between a message and its kept copy too.
fn same(a: &Message, b: &Message) -> bool {
    let call_ids =
        |m: &Message| -> Vec<String> { m.calls().iter().map(|c| c.id.clone()).collect() };
    a.role == b.role
        && a.tool_call_id == b.tool_call_id
        && call_ids(a) == call_ids(b)
        && (a.role == Role::Tool || a.text() == b.text())
}
