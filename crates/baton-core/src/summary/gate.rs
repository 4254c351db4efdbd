//! The quality gate: what a summary must contain before it is installed, and the repair when
//! it does not.
//!
//! A summarizer (especially a model) can drop a heading, paraphrase the user's request, or
//! forget the file it just edited. The gate checks the summary against the task ledger, the
//! one source of facts that no summarizer wrote, and adds back what is missing from the ledger
//! itself: an incomplete summary repaired is better than none. Output that is not a summary at
//! all (the prompt echoed back, or neither headings nor facts) is rejected before it gets here,
//! by [`super::reject::judge`], and the compressor escalates instead of patching it.
//! Repair is idempotent, so gating an already gated summary returns it unchanged.

use crate::summary::ledger::{self, TaskLedger};
use crate::summary::sections;

/// What the gate found missing (and therefore added).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateReport {
    /// Required headings that were absent, in [`sections::REQUIRED`] order.
    pub missing_sections: Vec<String>,
    /// Ledger facts (active task, file paths, failing commands) that were absent.
    pub missing_facts: Vec<String>,
    /// Whether the returned summary differs from the one given.
    pub repaired: bool,
}

const TASK_PREFIX: &str = "User asked: ";
const NOT_RECORDED: &str = "Not recorded in the task ledger.";

/// Checks `summary` against `ledger` and returns it repaired, with what was added.
///
/// Required: every heading of [`sections::REQUIRED`]; the ledger's active task verbatim
/// outside the ledger block (the block alone escapes it, and a summary whose Active Task
/// section points elsewhere misleads); every ledger fact somewhere; exactly one ledger block,
/// equal to `ledger.render()`. A wrong, duplicated or missing block is replaced by the rendered
/// one, placed last, which carries every fact; lines a summarizer wrote inside the block that
/// are not ledger lines are moved out, not lost.
pub fn check_and_repair(summary: &str, ledger: &TaskLedger) -> (String, GateReport) {
    let canonical = ledger.render();
    let split = split_out_ledger(summary);
    let task = ledger
        .active_task
        .as_deref()
        .filter(|t| !t.trim().is_empty());
    let task_missing = task.is_some_and(|t| !split.prose.contains(t));
    let missing_sections: Vec<String> = sections::REQUIRED
        .iter()
        .filter(|h| !has_heading(summary, h))
        .map(|h| h.to_string())
        .collect();
    let block_is_canonical = split.blocks.len() == 1
        && split.blocks[0] == canonical.trim_end()
        && split.stray.is_empty();
    // The rendered block holds every fact (`render_then_parse_is_exact` checks it), so a
    // summary carrying it can miss only the task, which must also be in the prose: searching
    // the summary once per fact was most of the gate on a real session.
    let missing_facts: Vec<String> = if block_is_canonical {
        debug_assert!(
            ledger
                .facts()
                .iter()
                .all(|fact| ledger::fact_appears_in(&canonical, fact)),
            "a ledger fact is missing from its own rendering"
        );
        task.filter(|_| task_missing)
            .map(str::to_string)
            .into_iter()
            .collect()
    } else {
        ledger
            .facts()
            .into_iter()
            .filter(|fact| match task {
                Some(t) if t == fact => task_missing,
                _ => !ledger::fact_appears_in(summary, fact),
            })
            .collect()
    };
    if missing_sections.is_empty() && missing_facts.is_empty() && block_is_canonical {
        let report = GateReport::default();
        return (summary.to_string(), report);
    }
    let repaired = rebuild(&split, ledger, &missing_sections, task_missing, &canonical);
    let report = GateReport {
        missing_sections,
        missing_facts,
        repaired: repaired != summary,
    };
    (repaired, report)
}

/// A summary with its ledger block(s) taken out.
struct Split {
    /// Everything outside ledger blocks, in order.
    prose: String,
    /// Each ledger block: its heading and ledger-shaped lines.
    blocks: Vec<String>,
    /// Lines found inside a ledger block that are not ledger lines.
    stray: Vec<String>,
}

