//! Where compaction may cut: the protected head, the protected tail, and the anchors that must
//! stay verbatim.
//!
//! A conversation is split into `head | span | tail`; the span is summarized. Two rules shape
//! every boundary. A tool call and its results are one unit (a provider rejects a result
//! without its call, and a call without its result), so boundaries move to group edges. And
//! the newest real user request, plus the newest reply the user saw, stay in the tail: a
//! summary of "what the user asked" is a poor substitute for the words themselves.

use crate::compress::markers::is_summary_message;
use crate::message::{Content, Message, Role};
use crate::synthetic;
use crate::tokens::TokenCounter;

/// Cap on `protect_last_n` when it is used as a hard message floor. Without it a large
/// `protect_last_n` pins long tails of huge tool results and compaction frees nothing.
pub const MAX_TAIL_MESSAGE_FLOOR: usize = 8;
/// Fewest messages the tail keeps whenever the span allows it.
pub const MIN_TAIL_MESSAGES: usize = 3;
/// Messages past the protected head searched for an earlier summary. A session resumed from a
/// compacted one starts with its summary, and head protection must decay there too.
const HANDOFF_PROBE_EXTRA: usize = 4;

/// Number of leading messages kept verbatim: the system prompt (every leading system or
/// developer message) always, plus `protect_first_n` more until the conversation has been
/// compacted once.
///
/// The decay is deliberate: protecting the first turns on every pass would copy them into
/// every child session forever, so old requests would never be summarized and the head would
/// grow without bound. The first compaction already carried them into the summary. (This is
/// the reference design's later rule; its earlier head never decayed.)
pub fn head_size(messages: &[Message], protect_first_n: usize, already_compacted: bool) -> usize {
    let instructions = leading_instructions(messages);
    let protect = if already_compacted || handoff_near_head(messages, instructions, protect_first_n)
    {
        0
    } else {
        protect_first_n
    };
    (instructions + protect).min(messages.len())
}

/// Length of the leading run of system/developer messages.
pub(crate) fn leading_instructions(messages: &[Message]) -> usize {
    messages
        .iter()
        .take_while(|m| m.role.is_instruction())
        .count()
}

/// Whether a summary sits just after the system prompt (a restarted, already compacted session).
fn handoff_near_head(messages: &[Message], first: usize, protect_first_n: usize) -> bool {
    let end = first
        .saturating_add(protect_first_n)
        .saturating_add(HANDOFF_PROBE_EXTRA)
        .min(messages.len());
    messages[first.min(end)..end].iter().any(is_summary_message)
}

/// Moves a head boundary forward past tool results, so the head never ends between a call and
/// its results.
pub fn align_forward(messages: &[Message], i: usize) -> usize {
    let mut i = i.min(messages.len());
    while i < messages.len() && messages[i].role == Role::Tool {
        i += 1;
    }
    i
}

/// Moves a tail boundary back to the assistant message whose tool results precede it, so the
/// whole call group lands in the tail.
///
/// This also fires when `i` sits just after a complete group: the message after a tool run
/// (usually the assistant's reading of the results) depends on those results, so they travel
/// together.
pub fn align_backward(messages: &[Message], i: usize) -> usize {
    if i == 0 || i >= messages.len() {
        return i;
    }
    let mut j = i - 1;
    while messages[j].role == Role::Tool {
        if j == 0 {
            return i;
        }
        j -= 1;
    }
    if is_tool_caller(&messages[j]) { j } else { i }
}

fn is_tool_caller(message: &Message) -> bool {
    message.role == Role::Assistant && message.has_tool_calls()
}

/// Newest user message at or after `from` that asks for something: see [`is_actionable_user`].
pub fn last_actionable_user(messages: &[Message], from: usize) -> Option<usize> {
    (from.min(messages.len())..messages.len())
        .rev()
        .find(|&i| is_actionable_user(&messages[i]))
}

/// Which row counts as a user request (the "latest user request" the tail keeps and the
/// ledger's active task): a user message that is not blank, not a compaction summary (ours or
/// an agent CLI's), and not a row the agent injected in the user's name (slash-command markup,
/// task notifications, reminders, interruption markers: [`synthetic::is_synthetic`]). An
/// image-only message counts; the image is the request.
pub fn is_actionable_user(message: &Message) -> bool {
    message.role == Role::User
        && !is_blank_content(message.content.as_ref())
        && !is_summary_message(message)
        && !synthetic::is_synthetic(message)
}

