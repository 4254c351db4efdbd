//! What the span says, gathered once: its requests, replies and tool calls, each call
//! classified once with its result, and how a call reads in a summary line.

// The limits, wordings and patterns every part of the summarizer shares.
use super::first_equal::first_equal;
use super::*;
use crate::summary::redact::{redact, redact_text};
use crate::summary::sentences::sentence_ranges;
use crate::summary::text_memo::TextMemo;
use std::fmt::Write as _;
use std::ops::Range;

/// What the span says, gathered once.
pub(super) struct Span<'a> {
    pub(super) turns: &'a [&'a Message],
    /// Real user requests: position and text (borrowed unless joined from parts).
    pub(super) requests: Vec<(usize, Cow<'a, str>)>,
    /// The requests whose text no earlier request has, in order: a repeated text says
    /// nothing its first request did not (see [`first_of_each_text`]).
    pub(super) distinct_requests: Vec<usize>,
    /// For each request, where its text's first request is in `distinct_requests`: what a
    /// section reads from a request's text it reads once per distinct text and shares.
    pub(super) distinct_of: Vec<usize>,
    /// The sentences of every request, for the questions and the user's statements (see
    /// [`Span::sentences_of`]).
    request_sentences: RequestSentences,
    /// Positions of assistant messages with text.
    pub(super) replies: Vec<usize>,
    /// The line each reply shows as an answer ([`Span::answer_after`]), built once it is asked
    /// for (`OnceLock`s: the sections run on two threads).
    answers: Vec<std::sync::OnceLock<String>>,
    /// The answer lines built so far, by the first line they were built from, shared by the
    /// threads that build them: replies that open with the same line show the same answer,
    /// built once. A long session repeats its replies (`synth_100k`: 47,144 assistant
    /// messages, 3,509 distinct texts), and building the line of each of its 12,327
    /// answering replies was an eighth of the pass's instructions (callgrind, issue #17),
    /// nearly all of it redacting and flattening lines already built.
    answer_lines: TextMemo<'a, String>,
    /// The span's calls: the pass's own list when it has one (the ledger read the same
    /// calls), else built here.
    pub(super) calls: Cow<'a, [SpanCall<'a>]>,
}

