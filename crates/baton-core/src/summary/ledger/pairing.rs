//! Which tool message answered which call: the pairing every reader of a span's calls uses.

use crate::message::{Message, Role, ToolCall};
use std::borrow::Borrow;

/// A tool call and the tool message that answered it (`None` when no answer followed).
#[derive(Debug, Clone, Copy)]
pub struct PairedCall<'a> {
    pub call: &'a ToolCall,
    pub result: Option<&'a Message>,
}

/// Pairs every tool call in `messages` with its result: the tool messages right after an
/// assistant message answer its calls, by id when the id matches an unanswered call and by
/// position otherwise. Ids are only compared within one exchange because some agents reuse
/// them across a conversation.
pub fn pair_tool_calls<M: Borrow<Message>>(messages: &[M]) -> Vec<PairedCall<'_>> {
    let mut out = Vec::new();
    pair_tool_calls_from(messages, 0..messages.len(), &mut out);
    out
}

/// [`pair_tool_calls`] for the exchanges that start in `range` of `messages` (their results
/// may lie past it), appended to `out`. The ranges of a split of `messages` together give its
/// pairs in order, so a long span is paired on several threads: tool messages at a range's
/// start answer an exchange the range before started (or none), and are passed over, as the
/// whole walk passes over a tool message that starts no exchange.
pub fn pair_tool_calls_from<'a, M: Borrow<Message>>(
    messages: &'a [M],
    range: std::ops::Range<usize>,
    out: &mut Vec<PairedCall<'a>>,
) {
    let mut i = range.start;
    while i < range.end {
        let m: &Message = messages[i].borrow();
        i += 1;
        if m.role != Role::Assistant || !m.has_tool_calls() {
            continue;
        }
        let end = messages[i..]
            .iter()
            .position(|r| r.borrow().role != Role::Tool)
            .map_or(messages.len(), |p| i + p);
        pair_exchange(m.calls(), &messages[i..end], out);
        i = end;
    }
}

/// One exchange's calls paired with its `results`, appended to `out` in call order.
fn pair_exchange<'a, M: Borrow<Message>>(
    calls: &'a [ToolCall],
    results: &'a [M],
    out: &mut Vec<PairedCall<'a>>,
) {
    let first = out.len();
    out.extend(calls.iter().map(|call| PairedCall { call, result: None }));
    let slots = &mut out[first..];
    for r in results.iter().map(Borrow::borrow) {
        let by_id = r.tool_call_id.as_deref().and_then(|id| {
            slots
                .iter()
                .position(|s| s.result.is_none() && s.call.id == id)
        });
        if let Some(k) = by_id.or_else(|| slots.iter().position(|s| s.result.is_none())) {
            slots[k].result = Some(r);
        }
    }
}