/// Whether content carries nothing: absent, null, whitespace, or only blank text parts.
/// Non-text parts (images, audio, files) are input, so they make content non-blank.
pub(crate) fn is_blank_content(content: Option<&Content>) -> bool {
    match content {
        None | Some(Content::Null) => true,
        Some(Content::Text(s)) => s.trim().is_empty(),
        Some(Content::Parts(parts)) => parts
            .iter()
            .all(|p| p.type_name() == "text" && p.text_value().is_none_or(|t| t.trim().is_empty())),
    }
}

/// Newest assistant reply at or after `from` the user could read (non-blank text), else the
/// newest assistant message at all; summaries excluded. Keeping it verbatim stops the model
/// from answering the same question twice after a compaction.
pub fn last_visible_assistant(messages: &[Message], from: usize) -> Option<usize> {
    let range = from.min(messages.len())..messages.len();
    let candidates = || {
        range
            .clone()
            .rev()
            .filter(|&i| messages[i].role == Role::Assistant && !is_summary_message(&messages[i]))
    };
    candidates()
        .find(|&i| has_visible_text(&messages[i]))
        .or_else(|| candidates().next())
}

fn has_visible_text(message: &Message) -> bool {
    match &message.content {
        Some(Content::Text(s)) => !s.trim().is_empty(),
        Some(Content::Parts(parts)) => parts
            .iter()
            .any(|p| p.text_value().is_some_and(|t| !t.trim().is_empty())),
        _ => false,
    }
}

/// First index of the protected tail: messages from the result on stay verbatim, messages in
/// `head_end..result` are summarized. The result is in `(head_end, len]` when
/// `head_end < len`.
///
/// This is the reference design's later form, which replaced a flat three-message floor after
/// the simpler walk let whole transcripts fit the tail (nothing to summarize, compaction
/// retried forever) and let the latest request or reply slip into the summary:
/// 1. walk back from the end summing tokens until the soft ceiling (1.5 × budget, so one
///    oversized message does not force a cut mid-turn), keeping at least the tail floor;
/// 2. when everything fit, walk again against the raw budget so a middle remains;
/// 3. clamp to the fallback `len - floor`, then to after the head;
/// 4. align to call groups, then pull in the last actionable user message and the last
///    visible assistant reply.
///
/// Each message is counted once: the walks reuse one vector of counts, so the cost is linear.
pub fn find_tail_cut(
    messages: &[Message],
    head_end: usize,
    budget_tokens: usize,
    protect_last_n: usize,
    counter: &dyn TokenCounter,
) -> usize {
    let n = messages.len();
    if head_end >= n {
        return n;
    }
    let counts: Vec<usize> = messages[head_end..]
        .iter()
        .map(|m| counter.count_message(m))
        .collect();
    let min_tail = tail_floor(n - head_end - 1, protect_last_n);
    let cut = budget_cut(&counts, head_end, budget_tokens, min_tail);
    let fallback = n - min_tail;
    let mut cut = cut.min(fallback);
    if cut <= head_end {
        cut = fallback.max(head_end + 1);
    }
    let cut = align_backward(messages, cut);
    let cut = keep_last_user_in_tail(messages, cut, head_end);
    let cut = keep_last_reply_in_tail(messages, cut, head_end);
    align_forward(messages, cut.max(head_end + 1))
}

/// Messages the tail keeps regardless of tokens: `protect_last_n` capped at
/// [`MAX_TAIL_MESSAGE_FLOOR`], at least [`MIN_TAIL_MESSAGES`], but always leaving two messages
/// to summarize when the span is short, and none when there is at most one message after the
/// head.
fn tail_floor(available: usize, protect_last_n: usize) -> usize {
    if available <= 1 {
        return 0;
    }
    let floor = protect_last_n.clamp(MIN_TAIL_MESSAGES, MAX_TAIL_MESSAGE_FLOOR);
    let cap = available.saturating_sub(2).max(MIN_TAIL_MESSAGES);
    floor.min(cap).min(available)
}

