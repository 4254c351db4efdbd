//! A span's tool calls, each paired with its result, classified and judged once for every
//! part of a pass that reads them.
//!
//! The ledger (commands run, the last failure) and the extractive summary (actions, blockers)
//! read the same calls of the same views. Each paired them, looked up their actions and read
//! each command's exit status and failure on its own: judging a command's output twice was a
//! twentieth of a compaction of a real session (issue #17). A pass now builds this list once
//! and hands it to both; a caller without one (the ledger fed a few new messages, a summarizer
//! called on its own) builds it from the turns it has.

use crate::message::Message;
use crate::split_work::in_ranges;
use crate::summary::failure_report::reads_as_failure;
use crate::summary::ledger::{PairedCall, command_failed_with, message_text, pair_tool_calls};
use crate::tool_action::{self, ActionTable, ToolAction};
use std::borrow::{Borrow, Cow};
use std::sync::OnceLock;

/// One tool call with its result text (borrowed from the turns), classified once; its exit
/// status and failure are read on first use.
#[derive(Debug, Clone)]
pub struct SpanCall<'a> {
    pub name: &'a str,
    pub action: Cow<'a, ToolAction>,
    /// Raw arguments, shown only for tools nothing else is known about.
    pub arguments: &'a str,
    /// `None` when no result answered the call.
    pub result: Option<Cow<'a, str>>,
    /// `OnceLock`s so a long span's calls can be judged on several threads.
    failed: OnceLock<bool>,
    exit_code: OnceLock<Option<i32>>,
}

impl<'a> SpanCall<'a> {
    fn new(pair: &PairedCall<'a>, actions: Option<&'a ActionTable<'a>>) -> Self {
        let f = &pair.call.function;
        SpanCall {
            name: &f.name,
            action: match actions {
                Some(table) => table.action_of(&f.name, &f.arguments),
                None => Cow::Owned(tool_action::classify(&f.name, &f.arguments)),
            },
            arguments: &f.arguments,
            result: pair.result.map(message_text),
            failed: OnceLock::new(),
            exit_code: OnceLock::new(),
        }
    }

    /// Whether the call failed: for a command, its exit status, or its output read as a
    /// failure when it reports none (the ledger's judgement); for any other tool, the first
    /// line of its result, since file contents and search hits often mention "error". A call
    /// without a result did not fail.
    pub fn failed(&self) -> bool {
        let Some(text) = &self.result else {
            return false;
        };
        *self.failed.get_or_init(|| match *self.action {
            ToolAction::Command { .. } => command_failed_with(self.exit_code(), text),
            _ => reads_as_failure(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")),
        })
    }

    /// The exit status the result reports (`tool_action::exit_code`), read once.
    pub fn exit_code(&self) -> Option<i32> {
        let text = self.result.as_deref()?;
        *self.exit_code.get_or_init(|| tool_action::exit_code(text))
    }
}

/// The tool calls of a run of turns, in order.
#[derive(Debug, Clone, Default)]
pub struct SpanCalls<'a> {
    calls: Vec<SpanCall<'a>>,
}

impl<'a> SpanCalls<'a> {
    /// Every call of `turns` paired with its result ([`pair_tool_calls`]), its action taken from
    /// `actions` when given (else classified here). A long span's calls are set up on several
    /// threads.
    pub fn new<M: Borrow<Message> + Sync>(
        turns: &'a [M],
        actions: Option<&'a ActionTable<'a>>,
    ) -> Self {
        let pairs = pair_tool_calls(turns);
        let calls = in_ranges(pairs.len(), |range| {
            pairs[range]
                .iter()
                .map(|pair| SpanCall::new(pair, actions))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        SpanCalls { calls }
    }

    pub fn as_slice(&self) -> &[SpanCall<'a>] {
        &self.calls
    }

    pub fn into_vec(self) -> Vec<SpanCall<'a>> {
        self.calls
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall::function(id, name, arguments)
    }

    fn turns() -> Vec<Message> {
        vec![
            Message::user("build it"),
            Message::assistant_tool_calls(vec![
                call("a", "Bash", r#"{"command":"cargo build"}"#),
                call("b", "Read", r#"{"file_path":"src/lib.rs"}"#),
            ]),
            Message::tool("a", "error[E0425]: cannot find value\nexit code: 101"),
            Message::tool(
                "b",
                "fn main() {}\n// error handling lives here: failed reads panic",
            ),
            Message::assistant_tool_calls(vec![call("c", "Bash", r#"{"command":"ls"}"#)]),
            Message::tool("c", "Cargo.toml\nsrc\n\nProcess exited with code 0"),
            Message::assistant_tool_calls(vec![call("d", "Bash", r#"{"command":"make"}"#)]),
        ]
    }

    #[test]
    fn calls_are_paired_classified_and_judged_as_the_ledger_and_summary_judge_them() {
        let turns = turns();
        let calls = SpanCalls::new(&turns, None);
        let calls = calls.as_slice();
        assert_eq!(calls.len(), 4);
        let command = |c: &SpanCall<'_>| matches!(*c.action, ToolAction::Command { .. });
        // A command with a non-zero exit status failed.
        assert!(command(&calls[0]));
        assert_eq!(calls[0].exit_code(), Some(101));
        assert!(calls[0].failed());
        // A file that mentions errors did not: only its first line is read, and it is not an error.
        assert!(matches!(*calls[1].action, ToolAction::Read { .. }));
        assert!(!calls[1].failed());
        // Exit 0: no failure, whatever the output says.
        assert_eq!(calls[2].exit_code(), Some(0));
        assert!(!calls[2].failed());
        // No result: nothing to judge.
        assert!(calls[3].result.is_none());
        assert_eq!(calls[3].exit_code(), None);
        assert!(!calls[3].failed());
        // The judgement is the ledger's own for commands.
        for c in calls.iter().filter(|c| command(c)) {
            let text = c.result.as_deref().unwrap_or_default();
            let expected =
                c.result.is_some() && command_failed_with(tool_action::exit_code(text), text);
            assert_eq!(c.failed(), expected, "{}", c.arguments);
        }
    }

    #[test]
    fn a_given_table_supplies_the_actions() {
        let turns = turns();
        let mut table = ActionTable::default();
        for m in &turns {
            for c in m.calls() {
                table.classify(&c.function.name, &c.function.arguments);
            }
        }
        let with_table = SpanCalls::new(&turns, Some(&table));
        let classified = SpanCalls::new(&turns, None);
        let actions = |s: &SpanCalls<'_>| -> Vec<ToolAction> {
            s.as_slice()
                .iter()
                .map(|c| c.action.clone().into_owned())
                .collect()
        };
        assert_eq!(actions(&with_table), actions(&classified));
        assert!(
            with_table
                .as_slice()
                .iter()
                .all(|c| matches!(c.action, Cow::Borrowed(_)))
        );
    }
}
