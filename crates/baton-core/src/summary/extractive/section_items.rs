//! What each section lists, read off the span: the task and goal in the user's own words, one
//! line per kept action, statements, questions, files and critical context.

use super::resolved::{ANSWERED, resolved_questions};
use crate::byte_scan::is_ascii_space;
use crate::truncate::{char_count, has_more_chars_than};
// The limits, wordings and patterns every part of the summarizer shares.
use super::*;
use crate::summary::redact::redact_text;
use crate::summary::sentences::sentences;

/// The ledger's task (the latest request of the whole conversation) wins; then the span's
/// latest request; then whatever the previous summary said.
pub(super) fn active_task(ledger: &TaskLedger, span: &Span<'_>, prev: Option<&str>) -> String {
    let task = ledger
        .active_task
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            span.requests
                .last()
                .map(|(_, t)| ledger::clip(t, ledger::ACTIVE_TASK_MAX_CHARS))
        });
    match task {
        Some(task) => format!("{REQUEST_PREFIX}{task}"),
        None => prev
            .and_then(|p| section_body(p, sections::ACTIVE_TASK))
            .filter(|b| !b.is_empty())
            .unwrap_or(NO_TASK)
            .to_string(),
    }
}

/// The goal is where the work started: carried from the previous summary, else the
/// conversation's first real request, else the span's first request.
pub(super) fn goal(span: &Span<'_>, prev: Option<&str>, first_request: Option<&str>) -> String {
    let carried = prev
        .and_then(|p| section_body(p, sections::GOAL))
        // A goal an older version took from an injected row is not carried.
        .filter(|b| !b.is_empty() && *b != NO_GOAL && synthetic::classify_text(b).is_none());
    let first = first_request
        .filter(|t| !t.trim().is_empty())
        .or(span.requests.first().map(|(_, t)| t.as_ref()));
    match (carried, first) {
        (Some(goal), _) => goal.to_string(),
        (None, Some(first)) => one_line(first, GOAL_MAX_CHARS),
        (None, None) => NO_GOAL.into(),
    }
}

/// The previous summary's numbered actions, then one per tool call of the span, numbered on.
pub(super) fn actions(span: &Span<'_>, prev: Option<&str>, focus: &[String]) -> Actions {
    let mut items = prev.map(carried_actions).unwrap_or_default();
    let first = items.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
    let next = first + span.calls.len() as u64;
    // Only the lines that survive the cap are described (describing reads each result): the
    // first ones overall, the latest ones, and, with a focus topic, the calls about it.
    let head_room = HEAD_ACTIONS.saturating_sub(items.len());
    let tail_room = MAX_ACTIONS - HEAD_ACTIONS;
    let mut focused = 0;
    let mut kept_focus: Vec<u64> = Vec::new();
    for (k, call) in span.calls.iter().enumerate() {
        let edge = k < head_room || k + tail_room >= span.calls.len();
        let on_topic = !edge && focused < MAX_FOCUS_ACTIONS && call.mentions_any(focus);
        if edge || on_topic {
            items.push((first + k as u64, call.describe()));
        }
        if on_topic {
            focused += 1;
            kept_focus.push(first + k as u64);
        }
    }
    let cap = MAX_ACTIONS + kept_focus.len();
    if items.len() > cap {
        // Drop from the middle, but never the focus-topic lines.
        let mut excess = items.len() - cap;
        let mut i = HEAD_ACTIONS;
        while excess > 0 && i < items.len() {
            if kept_focus.contains(&items[i].0) {
                i += 1;
            } else {
                items.remove(i);
                excess -= 1;
            }
        }
    }
    Actions {
        item_chars: items.iter().map(|(_, t)| t.chars().count()).collect(),
        items,
        last_number: next - 1,
    }
}

/// Lowercased words (3+ characters) of a focus topic, for matching; CJK topics are kept whole
/// (they have no spaces to split on).
pub(super) fn focus_terms(focus: Option<&str>) -> Vec<String> {
    let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) else {
        return Vec::new();
    };
    let words: Vec<String> = focus
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 || !w.is_ascii())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        vec![focus.to_lowercase()]
    } else {
        words
    }
}

