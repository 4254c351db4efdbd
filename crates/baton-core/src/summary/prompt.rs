//! The prompt a model-backed summarizer (exec, LLM) receives.
//!
//! Two jobs: turn a span of messages into plain text a model can read ([`serialize_turns`],
//! [`bound_input`]), and wrap it in instructions ([`build_prompt`]) that make the model write
//! the structured sections of [`super::sections`] and nothing else. The wording lives in
//! `templates/summary_*.txt`; this file only decides which pieces go in and fills their
//! `{placeholders}`.

use super::redact::redact;
use super::sections;
use crate::message::{Content, ContentPart, Message, Role};
use crate::truncate::group_digits;
use regex::Regex;
use std::sync::LazyLock;

/// The most text of turns (and, separately, of a previous summary) a prompt carries. A span
/// larger than this is cut in the middle by [`bound_input`], so the summarizer's own context
/// cannot overflow however long the compacted span was.
pub const MAX_SUMMARY_INPUT_CHARS: usize = 160_000;

/// Messages longer than this are shown as head, marker, tail: one huge tool output must not
/// crowd every other turn out of the summarizer's input.
const MESSAGE_MAX_CHARS: usize = 6_000;
const MESSAGE_HEAD_CHARS: usize = 4_000;
const MESSAGE_TAIL_CHARS: usize = 1_500;
/// Tool-call arguments longer than this are cut to [`ARGS_KEPT_CHARS`]: the call's name and
/// the start of its arguments say what was done; a whole file being written does not.
const ARGS_MAX_CHARS: usize = 1_500;
const ARGS_KEPT_CHARS: usize = 1_200;
/// Share of a bounded input kept from its start; the rest comes from its end, which is nearer
/// to the present and so matters more for what happens next.
const HEAD_SHARE_PERCENT: usize = 45;

const PREAMBLE: &str = include_str!("../../templates/summary_preamble.txt");
const LANGUAGE_USER: &str = include_str!("../../templates/summary_language_user.txt");
const LANGUAGE_NO_USER: &str = include_str!("../../templates/summary_language_no_user.txt");
const FIRST: &str = include_str!("../../templates/summary_first.txt");
const UPDATE: &str = include_str!("../../templates/summary_update.txt");
const SECTIONS: &str = include_str!("../../templates/summary_sections.txt");
const LEDGER: &str = include_str!("../../templates/summary_ledger.txt");
const FOCUS: &str = include_str!("../../templates/summary_focus.txt");
const CLOSING: &str = include_str!("../../templates/summary_closing.txt");

/// What [`build_prompt`] needs. Everything here must already be redacted.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The span, as [`serialize_turns`] (and usually [`bound_input`]) rendered it.
    pub serialized_turns: &'a str,
    /// The body of the summary being replaced; its presence makes this an update.
    pub previous_summary: Option<&'a str>,
    /// What the user asked this compaction to keep in detail.
    pub focus_topic: Option<&'a str>,
    /// Target size of the summary body.
    pub budget_tokens: usize,
    /// The rendered task ledger, shown verbatim; empty when there is none.
    pub ledger_block: &'a str,
    /// False for sessions driven without a user (cron jobs, workers): the summarizer must then
    /// not invent one.
    pub has_user_turns: bool,
}

/// The full summarization prompt: preamble, first-compaction or update instructions with the
/// turns, the section template, the ledger, the focus topic, and a closing line.
pub fn build_prompt(input: &PromptInput) -> String {
    let mut blocks = vec![preamble(input.has_user_turns), task_block(input)];
    blocks.push(fill(
        SECTIONS,
        &[("budget_tokens", group_digits(input.budget_tokens).as_str())],
    ));
    if !input.ledger_block.trim().is_empty() {
        blocks.push(fill(
            LEDGER,
            &[("ledger_block", input.ledger_block.trim_end())],
        ));
    }
    if let Some(topic) = input.focus_topic.map(str::trim).filter(|t| !t.is_empty()) {
        blocks.push(fill(FOCUS, &[("focus_topic", topic)]));
    }
    blocks.push(fill(CLOSING, &[]));
    let mut prompt = blocks
        .iter()
        .map(|b| b.trim_end())
        .collect::<Vec<_>>()
        .join("\n\n");
    prompt.push('\n');
    prompt
}

