//! Putting a compacted conversation together: `head + summary + tail`.
//!
//! The summary must sit where the provider accepts it. Strict chat templates (Anthropic,
//! Mistral, vLLM) reject two consecutive messages with the same role, a conversation whose
//! first message is not a user message, and a conversation with no user message at all. So the
//! summary's role is chosen from its neighbours, and when no role fits it is merged into the
//! first tail message instead of standing alone.

use crate::compress::boundary::is_blank_content;
use crate::compress::markers::{
    COMPRESSION_NOTE, END_MARKER, PRIOR_CONTEXT_CLOSE, PRIOR_CONTEXT_OPEN, after_end_marker,
    after_prefix, is_summary_message, mark_summary, unmark_summary, with_summary_prefix,
};
use crate::message::{Content, ContentPart, Message, Role};
use std::borrow::Cow;

/// Where the summary goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPlacement {
    /// Its own message, with this role.
    Standalone(Role),
    /// Inside the first tail message (both roles would repeat a neighbour's).
    MergeIntoTail,
}

/// Picks the summary's placement from the role of the last head message and the first tail
/// message.
///
/// The summary is a user message after an assistant or tool message, or whenever a user
/// message is required (`force_user`, an empty head, or a system prompt right before it:
/// Anthropic wants a user message first, and vLLM rejects requests without one), and an
/// assistant message after a user message. When that repeats the first tail message's role it
/// flips, unless flipping would repeat the head's role or break the user requirement; then it
/// merges into the tail.
pub fn choose_summary_role(
    head_last: Option<Role>,
    tail_first: Option<Role>,
    force_user: bool,
) -> SummaryPlacement {
    let force = needs_user_summary(head_last, force_user);
    let last = head_last.unwrap_or(Role::User);
    let role = if force || matches!(last, Role::Assistant | Role::Tool) {
        Role::User
    } else {
        Role::Assistant
    };
    if tail_first != Some(role) {
        return SummaryPlacement::Standalone(role);
    }
    let flipped = if role == Role::User {
        Role::Assistant
    } else {
        Role::User
    };
    if flipped != last && !force {
        SummaryPlacement::Standalone(flipped)
    } else {
        SummaryPlacement::MergeIntoTail
    }
}

/// Whether the summary must be (or open) a user message. A user message right before it
/// already satisfies every reason to force one, so that case never forces.
fn needs_user_summary(head_last: Option<Role>, force_user: bool) -> bool {
    match head_last {
        None => true,
        Some(Role::User) => false,
        Some(role) => force_user || role.is_instruction(),
    }
}

/// A copy of the system prompt with [`COMPRESSION_NOTE`] appended, unless it already has it.
///
/// Follows the reference design's later rule: checked by content on every assembly rather
/// than added only on the first compaction, so a resumed or reloaded session never gets the
/// note twice and never loses it.
pub fn add_compression_note(system: &Message) -> Message {
    let mut m = system.clone();
    if m.text().contains(COMPRESSION_NOTE) {
        return m;
    }
    m.content = Some(match m.content.take() {
        Some(Content::Parts(mut parts)) => {
            parts.push(ContentPart::text(COMPRESSION_NOTE));
            Content::Parts(parts)
        }
        Some(Content::Text(s)) if !s.trim().is_empty() => {
            Content::Text(format!("{s}\n\n{COMPRESSION_NOTE}"))
        }
        _ => Content::Text(COMPRESSION_NOTE.to_string()),
    });
    m
}

/// The compacted conversation: `head` (with the compression note on a leading system prompt),
/// the summary of `summary_body` placed by [`choose_summary_role`], then `tail`. Earlier
/// summaries in head or tail are removed (their content is in the new summary), and a message
/// that only carried a merged summary gets its own content back. Inputs are not modified.
pub fn assemble(head: &[Message], summary_body: &str, tail: &[Message]) -> Vec<Message> {
    assemble_owned(head.to_vec(), summary_body, tail.to_vec())
}

/// [`assemble`] for a caller that owns the head and tail it hands over: they are moved into
/// the result, not copied (a pass copies what it keeps once, issue #17).
pub fn assemble_owned(head: Vec<Message>, summary_body: &str, tail: Vec<Message>) -> Vec<Message> {
    let owned = |messages: Vec<Message>| messages.into_iter().map(Cow::Owned).collect();
    assemble_kept(owned(head), summary_body, owned(tail), true)
        .into_iter()
        .map(Cow::into_owned)
        .collect()
}