impl<'a> Span<'a> {
    pub(super) fn new(
        turns: &'a [&'a Message],
        actions: Option<&'a ActionTable<'a>>,
        calls: Option<&'a SpanCalls<'a>>,
    ) -> Self {
        let calls = match calls {
            Some(given) => Cow::Borrowed(given.as_slice()),
            None => Cow::Owned(SpanCalls::new(turns, actions).into_vec()),
        };
        // A long span's turns are read on several threads: telling a real request from an
        // injected row reads every user message (`synth_100k`: 14 ms on one thread).
        let mut requests: Vec<(usize, Cow<'a, str>)> = Vec::new();
        let mut replies: Vec<usize> = Vec::new();
        for (found_requests, found_replies) in in_ranges(turns.len(), |range| {
            let (mut requests, mut replies) = (Vec::new(), Vec::new());
            for (i, m) in turns[range.clone()].iter().enumerate() {
                let i = range.start + i;
                if ledger::is_real_request(m) {
                    requests.push((i, ledger::message_text(m)));
                } else if ledger::is_reply(m) {
                    replies.push(i);
                }
            }
            (requests, replies)
        }) {
            requests.extend(found_requests);
            replies.extend(found_replies);
        }
        let (distinct_requests, distinct_of) = distinct_texts(&first_of_each_text(&requests));
        Span {
            turns,
            request_sentences: RequestSentences::of(&requests, &distinct_of, &distinct_requests),
            distinct_requests,
            distinct_of,
            requests,
            answers: replies.iter().map(|_| std::sync::OnceLock::new()).collect(),
            answer_lines: TextMemo::default(),
            replies,
            calls,
        }
    }

    /// The text of reply `r` (of `replies`) as a summary may quote it: redacted whole before
    /// any line of it is picked or clipped (the turns' assistant text is as written,
    /// `redacted_views::changed_span_view`).
    pub(super) fn quoted_reply(&self, r: usize) -> Cow<'a, str> {
        let Some(&j) = self.replies.get(r) else {
            return Cow::Borrowed("");
        };
        redact_text(ledger::message_text(self.turns[j]))
    }

    /// The sentences of request `k` (of `requests`).
    pub(super) fn sentences_of(&self, k: usize) -> impl Iterator<Item = &str> {
        let split = &self.request_sentences;
        let text: &str = self.requests.get(k).map_or("", |(_, t)| t);
        let mine = split
            .of
            .get(k)
            .and_then(|at| split.ranges.get(at.clone()))
            .unwrap_or_default();
        mine.iter().map(move |r| &text[r.clone()])
    }

    /// Whether a reply follows turn `i`, so that [`Span::answer_after`] gives an answer: told
    /// without building the answer.
    pub(super) fn is_answered(&self, i: usize) -> bool {
        self.reply_after(i) < self.answers.len()
    }

    /// Which reply follows turn `i`: its index in `replies` (their count when none does).
    fn reply_after(&self, i: usize) -> usize {
        // `replies` is in ascending order: binary search, not a scan per request.
        self.replies.partition_point(|&j| j <= i)
    }

    /// What the answer to a question asked at position `i` is built from, told without
    /// building it: questions whose keys are equal show equal answers
    /// ([`Span::answer_after`]); `None` when no reply follows.
    pub(super) fn answer_key(&self, i: usize) -> Option<AnswerKey<'a>> {
        let r = self.reply_after(i);
        let &j = self.replies.get(r)?;
        Some(match ledger::message_text(self.turns[j]) {
            Cow::Borrowed(text) => AnswerKey::FirstLine(first_line(text)),
            // Joined from parts: keyed by the reply itself.
            Cow::Owned(_) => AnswerKey::Reply(r),
        })
    }

    /// What a question asked at position `i` shows as its answer: the first reply after it,
    /// its first non-blank line, redacted and put on one line of at most
    /// [`LINE_MAX_CHARS`]; `None` when no reply follows. Built once per reply (a request's
    /// questions share one).
    ///
    /// Only that line is redacted, before it is clipped: a secret on it is whole on it (a
    /// token holds no line break), and what a rule reads around a secret (`password=`, a
    /// key block's armour) sits on the secret's own line or after it. Redacting every
    /// answering reply whole was a twentieth of a long span's pass (issue #17).
    pub(super) fn answer_after(&self, i: usize) -> Option<&str> {
        let r = self.reply_after(i);
        let slot = self.answers.get(r)?;
        Some(slot.get_or_init(|| {
            let first = match ledger::message_text(self.turns[self.replies[r]]) {
                Cow::Borrowed(text) => first_line(text),
                // Joined from parts: nothing of the span's to key it by.
                Cow::Owned(text) => return answer_line(first_line(&text)),
            };
            self.answer_lines.get_or_work(first, answer_line)
        }))
    }
}

/// What an answer line is built from ([`Span::answer_key`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum AnswerKey<'a> {
    /// The first non-blank line of the reply, which alone makes the answer.
    FirstLine(&'a str),
    /// A reply whose text is joined from parts, by its place among the replies.
    Reply(usize),
}

/// A reply's first non-blank line.
fn first_line(text: &str) -> &str {
    crate::byte_scan::first_nonblank_line(text).unwrap_or("")
}

/// What a reply opening with `first` shows as an answer: that line redacted and put on one
/// line of at most [`LINE_MAX_CHARS`].
fn answer_line(first: &str) -> String {
    one_line(&redact(first), LINE_MAX_CHARS)
}