/// The prompt's fixed wording: every template with no turns, previous summary, ledger or
/// focus filled in. The quality gate compares summaries with it to catch a model that echoes
/// its instructions back ([`super::reject`]).
pub fn instruction_text() -> String {
    let empty = |template: &str| {
        fill(
            template,
            &[
                ("turns", ""),
                ("previous_summary", ""),
                ("ledger_block", ""),
                ("focus_topic", ""),
                ("budget_tokens", ""),
            ],
        )
    };
    [
        preamble(true),
        fill(LANGUAGE_NO_USER, &[]),
        empty(FIRST),
        empty(UPDATE),
        empty(SECTIONS),
        empty(LEDGER),
        empty(FOCUS),
        empty(CLOSING),
    ]
    .join("\n\n")
}

fn preamble(has_user_turns: bool) -> String {
    let language = if has_user_turns {
        LANGUAGE_USER
    } else {
        LANGUAGE_NO_USER
    };
    let language = fill(language, &[]);
    fill(PREAMBLE, &[("language_rule", language.trim_end())])
}

/// First compaction or update: an update must carry the previous summary forward, so it gets
/// its own instructions. Both texts are bounded again here; for already bounded input that is
/// a no-op.
fn task_block(input: &PromptInput) -> String {
    let turns = bound_input(input.serialized_turns, MAX_SUMMARY_INPUT_CHARS);
    match input
        .previous_summary
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        None => fill(FIRST, &[("turns", turns.as_str())]),
        Some(previous) => {
            let previous = bound_input(previous, MAX_SUMMARY_INPUT_CHARS);
            fill(
                UPDATE,
                &[
                    ("previous_summary", previous.as_str()),
                    ("turns", turns.as_str()),
                ],
            )
        }
    }
}

/// The section headings, by the placeholder names the templates use for them.
fn heading_vars() -> [(&'static str, &'static str); 14] {
    [
        ("active_task", sections::ACTIVE_TASK),
        ("goal", sections::GOAL),
        ("constraints", sections::CONSTRAINTS),
        ("completed_actions", sections::COMPLETED_ACTIONS),
        ("active_state", sections::ACTIVE_STATE),
        ("in_progress", sections::IN_PROGRESS),
        ("blocked", sections::BLOCKED),
        ("key_decisions", sections::KEY_DECISIONS),
        ("resolved_questions", sections::RESOLVED_QUESTIONS),
        ("pending_user_asks", sections::PENDING_USER_ASKS),
        ("relevant_files", sections::RELEVANT_FILES),
        ("remaining_work", sections::REMAINING_WORK),
        ("critical_context", sections::CRITICAL_CONTEXT),
        ("task_ledger", sections::TASK_LEDGER),
    ]
}