/// Sentences of user and assistant messages that mention the focus topic (newest last).
pub(super) fn focus_excerpts(span: &Span<'_>, focus: &[String]) -> Vec<String> {
    if focus.is_empty() {
        return Vec::new();
    }
    let mut out = Distinct::default();
    for m in span
        .turns
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
    {
        // An assistant's text is quoted redacted (its view is not: `changed_span_view`).
        let text = match m.role {
            Role::Assistant => redact_text(ledger::message_text(m)),
            _ => ledger::message_text(m),
        };
        for sentence in sentences(&text) {
            let lower = sentence.to_lowercase();
            if focus.iter().any(|t| lower.contains(t.as_str())) {
                out.push(one_line(sentence, LINE_MAX_CHARS));
            }
        }
    }
    let out = out.into_items();
    let skip = out.len().saturating_sub(MAX_FOCUS_EXCERPTS);
    out.into_iter().skip(skip).collect()
}

/// Numbered lines keep their numbers; bullets (a model's list) are numbered after them.
pub(super) fn carried_actions(prev: &str) -> Vec<(u64, String)> {
    static NUMBERED: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^(\d{1,9})\.\s+(.+)$").ok());
    let Some(body) = section_body(prev, sections::COMPLETED_ACTIONS) else {
        return Vec::new();
    };
    let mut items: Vec<(u64, String)> = Vec::new();
    for line in body.lines().map(str::trim) {
        let numbered = NUMBERED.as_ref().and_then(|re| re.captures(line));
        if let Some(c) = numbered
            && let Ok(n) = c[1].parse::<u64>()
        {
            items.push((n, c[2].to_string()));
        } else if let Some(text) = line.strip_prefix("- ") {
            let n = items.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
            items.push((n, text.to_string()));
        }
    }
    items
}

pub(super) fn active_state(ledger: &TaskLedger, span: &Span<'_>) -> Vec<String> {
    let modified = modified_files(ledger, span);
    let latest = &modified[modified.len().saturating_sub(ACTIVE_STATE_FILES)..];
    let mut lines = vec![match modified.len() {
        0 => "- Files modified: none recorded".to_string(),
        n if n == latest.len() => format!("- Files modified: {}", latest.join(", ")),
        n => format!(
            "- Files modified: {n} (all under Relevant Files); latest: {}",
            latest.join(", ")
        ),
    }];
    let is_command = |c: &&SpanCall| matches!(*c.action, ToolAction::Command { .. });
    if let Some(c) = span.calls.iter().rev().find(is_command) {
        lines.push(format!("- Last command: {} → {}", c.target(), c.outcome()));
    }
    lines
}

/// The ledger's modified files, then the span's not among them; borrowed, as they are only
/// joined into lines.
pub(super) fn modified_files<'r>(ledger: &'r TaskLedger, span: &'r Span<'_>) -> Vec<&'r str> {
    let mut out: Vec<&str> = ledger.files_modified.iter().map(String::as_str).collect();
    for path in span.calls.iter().flat_map(|c| c.action.modified_paths()) {
        if !path.is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The ledger's files read, then the span's not among them; borrowed.
pub(super) fn read_files<'r>(ledger: &'r TaskLedger, span: &'r Span<'_>) -> Vec<&'r str> {
    let mut out: Vec<&str> = ledger.files_read.iter().map(String::as_str).collect();
    for call in span.calls.iter() {
        if let ToolAction::Read { path, .. } = &*call.action
            && !path.is_empty()
            && !out.contains(&path.as_str())
        {
            out.push(path);
        }
    }
    out
}

pub(super) fn in_progress(span: &Span<'_>) -> Vec<String> {
    let waiting = span.calls.iter().filter(|c| c.result.is_none());
    let lines: Vec<String> = waiting
        .map(|c| format!("- Awaiting a result: {}", c.describe()))
        .collect();
    if lines.is_empty() {
        vec!["No tool call was awaiting a result when the span ended.".into()]
    } else {
        lines
    }
}