/// For each request, the first request with the same text (itself when none before has it).
/// A long session repeats its requests (`synth_100k`: 24,780 user messages, 2,681 distinct
/// texts), far apart ([`first_equal`]).
fn first_of_each_text(requests: &[(usize, Cow<'_, str>)]) -> Vec<usize> {
    first_equal(requests.len(), |k| Some(&*requests[k].1))
        .into_iter()
        .enumerate()
        .map(|(k, first)| first.unwrap_or(k))
        .collect()
}

/// From each request's first request of its text (`first_of`): the requests that are their
/// own first, in order, and for each request where its first is among them.
fn distinct_texts(first_of: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut distinct = Vec::new();
    let mut distinct_of: Vec<usize> = Vec::with_capacity(first_of.len());
    for (k, &f) in first_of.iter().enumerate() {
        // A first comes before its repeats, so its place is already known.
        let d = if f == k {
            distinct.push(k);
            distinct.len() - 1
        } else {
            distinct_of[f]
        };
        distinct_of.push(d);
    }
    (distinct, distinct_of)
}

/// Every request's sentences as byte ranges of its text, all in one list: request `k`'s are
/// `ranges[of[k]]` (two allocations for a span's thousands of requests). A repeated text's
/// request shares its first request's ranges.
#[derive(Default)]
struct RequestSentences {
    ranges: Vec<Range<usize>>,
    of: Vec<Range<usize>>,
}

impl RequestSentences {
    /// Every request's sentences, each distinct text split once (`distinct` the requests
    /// that are their own first, `distinct_of` from [`distinct_texts`]), a long span's on
    /// several threads (every section that reads the user's words needs them; splitting
    /// `synth_100k`'s repeats was 5% of its pass's instructions, callgrind, issue #17).
    fn of(requests: &[(usize, Cow<'_, str>)], distinct_of: &[usize], distinct: &[usize]) -> Self {
        let parts = in_ranges(distinct.len(), |range| {
            let mut part = RequestSentences::default();
            for &k in &distinct[range] {
                let from = part.ranges.len();
                sentence_ranges(&requests[k].1, &mut part.ranges);
                part.of.push(from..part.ranges.len());
            }
            part
        });
        let mut own = Vec::with_capacity(distinct.len());
        let mut ranges = Vec::new();
        for part in parts {
            let base = ranges.len();
            own.extend(part.of.iter().map(|at| at.start + base..at.end + base));
            ranges.extend(part.ranges);
        }
        let of = distinct_of.iter().map(|&d| own[d].clone()).collect();
        RequestSentences { ranges, of }
    }
}

/// How a call reads in a summary line (the summary's wording; the call itself is shared with
/// the ledger, `summary::span_calls`).
impl<'a> SpanCall<'a> {
    /// Whether the call's name, arguments or target mention any of `terms` (lowercase).
    pub(super) fn mentions_any(&self, terms: &[String]) -> bool {
        if terms.is_empty() {
            return false;
        }
        let hay = format!("{} {}", self.name, self.arguments).to_lowercase();
        terms.iter().any(|t| hay.contains(t.as_str()))
    }

    /// "ACTION target — outcome [tool: name]", written into one string: its parts were each
    /// a string of their own, and a summary describes every call it lists.
    pub(super) fn describe(&self) -> String {
        let verb = verb(&self.action);
        let mut line = String::with_capacity(DESCRIBED_CAPACITY);
        line.push_str(verb);
        line.push(' ');
        self.write_target(&mut line);
        line.push_str(" — ");
        self.write_outcome(&mut line);
        line.push_str(" [tool: ");
        line.push_str(self.name);
        line.push(']');
        line
    }

    pub(super) fn target(&self) -> String {
        let mut out = String::new();
        self.write_target(&mut out);
        out
    }

    fn write_target(&self, out: &mut String) {
        match &*self.action {
            ToolAction::Other => out.push_str(&one_line(&self.arguments, TARGET_MAX_CHARS)),
            action => write_target(action, out),
        }
    }

    /// What identifies "the same call again": the command, or the tool and its target. Written
    /// once per distinct call when the pass's table holds it: the blockers section asks for
    /// the label of every call that answered a failed one's.
    pub(super) fn label(&self) -> Cow<'a, str> {
        self.shared_label(Self::written_label)
    }

    fn written_label(&self) -> String {
        match &*self.action {
            ToolAction::Command { .. } => self.target(),
            _ => {
                let mut label = String::with_capacity(DESCRIBED_CAPACITY);
                label.push_str(self.name);
                label.push(' ');
                self.write_target(&mut label);
                label
            }
        }
    }

    /// Exit status for commands, the error's first line for failures, otherwise the result size.
    pub(super) fn outcome(&self) -> String {
        let mut out = String::new();
        self.write_outcome(&mut out);
        out
    }

    fn write_outcome(&self, out: &mut String) {
        let Some(text) = &self.result else {
            out.push_str("no result recorded");
            return;
        };
        // Counted only for the outcomes that show it: each count is a pass over the result.
        let lines = || Plural(view::original_line_count(text), "line");
        let quoted = || self.quoted_result().unwrap_or_default();
        let failure = |out: &mut String| {
            out.push_str("failed: ");
            out.push_str(&error_line(quoted()));
        };
        // Only a command's outcome reads its exit status: looking for one in every result
        // was 1% of a real session's pass. Writing to a `String` cannot fail.
        match &*self.action {
            ToolAction::Command { .. } => match self.exit_code() {
                Some(0) => {
                    let _ = write!(out, "exit 0, {} of output", lines());
                }
                Some(code) => {
                    let _ = write!(out, "exit {code}: ");
                    out.push_str(&error_line(quoted()));
                }
                None if self.failed() => failure(out),
                None => {
                    let _ = write!(out, "{} of output", lines());
                }
            },
            _ if self.failed() => failure(out),
            ToolAction::Read { .. } => {
                let _ = write!(out, "{}", lines());
            }
            ToolAction::Write { .. } | ToolAction::Edit { .. } | ToolAction::Patch { .. } => {
                out.push_str("ok");
            }
            _ => {
                let chars = Plural(view::original_char_count(text), "char");
                let _ = write!(out, "{chars} of output");
            }
        }
    }
}

/// Bytes reserved for a described call: most lines are under 160 bytes.
const DESCRIBED_CAPACITY: usize = 160;

pub(super) fn verb(action: &ToolAction) -> &'static str {
    match action {
        ToolAction::Read { .. } => "READ",
        ToolAction::Write { .. } => "WROTE",
        ToolAction::Edit { .. } => "EDITED",
        ToolAction::Patch { .. } => "PATCHED",
        ToolAction::Command { .. } => "RAN",
        ToolAction::Search { .. } => "SEARCHED",
        ToolAction::Web { .. } => "FETCHED",
        ToolAction::Delegate { .. } => "DELEGATED",
        ToolAction::Other => "CALLED",
    }
}

/// What a call acted on, written at the end of `out`.
fn write_target(action: &ToolAction, out: &mut String) {
    let quoted = |out: &mut String, text: &str| {
        out.push('`');
        out.push_str(&one_line(text, TARGET_MAX_CHARS));
        out.push('`');
    };
    match action {
        ToolAction::Read {
            path,
            from_line: Some(from),
            lines: Some(n),
        } => {
            // Writing to a `String` cannot fail.
            let _ = write!(out, "{path} (lines {from}–{})", from + n.saturating_sub(1));
        }
        ToolAction::Read { path, .. }
        | ToolAction::Write { path, .. }
        | ToolAction::Edit { path } => out.push_str(path),
        ToolAction::Patch { paths } => {
            for (i, path) in paths.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(path);
            }
        }
        ToolAction::Command { command } => quoted(out, command),
        ToolAction::Search {
            pattern,
            path: Some(path),
        } => {
            quoted(out, pattern);
            out.push_str(" in ");
            out.push_str(path);
        }
        ToolAction::Search { pattern, .. } => quoted(out, pattern),
        ToolAction::Web { target } => out.push_str(&one_line(target, TARGET_MAX_CHARS)),
        ToolAction::Delegate { goal } => out.push_str(&one_line(goal, TARGET_MAX_CHARS)),
        ToolAction::Other => {}
    }
}

/// [`write_target`]'s pieces written as the call holds them, `one_line` not applied: the same
/// non-whitespace characters until a line would be cut (`label_key.rs`).
pub(super) fn target_text(action: &ToolAction, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    match action {
        ToolAction::Read {
            path,
            from_line: Some(from),
            lines: Some(n),
        } => write!(out, "{path} (lines {from}–{})", from + n.saturating_sub(1)),
        ToolAction::Read { path, .. }
        | ToolAction::Write { path, .. }
        | ToolAction::Edit { path } => out.write_str(path),
        ToolAction::Patch { paths } => {
            for (i, path) in paths.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                out.write_str(path)?;
            }
            Ok(())
        }
        ToolAction::Command { command } => write!(out, "`{command}`"),
        ToolAction::Search {
            pattern,
            path: Some(path),
        } => write!(out, "`{pattern}` in {path}"),
        ToolAction::Search { pattern, .. } => write!(out, "`{pattern}`"),
        ToolAction::Web { target } => out.write_str(target),
        ToolAction::Delegate { goal } => out.write_str(goal),
        ToolAction::Other => Ok(()),
    }
}