/// A ledger block runs from its heading to the next `## ` heading; inside it, list lines
/// belong to the ledger, blank lines to nobody, anything else to the prose.
fn split_out_ledger(summary: &str) -> Split {
    let mut prose: Vec<&str> = Vec::new();
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut stray: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in summary.split('\n') {
        if line.trim_end() == sections::TASK_LEDGER {
            in_block = true;
            blocks.push(vec![sections::TASK_LEDGER]);
        } else if in_block && line.starts_with("## ") {
            in_block = false;
            prose.push(line);
        } else if !in_block {
            prose.push(line);
        } else if is_ledger_line(line) {
            if let Some(block) = blocks.last_mut() {
                block.push(line);
            }
        } else if !line.trim().is_empty() {
            stray.push(line.to_string());
        }
    }
    Split {
        prose: prose.join("\n"),
        blocks: blocks
            .into_iter()
            .map(|b| b.join("\n").trim_end().to_string())
            .collect(),
        stray,
    }
}

fn is_ledger_line(line: &str) -> bool {
    line.starts_with("- ") || line.starts_with("  -")
}

/// Whether `heading` starts a line of `text`.
fn has_heading(text: &str, heading: &str) -> bool {
    text.split('\n').any(|l| l.trim_end() == heading)
}

/// Prose (with the task put back and the stray lines kept), missing sections filled from the
/// ledger, then the rendered ledger block last.
fn rebuild(
    split: &Split,
    ledger: &TaskLedger,
    missing_sections: &[String],
    task_missing: bool,
    canonical: &str,
) -> String {
    let mut prose = trim_blank_lines(&split.prose).to_string();
    for line in &split.stray {
        prose.push('\n');
        prose.push_str(line);
    }
    let task = ledger
        .active_task
        .as_deref()
        .filter(|t| !t.trim().is_empty());
    let active_task_missing = missing_sections.iter().any(|s| s == sections::ACTIVE_TASK);
    if let Some(task) = task
        && task_missing
        && !active_task_missing
    {
        prose = insert_after_heading(
            &prose,
            sections::ACTIVE_TASK,
            &format!("{TASK_PREFIX}{task}"),
        );
    }
    let mut parts: Vec<String> = Vec::new();
    if active_task_missing {
        parts.push(section(sections::ACTIVE_TASK, &active_task_body(ledger)));
    }
    if !prose.trim().is_empty() {
        parts.push(trim_blank_lines(&prose).to_string());
    }
    for heading in missing_sections {
        if heading != sections::ACTIVE_TASK && heading != sections::TASK_LEDGER {
            parts.push(section(heading, &body_from_ledger(heading, ledger)));
        }
    }
    parts.push(canonical.to_string());
    parts.join("\n\n")
}

/// Removes surrounding newlines only: trailing spaces may belong to the verbatim task.
fn trim_blank_lines(text: &str) -> &str {
    text.trim_matches(|c| c == '\n' || c == '\r')
}

fn section(heading: &str, body: &str) -> String {
    format!("{heading}\n{body}")
}

/// `text` with `line` inserted right after the line that is `heading`.
fn insert_after_heading(text: &str, heading: &str, line: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut inserted = false;
    for l in text.split('\n') {
        out.push(l);
        if !inserted && l.trim_end() == heading {
            out.push(line);
            inserted = true;
        }
    }
    out.join("\n")
}

fn active_task_body(ledger: &TaskLedger) -> String {
    match ledger
        .active_task
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        Some(task) => format!("{TASK_PREFIX}{task}"),
        None => NOT_RECORDED.into(),
    }
}

/// What the ledger can say for a missing section.
fn body_from_ledger(heading: &str, ledger: &TaskLedger) -> String {
    let lines = match heading {
        sections::COMPLETED_ACTIONS => actions_from_ledger(ledger),
        sections::ACTIVE_STATE => state_from_ledger(ledger),
        sections::RELEVANT_FILES => files_from_ledger(ledger),
        _ => Vec::new(),
    };
    if lines.is_empty() {
        NOT_RECORDED.into()
    } else {
        lines.join("\n")
    }
}

fn actions_from_ledger(ledger: &TaskLedger) -> Vec<String> {
    let commands = ledger.commands.iter().map(|c| {
        let status = c
            .exit_code
            .map_or("no exit code".to_string(), |code| format!("exit {code}"));
        let repeats = if c.count > 1 {
            format!(" (×{})", c.count)
        } else {
            String::new()
        };
        format!(
            "RAN `{}` — {status}{repeats}",
            ledger::escape_code(&c.command)
        )
    });
    let edits = ledger
        .files_modified
        .iter()
        .map(|p| format!("MODIFIED {}", ledger::escape(p)));
    commands
        .chain(edits)
        .enumerate()
        .map(|(i, text)| format!("{}. {text}", i + 1))
        .collect()
}

