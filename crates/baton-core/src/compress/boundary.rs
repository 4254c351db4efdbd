//! Where compaction may cut: the protected head, the protected tail, and the anchors that must
//! stay verbatim.
//!
//! A conversation is split into `head | span | tail`; the span is summarized. Two rules shape
//! every boundary. A tool call and its results are one unit (a provider rejects a result
//! without its call, and a call without its result), so boundaries move to group edges. And
//! the newest real user request, plus the newest reply the user saw, stay in the tail: a
//! summary of "what the user asked" is a poor substitute for the words themselves.

use crate::compress::assemble::unwrap_summary;
use crate::compress::markers::is_summary_message;
use crate::message::{Content, Message, Role};
use crate::synthetic;
use crate::tokens::TokenCounter;
use std::cell::OnceCell;

/// Fewest messages the tail keeps whenever the span allows it (at least one message is left to
/// summarize). `protect_last_n` raises this floor without limit: it is the user's promise that
/// the last N messages stay verbatim.
pub const MIN_TAIL_MESSAGES: usize = 3;
/// The tail keeps at least `budget / TAIL_FLOOR_DIVISOR` tokens whenever the conversation has
/// that much after the head. The budget walk stops at the first message that would cross the
/// soft ceiling, and a ceiling cut moves the cut forward; without this floor one large message
/// at the wrong place leaves a tail of a few short messages and a summary standing in for the
/// whole recent exchange (issue #12: 344 messages compacted to 7).
pub const TAIL_FLOOR_DIVISOR: u64 = 2;
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
        && (!is_summary_message(message) || carried_request(message).is_some())
        && !synthetic::is_synthetic(message)
}

/// The user's own words in a summary carrier: a request merged after a summary's end marker
/// (or fenced before it) by an earlier pass. It is still the latest request, and the next pass
/// must keep it verbatim after the new summary instead of treating it as part of the old one.
pub fn carried_request(message: &Message) -> Option<Message> {
    unwrap_summary(message).filter(|m| !is_blank_content(m.content.as_ref()))
}

/// `message` as the user wrote it: a summary carrier's own content, else the message itself.
pub fn own_words(message: &Message) -> std::borrow::Cow<'_, Message> {
    if is_summary_message(message)
        && let Some(own) = carried_request(message)
    {
        return std::borrow::Cow::Owned(own);
    }
    std::borrow::Cow::Borrowed(message)
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

/// Where the protected tail starts, and the latest user message the pass carries verbatim to
/// just after the summary because the cut had to pass it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailPlan {
    /// First index of the verbatim tail; `head_end` when everything after the head is
    /// protected (nothing to summarize), `len` when the tail is empty.
    pub cut: usize,
    /// Index of the latest actionable user message when it sits before `cut`.
    pub carried_user: Option<usize>,
}

/// The anchored tail cut (before any ceiling cut): messages from the result on stay verbatim,
/// messages in `head_end..result` are summarized. The result is in `[head_end, len]`; it is
/// `head_end` only when `protect_last_n` covers everything after the head.
///
/// This is the reference design's later form, which replaced a flat three-message floor after
/// the simpler walk let whole transcripts fit the tail (nothing to summarize, compaction
/// retried forever) and let the latest request or reply slip into the summary:
/// 1. walk back from the end summing tokens until the soft ceiling (1.5 × budget, so one
///    oversized message does not force a cut mid-turn), keeping at least the tail floor
///    (messages and tokens, see [`tail_floor`] and [`TAIL_FLOOR_DIVISOR`]);
/// 2. when everything fit, walk again against the raw budget so a middle remains;
/// 3. clamp to the message floor, then to after the head;
/// 4. align to call groups, then pull in the last actionable user message and the last
///    visible assistant reply.
///
/// Each message is counted at most once, and only when a walk reaches it: the walks share the
/// counts, so the cost is linear in the messages they look at.
pub fn find_tail_cut(
    messages: &[Message],
    head_end: usize,
    budget_tokens: usize,
    protect_last_n: usize,
    counter: &dyn TokenCounter,
) -> usize {
    if head_end >= messages.len() {
        return messages.len();
    }
    let count_of = |i: usize| counter.count_message(&messages[i]);
    TailWalk::new(messages, head_end, budget_tokens, protect_last_n, &count_of).anchored()
}