/// The budget walks (steps 1 and 2 of [`find_tail_cut`]) over `counts[k]`, the tokens of
/// message `head_end + k`.
fn budget_cut(counts: &[usize], head_end: usize, budget: usize, min_tail: usize) -> usize {
    let n = head_end + counts.len();
    let soft = budget + budget / 2;
    let mut acc = 0;
    let mut cut = n;
    for i in (head_end..n).rev() {
        let t = counts[i - head_end];
        if acc + t > soft && n - i >= min_tail {
            break;
        }
        acc += t;
        cut = i;
    }
    let everything_fit = cut <= head_end && acc > 0 && acc <= soft;
    if !everything_fit {
        return cut;
    }
    let mut raw = 0;
    for j in (head_end..n).rev() {
        let t = counts[j - head_end];
        if raw + t > budget && n - j >= min_tail {
            return j;
        }
        raw += t;
        cut = j;
    }
    cut
}

/// Pulls the newest actionable user message into the tail. When it sits exactly at the head
/// boundary it cannot join the tail, so the cut moves forward past its reply instead: the
/// request and its answer are summarized together rather than split.
fn keep_last_user_in_tail(messages: &[Message], cut: usize, head_end: usize) -> usize {
    match last_actionable_user(messages, head_end) {
        Some(u) if u < cut && u <= head_end => turn_pair_end(messages, u),
        Some(u) if u < cut => u,
        _ => cut,
    }
}

/// End of the exchange started by the user message at `user`: its assistant reply and that
/// reply's tool results.
fn turn_pair_end(messages: &[Message], user: usize) -> usize {
    let mut j = user + 1;
    if messages.get(j).is_some_and(|m| m.role == Role::Assistant) {
        j += 1;
    }
    align_forward(messages, j)
}

/// Pulls the newest visible assistant reply (with the call group before it) into the tail.
fn keep_last_reply_in_tail(messages: &[Message], cut: usize, head_end: usize) -> usize {
    match last_visible_assistant(messages, head_end + 1) {
        Some(a) if a < cut => align_backward(messages, a).max(head_end + 1),
        _ => cut,
    }
}

/// Whether a compaction would summarize anything: the span between the aligned head and the
/// tail cut is non-empty.
pub fn has_content_to_compress(
    messages: &[Message],
    protect_first_n: usize,
    already_compacted: bool,
    budget_tokens: usize,
    protect_last_n: usize,
    counter: &dyn TokenCounter,
) -> bool {
    let start = align_forward(
        messages,
        head_size(messages, protect_first_n, already_compacted),
    );
    start < find_tail_cut(messages, start, budget_tokens, protect_last_n, counter)
}

/// The boundary finder keeps the latest user message in the tail (the reference's rule). When
/// that message is far back — an agent that worked for hundreds of steps on one request — the
/// anchored tail can exceed its budget many times over and the pass would free almost
/// nothing. Then the tail is cut by budget alone, and the latest user message is carried
/// verbatim to just after the summary instead (returned as its index), so it is still the
/// first thing the model reads after the summary and the pass still converges.
pub fn converging_cut(
    messages: &[Message],
    start: usize,
    anchored: usize,
    tail_budget: u64,
    counter: &dyn TokenCounter,
) -> (usize, Option<usize>) {
    let soft = tail_budget + tail_budget / 2;
    let anchored_tokens: u64 = messages[anchored.min(messages.len())..]
        .iter()
        .map(|m| counter.count_message(m) as u64)
        .sum();
    if anchored_tokens <= soft {
        return (anchored, None);
    }
    let Some(user) = last_actionable_user(messages, start) else {
        return (anchored, None);
    };
    // The carried message is kept verbatim, so it is paid for out of the tail's budget.
    let reserve = counter.count_message(&messages[user]) as u64;
    let by_budget = cut_by_budget(messages, user + 1, soft.saturating_sub(reserve), counter);
    if by_budget <= anchored || by_budget <= user + 1 {
        return (anchored, None);
    }
    (by_budget, Some(user))
}