/// Replaces `{name}` in `template` with its value from `vars` or, failing that, with the
/// section heading of that name. One pass over the template only: text inserted for one
/// placeholder is never searched again, so a transcript that happens to contain `{turns}`
/// stays as written. Unknown `{…}` are left as they are.
fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let headings = heading_vars();
    let lookup = |name: &str| {
        vars.iter()
            .chain(headings.iter())
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    };
    let mut out =
        String::with_capacity(template.len() + vars.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after
            .find('}')
            .and_then(|close| lookup(&after[..close]).map(|v| (v, close)));
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The span as plain text, one block per message separated by blank lines:
/// `[USER]: …`, `[ASSISTANT]: …` (with its tool calls listed as `name(args)`),
/// `[TOOL RESULT <id>]: …`. Secrets are redacted before anything is cut, so truncation can
/// never leave half a key that no longer looks like one.
pub fn serialize_turns<M: std::borrow::Borrow<Message>>(turns: &[M]) -> String {
    turns
        .iter()
        .map(|m| serialize_turn(m.borrow()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn serialize_turn(m: &Message) -> String {
    let mut text = m.content.as_ref().map(content_text).unwrap_or_default();
    if m.role == Role::Assistant {
        text = strip_thinking(&text);
    }
    let body = cap_message(&redact(&text));
    match m.role {
        Role::Tool => {
            let id = m.tool_call_id.as_deref().unwrap_or("");
            format!("[TOOL RESULT {id}]: {body}")
        }
        Role::Assistant if body.is_empty() => format!("[ASSISTANT]:{}", tool_call_list(m)),
        Role::Assistant => format!("[ASSISTANT]: {body}{}", tool_call_list(m)),
        // Labelled so a model does not take an injected row for the user's request.
        Role::User => match crate::synthetic::kind_of(m) {
            Some(kind) => {
                format!("[USER ROW INJECTED BY THE AGENT ({kind}), NOT TYPED BY THE USER]: {body}")
            }
            None => format!("[USER]: {body}"),
        },
        role => format!("[{}]: {body}", role.as_str().to_ascii_uppercase()),
    }
}

/// Text parts as they are, one per line; other parts as a short bracketed note, because the
/// summarizer only needs to know that an image or a file was there.
fn content_text(content: &Content) -> String {
    match content {
        Content::Null => String::new(),
        Content::Text(s) => s.clone(),
        Content::Parts(parts) => parts.iter().map(part_text).collect::<Vec<_>>().join("\n"),
    }
}

fn part_text(part: &ContentPart) -> String {
    if part.is_image() {
        return match image_link(part) {
            Some(url) => format!("[image: {url}]"),
            None => "[image]".to_string(),
        };
    }
    if let Some(text) = part.text_value() {
        return text.to_string();
    }
    match part.type_name() {
        "" => "[content part]".to_string(),
        other => format!("[{other}]"),
    }
}

/// An image's web address, when it has one. Inline `data:` images (often megabytes of base64)
/// and other schemes collapse to a bare `[image]`.
fn image_link(part: &ContentPart) -> Option<&str> {
    let fields = part.fields();
    let url = match fields.get("image_url") {
        Some(serde_json::Value::Object(inner)) => inner.get("url").and_then(|u| u.as_str()),
        Some(value) => value.as_str(),
        None => fields.get("url").and_then(|u| u.as_str()),
    }?;
    (url.starts_with("http://") || url.starts_with("https://")).then_some(url)
}

static THINKING_BLOCK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?s)<think>.*?</think>|<thinking>.*?</thinking>|<reasoning>.*?</reasoning>|<REASONING_SCRATCHPAD>.*?</REASONING_SCRATCHPAD>",
    )
    .ok()
});

/// Assistant text without inline reasoning blocks: reasoning is scaffolding, and copying it
/// into a summary spends the budget on thoughts instead of facts. A leading close tag with no
/// opening tag (templates that put `<think>` in the prompt) drops what precedes it too.
fn strip_thinking(text: &str) -> String {
    let stripped = match THINKING_BLOCK.as_ref() {
        Some(re) => re.replace_all(text, ""),
        None => text.into(),
    };
    let visible = match stripped.find("</think>") {
        Some(i) if !text.contains("<think>") => &stripped[i + "</think>".len()..],
        _ => &stripped[..],
    };
    visible.trim().to_string()
}

/// `text` whole, or its first 4,000 and last 1,500 chars around a marker saying how many
/// were dropped, when it is over 6,000 chars.
fn cap_message(text: &str) -> String {
    let total = text.chars().count();
    if total <= MESSAGE_MAX_CHARS {
        return text.to_string();
    }
    let omitted = total - MESSAGE_HEAD_CHARS - MESSAGE_TAIL_CHARS;
    format!(
        "{}\n...[{} characters truncated]...\n{}",
        &text[..byte_at_char(text, MESSAGE_HEAD_CHARS)],
        group_digits(omitted),
        &text[byte_at_char(text, total - MESSAGE_TAIL_CHARS)..],
    )
}

