//! The extractive summarizer's tests: sections filled from transcripts, merges, budgets.

use super::*;
use crate::summary::gate::check_and_repair;
use crate::summary::ledger::tests::{calls, longest_real_conversation};

fn transcript() -> Vec<Message> {
    let mut look = calls(&[
        ("t1", "Read", r#"{"file_path":"src/parser.rs"}"#),
        ("t2", "Bash", r#"{"command":"cargo test"}"#),
    ]);
    look.content = Some(crate::message::Content::Text("I'll look first.".into()));
    let patch = r#"{"input":"*** Begin Patch\n*** Add File: tests/parser.rs\n+x\n*** End Patch"}"#;
    vec![
        Message::user(
            "Fix the failing parser test. Let's keep the public API unchanged. You must not add dependencies.",
        ),
        look,
        Message::tool("t1", "fn parse() {}\nfn lex() {}"),
        Message::tool("t2", "Exit code 101\nerror[E0308]: mismatched types"),
        calls(&[(
            "t3",
            "Edit",
            r#"{"file_path":"src/parser.rs","old_string":"a","new_string":"b"}"#,
        )]),
        Message::tool("t3", "The file src/parser.rs has been updated."),
        calls(&[("t4", "apply_patch", patch)]),
        Message::tool("t4", "Success."),
        Message::user("Why did it fail?"),
        Message::assistant("The types did not match; fixed."),
        Message::user("Does the CLI still work?"),
    ]
}

fn observed(turns: &[Message]) -> TaskLedger {
    let mut ledger = TaskLedger::default();
    ledger.observe(turns);
    ledger
}

/// What a pass hands the summarizer for `turns`: no earlier summary, no focus, a roomy
/// budget, nothing classified or paired ahead.
fn input_of<'a>(turns: &'a [&'a Message], ledger: &'a TaskLedger) -> SummaryInput<'a> {
    SummaryInput {
        turns,
        previous_summary: None,
        focus_topic: None,
        budget_tokens: 10_000,
        ledger,
        prompt: "",
        first_request: None,
        actions: None,
        calls: None,
    }
}

fn summarize(turns: &[Message], ledger: &TaskLedger, prev: Option<&str>, budget: usize) -> String {
    let turns: Vec<&Message> = turns.iter().collect();
    let input = SummaryInput {
        previous_summary: prev,
        budget_tokens: budget,
        ..input_of(&turns, ledger)
    };
    summarize_extractively(&input)
}

fn body<'a>(summary: &'a str, heading: &str) -> &'a str {
    section_body(summary, heading).unwrap()
}

/// An assistant reply is quoted (the answer after a question, the span's last message, a
/// focus excerpt) redacted whole before any line of it is picked or clipped: the turns a
/// pass hands over leave the assistant's text as written. A token straddling the 200
/// characters an answer keeps, or the 600 of the last message's excerpt, leaves no piece.
#[test]
fn a_reply_is_quoted_with_no_piece_of_a_secret() {
    let token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let words = |n: usize| "the deploy key is set up here ".repeat(n / 30 + 1)[..n].to_string();
    let turns = vec![
        Message::user("Which token does the deploy use?"),
        Message::assistant(format!("{} {token} for the deploy", words(185))),
        Message::user("Thanks, ship it."),
        Message::assistant(format!("{} {token} was used", words(585))),
    ];
    let ledger = observed(&turns);
    let refs: Vec<&Message> = turns.iter().collect();
    for focus in [None, Some("deploy")] {
        let out = summarize_extractively(&SummaryInput {
            focus_topic: focus,
            ..input_of(&refs, &ledger)
        });
        assert!(out.contains("answered: the deploy key"), "{out}");
        assert!(
            out.contains("Last assistant message: the deploy key"),
            "{out}"
        );
        for piece in token.as_bytes().windows(10) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(!out.contains(piece), "kept {piece}:\n{out}");
        }
    }
}

