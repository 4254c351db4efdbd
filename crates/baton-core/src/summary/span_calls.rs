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
use crate::split_work::{SPLIT_FROM_ITEMS, in_ranges};
use crate::summary::failure_report::reads_as_failure;
use crate::summary::failure_verdicts::FailureVerdicts;
use crate::summary::ledger::{PairedCall, message_text, pair_tool_calls_from};
use crate::summary::redact::{redact, redact_arguments};
use crate::tool_action::{self, ActionTable, Shown, ToolAction};
use std::borrow::{Borrow, Cow};
use std::sync::OnceLock;

/// One tool call with its result text (borrowed from the turns), classified once, its exit
/// status and failure read as it is set up.
///
/// What a summary line can show of the call is redacted here: the action's texts (a command
/// line can carry a token), an unknown tool's arguments, and the result where it is quoted
/// ([`SpanCall::quoted_result`]). The arguments and the result are read as written (a
/// compaction's views cut results and redact only the user's and the assistant's text,
/// `redacted_views::changed_span_view`), and redacting before any line is clipped keeps a cut
/// secret from slipping past the recognizers.
#[derive(Debug, Clone)]
pub struct SpanCall<'a> {
    pub name: &'a str,
    /// Redacted.
    pub action: Cow<'a, ToolAction>,
    /// Shown only for tools nothing else is known about ([`ToolAction::Other`]), and for
    /// those redacted; as written for the others, read only to match the focus topic.
    pub arguments: Cow<'a, str>,
    /// `None` when no result answered the call. As the turns hold it: measured and judged
    /// here, never quoted (a summary quotes [`SpanCall::quoted_result`]).
    pub result: Option<Cow<'a, str>>,
    /// `OnceLock`s so a long span's calls can be judged on several threads.
    failed: OnceLock<bool>,
    exit_code: OnceLock<Option<i32>>,
    /// The result redacted, once it is quoted; `None` inside when it holds no secret.
    quoted: OnceLock<Option<String>>,
    /// The table's shown form of this call, shared with every call of the same text.
    held: Option<&'a Shown>,
}

impl<'a> SpanCall<'a> {
    fn new(pair: &PairedCall<'a>, actions: Option<&'a ActionTable<'a>>) -> Self {
        let f = &pair.call.function;
        let held = actions.and_then(|table| {
            table.shown_of(&f.name, &f.arguments, |action| shown(action, &f.arguments))
        });
        let (action, arguments) = match held {
            // The table's call, as an earlier call with the same text was shown.
            Some((action, shown)) => (
                shown
                    .action
                    .as_ref()
                    .map_or(Cow::Borrowed(action), Cow::Borrowed),
                shown
                    .arguments
                    .as_deref()
                    .map_or(Cow::Borrowed(f.arguments.as_str()), Cow::Borrowed),
            ),
            None => {
                let action = tool_action::classify(&f.name, &f.arguments);
                let shown = shown(&action, &f.arguments);
                (
                    Cow::Owned(shown.action.unwrap_or(action)),
                    shown
                        .arguments
                        .map_or(Cow::Borrowed(f.arguments.as_str()), Cow::Owned),
                )
            }
        };
        SpanCall {
            name: &f.name,
            action,
            arguments,
            result: pair.result.map(message_text),
            failed: OnceLock::new(),
            exit_code: OnceLock::new(),
            quoted: OnceLock::new(),
            held: held.map(|(_, shown)| shown),
        }
    }