/// The tail cut a pass uses: the anchored cut of [`find_tail_cut`], then, when that tail is
/// over its soft ceiling (the latest request is far back, or group alignment pulled in a large
/// call group), a second cut *inside* the tail. The second cut never passes the message floor,
/// the token floor, or the newest assistant reply to the latest user request; when it passes
/// that request, the request is carried (see [`TailPlan::carried_user`]) so it still follows
/// the summary verbatim.
pub fn plan_tail(
    messages: &[Message],
    head_end: usize,
    budget_tokens: usize,
    protect_last_n: usize,
    counter: &dyn TokenCounter,
) -> TailPlan {
    plan_tail_with(messages, head_end, budget_tokens, protect_last_n, &|i| {
        counter.count_message(&messages[i])
    })
}

/// [`plan_tail`] with the tokens of each message after the head already counted
/// (`counts[k]` for message `head_end + k`).
pub fn plan_tail_counted(
    messages: &[Message],
    head_end: usize,
    budget_tokens: usize,
    protect_last_n: usize,
    counts: Vec<usize>,
) -> TailPlan {
    let n = messages.len();
    if head_end < n && counts.len() != n - head_end {
        return TailPlan {
            cut: n,
            carried_user: None,
        };
    }
    plan_tail_with(messages, head_end, budget_tokens, protect_last_n, &|i| {
        counts[i - head_end]
    })
}

/// [`plan_tail`] with the tokens of message `i` given by `count_of(i)`, asked at most once per
/// message and only for the messages the walks reach: a pass counts its pruned conversation
/// this way, deciding an old message's stub only when the walk gets to it (the messages it
/// never reaches are summarized, and their stubs would be thrown away).
pub fn plan_tail_with(
    messages: &[Message],
    head_end: usize,
    budget_tokens: usize,
    protect_last_n: usize,
    count_of: &dyn Fn(usize) -> usize,
) -> TailPlan {
    let n = messages.len();
    if head_end >= n {
        return TailPlan {
            cut: n,
            carried_user: None,
        };
    }
    let walk = TailWalk::new(messages, head_end, budget_tokens, protect_last_n, count_of);
    let anchored = walk.anchored();
    let cut = walk.ceiling_cut(anchored);
    TailPlan {
        cut,
        carried_user: last_actionable_user(messages, head_end).filter(|&u| u < cut),
    }
}

/// Messages the tail keeps regardless of tokens, out of `after` messages after the head:
/// `protect_last_n` (a promise to the user, never capped), and at least
/// [`MIN_TAIL_MESSAGES`] while one message is left to summarize.
pub fn tail_floor(after: usize, protect_last_n: usize) -> usize {
    let soft_min = MIN_TAIL_MESSAGES.min(after.saturating_sub(1));
    protect_last_n.max(soft_min).min(after)
}

/// The tokens the tail keeps at least (when the conversation has that much after the head).
pub fn tail_token_floor(budget_tokens: usize) -> usize {
    budget_tokens / TAIL_FLOOR_DIVISOR as usize
}

/// One conversation's tail computation: each message's tokens (asked once, when first
/// needed) and the floors.
struct TailWalk<'a> {
    messages: &'a [Message],
    head_end: usize,
    count_of: &'a dyn Fn(usize) -> usize,
    /// `counted[k]`: tokens of message `head_end + k`, once asked.
    counted: Vec<OnceCell<usize>>,
    budget: usize,
    soft: usize,
    floor_messages: usize,
    floor_tokens: usize,
}

impl<'a> TailWalk<'a> {
    fn new(
        messages: &'a [Message],
        head_end: usize,
        budget: usize,
        protect_last_n: usize,
        count_of: &'a dyn Fn(usize) -> usize,
    ) -> Self {
        TailWalk {
            messages,
            head_end,
            count_of,
            counted: vec![OnceCell::new(); messages.len() - head_end],
            budget,
            soft: budget.saturating_add(budget / 2),
            floor_messages: tail_floor(messages.len() - head_end, protect_last_n),
            floor_tokens: tail_token_floor(budget),
        }
    }

    fn len(&self) -> usize {
        self.messages.len()
    }

    /// Tokens of message `i` (after the head).
    fn tokens(&self, i: usize) -> usize {
        *self.counted[i - self.head_end].get_or_init(|| (self.count_of)(i))
    }

    fn tokens_from(&self, cut: usize) -> usize {
        (cut.max(self.head_end)..self.len())
            .map(|i| self.tokens(i))
            .sum()
    }