/// Constraints and decisions the user stated, carried from the previous summary first.
pub(super) fn user_statements(span: &Span<'_>, prev: Option<&str>) -> (Bullets, Bullets) {
    let mut constraints = Distinct::from_items(carried_bullets(prev, sections::CONSTRAINTS));
    let mut decisions = Distinct::from_items(carried_bullets(prev, sections::KEY_DECISIONS));
    // A long span's requests are read in ranges on several threads; the lines are listed in
    // the requests' order.
    // Only the first request of each text: a repeated one gives the lines its first gave,
    // which the lists drop.
    let found = in_ranges(span.distinct_requests.len(), |range| {
        let mut found = Vec::new();
        // A sentence repeated gives the verdict and the line it gave before, which the list
        // drops: it is neither read for cue words nor flattened again (a user who pastes the
        // same instructions into many requests; reading `synth_100k`'s repeats for cue words
        // was 2.4% of its pass's instructions, callgrind, issue #17).
        let mut seen = rustc_hash::FxHashSet::default();
        for &k in &span.distinct_requests[range] {
            if has_more_chars_than(&span.requests[k].1, STATEMENT_SOURCE_MAX_CHARS) {
                continue;
            }
            for sentence in span.sentences_of(k) {
                if !statement_sized(sentence)
                    || sentence.ends_with('?')
                    || sentence.ends_with('？')
                    || !seen.insert(sentence)
                {
                    continue;
                }
                if let Some(kind) = cue_words::statement_in(sentence) {
                    found.push((kind, one_line(sentence, LINE_MAX_CHARS)));
                }
            }
        }
        found
    });
    for (kind, line) in found.into_iter().flatten() {
        match kind {
            cue_words::Statement::Decision => decisions.push(line),
            cue_words::Statement::Constraint => constraints.push(line),
        }
    }
    (
        Bullets::new(constraints.into_items(), "constraints", "None stated.")
            .capped(MAX_CONSTRAINTS),
        Bullets::new(
            decisions.into_items(),
            "decisions",
            "None stated by the user.",
        )
        .capped(MAX_DECISIONS),
    )
}

/// Whether `sentence` has [`STATEMENT_CHARS`] characters; most are told from their length
/// in bytes (one to four per character) without counting.
fn statement_sized(sentence: &str) -> bool {
    let bytes = sentence.len();
    if bytes < *STATEMENT_CHARS.start() || bytes / 4 > *STATEMENT_CHARS.end() {
        return false;
    }
    STATEMENT_CHARS.contains(&char_count(sentence))
}