    /// `write(self)`, a function of the call's name and what it shows (its action and
    /// arguments as shown): written once for all the calls of this text when a table holds it.
    pub(crate) fn shared_label(&self, write: impl FnOnce(&Self) -> String) -> Cow<'a, str> {
        match self.held {
            Some(shown) => Cow::Borrowed(shown.label.get_or_init(|| write(self))),
            None => Cow::Owned(write(self)),
        }
    }

    /// `digest(self)`, a function of the call's name and what it shows, as
    /// [`Self::shared_label`].
    pub(crate) fn shared_key(&self, digest: impl FnOnce(&Self) -> u64) -> u64 {
        match self.held {
            Some(shown) => *shown.key.get_or_init(|| digest(self)),
            None => digest(self),
        }
    }

    /// The result as a summary line may quote it (an error's first lines): redacted whole,
    /// before any line of it is picked or clipped. Redacted on first use: a summary quotes the
    /// results of failed calls only, and scanning every result of a span for secrets was a
    /// fifth of a long compaction (issue #17).
    pub fn quoted_result(&self) -> Option<&str> {
        let text = self.result.as_deref()?;
        let redacted = self.quoted.get_or_init(|| match redact(text) {
            Cow::Owned(redacted) => Some(redacted),
            Cow::Borrowed(_) => None,
        });
        Some(redacted.as_deref().unwrap_or(text))
    }

    /// Whether the call failed: for a command, its exit status, or its output read as a
    /// failure when it reports none (the ledger's judgement); for any other tool, the first
    /// line of its result, since file contents and search hits often mention "error". A call
    /// without a result did not fail.
    pub fn failed(&self) -> bool {
        let Some(text) = &self.result else {
            return false;
        };
        *self
            .failed
            .get_or_init(|| self.judge(text, reads_as_failure))
    }

    /// [`Self::failed`] of a call whose result is `text`, with `reads` telling whether a text
    /// reads as a failure.
    fn judge<'t>(&self, text: &'t str, reads: impl FnOnce(&'t str) -> bool) -> bool {
        match *self.action {
            ToolAction::Command { .. } => match self.exit_code() {
                Some(code) => code != 0,
                None => reads(text),
            },
            _ => reads(crate::byte_scan::first_nonblank_line(text).unwrap_or("")),
        }
    }

    /// The call with its exit status and failure read now, on the threads that set a long
    /// span's calls up: the ledger reads every command's, one after another (reading them
    /// there was a twelfth of a 10,000-message span's single-threaded work, `perf record`,
    /// issue #17), and the summary's blockers every call's. A result borrowed from the turns
    /// is read through `verdicts` when given, once per distinct text.
    fn judged(self, verdicts: Option<&FailureVerdicts<'a>>) -> Self {
        match (&self.result, verdicts) {
            (Some(Cow::Borrowed(text)), Some(verdicts)) => {
                let text: &'a str = text;
                let failed = self.judge(text, |t| verdicts.reads_as_failure(t));
                // Just set up, so not judged yet.
                let _ = self.failed.set(failed);
            }
            (Some(_), _) => {
                self.failed();
            }
            (None, _) => {}
        }
        self
    }

    /// The exit status the result reports (`tool_action::exit_code`), read once.
    pub fn exit_code(&self) -> Option<i32> {
        let text = self.result.as_deref()?;
        *self.exit_code.get_or_init(|| tool_action::exit_code(text))
    }
}

/// What a summary line may show of a call with this action and these arguments: the action
/// with its texts redacted, and an unknown tool's arguments redacted; `None` for what holds no
/// secret (almost every call).
fn shown(action: &ToolAction, arguments: &str) -> Shown {
    let action_shown = (!action
        .texts()
        .all(|t| matches!(redact(t), Cow::Borrowed(_))))
    .then(|| {
        let mut action = action.clone();
        for text in action.texts_mut() {
            if let Cow::Owned(redacted) = redact(text) {
                *text = redacted;
            }
        }
        action
    });
    let arguments_shown = match action {
        ToolAction::Other => match redact_arguments(arguments) {
            Cow::Owned(redacted) => Some(redacted),
            Cow::Borrowed(_) => None,
        },
        _ => None,
    };
    Shown::new(action_shown, arguments_shown)
}

/// The tool calls of a run of turns, in order.
#[derive(Debug, Clone, Default)]
pub struct SpanCalls<'a> {
    calls: Vec<SpanCall<'a>>,
}