/// The tail cut from the end back to `soft` tokens (at least 3 messages), aligned so no tool
/// call is separated from its results.
fn cut_by_budget(
    messages: &[Message],
    start: usize,
    soft: u64,
    counter: &dyn TokenCounter,
) -> usize {
    const MIN_TAIL: usize = 3;
    let n = messages.len();
    let mut acc = 0u64;
    let mut cut = n;
    for i in (start..n).rev() {
        let t = counter.count_message(&messages[i]) as u64;
        if acc + t > soft && n - i >= MIN_TAIL {
            break;
        }
        acc += t;
        cut = i;
    }
    let cut = align_backward(messages, cut).max(start + 1);
    align_forward(messages, cut)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::compress::markers::with_summary_prefix;
    use crate::compress::sanitize::strategies;
    use crate::message::{ContentPart, ToolCall};
    use crate::tokens::RoughCounter;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn call(id: &str) -> ToolCall {
        ToolCall::function(id, "read", "{}")
    }

    /// `[sys, u0, a0, u1, a1, …]` with `turns` user/assistant pairs of `words` words each.
    fn chat(turns: usize, words: usize) -> Vec<Message> {
        let mut v = vec![Message::system("be brief")];
        for t in 0..turns {
            v.push(Message::user(format!("q{t} {}", "word ".repeat(words))));
            v.push(Message::assistant(format!(
                "a{t} {}",
                "word ".repeat(words)
            )));
        }
        v
    }

    /// Whether a boundary at `i` separates a tool call from one of its results.
    fn splits_group(messages: &[Message], i: usize) -> bool {
        i < messages.len() && messages[i].role == Role::Tool && align_backward(messages, i) != i
    }

    #[test]
    fn head_protects_system_prompt_and_first_turns_until_compacted() {
        let v = chat(5, 1);
        assert_eq!(head_size(&v, 3, false), 4);
        assert_eq!(head_size(&v, 3, true), 1);
        assert_eq!(head_size(&v[1..], 3, false), 3, "no system prompt");
        assert_eq!(head_size(&v[..2], 3, false), 2, "never past the end");
    }

    #[test]
    fn head_protection_decays_when_a_summary_follows_the_system_prompt() {
        let mut v = chat(5, 1);
        v[1] = Message::user(with_summary_prefix("earlier work"));
        assert_eq!(head_size(&v, 3, false), 1);
    }

    #[test]
    fn align_forward_skips_tool_results() {
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("a"), call("b")]),
            Message::tool("a", "1"),
            Message::tool("b", "2"),
            Message::assistant("done"),
        ];
        assert_eq!(align_forward(&v, 2), 4);
        assert_eq!(align_forward(&v, 1), 1);
        assert_eq!(align_forward(&v, 9), 5);
    }

    #[test]
    fn align_backward_moves_to_the_calling_assistant() {
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("a"), call("b")]),
            Message::tool("a", "1"),
            Message::tool("b", "2"),
            Message::assistant("done"),
        ];
        assert_eq!(align_backward(&v, 3), 1);
        assert_eq!(
            align_backward(&v, 4),
            1,
            "the reply stays with the results it reads"
        );
        assert_eq!(align_backward(&v, 1), 1);
        assert_eq!(align_backward(&v, 0), 0);
        assert_eq!(align_backward(&v, 5), 5);
    }

    #[test]
    fn blank_users_and_summaries_are_not_actionable_but_images_are() {
        let mut image = Message::user("");
        image.content = Some(Content::Parts(vec![ContentPart::image_url("data:x")]));
        let v = vec![
            Message::user("real"),
            image,
            Message::user("   "),
            Message::user(with_summary_prefix("s")),
            Message::assistant("ok"),
        ];
        assert_eq!(last_actionable_user(&v, 0), Some(1));
        assert_eq!(last_actionable_user(&v, 2), None);
    }

    #[test]
    fn last_visible_assistant_prefers_text_then_falls_back() {
        let v = vec![
            Message::user("go"),
            Message::assistant("seen"),
            Message::assistant_tool_calls(vec![call("a")]),
            Message::tool("a", "1"),
        ];
        assert_eq!(last_visible_assistant(&v, 0), Some(1));
        assert_eq!(last_visible_assistant(&v, 2), Some(2));
        assert_eq!(last_visible_assistant(&v, 3), None);
    }

    #[test]
    fn when_everything_fits_the_soft_ceiling_a_raw_budget_walk_leaves_a_middle() {
        let v = chat(10, 10);
        let per = RoughCounter.count_message(&v[1]);
        let total: usize = v[1..].iter().map(|m| RoughCounter.count_message(m)).sum();
        let budget = total * 3 / 4; // soft ceiling 1.125 × total: everything fits it
        let cut = find_tail_cut(&v, 1, budget, 4, &RoughCounter);
        assert!(cut > 1 && cut < v.len(), "cut {cut}");
        let tail: usize = v[cut..].iter().map(|m| RoughCounter.count_message(m)).sum();
        assert!(tail <= budget + per, "tail {tail} budget {budget}");
    }

    #[test]
    fn tail_keeps_its_floor_even_when_messages_are_huge() {
        let v = chat(10, 2_000);
        let cut = find_tail_cut(&v, 1, 10, 20, &RoughCounter);
        assert_eq!(v.len() - cut, MAX_TAIL_MESSAGE_FLOOR);
    }

    #[test]
    fn a_huge_last_request_is_kept_in_the_tail() {
        let mut v = chat(6, 1);
        v.push(Message::user("please ".repeat(50_000)));
        v.push(Message::assistant("working"));
        v.push(Message::assistant("still working"));
        v.push(Message::assistant("nearly"));
        v.push(Message::assistant("there"));
        let cut = find_tail_cut(&v, 1, 100, 3, &RoughCounter);
        assert_eq!(cut, 13, "the request at 13 opens the tail");
    }

    #[test]
    fn a_request_at_the_head_boundary_is_summarized_with_its_reply() {
        let v = vec![
            Message::system("s"),
            Message::user("do it ".repeat(2_000)),
            Message::assistant_tool_calls(vec![call("a")]),
            Message::tool("a", "x".repeat(8_000)),
            Message::assistant("done"),
        ];
        let cut = find_tail_cut(&v, 1, 10, 3, &RoughCounter);
        assert_eq!(
            cut, 4,
            "the request goes to the summary with its tool exchange"
        );
    }

    #[test]
    fn every_message_is_counted_once_per_call() {
        struct Spy(AtomicUsize);
        impl TokenCounter for Spy {
            fn name(&self) -> &'static str {
                "spy"
            }
            fn count_text(&self, text: &str) -> usize {
                text.len() / 4
            }
            fn is_exact(&self) -> bool {
                false
            }
            fn count_message(&self, m: &Message) -> usize {
                self.0.fetch_add(1, Ordering::Relaxed);
                crate::tokens::message_tokens(self, m)
            }
        }
        let v = chat(5_000, 3);
        let spy = Spy(AtomicUsize::new(0));
        let cut = find_tail_cut(&v, 1, 5_000, 20, &spy);
        assert!(cut > 1 && cut < v.len());
        assert_eq!(spy.0.load(Ordering::Relaxed), v.len() - 1);
    }

    #[test]
    fn has_content_to_compress_is_false_for_a_bare_head() {
        let v = chat(1, 1);
        assert!(!has_content_to_compress(
            &v,
            3,
            false,
            100,
            3,
            &RoughCounter
        ));
        assert!(has_content_to_compress(
            &chat(20, 20),
            3,
            false,
            100,
            3,
            &RoughCounter
        ));
    }

    proptest! {
        #[test]
        fn alignment_never_splits_a_call_group(v in strategies::conversation(), i in 0usize..80) {
            let i = i.min(v.len());
            prop_assert!(!splits_group(&v, align_forward(&v, i)));
            prop_assert!(!splits_group(&v, align_backward(&v, i)));
        }

        #[test]
        fn tail_cut_is_after_the_head_and_keeps_the_last_request(
            v in strategies::conversation(),
            head in 0usize..40,
            budget in 0usize..400,
            protect_last_n in 0usize..25,
        ) {
            let head_end = head.min(v.len().saturating_sub(1));
            let cut = find_tail_cut(&v, head_end, budget, protect_last_n, &RoughCounter);
            prop_assert!(head_end < cut && cut <= v.len(), "cut {} head {}", cut, head_end);
            prop_assert!(!splits_group(&v, cut));
            if let Some(u) = last_actionable_user(&v, head_end + 1) {
                prop_assert!(u >= cut, "user {} before cut {}", u, cut);
            }
        }
    }
}