#[test]
fn output_has_every_heading_in_order_then_the_ledger() {
    let turns = transcript();
    let ledger = observed(&turns);
    let out = summarize(&turns, &ledger, None, 10_000);
    let mut at = 0;
    for heading in sections::WRITTEN {
        at += out[at..].find(&format!("{heading}\n")).unwrap() + heading.len();
    }
    assert!(out.ends_with(&ledger.render()));
    assert!(out.starts_with("## Active Task\nUser asked: Does the CLI still work?"));
}

/// A pass hands the summary the calls it paired and judged for the ledger; the summary
/// reads them as it reads the calls it pairs itself.
#[test]
fn given_calls_summarize_as_the_calls_it_pairs_itself() {
    let turns = transcript();
    let refs: Vec<&Message> = turns.iter().collect();
    let calls = SpanCalls::new(&refs, None);
    let mut ledger = TaskLedger::default();
    ledger.observe_calls(&refs, &calls);
    assert_eq!(ledger, observed(&turns));
    let input = |calls| SummaryInput {
        calls,
        ..input_of(&refs, &ledger)
    };
    let given = summarize_extractively(&input(Some(&calls)));
    assert_eq!(given, summarize_extractively(&input(None)));
    assert!(given.contains("cargo test"), "{given}");
}

/// Of many distinct failures the blockers list the newest, in order, and count the
/// others as omitted; a failure whose command later succeeded is neither.
#[test]
fn blockers_list_the_newest_failures_and_count_the_older() {
    let mut turns = vec![Message::user("Make the suite pass.")];
    let n = 12;
    for i in 0..n {
        let id = format!("t{i}");
        let command = format!(r#"{{"command":"make step{i}"}}"#);
        turns.push(calls(&[(id.as_str(), "Bash", command.as_str())]));
        turns.push(Message::tool(
            id,
            format!("Exit code 2\nerror: step {i} broke"),
        ));
    }
    // The oldest failure's command passes at the end: it is no blocker.
    turns.push(calls(&[("again", "Bash", r#"{"command":"make step0"}"#)]));
    turns.push(Message::tool("again", "Exit code 0\nok"));
    let out = summarize(&turns, &observed(&turns), None, 10_000);
    let blocked = body(&out, sections::BLOCKED);
    let expected: Vec<String> = (n - MAX_BLOCKERS..n)
        .map(|i| format!("- `make step{i}` → error: step {i} broke"))
        .collect();
    let omitted = n - 1 - MAX_BLOCKERS;
    let mut lines = vec![format!("… {omitted} earlier errors omitted")];
    lines.extend(expected);
    assert_eq!(blocked, lines.join("\n"));
}

#[test]
fn sections_are_filled_from_the_transcript() {
    let turns = transcript();
    let out = summarize(&turns, &observed(&turns), None, 10_000);
    assert!(body(&out, sections::GOAL).starts_with("Fix the failing parser test."));
    let actions = body(&out, sections::COMPLETED_ACTIONS);
    assert!(
        actions.contains(
            "2. RAN `cargo test` — exit 101: error[E0308]: mismatched types [tool: Bash]"
        )
    );
    assert!(actions.contains("4. PATCHED tests/parser.rs — ok [tool: apply_patch]"));
    assert!(
        body(&out, sections::BLOCKED).contains("`cargo test` → error[E0308]: mismatched types")
    );
    assert_eq!(
        body(&out, sections::KEY_DECISIONS),
        "- Let's keep the public API unchanged."
    );
    assert_eq!(
        body(&out, sections::CONSTRAINTS),
        "- You must not add dependencies."
    );
    assert!(
        body(&out, sections::RESOLVED_QUESTIONS)
            .starts_with("- Why did it fail? → answered: The types")
    );
    assert_eq!(
        body(&out, sections::PENDING_USER_ASKS),
        "- Does the CLI still work?"
    );
    let files = body(&out, sections::RELEVANT_FILES);
    assert!(files.starts_with("- src/parser.rs (read, modified)\n- tests/parser.rs (modified)"));
}

/// Each of `headings` has the same body in `summary` as in `expected`.
fn assert_same_sections(summary: &str, expected: &str, headings: &[&str]) {
    for heading in headings {
        assert_eq!(body(summary, heading), body(expected, heading), "{heading}");
    }
}

/// On a long span the sections read the span in ranges on several threads
/// (`split_work::in_ranges`); the summary is the one a short span with the same requests
/// and calls gives.
#[test]
fn a_long_span_summarized_on_two_threads_says_what_the_short_one_says() {
    let turns = transcript();
    let mut long: Vec<Message> = (0..crate::split_work::SPLIT_FROM_ITEMS)
        .map(|_| Message::assistant("Working."))
        .collect();
    long.extend(turns.iter().cloned());
    let short = summarize(&turns, &observed(&turns), None, 10_000);
    let out = summarize(&long, &observed(&long), None, 10_000);
    assert_same_sections(
        &out,
        &short,
        &[
            sections::CONSTRAINTS,
            sections::KEY_DECISIONS,
            sections::RESOLVED_QUESTIONS,
            sections::PENDING_USER_ASKS,
            sections::BLOCKED,
            sections::COMPLETED_ACTIONS,
            sections::RELEVANT_FILES,
        ],
    );
    assert_eq!(
        body(&out, sections::CONSTRAINTS),
        "- You must not add dependencies."
    );
}

/// A long span's requests are read in ranges on several threads: its statements and
/// questions are listed as reading the requests in order lists them (each once, where it
/// was first seen, the newest kept), which the span of their first occurrences shows.
#[test]
fn a_long_spans_statements_and_questions_keep_the_requests_order() {
    let turns = |n: usize| -> Vec<Message> {
        (0..n)
            .flat_map(|i| {
                [
                    Message::user(format!(
                        "You must keep module {} stable. Is step {} done?",
                        i % 50,
                        i % 40
                    )),
                    Message::assistant(format!("Step {} is done.", i % 40)),
                ]
            })
            .collect()
    };
    let (long, first) = (turns(crate::split_work::SPLIT_FROM_ITEMS + 500), turns(50));
    let out = summarize(&long, &observed(&long), None, 100_000);
    let expected = summarize(&first, &observed(&first), None, 100_000);
    assert_same_sections(
        &out,
        &expected,
        &[
            sections::CONSTRAINTS,
            sections::KEY_DECISIONS,
            sections::RESOLVED_QUESTIONS,
        ],
    );
    assert!(
        body(&out, sections::CONSTRAINTS)
            .starts_with("… 30 earlier constraints omitted\n- You must keep module 30 stable."),
        "{out}"
    );
    assert!(
        body(&out, sections::RESOLVED_QUESTIONS)
            .ends_with("- Is step 39 done? → answered: Step 39 is done."),
        "{out}"
    );
}

#[test]
fn output_is_deterministic_and_passes_the_gate_unchanged() {
    let turns = transcript();
    let ledger = observed(&turns);
    let out = summarize(&turns, &ledger, None, 10_000);
    assert_eq!(out, summarize(&turns, &ledger, None, 10_000));
    let (gated, report) = check_and_repair(&out, &ledger);
    assert_eq!((gated.as_str(), report.repaired), (out.as_str(), false));
}

#[test]
fn every_modified_path_is_present_even_without_a_ledger() {
    let out = summarize(&transcript(), &TaskLedger::default(), None, 10_000);
    for path in ["src/parser.rs", "tests/parser.rs"] {
        assert!(body(&out, sections::ACTIVE_STATE).contains(path));
        assert!(body(&out, sections::RELEVANT_FILES).contains(path));
    }
}

#[test]
fn merging_continues_numbering_and_carries_previous_facts() {
    let turns = transcript();
    let first = summarize(&turns[..8], &observed(&turns[..8]), None, 10_000);
    let mut ledger = TaskLedger::parse(&first).unwrap();
    ledger.observe(&turns[8..]);
    let more = vec![
        Message::user("Run the CLI smoke test please"),
        calls(&[("t9", "Bash", r#"{"command":"./smoke.sh"}"#)]),
        Message::tool("t9", "exit code: 0"),
    ];
    ledger.observe(&more);
    let second = summarize(&more, &ledger, Some(&first), 10_000);
    let actions = body(&second, sections::COMPLETED_ACTIONS);
    assert!(actions.starts_with("1. READ src/parser.rs"));
    assert!(actions.contains("\n5. RAN `./smoke.sh` — exit 0"));
    assert_eq!(
        body(&second, sections::KEY_DECISIONS),
        "- Let's keep the public API unchanged."
    );
    assert!(body(&second, sections::GOAL).starts_with("Fix the failing parser test."));
    assert!(second.starts_with("## Active Task\nUser asked: Run the CLI smoke test please"));
    assert_eq!(summarize(&more, &ledger, Some(&first), 10_000), second);
}

#[test]
fn long_histories_keep_the_first_and_latest_actions() {
    let mut turns = vec![Message::user("loop")];
    for i in 0..(MAX_ACTIONS + 15) {
        let args = format!(r#"{{"command":"step {i}"}}"#);
        turns.push(calls(&[(&format!("c{i}"), "Bash", &args)]));
        turns.push(Message::tool(format!("c{i}"), "exit code: 0"));
    }
    let out = summarize(&turns, &observed(&turns), None, 100_000);
    let actions = body(&out, sections::COMPLETED_ACTIONS);
    assert!(actions.contains("10. RAN `step 9`"));
    assert!(actions.contains("\n… 15 earlier actions omitted\n26. RAN `step 25`"));
    assert!(actions.contains("\n75. RAN `step 74`"));
}

#[test]
fn focus_topic_keeps_on_topic_actions_from_the_middle_and_quotes_them() {
    let mut turns = vec![Message::user("loop")];
    for i in 0..(MAX_ACTIONS + 40) {
        let cmd = if i == 30 {
            "psql -c 'select 1' --dbname billing".to_string()
        } else {
            format!("step {i}")
        };
        let args = serde_json::json!({ "command": cmd }).to_string();
        turns.push(calls(&[(&format!("c{i}"), "Bash", &args)]));
        turns.push(Message::tool(format!("c{i}"), "exit code: 0"));
    }
    turns.push(Message::assistant(
        "The billing database answered; the schema looks fine.",
    ));
    let ledger = observed(&turns);
    let views: Vec<&Message> = turns.iter().collect();
    let input = SummaryInput {
        focus_topic: Some("the Billing database"),
        budget_tokens: 100_000,
        ..input_of(&views, &ledger)
    };
    let out = summarize_extractively(&input);
    let actions = body(&out, sections::COMPLETED_ACTIONS);
    assert!(
        actions.contains("31. RAN `psql -c 'select 1' --dbname billing`"),
        "{actions}"
    );
    let critical = body(&out, sections::CRITICAL_CONTEXT);
    assert!(
        critical.contains("On the focus topic: The billing database answered"),
        "{critical}"
    );
    // Without the focus, that middle action is omitted.
    let plain = summarize(&turns, &ledger, None, 100_000);
    assert!(!body(&plain, sections::COMPLETED_ACTIONS).contains("--dbname billing"));
}

/// The trimming loop counts instead of rendering; the count must be the rendered size at
/// every step, or the summary would stop trimming too early or too late.
#[test]
fn the_counted_size_is_the_rendered_size_at_every_trim() {
    let mut turns = transcript();
    for i in 0..40 {
        turns.extend(transcript().into_iter().map(|mut m| {
            if let Some(crate::message::Content::Text(t)) = &mut m.content {
                t.push_str(&format!(" (round {i}, é漢)"));
            }
            m
        }));
    }
    let ledger = observed(&turns);
    let refs: Vec<&Message> = turns.iter().collect();
    let prev = "## Completed Actions\n1. RAN `ls`\n7. READ a.rs\n## Key Decisions\n- keep it";
    let input = SummaryInput {
        previous_summary: Some(prev),
        budget_tokens: 10,
        ..input_of(&refs, &ledger)
    };
    let mut draft = Draft::build(&input);
    let mut steps = 0;
    loop {
        assert_eq!(
            draft.rendered_chars(),
            draft.render().chars().count(),
            "step {steps}"
        );
        if !draft.trim_one() {
            break;
        }
        steps += 1;
    }
    assert!(steps > 20, "only {steps} trims");
}

#[test]
fn a_small_budget_trims_lists_but_keeps_task_and_ledger() {
    let mut turns = transcript();
    for i in 0..40 {
        let args = format!(r#"{{"file_path":"src/module_{i}.rs"}}"#);
        turns.push(calls(&[(&format!("r{i}"), "Read", &args)]));
        turns.push(Message::tool(format!("r{i}"), "x\n".repeat(20)));
    }
    let ledger = observed(&turns);
    let big = summarize(&turns, &ledger, None, 100_000);
    let small = summarize(&turns, &ledger, None, 900);
    assert!(small.len() < big.len());
    assert!(small.starts_with("## Active Task\nUser asked: Does the CLI still work?"));
    assert!(small.ends_with(&ledger.render()));
    // Read-only files go before modified ones.
    assert!(body(&small, sections::RELEVANT_FILES).contains("src/parser.rs (read, modified)"));
    assert!(body(&small, sections::RELEVANT_FILES).contains("earlier files omitted"));
}

#[test]
fn the_future_is_ready_at_once() {
    let turns = transcript();
    let ledger = observed(&turns);
    let turns: Vec<&Message> = turns.iter().collect();
    let input = SummaryInput {
        focus_topic: Some("the parser"),
        ..input_of(&turns, &ledger)
    };
    let mut fut = ExtractiveSummarizer.summarize(input);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let std::task::Poll::Ready(Ok(out)) = fut.as_mut().poll(&mut cx) else {
        panic!("the extractive summary was not ready at once");
    };
    assert!(out.contains("Focus requested for this compaction: the parser"));
    assert_eq!(ExtractiveSummarizer.name(), "extractive");
    assert!(!ExtractiveSummarizer.needs_prompt());
}

#[test]
fn real_transcript_summary_names_every_modified_file() {
    let Some(turns) = longest_real_conversation() else {
        return;
    };
    let ledger = observed(&turns);
    let out = summarize(&turns, &ledger, None, 10_000);
    let files = body(&out, sections::RELEVANT_FILES);
    for path in &ledger.files_modified {
        assert!(files.contains(path.as_str()), "{path}");
    }
    assert_eq!(out, summarize(&turns, &ledger, None, 10_000));
    assert!(!check_and_repair(&out, &ledger).1.repaired);
}

/// Four chained compactions of the real transcript at a small budget: every modified file
/// of the whole conversation is still named at the end, and the gate has nothing to add.
#[test]
fn ledger_facts_survive_chained_compactions_of_a_real_transcript() {
    let Some(turns) = longest_real_conversation() else {
        return;
    };
    let mut previous: Option<String> = None;
    let mut last_ledger = TaskLedger::default();
    for chunk in turns.chunks(turns.len().div_ceil(4)) {
        let prev_block = previous.as_deref().and_then(TaskLedger::parse);
        let mut ledger = prev_block.unwrap_or_default();
        ledger.observe(chunk);
        let body = summarize(chunk, &ledger, previous.as_deref(), 2_000);
        let (body, report) = check_and_repair(&body, &ledger);
        assert!(!report.repaired);
        previous = Some(body);
        last_ledger = ledger;
    }
    let last = previous.unwrap();
    assert_eq!(last_ledger.files_modified, observed(&turns).files_modified);
    for path in &observed(&turns).files_modified {
        assert!(last.contains(path.as_str()), "{path}");
    }
}