/// User questions answered by a later assistant message (resolved, merged with the previous
/// summary's) and those not answered (pending, with the ledger's open asks).
pub(super) fn questions(
    span: &Span<'_>,
    prev: Option<&str>,
    ledger: &TaskLedger,
) -> (Bullets, Bullets) {
    // A repeated request asks what its first asked: each distinct text's questions are found
    // and flattened once, a long span's on several threads (`synth_100k`: 13,607 questions
    // from 2,681 distinct request texts; flattening each was a fifth of the section, callgrind,
    // issue #17). Each request's are answered (by the reply after it) or pending, in the
    // requests' order. An answer is read only for the lines the resolved list builds
    // (`resolved.rs`).
    let distinct = &span.distinct_requests;
    let questions_of: Vec<Vec<String>> = in_ranges(distinct.len(), |range| {
        distinct[range]
            .iter()
            .map(|&k| {
                ledger::questions_among(span.sentences_of(k))
                    .iter()
                    .map(|q| one_line(q, LINE_MAX_CHARS))
                    .collect::<Vec<String>>()
            })
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    let mut pending = Distinct::default();
    let mut asked: Vec<(&str, usize)> = Vec::new();
    for (&(at, _), &d) in span.requests.iter().zip(&span.distinct_of) {
        let questions = &questions_of[d];
        if questions.is_empty() {
            continue;
        }
        if span.is_answered(at) {
            asked.extend(questions.iter().map(|q| (q.as_str(), at)));
        } else {
            for q in questions {
                pending.push_str(q);
            }
        }
    }
    let resolved = resolved_questions(
        carried_bullets(prev, sections::RESOLVED_QUESTIONS),
        asked,
        MAX_RESOLVED,
        |at| span.answer_key(at),
        |q, at| {
            let answer = span.answer_after(at).unwrap_or_default();
            format!("{q}{ANSWERED}{answer}")
        },
    );
    let mut pending = pending.into_items();
    for ask in &ledger.open_asks {
        let ask = one_line(ask, LINE_MAX_CHARS * 2);
        if !pending
            .iter()
            .any(|p| ask.contains(p.as_str()) || p.contains(&ask))
        {
            pending.push(ask);
        }
    }
    (
        resolved,
        Bullets::new(pending, "asks", "None.").capped(MAX_PENDING),
    )
}

/// Modified files first (they are the work product), then files only read. `head` marks the
/// modified files so the budget trims read-only files (oldest first) before any of them.
pub(super) fn relevant_files(ledger: &TaskLedger, span: &Span<'_>) -> Bullets {
    let modified = modified_files(ledger, span);
    let read = read_files(ledger, span);
    let mut items: Vec<String> = modified
        .iter()
        .map(|path| {
            let note = if read.contains(path) {
                "read, modified"
            } else {
                "modified"
            };
            format!("{path} ({note})")
        })
        .collect();
    items.extend(
        read.iter()
            .filter(|p| !modified.contains(p))
            .map(|path| format!("{path} (read)")),
    );
    let mut files = Bullets::new(items, "files", "None recorded.");
    files.head = modified.len();
    files
}

pub(super) fn remaining_work(pending: &Bullets, blocked: &Bullets) -> Vec<String> {
    let mut lines = Vec::new();
    if !pending.items.is_empty() {
        lines.push("- Answer the pending user asks above.".to_string());
    }
    if let Some(last) = blocked.items.last() {
        lines.push(format!("- Resolve: {last}"));
    }
    lines.push("- Carry on with the active task.".to_string());
    lines
}

pub(super) fn critical_context(
    span: &Span<'_>,
    focus: Option<&str>,
    terms: &[String],
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        lines.push(format!(
            "- Focus requested for this compaction: {}",
            one_line(focus, LINE_MAX_CHARS)
        ));
        for excerpt in focus_excerpts(span, terms) {
            lines.push(format!("- On the focus topic: {excerpt}"));
        }
    }
    if let Some(last) = span.replies.len().checked_sub(1) {
        let excerpt = one_line(&span.quoted_reply(last), EXCERPT_MAX_CHARS);
        lines.push(format!("- Last assistant message: {excerpt}"));
    }
    let count = |r: Role| span.turns.iter().filter(|m| m.role == r).count();
    lines.push(format!(
        "- Extractive summary of {} messages ({} user, {} assistant, {} tool): tool outputs are described, not quoted.",
        span.turns.len(),
        count(Role::User),
        count(Role::Assistant),
        count(Role::Tool)
    ));
    lines
}

/// Bullet items of a section of the previous summary (placeholders are not bullets, so they
/// are not carried).
pub(super) fn carried_bullets(prev: Option<&str>, heading: &str) -> Vec<String> {
    prev.and_then(|p| section_body(p, heading))
        .map(|body| {
            body.lines()
                .filter_map(|l| l.trim().strip_prefix("- "))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `n noun` or `n nouns`, written where it is shown.
pub(super) struct Plural<'n>(pub usize, pub &'n str);

impl std::fmt::Display for Plural<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Plural(n, noun) = *self;
        if n == 1 {
            write!(f, "1 {noun}")
        } else {
            write!(f, "{n} {noun}s")
        }
    }
}

/// `s` on one line (whitespace runs collapsed), at most `max` characters with an ellipsis.
pub(super) fn one_line(s: &str, max: usize) -> String {
    // Run by run while the text is ASCII: summary lines are mostly commands and paths, and
    // splitting them into Unicode words was a few percent of a real session's compaction,
    // pushing them byte by byte a third of building a long span's statements (issue #17).
    // Sized for what an ASCII line can hold.
    let mut flat = String::with_capacity(s.len().min(max.saturating_add(2)));
    let bytes = s.as_bytes();
    let mut space = false;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if !b.is_ascii() {
            return words_one_line(flat, space, &s[at..], max);
        }
        if is_ascii_space(b) {
            space = !flat.is_empty();
            at += 1;
            continue;
        }
        // A run of ASCII that is not whitespace, copied at once; read no further than a line
        // can hold (a long token is cut anyway).
        let window = &bytes[at..bytes.len().min(at.saturating_add(max).saturating_add(2))];
        let run_end = at
            + window
                .iter()
                .position(|&b| !b.is_ascii() || is_ascii_space(b))
                .unwrap_or(window.len());
        if space {
            flat.push(' ');
            space = false;
        }
        flat.push_str(&s[at..run_end]);
        // One byte a character so far: the cut is where pushing byte by byte would stop.
        if flat.len() > max {
            flat.truncate(max.saturating_sub(1));
            flat.push('…');
            return flat;
        }
        at = run_end;
    }
    flat
}