/// [`assemble`] over messages a pass keeps, each borrowed from its input until something
/// changes it (a note added, a summary merged in or taken out, two neighbours joined): the
/// output is copied from the input only once it is certain to be the output, or moved from an
/// input the caller owns (`Compressor`).
///
/// `may_hold_summaries`: false when the caller knows neither `head` nor `tail` holds an
/// earlier summary (a pass reads every message once for them), so none is looked for: asking
/// each kept message was 1% of a real session's pass.
pub(crate) fn assemble_kept<'a>(
    head: Vec<Cow<'a, Message>>,
    summary_body: &str,
    tail: Vec<Cow<'a, Message>>,
    may_hold_summaries: bool,
) -> Vec<Cow<'a, Message>> {
    debug_assert!(
        may_hold_summaries || !head.iter().chain(&tail).any(|m| is_summary_message(m)),
        "a kept summary the caller did not know of"
    );
    let (mut out, tail) = if may_hold_summaries {
        (without_old_summaries(head), without_old_summaries(tail))
    } else {
        (head, tail)
    };
    if let Some(first) = out.first_mut().filter(|m| m.role.is_instruction()) {
        *first = Cow::Owned(add_compression_note(first));
    }
    let no_user = !out.iter().chain(&tail).any(|m| m.role == Role::User);
    let head_last = out.last().map(|m| m.role);
    let prepend = needs_user_summary(head_last, no_user);
    let placement = choose_summary_role(head_last, tail.first().map(|m| m.role), no_user);
    let summary = summary_text(summary_body);
    let mut tail = tail.into_iter();
    out.reserve(tail.len() + 1);
    match placement {
        SummaryPlacement::Standalone(role) => out.push(Cow::Owned(summary_message(role, summary))),
        SummaryPlacement::MergeIntoTail => match tail.next() {
            Some(first) => out.push(Cow::Owned(merge_summary(
                first.into_owned(),
                &summary,
                prepend,
            ))),
            None => out.push(Cow::Owned(summary_message(Role::User, summary))),
        },
    }
    out.extend(tail);
    out
}

/// Prefix, body and end marker: the full text of a summary.
fn summary_text(body: &str) -> String {
    format!("{}\n\n{END_MARKER}", with_summary_prefix(body))
}

fn summary_message(role: Role, text: String) -> Message {
    let mut m = match role {
        Role::Assistant => Message::assistant(text),
        _ => Message::user(text),
    };
    mark_summary(&mut m);
    m
}

/// Puts the summary inside `message`. A forced user summary goes first, so the message still
/// opens with the framing; otherwise the message's own content comes first, fenced as prior
/// context, and the summary follows it.
fn merge_summary(mut message: Message, summary: &str, prepend: bool) -> Message {
    let old = message.content.take();
    message.content = Some(match (old, prepend) {
        (Some(Content::Parts(mut parts)), true) => {
            parts.insert(0, ContentPart::text(summary));
            Content::Parts(parts)
        }
        (Some(Content::Parts(parts)), false) => {
            let mut out = Vec::with_capacity(parts.len() + 2);
            out.push(ContentPart::text(PRIOR_CONTEXT_OPEN));
            out.extend(parts);
            out.push(ContentPart::text(format!(
                "{PRIOR_CONTEXT_CLOSE}\n\n{summary}"
            )));
            Content::Parts(out)
        }
        (old, true) => {
            let old = old.map(|c| c.text()).unwrap_or_default();
            Content::Text(join_text(summary, &old))
        }
        (old, false) => {
            let old = old.map(|c| c.text()).unwrap_or_default();
            Content::Text(format!(
                "{PRIOR_CONTEXT_OPEN}\n{old}\n\n{PRIOR_CONTEXT_CLOSE}\n\n{summary}"
            ))
        }
    });
    mark_summary(&mut message);
    message
}

fn join_text(first: &str, second: &str) -> String {
    if second.trim().is_empty() {
        first.to_string()
    } else {
        format!("{first}\n\n{second}")
    }
}