fn state_from_ledger(ledger: &TaskLedger) -> Vec<String> {
    let mut lines = Vec::new();
    if !ledger.files_modified.is_empty() {
        let files: Vec<String> = ledger
            .files_modified
            .iter()
            .map(|p| ledger::escape(p))
            .collect();
        lines.push(format!("- Files modified: {}", files.join(", ")));
    }
    if let Some(f) = &ledger.last_failure {
        let first = f.error.lines().next().unwrap_or("");
        lines.push(format!(
            "- Last failure: `{}` → {}",
            ledger::escape_code(&f.command),
            ledger::escape(first)
        ));
    }
    lines
}

fn files_from_ledger(ledger: &TaskLedger) -> Vec<String> {
    let modified = ledger.files_modified.iter().map(|p| (p, "modified"));
    let read = ledger
        .files_read
        .iter()
        .filter(|p| !ledger.files_modified.contains(p))
        .map(|p| (p, "read"));
    modified
        .chain(read)
        .map(|(p, note)| format!("- {} ({note})", ledger::escape(p)))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::summary::ledger::{CommandRecord, Failure};
    use proptest::prelude::*;

    fn ledger() -> TaskLedger {
        TaskLedger {
            active_task: Some("Fix the parser and add a test".into()),
            files_read: vec!["src/lexer.rs".into()],
            files_modified: vec!["src/parser.rs".into(), "tests/parser.rs".into()],
            commands: vec![CommandRecord {
                command: "cargo test -p parser".into(),
                exit_code: Some(101),
                count: 2,
            }],
            last_failure: Some(Failure {
                command: "cargo test -p parser".into(),
                error: "error[E0308]: mismatched types".into(),
            }),
            ..TaskLedger::default()
        }
    }

    #[test]
    fn a_complete_summary_passes_unchanged() {
        let l = ledger();
        let summary = format!(
            "## Active Task\nUser asked: Fix the parser and add a test\n\n## Completed Actions\n1. x\n\n## Active State\nok\n\n## Relevant Files\n- src/parser.rs\n\n{}",
            l.render()
        );
        let (out, report) = check_and_repair(&summary, &l);
        assert_eq!(out, summary);
        assert_eq!(report, GateReport::default());
    }

    #[test]
    fn missing_headings_and_facts_are_added_from_the_ledger() {
        let l = ledger();
        let summary = "## Goal\nMake parsing work.\n\n## Completed Actions\n1. Looked around.";
        let (out, report) = check_and_repair(summary, &l);
        assert_eq!(
            report.missing_sections,
            vec![
                sections::ACTIVE_TASK,
                sections::ACTIVE_STATE,
                sections::RELEVANT_FILES,
                sections::TASK_LEDGER
            ]
        );
        assert_eq!(
            report.missing_facts,
            vec![
                "Fix the parser and add a test",
                "src/parser.rs",
                "tests/parser.rs",
                "src/lexer.rs",
                "cargo test -p parser"
            ]
        );
        assert!(report.repaired);
        for h in sections::REQUIRED {
            assert!(has_heading(&out, h), "{h}");
        }
        assert!(out.starts_with("## Active Task\nUser asked: Fix the parser and add a test"));
        assert!(out.contains("## Goal\nMake parsing work."));
        assert!(out.ends_with(&l.render()));
        assert!(out.contains("- src/parser.rs (modified)"));
    }

    #[test]
    fn repair_is_idempotent() {
        let l = ledger();
        for summary in [
            "",
            "## Goal\nx",
            "## Active Task\nsomething else\n\n## Task Ledger\n- Files modified:\n  - other.rs\nA note the model wrote.",
            "## Task Ledger\n- Active task: stale\n\n## Active Task\nUser asked: Fix the parser and add a test",
        ] {
            let (once, _) = check_and_repair(summary, &l);
            let (twice, report) = check_and_repair(&once, &l);
            assert_eq!(twice, once, "{summary:?}");
            assert_eq!(report, GateReport::default());
        }
    }

    #[test]
    fn a_paraphrased_task_gets_the_verbatim_one_inserted() {
        let l = ledger();
        let summary = format!(
            "## Active Task\nThe user wants parser fixes.\n\n## Completed Actions\nnone\n## Active State\nx\n## Relevant Files\nsrc/parser.rs tests/parser.rs src/lexer.rs\n\n{}",
            l.render()
        );
        let (out, report) = check_and_repair(&summary, &l);
        assert_eq!(report.missing_facts, vec!["Fix the parser and add a test"]);
        assert!(report.missing_sections.is_empty());
        assert!(out.starts_with(
            "## Active Task\nUser asked: Fix the parser and add a test\nThe user wants parser fixes."
        ));
    }

    #[test]
    fn a_tampered_ledger_block_is_replaced_and_stray_lines_kept() {
        let l = ledger();
        let summary = "## Active Task\nUser asked: Fix the parser and add a test\n## Completed Actions\n1. a\n## Active State\nb\n## Relevant Files\nsrc/parser.rs tests/parser.rs src/lexer.rs cargo test -p parser\n## Task Ledger\n- Files modified: src/parser.rs\nKeep this note.";
        let (out, report) = check_and_repair(summary, &l);
        assert!(report.repaired);
        assert!(report.missing_facts.is_empty());
        assert!(out.contains("Keep this note."));
        assert!(out.ends_with(&l.render()));
        assert_eq!(out.matches(sections::TASK_LEDGER).count(), 1);
    }

    fn ledgers() -> impl Strategy<Value = TaskLedger> {
        let command =
            ("[a-z ]{1,8}", proptest::option::of(-2i32..3)).prop_map(|(command, exit_code)| {
                CommandRecord {
                    command,
                    exit_code,
                    count: 1,
                }
            });
        let files = proptest::collection::vec("[a-z/._]{1,8}", 0..3);
        let commands = proptest::collection::vec(command, 0..3);
        (
            proptest::option::of("[a-zA-Z ?]{1,20}"),
            files.clone(),
            files,
            commands,
        )
            .prop_map(
                |(active_task, files_read, files_modified, commands)| TaskLedger {
                    last_failure: commands.first().map(|c| Failure {
                        command: c.command.clone(),
                        error: "boom".into(),
                    }),
                    active_task,
                    files_read,
                    files_modified,
                    commands,
                    ..TaskLedger::default()
                },
            )
    }

    fn summaries(rendered: String) -> impl Strategy<Value = String> {
        let mut pieces: Vec<String> = sections::WRITTEN.iter().map(|h| h.to_string()).collect();
        let extra = [
            sections::TASK_LEDGER,
            "",
            "text",
            "- bullet",
            "  - a.rs",
            "- Files read:",
            "User asked: x",
        ];
        pieces.extend(extra.iter().map(|p| p.to_string()));
        pieces.push(rendered);
        proptest::collection::vec(proptest::sample::select(pieces), 0..12)
            .prop_map(|p| p.join("\n"))
    }

    proptest! {
        #[test]
        fn repair_is_idempotent_for_any_summary(
            (ledger, summary) in ledgers().prop_flat_map(|l| {
                let rendered = l.render();
                (Just(l), summaries(rendered))
            })
        ) {
            let (once, first) = check_and_repair(&summary, &ledger);
            let (twice, second) = check_and_repair(&once, &ledger);
            prop_assert_eq!(&twice, &once);
            prop_assert_eq!(second, GateReport::default());
            prop_assert_eq!(first.repaired, once != summary);
            for heading in sections::REQUIRED {
                prop_assert!(has_heading(&once, heading));
            }
            for fact in ledger.facts() {
                prop_assert!(ledger::fact_appears_in(&once, &fact));
            }
        }
    }

    #[test]
    fn escaped_facts_count_as_present() {
        let l = TaskLedger {
            files_modified: vec!["dir with\nnewline.txt".into()],
            ..TaskLedger::default()
        };
        let (once, report) = check_and_repair("", &l);
        assert_eq!(report.missing_facts, vec!["dir with\nnewline.txt"]);
        assert!(once.contains("dir with\\nnewline.txt"));
        let (_, again) = check_and_repair(&once, &l);
        assert_eq!(again, GateReport::default());
    }
}
