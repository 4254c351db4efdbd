//! The structured sections every summary has, in order.
//!
//! Headings match the reference design's so summaries stay interchangeable with it; the
//! instructions under them (in `templates/`) are our own words.

/// The latest unfulfilled user request, verbatim.
pub const ACTIVE_TASK: &str = "## Active Task";
pub const GOAL: &str = "## Goal";
pub const CONSTRAINTS: &str = "## Constraints & Preferences";
pub const COMPLETED_ACTIONS: &str = "## Completed Actions";
pub const ACTIVE_STATE: &str = "## Active State";
pub const IN_PROGRESS: &str = "## In Progress";
pub const BLOCKED: &str = "## Blocked";
pub const KEY_DECISIONS: &str = "## Key Decisions";
pub const RESOLVED_QUESTIONS: &str = "## Resolved Questions";
pub const PENDING_USER_ASKS: &str = "## Pending User Asks";
pub const RELEVANT_FILES: &str = "## Relevant Files";
pub const REMAINING_WORK: &str = "## Remaining Work";
pub const CRITICAL_CONTEXT: &str = "## Critical Context";
/// The task ledger block, rendered by `ledger::TaskLedger::render` and never rewritten by a
/// summarizer.
pub const TASK_LEDGER: &str = "## Task Ledger";

/// The sections a summarizer writes, in order (the ledger block follows them).
pub const WRITTEN: [&str; 13] = [
    ACTIVE_TASK,
    GOAL,
    CONSTRAINTS,
    COMPLETED_ACTIONS,
    ACTIVE_STATE,
    IN_PROGRESS,
    BLOCKED,
    KEY_DECISIONS,
    RESOLVED_QUESTIONS,
    PENDING_USER_ASKS,
    RELEVANT_FILES,
    REMAINING_WORK,
    CRITICAL_CONTEXT,
];

/// Sections the quality gate requires in every installed summary.
pub const REQUIRED: [&str; 5] = [
    ACTIVE_TASK,
    COMPLETED_ACTIONS,
    ACTIVE_STATE,
    RELEVANT_FILES,
    TASK_LEDGER,
];

/// The body of section `heading` in `summary` (text up to the next `## ` heading), trimmed.
pub fn section_body<'a>(summary: &'a str, heading: &str) -> Option<&'a str> {
    let start = summary
        .match_indices(heading)
        .find(|(i, _)| *i == 0 || summary[..*i].ends_with('\n'))
        .map(|(i, _)| i + heading.len())?;
    let rest = &summary[start..];
    let rest = rest.strip_prefix('\n').unwrap_or(rest);
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    Some(rest[..end].trim())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn section_body_reads_up_to_the_next_heading() {
        let s = "## Active Task\nUser asked: 'fix it'\n\n## Goal\nship\n## Task Ledger\n- a\n";
        assert_eq!(section_body(s, ACTIVE_TASK), Some("User asked: 'fix it'"));
        assert_eq!(section_body(s, GOAL), Some("ship"));
        assert_eq!(section_body(s, TASK_LEDGER), Some("- a"));
        assert_eq!(section_body(s, BLOCKED), None);
    }

    #[test]
    fn headings_inside_a_line_do_not_count() {
        let s = "text ## Goal inline\n## Goal\nreal";
        assert_eq!(section_body(s, GOAL), Some("real"));
    }
}