impl<'a> SpanCalls<'a> {
    /// Every call of `turns` paired with its result
    /// ([`pair_tool_calls`](crate::summary::ledger::pair_tool_calls)), its action taken from
    /// `actions` when given (else classified here). A long span's calls are paired and set up
    /// on several threads, each taking a range of the turns (`pair_tool_calls_from`): pairing
    /// walks every message, which on `synth_100k` was 4% of a pass on the calling thread.
    pub fn new<M: Borrow<Message> + Sync>(
        turns: &'a [M],
        actions: Option<&'a ActionTable<'a>>,
    ) -> Self {
        // A short span's results are judged each on its own: it repeats few of them, and
        // keeping the verdicts cost more than it saved (a real session: 1.5% more
        // instructions, callgrind, issue #17).
        let verdicts = (turns.len() >= SPLIT_FROM_ITEMS).then(FailureVerdicts::default);
        let calls = in_ranges(turns.len(), |range| {
            let mut pairs = Vec::new();
            pair_tool_calls_from(turns, range, &mut pairs);
            pairs
                .iter()
                .map(|pair| SpanCall::new(pair, actions).judged(verdicts.as_ref()))
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
    use crate::summary::ledger::command_failed_with;

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
        // Calls with results are judged as they are set up (on the threads that set them up);
        // only a command's exit status is read.
        let judged: Vec<(bool, bool)> = calls
            .iter()
            .map(|c| (c.failed.get().is_some(), c.exit_code.get().is_some()))
            .collect();
        assert_eq!(
            judged,
            [(true, true), (true, false), (true, true), (false, false)]
        );
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

    /// A span long enough to be set up on several threads, whose results repeat (failing and
    /// not, commands with and without an exit status, reads whose first line is or is not an
    /// error): every call's judgement is the one reading its own result gives.
    #[test]
    fn repeated_results_judged_through_shared_verdicts_are_each_calls_own() {
        let results = [
            ("Bash", "error: could not compile\nmore"),
            ("Bash", "all 12 tests passed"),
            ("Bash", "fine\nexit code: 2"),
            ("Read", "fn main() {}\nerror: only on a later line"),
            ("Read", "Error: file not found"),
        ];
        let mut turns = Vec::new();
        for i in 0..3 * crate::split_work::SPLIT_FROM_ITEMS {
            let (name, result) = results[i % results.len()];
            let id = format!("c{i}");
            let arguments = if name == "Bash" {
                format!(r#"{{"command":"make {}"}}"#, i % 7)
            } else {
                format!(r#"{{"file_path":"src/f{}.rs"}}"#, i % 7)
            };
            turns.push(Message::assistant_tool_calls(vec![call(
                &id, name, &arguments,
            )]));
            turns.push(Message::tool(id, result));
        }
        let calls = SpanCalls::new(&turns, None);
        let calls = calls.as_slice();
        assert_eq!(calls.len(), turns.len() / 2);
        let mut failures = 0;
        for c in calls {
            let text = c.result.as_deref().unwrap();
            let expected = match *c.action {
                ToolAction::Command { .. } => {
                    command_failed_with(tool_action::exit_code(text), text)
                }
                _ => reads_as_failure(text.lines().find(|l| !l.trim().is_empty()).unwrap()),
            };
            assert_eq!(c.failed(), expected, "{}: {text}", c.name);
            failures += usize::from(expected);
        }
        // The compile error, the exit status 2 and the read error fail; the others do not.
        assert_eq!(failures, 3 * calls.len() / results.len());
    }

    /// The arguments are read as written, and what a summary line can show of a call comes
    /// out redacted: a command's token, a searched path's password, an unknown tool's key,
    /// whether the action was classified here or found in a table.
    #[test]
    fn what_a_summary_shows_of_a_call_is_redacted() {
        let key = "sk-proj-0001abcdefghijklmnopqrstuvwxyz0123";
        let turns = vec![Message::assistant_tool_calls(vec![
            call(
                "a",
                "Bash",
                &format!(r#"{{"command":"OPENAI_API_KEY={key} cargo test"}}"#),
            ),
            call(
                "b",
                "Grep",
                r#"{"pattern":"TODO","path":"postgres://admin:hunter2secret@db.internal/app"}"#,
            ),
            call(
                "c",
                "lookup_account",
                &format!(r#"{{"api_key":"{key}","id":7}}"#),
            ),
            call("d", "Read", r#"{"file_path":"src/lib.rs"}"#),
            // The first call again, and the unknown tool's.
            call(
                "e",
                "Bash",
                &format!(r#"{{"command":"OPENAI_API_KEY={key} cargo test"}}"#),
            ),
            call(
                "f",
                "lookup_account",
                &format!(r#"{{"api_key":"{key}","id":7}}"#),
            ),
        ])];
        let mut table = ActionTable::default();
        for c in turns[0].calls() {
            table.classify(&c.function.name, &c.function.arguments);
        }
        for (calls, from_table) in [
            (SpanCalls::new(&turns, None), false),
            (SpanCalls::new(&turns, Some(&table)), true),
        ] {
            let calls = calls.as_slice();
            let ToolAction::Command { command } = &*calls[0].action else {
                panic!("{:?}", calls[0].action)
            };
            assert_eq!(command, "OPENAI_API_KEY=[REDACTED] cargo test");
            let texts: Vec<&str> = calls[1].action.texts().collect();
            assert_eq!(texts[0], "TODO");
            assert!(!texts[1].contains("hunter2secret"), "{texts:?}");
            assert!(matches!(*calls[2].action, ToolAction::Other));
            assert!(!calls[2].arguments.contains(key), "{}", calls[2].arguments);
            assert!(
                calls[2].arguments.contains(r#""id":7"#),
                "{}",
                calls[2].arguments
            );
            // Nothing to redact: the table's action is borrowed, not copied.
            assert_eq!(matches!(calls[3].action, Cow::Borrowed(_)), from_table);
            assert!(matches!(calls[3].arguments, Cow::Borrowed(_)));
            // A call repeated is shown as the first was; from a table, the very same text,
            // redacted once.
            assert_eq!(calls[4].action, calls[0].action);
            assert_eq!(calls[5].arguments, calls[2].arguments);
            let same = |a: &Cow<'_, ToolAction>, b: &Cow<'_, ToolAction>| matches!((a, b), (Cow::Borrowed(x), Cow::Borrowed(y)) if std::ptr::eq(*x, *y));
            assert_eq!(same(&calls[4].action, &calls[0].action), from_table);
            assert_eq!(
                std::ptr::eq(&*calls[5].arguments, &*calls[2].arguments),
                from_table
            );
        }
        // The turns themselves are untouched.
        assert!(turns[0].calls()[0].function.arguments.contains(key));
    }

    /// A result is judged and measured as written and quoted redacted; a clean one is quoted
    /// as itself, not copied.
    #[test]
    fn a_result_is_quoted_redacted_and_judged_as_written() {
        let key = "sk-proj-0001abcdefghijklmnopqrstuvwxyz0123";
        let turns = vec![
            Message::assistant_tool_calls(vec![
                call("a", "Bash", r#"{"command":"deploy"}"#),
                call("b", "Bash", r#"{"command":"ls"}"#),
            ]),
            Message::tool("a", format!("error: key {key} rejected\nexit code: 1")),
            Message::tool("b", "Cargo.toml\nexit code: 0"),
        ];
        let calls = SpanCalls::new(&turns, None);
        let [failed, clean] = calls.as_slice() else {
            panic!("{calls:?}")
        };
        assert!(failed.failed());
        assert_eq!(failed.exit_code(), Some(1));
        assert!(failed.result.as_deref().unwrap().contains(key));
        let quoted = failed.quoted_result().unwrap();
        assert!(
            !quoted.contains(key) && quoted.contains("[REDACTED]"),
            "{quoted}"
        );
        let clean_text = clean.result.as_deref().unwrap();
        assert!(std::ptr::eq(clean.quoted_result().unwrap(), clean_text));
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