/// `messages` without summaries: a standalone summary is dropped, a carrier of a merged
/// summary is restored to its own content. When a drop leaves two user (or two assistant)
/// messages side by side, they are joined so the sequence stays alternating.
fn without_old_summaries(messages: Vec<Cow<'_, Message>>) -> Vec<Cow<'_, Message>> {
    let mut out: Vec<Cow<'_, Message>> = Vec::with_capacity(messages.len());
    let mut dropped = false;
    for m in messages {
        let kept = if is_summary_message(&m) {
            unwrap_summary(&m).map(Cow::Owned)
        } else {
            Some(m)
        };
        match kept {
            Some(m) => {
                push_joining(&mut out, m, dropped);
                dropped = false;
            }
            None => dropped = true,
        }
    }
    out
}

fn push_joining<'a>(out: &mut Vec<Cow<'a, Message>>, message: Cow<'a, Message>, after_drop: bool) {
    match out.last_mut() {
        Some(last) if after_drop && can_join(last, &message) => {
            join_into(last.to_mut(), message.into_owned());
        }
        _ => out.push(message),
    }
}

/// Two neighbours can become one message when they share a conversational role and the first
/// has no tool calls (its results would otherwise end up after the second's content).
fn can_join(first: &Message, second: &Message) -> bool {
    first.role == second.role
        && matches!(first.role, Role::User | Role::Assistant)
        && !first.has_tool_calls()
}

fn join_into(first: &mut Message, second: Message) {
    first.content = join_content(first.content.take(), second.content);
    if second.tool_calls.is_some() {
        first.tool_calls = second.tool_calls;
    }
    for (k, v) in second.reasoning {
        first.reasoning.entry(k).or_insert(v);
    }
    for (k, v) in second.extra {
        first.extra.entry(k).or_insert(v);
    }
}

fn join_content(a: Option<Content>, b: Option<Content>) -> Option<Content> {
    if is_blank_content(a.as_ref()) {
        return b.or(a);
    }
    if is_blank_content(b.as_ref()) {
        return a;
    }
    match (a, b) {
        (Some(Content::Text(x)), Some(Content::Text(y))) => {
            Some(Content::Text(format!("{x}\n\n{y}")))
        }
        (a, b) => Some(Content::Parts(into_parts(a).chain(into_parts(b)).collect())),
    }
}

fn into_parts(content: Option<Content>) -> impl Iterator<Item = ContentPart> {
    let parts = match content {
        Some(Content::Parts(parts)) => parts,
        Some(Content::Text(s)) => vec![ContentPart::text(s)],
        _ => Vec::new(),
    };
    parts.into_iter()
}

/// The message a summary carrier was before the summary went into it, or `None` when it was
/// nothing but the summary. Callers that feed earlier summaries to a summarizer use this to
/// keep the genuine content a merged carrier holds.
pub fn unwrap_summary(message: &Message) -> Option<Message> {
    let mut m = message.clone();
    unmark_summary(&mut m);
    let (content, changed) = genuine_content(m.content.take());
    if !changed {
        return None; // marked by metadata, and all of it is summary
    }
    let blank = is_blank_content(content.as_ref());
    if blank && !m.has_tool_calls() {
        return None;
    }
    m.content = if blank { Some(Content::Null) } else { content };
    Some(m)
}

/// Content with the summary parts removed, and whether anything was removed.
fn genuine_content(content: Option<Content>) -> (Option<Content>, bool) {
    match content {
        Some(Content::Text(s)) => match genuine_text(&s) {
            Some(g) => (Some(Content::Text(g)), true),
            None => (Some(Content::Text(s)), false),
        },
        Some(Content::Parts(parts)) => {
            let mut changed = false;
            let mut kept = Vec::with_capacity(parts.len());
            for mut part in parts {
                match part.text_value().and_then(genuine_text) {
                    Some(g) if g.is_empty() => changed = true,
                    Some(g) => {
                        changed = true;
                        part.fields_mut()
                            .insert("text".into(), serde_json::Value::String(g));
                        kept.push(part);
                    }
                    None => kept.push(part),
                }
            }
            (Some(Content::Parts(kept)), changed)
        }
        other => (other, false),
    }
}

/// The non-summary text in `text`, or `None` when it holds no summary framing at all.
fn genuine_text(text: &str) -> Option<String> {
    let t = text.trim();
    if let Some(i) = t.find(PRIOR_CONTEXT_CLOSE) {
        let before = t[..i].trim();
        return Some(without_open(before).to_string());
    }
    if t.starts_with(PRIOR_CONTEXT_OPEN) {
        return Some(without_open(t).to_string());
    }
    after_prefix(t).map(|_| after_end_marker(t).unwrap_or("").trim().to_string())
}