/// The most telling line of an error output: the first that is not an exit-status or
/// framing line.
pub(super) fn error_line(text: &str) -> String {
    const FRAMING: [&str; 5] = [
        "Chunk ID:",
        "Wall time:",
        "Original token count:",
        "Output:",
        "<tool_use_error>",
    ];
    let telling = text.lines().map(str::trim).find(|l| {
        !l.is_empty()
            && tool_action::exit_code(l).is_none()
            && !FRAMING
                .iter()
                .any(|f| l.starts_with(f) && l.len() <= f.len() + 24)
    });
    let line = telling.or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()));
    let line = line.unwrap_or("(no output)");
    let line = line.trim_start_matches("<tool_use_error>");
    one_line(line.trim_end_matches("</tool_use_error>"), LINE_MAX_CHARS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Every request's sentences are its own text's, whether split for it or shared with an
    /// earlier request of the same text, in a span long enough to be read on several threads;
    /// a repeated text is split once.
    #[test]
    fn requests_of_one_text_share_their_sentences() {
        let texts = [
            "Fix the parser. Keep the API! Does it build?",
            "我们修复解析器。保持接口不变。",
            "one more thing",
        ];
        let n = 3 * crate::split_work::SPLIT_FROM_ITEMS + 7;
        let messages: Vec<Message> = (0..n)
            .map(|i| match i % 5 {
                0 => Message::user(format!("Request {i}. Run the tests.")),
                k => Message::user(texts[k % texts.len()]),
            })
            .collect();
        let turns: Vec<&Message> = messages.iter().collect();
        let span = Span::new(&turns, None, None);
        assert_eq!(span.requests.len(), n);
        let mut own = Vec::new();
        for (k, (_, text)) in span.requests.iter().enumerate() {
            own.clear();
            sentence_ranges(text, &mut own);
            let expected: Vec<&str> = own.iter().map(|r| &text[r.clone()]).collect();
            let shared: Vec<&str> = span.sentences_of(k).collect();
            assert_eq!(shared, expected, "request {k}: {text}");
            assert!(!shared.is_empty(), "request {k}");
        }
        // Each text is split once, however far apart its requests: two sentences for each
        // numbered request, 3 + 2 + 1 for the repeated texts.
        let numbered = n.div_ceil(5);
        assert_eq!(span.distinct_requests.len(), numbered + texts.len());
        assert_eq!(span.request_sentences.ranges.len(), 2 * numbered + 6);
        // The first request of each text, in order.
        assert_eq!(span.distinct_requests[..5], [0, 1, 2, 3, 5]);
    }

    /// Each question's answer is its own reply's first non-blank line, redacted and flattened,
    /// whether the line was built for it or for an earlier reply that opened the same way; the
    /// replies that open alike have their line built once.
    #[test]
    fn replies_that_open_alike_share_one_answer_line_built_once() {
        let key = "sk-proj-0001abcdefghijklmnopqrstuvwxyz0123";
        let openings = [
            "\n  The build passes now.\nDetails follow.".to_string(),
            "It was the lexer.".to_string(),
            "\nThe build passes now.\nOther details.".to_string(),
            format!("Use OPENAI_API_KEY={key}\tin   the shell."),
            format!("Use OPENAI_API_KEY={key}\tin   the shell.\nThen rerun."),
        ];
        let mut turns = Vec::new();
        for (k, reply) in openings.iter().enumerate() {
            turns.push(Message::user(format!("Question {k}: is it done?")));
            turns.push(Message::assistant(reply.as_str()));
        }
        let turns: Vec<&Message> = turns.iter().collect();
        let span = Span::new(&turns, None, None);
        let answers: Vec<&str> = (0..openings.len())
            .map(|k| span.answer_after(2 * k).unwrap())
            .collect();
        for (answer, reply) in answers.iter().zip(&openings) {
            assert_eq!(*answer, answer_line(first_line(reply)), "{reply:?}");
        }
        assert_eq!(answers[0], "The build passes now.");
        assert_eq!(answers[2], answers[0]);
        assert_eq!(answers[3], "Use OPENAI_API_KEY=[REDACTED] in the shell.");
        assert!(answers.iter().all(|a| !a.contains(key)));
        // Four distinct first lines among five replies (a line is taken as written: "  The
        // build…" indented is another line than "The build…").
        assert_eq!(span.answer_lines.len(), 4);
        // No reply after the last question: no answer.
        assert!(span.answer_after(2 * openings.len()).is_none());
    }
}