/// The `[Tool calls: …]` list appended to an assistant turn, or "" when it made none.
fn tool_call_list(m: &Message) -> String {
    if m.calls().is_empty() {
        return String::new();
    }
    let lines: Vec<String> = m
        .calls()
        .iter()
        .map(|c| {
            let args = redact(&c.function.arguments);
            format!("  {}({})", c.function.name, cap_arguments(&args))
        })
        .collect();
    format!("\n[Tool calls:\n{}\n]", lines.join("\n"))
}

fn cap_arguments(args: &str) -> String {
    if args.chars().count() <= ARGS_MAX_CHARS {
        return args.to_string();
    }
    format!("{}...", &args[..byte_at_char(args, ARGS_KEPT_CHARS)])
}

/// Byte offset of char number `n` (or the end), so every cut lands on a char boundary.
fn byte_at_char(text: &str, n: usize) -> usize {
    crate::truncate::char_start(text, n).unwrap_or(text.len())
}

/// `s` whole when it has at most `max_chars` chars; otherwise its first 45% and last 55%
/// around a marker stating exactly how many chars were left out. The result never exceeds
/// `max_chars` (when `max_chars` cannot even hold the marker, it is just the first
/// `max_chars` chars).
pub fn bound_input(s: &str, max_chars: usize) -> String {
    let total = s.chars().count();
    if total <= max_chars {
        return s.to_string();
    }
    // Size the marker for the largest count it could show, then state the exact count: the
    // exact marker is never longer, so the result stays within the limit.
    let reserve = omission_marker(total).chars().count();
    let Some(room) = max_chars.checked_sub(reserve) else {
        return s[..byte_at_char(s, max_chars)].to_string();
    };
    let head = room * HEAD_SHARE_PERCENT / 100;
    let tail = room - head;
    let omitted = total - head - tail;
    format!(
        "{}{}{}",
        &s[..byte_at_char(s, head)],
        omission_marker(omitted),
        &s[byte_at_char(s, total - tail)..],
    )
}