fn words_one_line(mut flat: String, space: bool, rest: &str, max: usize) -> String {
    let mut chars = flat.len();
    // The first word goes on the last ASCII one when nothing separates them.
    let mut glued = !space && !rest.starts_with(char::is_whitespace);
    for word in rest.split_whitespace() {
        if !glued && !flat.is_empty() {
            flat.push(' ');
            chars += 1;
        }
        glued = false;
        // A word past the cut is read only as far as the cut: a paragraph of CJK text is one
        // word, and copying and counting the whole of it was most of a long span's
        // statements (issue #17).
        let room = max.saturating_sub(chars).saturating_add(1);
        let word = crate::truncate::char_start(word, room).map_or(word, |end| &word[..end]);
        flat.push_str(word);
        chars += word.chars().count();
        if chars > max {
            let keep = max.saturating_sub(1);
            let end = crate::truncate::char_start(&flat, keep).unwrap_or(flat.len());
            flat.truncate(end);
            flat.push('…');
            return flat;
        }
    }
    flat
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: every word joined, then cut to `max - 1` characters and `…` when the
    /// line is longer than `max`.
    fn one_line_by_joining(s: &str, max: usize) -> String {
        let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.chars().count() > max {
            format!("{}…", ledger::clip(&flat, max.saturating_sub(1)))
        } else {
            flat
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Stopping at the first word past the limit and cutting in place gives the joined
        /// line, cut: around the limit, with multi-byte characters and every kind of
        /// whitespace.
        #[test]
        fn a_line_is_the_words_joined_and_cut(
            s in "[ab é漢\t\n \u{3000}]{0,24}",
            max in 0usize..12,
        ) {
            prop_assert_eq!(one_line(&s, max), one_line_by_joining(&s, max));
        }

        /// ASCII text read byte by byte, with every ASCII whitespace byte (the vertical tab
        /// and form feed too), then other text from its first other character on, gives the
        /// joined line, cut.
        #[test]
        fn long_runs_and_words_are_cut_where_the_joined_line_is(
            s in "([a-z./_-]{1,70}[ \t\n]{0,3}){0,6}([é漢字]{1,80}[ \u{3000}]{0,2}){0,4}",
            max in 0usize..120,
        ) {
            prop_assert_eq!(one_line(&s, max), one_line_by_joining(&s, max));
        }

        #[test]
        fn a_line_read_partly_byte_by_byte_is_the_words_joined_and_cut(
            s in "[ab.\t\n\r\x0B\x0C ]{0,16}[ab é漢\t\n \u{3000}\u{85}]{0,12}",
            max in 0usize..20,
        ) {
            prop_assert_eq!(one_line(&s, max), one_line_by_joining(&s, max));
        }
    }
}
