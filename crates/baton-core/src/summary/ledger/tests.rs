//! The ledger's tests: what it records from calls and results, its rendered block read back
//! exactly, and the pairing of calls with results.

use super::*;
use crate::message::{Role, ToolCall};
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
        |(active_task, (files_read, files_modified, commands, open_asks), last_failure, r, c)| {
            TaskLedger {
                active_task,
                files_read,
                files_modified,
                commands,
                last_failure,
                open_asks,
                files_read_omitted: r,
                commands_omitted: c,
            }
        },
    )
}

proptest! {
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