    /// Walks back from the end, never before `stop`, adding each message while the tail is
    /// under a floor (messages, tokens, or not yet down to `must_reach`) or while the message
    /// still fits `limit`. Returns the cut and the tail's tokens.
    fn walk_back(&self, stop: usize, limit: usize, must_reach: usize) -> (usize, usize) {
        let n = self.len();
        let mut acc = 0usize;
        let mut cut = n;
        for i in (stop..n).rev() {
            let t = self.tokens(i);
            let forced =
                n - cut < self.floor_messages || acc < self.floor_tokens || i >= must_reach;
            if !forced && acc.saturating_add(t) > limit {
                break;
            }
            acc = acc.saturating_add(t);
            cut = i;
        }
        (cut, acc)
    }

    fn anchored(&self) -> usize {
        let (n, head_end) = (self.len(), self.head_end);
        let messages = self.messages;
        if self.floor_messages >= n - head_end {
            return head_end; // everything after the head is protected
        }
        let (mut cut, acc) = self.walk_back(head_end, self.soft, n);
        if cut <= head_end && acc <= self.soft {
            // Everything fit the soft ceiling: walk against the raw budget so a middle remains.
            cut = self.walk_back(head_end, self.budget, n).0;
        }
        let walked = cut.clamp(head_end + 1, n - self.floor_messages);
        let mut cut = align_backward(messages, walked);
        if cut <= head_end {
            // The group reaches into the head boundary: keep it whole in the span instead,
            // unless that breaks the floor; then nothing is left to summarize.
            cut = align_forward(messages, walked);
            if n - cut < self.floor_messages {
                return head_end;
            }
        }
        if let Some(u) = last_actionable_user(messages, head_end) {
            // At the head boundary it cannot join the tail; the pass carries it instead.
            if u < cut && u > head_end {
                cut = u;
            }
        }
        if let Some(a) = last_visible_assistant(messages, head_end + 1)
            && a < cut
        {
            let group = align_backward(messages, a);
            cut = if group > head_end { group } else { a };
        }
        align_forward(messages, cut.max(head_end + 1))
    }

    /// Cuts a tail over its soft ceiling inside itself (never before `anchored`); see
    /// [`plan_tail`].
    fn ceiling_cut(&self, anchored: usize) -> usize {
        let n = self.len();
        if anchored >= n || self.tokens_from(anchored) <= self.soft {
            return anchored;
        }
        let messages = self.messages;
        let user = last_actionable_user(messages, self.head_end);
        let reply_edge = user
            .and_then(|u| reply_to(messages, u))
            .map(|a| align_backward(messages, a));
        let max_cut = (n - self.floor_messages).min(reply_edge.unwrap_or(n));
        if max_cut <= anchored {
            return anchored;
        }
        // When the cut passes the request it is carried, paid for out of the tail's budget.
        let reserve = user
            .filter(|&u| u >= anchored)
            .map_or(0, |u| self.tokens(u));
        let (walked, _) = self.walk_back(anchored, self.soft.saturating_sub(reserve), max_cut);
        if walked <= anchored {
            return anchored;
        }
        let forward = align_forward(messages, walked);
        if forward <= max_cut && self.tokens_from(forward) >= self.floor_tokens {
            return forward;
        }
        align_backward(messages, walked).max(anchored)
    }
}