fn omission_marker(omitted: usize) -> String {
    format!(
        "\n\n...[summary input truncated: {} characters omitted from the middle to keep this prompt within bounds]...\n\n",
        group_digits(omitted)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    /// A short coding session: a request, a read, a fix, a follow-up with a screenshot.
    fn transcript() -> Vec<Message> {
        let mut follow_up = Message::user("");
        follow_up.content = Some(Content::Parts(vec![
            ContentPart::text("Thanks. Now also handle ISO week dates like 2024-W05-3."),
            ContentPart::image_url("https://example.com/screenshot.png"),
        ]));
        vec![
            Message::user("The test parse_date_handles_leap_years fails. Please fix it."),
            Message::assistant_tool_calls(vec![ToolCall::function(
                "call_1",
                "read_file",
                r#"{"path": "src/date.rs", "start_line": 40, "end_line": 60}"#,
            )]),
            Message::tool(
                "call_1",
                "45 | if year % 4 == 0 && year % 100 == 0 {\n46 |     return true;",
            ),
            Message::assistant(
                "<think>The century rule is inverted.</think>Line 45 treats every century year as a leap year; it should require `year % 400 == 0` for those.",
            ),
            follow_up,
        ]
    }

    fn input<'a>(turns: &'a str) -> PromptInput<'a> {
        PromptInput {
            serialized_turns: turns,
            previous_summary: None,
            focus_topic: None,
            budget_tokens: 2_000,
            ledger_block: "## Task Ledger\n- [done] fix parse_date_handles_leap_years\n- [open] ISO week dates",
            has_user_turns: true,
        }
    }

    #[test]
    fn turns_are_serialized_by_role() {
        let text = serialize_turns(&transcript());
        assert!(text.starts_with("[USER]: The test parse_date_handles_leap_years fails."));
        assert!(text.contains(
            "[ASSISTANT]:\n[Tool calls:\n  read_file({\"path\": \"src/date.rs\", \"start_line\": 40, \"end_line\": 60})\n]"
        ));
        assert!(text.contains("\n\n[TOOL RESULT call_1]: 45 | if year"));
        assert!(text.contains("[ASSISTANT]: Line 45 treats"));
        assert!(
            !text.contains("century rule is inverted"),
            "thinking stripped"
        );
        assert!(text.ends_with("2024-W05-3.\n[image: https://example.com/screenshot.png]"));
        let system = serialize_turns(&[Message::system("be brief")]);
        assert_eq!(system, "[SYSTEM]: be brief");
    }

    #[test]
    fn non_text_parts_become_short_notes() {
        let mut m = Message::user("");
        let audio = serde_json::json!({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}});
        m.content = Some(Content::Parts(vec![
            ContentPart::image_url("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"),
            ContentPart::from_object(audio.as_object().unwrap().clone()),
        ]));
        assert_eq!(serialize_turns(&[m]), "[USER]: [image]\n[input_audio]");
    }

    #[test]
    fn thinking_is_stripped_in_every_form() {
        assert_eq!(
            strip_thinking("<thinking>a\nb</thinking> answer "),
            "answer"
        );
        assert_eq!(strip_thinking("hidden plan</think>\nanswer"), "answer");
        assert_eq!(strip_thinking("x <reasoning>r</reasoning>y"), "x y");
        assert_eq!(strip_thinking("no tags"), "no tags");
    }

    #[test]
    fn long_messages_keep_head_and_tail() {
        let body: String = "é".repeat(4_000) + &"m".repeat(2_500) + &"ü".repeat(1_500);
        let text = serialize_turns(&[Message::tool("t9", body)]);
        let expected = format!(
            "[TOOL RESULT t9]: {}\n...[2,500 characters truncated]...\n{}",
            "é".repeat(4_000),
            "ü".repeat(1_500)
        );
        assert_eq!(text, expected);
        let exactly_at_limit = "a".repeat(MESSAGE_MAX_CHARS);
        assert_eq!(cap_message(&exactly_at_limit), exactly_at_limit);
    }

    #[test]
    fn long_arguments_are_cut() {
        let args = format!("{{\"content\": \"{}\"}}", "ß".repeat(2_000));
        let call = Message::assistant_tool_calls(vec![ToolCall::function(
            "c",
            "write_file",
            args.clone(),
        )]);
        let text = serialize_turns(&[call]);
        let kept: String = args.chars().take(ARGS_KEPT_CHARS).collect();
        assert!(text.contains(&format!("  write_file({kept}...)\n]")));
    }

    #[test]
    fn secrets_are_redacted_before_serializing() {
        let call = Message::assistant_tool_calls(vec![ToolCall::function(
            "c",
            "terminal",
            r#"{"command": "export OPENAI_API_KEY=sk-4fGh7Jk2LmN9pQ3rS6tUv8wXy1zA5bC0dE2fG4hJ"}"#,
        )]);
        let tool = Message::tool("c", "postgres://app:S3cr3tP4ss@db:5432/app");
        let text = serialize_turns(&[call, tool]);
        assert!(
            !text.contains("sk-4fGh7") && !text.contains("S3cr3tP4ss"),
            "{text}"
        );
        assert!(text.contains("postgres://app:[REDACTED]@db"));
    }

    #[test]
    fn bound_input_keeps_short_text_whole() {
        assert_eq!(bound_input("short", 10), "short");
        assert_eq!(bound_input("", 0), "");
    }

    #[test]
    fn bound_input_cuts_the_middle_and_counts_exactly() {
        let s: String = (0..50_000)
            .map(|i| if i % 7 == 0 { 'ж' } else { 'a' })
            .collect();
        let out = bound_input(&s, 10_000);
        assert!(out.chars().count() <= 10_000);
        let (head, rest) = out.split_once("\n\n...[summary input truncated: ").unwrap();
        let (count, tail) = rest.split_once(" characters omitted").unwrap();
        let tail = tail.split_once("]...\n\n").unwrap().1;
        let omitted: usize = count.replace(',', "").parse().unwrap();
        let (h, t) = (head.chars().count(), tail.chars().count());
        assert_eq!(h + omitted + t, 50_000);
        assert!(s.starts_with(head) && s.ends_with(tail));
        assert_eq!(h, (h + t) * 45 / 100);
        assert_eq!(
            bound_input(&s, 5),
            "жaaaa",
            "too small for a marker: head only"
        );
    }

    proptest::proptest! {
        #[test]
        fn bound_input_never_exceeds_its_limit(s in "[a-zé\\n]{0,400}", max in 0usize..300) {
            let out = bound_input(&s, max);
            proptest::prop_assert!(out.chars().count() <= max.max(s.chars().count().min(max)));
            if s.chars().count() <= max {
                proptest::prop_assert_eq!(out, s);
            }
        }
    }

    #[test]
    fn prompt_has_every_section_in_order() {
        let turns = serialize_turns(&transcript());
        let prompt = build_prompt(&input(&turns));
        let mut from = 0;
        for heading in sections::WRITTEN {
            let at = prompt[from..]
                .find(&format!("\n{heading}\n"))
                .unwrap_or_else(|| panic!("{heading} missing or out of order"));
            from += at + heading.len();
        }
        let leftover = Regex::new(r"\{[a-z_]+\}").unwrap();
        assert!(!leftover.is_match(&prompt), "unfilled placeholder");
        assert!(prompt.contains("Aim for about 2,000 tokens."));
        assert!(
            prompt.contains(input(&turns).ledger_block),
            "ledger verbatim"
        );
        assert!(!prompt.contains("FOCUS TOPIC") && !prompt.contains("PREVIOUS SUMMARY"));
        assert!(prompt.contains("same language") || prompt.contains("language the user"));
    }

    #[test]
    fn placeholders_inside_turns_are_not_expanded() {
        let prompt = build_prompt(&PromptInput {
            focus_topic: Some("dates"),
            ..input("[USER]: print {focus_topic} and {turns} literally")
        });
        assert!(prompt.contains("[USER]: print {focus_topic} and {turns} literally"));
    }

    #[test]
    fn empty_ledger_and_blank_focus_are_left_out() {
        let prompt = build_prompt(&PromptInput {
            ledger_block: "  \n",
            focus_topic: Some("  "),
            ..input("[USER]: hi")
        });
        assert!(!prompt.contains("TASK LEDGER") && !prompt.contains("FOCUS TOPIC"));
    }

    #[test]
    fn sessions_without_a_user_get_no_invented_user() {
        let prompt = build_prompt(&PromptInput {
            has_user_turns: false,
            ..input("[SYSTEM]: nightly job\n\n[ASSISTANT]: ran backups")
        });
        assert!(prompt.contains("Do not invent a user"));
        assert!(prompt.contains("Under \"## Active Task\" write exactly: None. This session contains no user-authored turns."));
        assert!(!prompt.contains("language the user has been writing in"));
    }

    #[test]
    fn previous_summary_is_bounded_too() {
        let previous = "p".repeat(MAX_SUMMARY_INPUT_CHARS + 1_000);
        let prompt = build_prompt(&PromptInput {
            previous_summary: Some(&previous),
            ..input("[USER]: hi")
        });
        assert!(prompt.contains("summary input truncated"));
        assert!(prompt.len() < MAX_SUMMARY_INPUT_CHARS + 20_000);
    }

    #[test]
    fn snapshot_first_compaction() {
        let turns = serialize_turns(&transcript());
        insta::assert_snapshot!("first_compaction", build_prompt(&input(&turns)));
    }

    #[test]
    fn snapshot_iterative_update() {
        let turns = serialize_turns(&transcript()[3..]);
        let previous = "## Active Task\nUser asked: 'The test parse_date_handles_leap_years fails. Please fix it.'\n\n## Completed Actions\n1. READ src/date.rs:40-60 — century rule inverted on line 45 [tool: read_file]";
        let prompt = build_prompt(&PromptInput {
            previous_summary: Some(previous),
            ..input(&turns)
        });
        insta::assert_snapshot!("iterative_update", prompt);
    }

    #[test]
    fn snapshot_focus_topic() {
        let turns = serialize_turns(&transcript());
        let prompt = build_prompt(&PromptInput {
            focus_topic: Some("leap-year handling in src/date.rs"),
            ..input(&turns)
        });
        insta::assert_snapshot!("focus_topic", prompt);
    }
}