fn without_open(text: &str) -> &str {
    text.strip_prefix(PRIOR_CONTEXT_OPEN).unwrap_or(text).trim()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::compress::boundary::{align_forward, leading_instructions};
    use crate::compress::markers::{SummaryKind, classify_summary_content, strip_summary_prefix};
    use crate::compress::sanitize::{strategies, validate_sequence};
    use crate::message::ToolCall;
    use SummaryPlacement::{MergeIntoTail, Standalone};
    use proptest::prelude::*;

    const A: Role = Role::Assistant;
    const U: Role = Role::User;

    fn old_summary(role: Role) -> Message {
        summary_message(role, summary_text("old body"))
    }

    /// No two consecutive non-tool messages with the same role after the instruction head.
    fn alternates(messages: &[Message]) -> bool {
        let head = leading_instructions(messages);
        messages
            .windows(2)
            .enumerate()
            .all(|(i, w)| i + 1 < head || w[0].role != w[1].role || w[0].role == Role::Tool)
    }

    #[test]
    fn summary_role_follows_the_head_and_avoids_the_tail() {
        assert_eq!(choose_summary_role(Some(A), Some(A), false), Standalone(U));
        assert_eq!(
            choose_summary_role(Some(Role::Tool), Some(A), false),
            Standalone(U)
        );
        assert_eq!(choose_summary_role(Some(U), Some(U), false), Standalone(A));
        assert_eq!(
            choose_summary_role(Some(Role::Tool), Some(U), false),
            Standalone(A)
        );
        assert_eq!(choose_summary_role(Some(A), Some(U), false), MergeIntoTail);
        assert_eq!(choose_summary_role(Some(U), Some(A), false), MergeIntoTail);
    }

    #[test]
    fn a_user_summary_is_forced_at_the_start_after_a_system_prompt_or_without_users() {
        assert_eq!(choose_summary_role(None, Some(A), false), Standalone(U));
        assert_eq!(choose_summary_role(None, Some(U), false), MergeIntoTail);
        assert_eq!(
            choose_summary_role(Some(Role::System), Some(A), false),
            Standalone(U)
        );
        assert_eq!(
            choose_summary_role(Some(Role::Tool), Some(U), true),
            MergeIntoTail
        );
        assert_eq!(choose_summary_role(Some(U), None, true), Standalone(A));
    }

    #[test]
    fn compression_note_is_added_once() {
        let s = add_compression_note(&Message::system("rules"));
        assert_eq!(s.text(), format!("rules\n\n{COMPRESSION_NOTE}"));
        assert_eq!(add_compression_note(&s), s);
        let mut parts = Message::system("");
        parts.content = Some(Content::Parts(vec![ContentPart::text("rules")]));
        let p = add_compression_note(&parts);
        assert!(matches!(&p.content, Some(Content::Parts(v)) if v.len() == 2));
    }

    #[test]
    fn standalone_summary_is_marked_and_framed() {
        let head = [Message::system("rules"), Message::user("task")];
        let tail = [Message::user("next")];
        let out = assemble(&head, "what happened", &tail);
        assert_eq!(out.len(), 4);
        assert_eq!(out[2].role, A);
        assert!(is_summary_message(&out[2]));
        assert!(out[2].text().ends_with(END_MARKER));
        assert_eq!(strip_summary_prefix(&out[2].text()), "what happened");
        assert!(out[0].text().ends_with(COMPRESSION_NOTE));
        assert_eq!(head[0].text(), "rules", "inputs are untouched");
    }

    #[test]
    fn a_forced_user_summary_is_prepended_to_a_user_tail_message() {
        let head = [Message::system("rules")];
        let tail = [Message::user("next"), Message::assistant("ok")];
        let out = assemble(&head, "body", &tail);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].role, U);
        assert!(out[1].text().starts_with("[CONTEXT COMPACTION"));
        assert!(out[1].text().ends_with("next"));
        assert_eq!(
            classify_summary_content(&out[1].text()),
            Some(SummaryKind::Standalone)
        );
    }

    #[test]
    fn a_merged_summary_fences_the_original_content_and_unwraps_again() {
        let head = [Message::user("task"), Message::assistant("done")];
        let mut image = Message::user("");
        image.content = Some(Content::Parts(vec![
            ContentPart::text("look"),
            ContentPart::image_url("https://x/y.png"),
        ]));
        let out = assemble(&head, "body", std::slice::from_ref(&image));
        assert_eq!(out.len(), 3);
        let merged = &out[2];
        assert_eq!(
            classify_summary_content(&merged.text()),
            Some(SummaryKind::Merged)
        );
        assert_eq!(strip_summary_prefix(&merged.text()), "body");
        // The next compaction gets the user's message back, image included.
        assert_eq!(unwrap_summary(merged).unwrap().content, image.content);
        let again = assemble(&out[..2], "body 2", &out[2..]);
        assert_eq!(again.iter().filter(|m| is_summary_message(m)).count(), 1);
        assert_eq!(strip_summary_prefix(&again[2].text()), "body 2");
        let text_tail = [Message::user("plain words")];
        let out = assemble(&head, "b", &text_tail);
        let restored = assemble(&[], "c", &out[2..]);
        assert!(restored[0].text().ends_with("plain words"));
        assert_eq!(restored.len(), 1);
    }

    #[test]
    fn old_summaries_are_dropped_and_their_neighbours_joined() {
        let head = [Message::system("rules")];
        let tail = [
            Message::user("a"),
            old_summary(A),
            Message::user("b"),
            Message::assistant("c"),
        ];
        let out = assemble(&head, "new", &tail);
        let summaries = out.iter().filter(|m| is_summary_message(m)).count();
        assert_eq!(summaries, 1);
        assert!(alternates(&out), "{out:#?}");
        assert!(out.iter().any(|m| m.text().contains("a\n\nb")));
    }

    #[test]
    fn a_carrier_with_tool_calls_keeps_its_calls_when_unwrapped() {
        let carrier = merge_summary(
            Message::assistant_tool_calls(vec![ToolCall::function("x", "f", "{}")]),
            &summary_text("old"),
            false,
        );
        let restored = unwrap_summary(&carrier).unwrap();
        assert_eq!(restored.content, Some(Content::Null));
        assert_eq!(restored.calls().len(), 1);
        assert!(!is_summary_message(&restored));
    }

    /// Inserts an old standalone summary at `at` when a role fits between its neighbours.
    fn with_old_summary(mut v: Vec<Message>, at: usize) -> Vec<Message> {
        let at = at.min(v.len()).max(leading_instructions(&v));
        let prev = at.checked_sub(1).map(|i| &v[i]);
        let next = v.get(at);
        if prev.is_some_and(Message::has_tool_calls) || next.is_some_and(|m| m.role == Role::Tool) {
            return v;
        }
        let role = [U, A]
            .into_iter()
            .find(|r| prev.map(|m| m.role) != Some(*r) && next.map(|m| m.role) != Some(*r));
        if let Some(role) = role {
            v.insert(at, old_summary(role));
        }
        v
    }

    proptest! {
        #[test]
        fn assembly_never_repeats_a_role_and_installs_one_summary(
            v in strategies::conversation(),
            insert_at in 0usize..60,
            a in 0usize..60,
            b in 0usize..60,
        ) {
            let v = with_old_summary(v, insert_at);
            let head_n = leading_instructions(&v);
            let (a, b) = (a.min(v.len()).max(head_n), b.min(v.len()).max(head_n));
            let (a, b) = (a.min(b), a.max(b));
            let out = assemble(&v[..a], "new body", &v[b..]);
            prop_assert!(alternates(&out), "{:#?}", out);
            let summaries: Vec<&Message> = out.iter().filter(|m| is_summary_message(m)).collect();
            prop_assert_eq!(summaries.len(), 1);
            prop_assert_eq!(strip_summary_prefix(&summaries[0].text()), "new body");
            if head_n > 0 {
                prop_assert_eq!(out[0].text().matches(COMPRESSION_NOTE).count(), 1);
            }
        }

        #[test]
        fn assembly_at_aligned_boundaries_is_a_valid_sequence(
            v in strategies::conversation(),
            a in 0usize..60,
            b in 0usize..60,
        ) {
            let head_n = leading_instructions(&v);
            let a = align_forward(&v, a.max(head_n));
            let b = align_forward(&v, b.max(a));
            let out = assemble(&v[..a], "new body", &v[b..]);
            prop_assert_eq!(validate_sequence(&out), Ok(()), "{:#?}", out);
        }
    }
}