/// The newest assistant message after the user message at `user` (preferring one with visible
/// text): the reply to that request, which stays verbatim.
fn reply_to(messages: &[Message], user: usize) -> Option<usize> {
    last_visible_assistant(messages, user + 1)
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
    start < plan_tail(messages, start, budget_tokens, protect_last_n, counter).cut
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
        assert_eq!(
            v.len() - cut,
            20,
            "protect_last_n is a floor, not capped at 8"
        );
        let cut = plan_tail(&v, 1, 10, 20, &RoughCounter).cut;
        assert_eq!(v.len() - cut, 20, "the ceiling cut never passes the floor");
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
    fn a_request_at_the_head_boundary_is_carried_and_the_floor_kept() {
        let v = vec![
            Message::system("s"),
            Message::user("do it ".repeat(2_000)),
            Message::assistant_tool_calls(vec![call("a")]),
            Message::tool("a", "x".repeat(8_000)),
            Message::assistant("done"),
        ];
        let plan = plan_tail(&v, 1, 10, 3, &RoughCounter);
        assert_eq!(plan.cut, 2, "three messages is the floor");
        assert_eq!(
            plan.carried_user,
            Some(1),
            "the request follows the summary"
        );
    }

    /// The shape of issue #12: a long agent session whose budget-anchored tail lands just over
    /// the soft ceiling; the last exchange (a notification, a question and its answer) must
    /// stay verbatim, and the tail must keep its floors.
    #[test]
    fn a_tail_over_its_ceiling_is_cut_inside_never_past_the_last_exchange() {
        let mut v = vec![Message::system("s"), Message::user("build the epic")];
        for k in 0..120 {
            let id = format!("c{k}");
            v.push(Message::assistant_tool_calls(vec![call(&id)]));
            v.push(Message::tool(id, "output line ".repeat(60 + (k % 7) * 40)));
        }
        v.push(Message::assistant("All done, pushed."));
        v.push(Message::user(
            "<task-notification>stale task</task-notification>",
        ));
        v.push(Message::assistant("That was stale."));
        v.push(Message::user("did you push?"));
        v.push(Message::assistant("Yes, everything is pushed."));
        let n = v.len();
        for budget in [500, 2_000, 5_000, 9_000] {
            let plan = plan_tail(&v, 1, budget, 8, &RoughCounter);
            assert!(n - plan.cut >= 8, "budget {budget}: tail {}", n - plan.cut);
            assert!(
                plan.cut <= n - 2,
                "budget {budget}: the last exchange stays"
            );
            let tokens: usize = v[plan.cut..]
                .iter()
                .map(|m| RoughCounter.count_message(m))
                .sum();
            assert!(
                tokens >= budget / 2,
                "budget {budget}: tail tokens {tokens}"
            );
            assert!(!splits_group(&v, plan.cut));
        }
    }

    #[test]
    fn each_message_is_counted_at_most_once_and_only_where_the_walk_reaches() {
        let v = chat(5_000, 3);
        let counted: Vec<AtomicUsize> = v.iter().map(|_| AtomicUsize::new(0)).collect();
        let count_of = |i: usize| {
            counted[i].fetch_add(1, Ordering::Relaxed);
            RoughCounter.count_message(&v[i])
        };
        let plan = plan_tail_with(&v, 1, 5_000, 20, &count_of);
        assert_eq!(plan, plan_tail(&v, 1, 5_000, 20, &RoughCounter));
        assert!(plan.cut > 1 && plan.cut < v.len());
        let times: Vec<usize> = counted.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        assert!(times.iter().all(|&t| t <= 1), "{times:?}");
        // Every kept message was counted; the walk stopped one message before the cut, and
        // nothing older was asked for.
        assert!(times[plan.cut..].iter().all(|&t| t == 1));
        let reached = times.iter().position(|&t| t == 1).unwrap();
        assert_eq!(reached, plan.cut - 1, "{times:?}");
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
        fn tail_plan_keeps_its_floors_and_the_last_exchange(
            v in strategies::conversation(),
            head in 0usize..40,
            budget in 0usize..400,
            protect_last_n in 0usize..25,
        ) {
            let n = v.len();
            // The pass aligns the head forward, so the head never ends inside a call group.
            let head_end = align_forward(&v, head.min(n.saturating_sub(1)));
            let anchored = find_tail_cut(&v, head_end, budget, protect_last_n, &RoughCounter);
            let plan = plan_tail(&v, head_end, budget, protect_last_n, &RoughCounter);
            let cut = plan.cut;
            prop_assert!(head_end <= anchored && anchored <= cut && cut <= n,
                "head {} anchored {} cut {}: the ceiling cut stays inside the tail", head_end, anchored, cut);
            prop_assert!(!splits_group(&v, cut));
            if n > head_end {
                let after = n - head_end;
                let floor = tail_floor(after, protect_last_n);
                prop_assert!(n - cut >= floor || cut == head_end + 1 && v[head_end + 1].role == Role::Tool,
                    "tail {} below its floor {}", n - cut, floor);
                if protect_last_n >= after {
                    prop_assert_eq!(cut, head_end, "everything protected: nothing to summarize");
                }
                let tail: usize = v[cut..].iter().map(|m| RoughCounter.count_message(m)).sum();
                // The span needs at least the first message after the head, with its group.
                let first_edge = align_forward(&v, head_end + 1);
                let rest: usize = v[first_edge..].iter().map(|m| RoughCounter.count_message(m)).sum();
                prop_assert!(cut == head_end || tail >= tail_token_floor(budget).min(rest),
                    "tail tokens {} under the floor {}", tail, tail_token_floor(budget));
            }
            if let Some(u) = last_actionable_user(&v, head_end) {
                // The request is in the tail or carried; its reply is never summarized.
                prop_assert!(u >= cut || plan.carried_user == Some(u));
                if let Some(a) = last_visible_assistant(&v, u + 1) {
                    prop_assert!(a >= cut, "reply {} cut {}", a, cut);
                }
            }
        }
    }
}
