//! Pruning's passes 2–4: what each old message is demoted to (a stub, its images replaced,
//! its arguments cut), decided from the message alone and applied in order.
//!
//! Deciding is most of pruning's time on a long conversation (reading every old result to
//! describe it in a stub), and one message's decision never depends on another's. So a pass
//! decides only the messages it keeps (`lazy_prune.rs`), one at a time or, when many are asked
//! for together, in ranges on several threads (`crate::split_work`), applied afterwards in
//! message order. Pressure demotion stays sequential: it stops as soon as the tail fits.

use super::prune::{
    CallRef, PruneConfig, PruneOutcome, SCREENSHOT_MARKER, is_already_pruned, pruned_tokens,
};
use super::pruned::Pruned;
use super::stubs::{stub_of_result, truncate_tool_call_args};
use crate::message::{Content, ContentPart, Message, Role, ToolCall};
use crate::split_work::in_ranges;
use crate::tokens::TokenCounter;
use crate::tool_action::ActionTable;

/// Pressure demotion spares the most recent messages (the exchange in progress) until nothing
/// older is left to demote.
const PRESSURE_KEEP_RECENT: usize = 3;

/// What demoting one message changes.
enum Demotion {
    /// A large result becomes this one-line stub.
    Stub(String),
    /// A result keeps its text, and its images become [`SCREENSHOT_MARKER`]: its new parts.
    MediaRemoved(Vec<ContentPart>),
    /// Calls' arguments (by position in the message's `tool_calls`) are cut to these.
    ArgsCut(Vec<(usize, String)>),
}

/// The read-only context the demotion passes share.
pub(super) struct Demoter<'r, 'a> {
    /// The input, where call names and arguments are read (never the partly pruned copy).
    pub(super) originals: &'a [Message],
    pub(super) calls: &'r [Option<CallRef>],
    pub(super) config: &'r PruneConfig,
    pub(super) counter: &'r dyn TokenCounter,
}

impl<'a> Demoter<'_, 'a> {
    /// Passes 2 and 3: each message of `indices` (ascending, all before the prune boundary)
    /// demoted where it is worth it.
    pub(super) fn demote_each(&self, outcome: &mut PruneOutcome<'a>, indices: &[usize]) {
        let pruned = &outcome.messages;
        // Each range classifies its calls into its own table; the tables are merged, so the
        // pass still hands every classified call on to the ledger and the summary.
        let decided = in_ranges(indices.len(), |range| {
            let mut actions = ActionTable::default();
            let demotions: Vec<(usize, Demotion)> = indices[range]
                .iter()
                .filter_map(|&index| Some((index, self.demotion_of(pruned, index, &mut actions)?)))
                .collect();
            (demotions, actions)
        });
        for (demotions, actions) in decided {
            outcome.actions.absorb(actions);
            for (index, demotion) in demotions {
                apply(outcome, index, demotion);
            }
        }
    }

    /// Pass 2 or 3 for the one message `index` (before the prune boundary), at once.
    pub(super) fn demote_one(&self, outcome: &mut PruneOutcome<'a>, index: usize) {
        if let Some(demotion) = self.demotion_of(&outcome.messages, index, &mut outcome.actions) {
            apply(outcome, index, demotion);
        }
    }

    /// Pass 4: when the protected tail costs more than 1.5× its budget (one huge file read can
    /// do that on its own), demote tail messages oldest first until it fits.
    /// `original` is the pass's count of the input, as [`super::prune::prune_boundary`] takes
    /// it (empty: count everything).
    pub(super) fn relieve_tail_pressure(
        &self,
        outcome: &mut PruneOutcome<'a>,
        boundary: usize,
        original: &[u64],
    ) {
        let counter = self.counter;
        let soft_limit = self.config.protect_tail_tokens.saturating_mul(3) / 2;
        let mut tail_tokens: usize = (boundary..outcome.messages.len())
            .map(|i| {
                pruned_tokens(&outcome.messages, i, counter, original.get(i).copied()) as usize
            })
            .sum();
        if tail_tokens <= soft_limit {
            return;
        }
        // The last `protect_tail_count` messages are verbatim by promise, even under pressure.
        let protected = outcome
            .messages
            .len()
            .saturating_sub(self.config.protect_tail_count);
        // Pruning changes no role, so the originals give the order.
        for index in pressure_order(outcome.messages.originals(), boundary) {
            if index >= protected {
                continue;
            }
            if tail_tokens <= soft_limit {
                break;
            }
            let tokens_of = |o: &PruneOutcome<'_>| {
                o.messages
                    .get(index)
                    .map_or(0, |m| counter.count_message(m))
            };
            let before = tokens_of(outcome);
            let Some(demotion) = self.demotion_of(&outcome.messages, index, &mut outcome.actions)
            else {
                continue;
            };
            apply(outcome, index, demotion);
            let after = tokens_of(outcome);
            tail_tokens = tail_tokens.saturating_sub(before).saturating_add(after);
        }
    }

    /// What message `index` of `pruned` would be demoted to: a tool result is stubbed (or its
    /// images replaced), an assistant's long arguments are cut; `None` leaves it as it is.
    fn demotion_of(
        &self,
        pruned: &Pruned<'_>,
        index: usize,
        actions: &mut ActionTable<'a>,
    ) -> Option<Demotion> {
        let message = pruned.get(index)?;
        match message.role {
            Role::Tool => self.result_demotion(message, index, actions),
            Role::Assistant => self.cut_arguments(message),
            _ => None,
        }
    }

    fn call_of(&self, index: usize) -> Option<&'a ToolCall> {
        let (message, position) = (*self.calls.get(index)?)?;
        self.originals.get(message)?.calls().get(position)
    }

    /// Large text becomes a stub; otherwise images become [`SCREENSHOT_MARKER`].
    fn result_demotion(
        &self,
        message: &Message,
        index: usize,
        actions: &mut ActionTable<'a>,
    ) -> Option<Demotion> {
        let call = self.call_of(index);
        // Names are read from the original (pruning never changes one), which outlives the
        // pass's table of actions.
        let name = call
            .map(|c| c.function.name.as_str())
            .or_else(|| self.originals.get(index)?.name.as_deref())
            .unwrap_or("");
        let arguments = call.map_or("", |c| c.function.arguments.as_str());
        // The text is read in place: copying every old result first cost more than stubbing.
        let (stub, has_images) = match message.content.as_ref()? {
            Content::Text(s) => (self.stub_for(name, arguments, s, actions), false),
            Content::Parts(parts) => (
                self.stub_for(name, arguments, &substantive_text(parts), actions),
                parts.iter().any(|p| p.is_image()),
            ),
            Content::Null => return None,
        };
        if let Some(stub) = stub {
            return Some(Demotion::Stub(stub));
        }
        if !has_images {
            return None;
        }
        let Some(Content::Parts(parts)) = message.content.as_ref() else {
            return None;
        };
        let parts = parts
            .iter()
            .map(|p| {
                if p.is_image() {
                    ContentPart::text(SCREENSHOT_MARKER)
                } else {
                    p.clone()
                }
            })
            .collect();
        Some(Demotion::MediaRemoved(parts))
    }

    /// The stub for a result worth stubbing: large, not already pruned, and bigger than its
    /// stub would be, in characters and in tokens (a stub quoting a CJK path can cost more
    /// tokens than a short ASCII result).
    fn stub_for(
        &self,
        name: &'a str,
        arguments: &'a str,
        text: &str,
        actions: &mut ActionTable<'a>,
    ) -> Option<String> {
        let chars = crate::truncate::char_count(text);
        if chars <= self.config.min_prune_chars || is_already_pruned(text) {
            return None;
        }
        let stub = stub_of_result(name, arguments, text, chars, actions);
        let smaller = stub.chars().count() < chars
            && self.counter.count_text(&stub) < self.counter.count_text(text);
        smaller.then_some(stub)
    }

    /// The cut arguments of each of `message`'s calls whose arguments are over the limit.
    fn cut_arguments(&self, message: &Message) -> Option<Demotion> {
        let cuts: Vec<(usize, String)> = message
            .calls()
            .iter()
            .enumerate()
            .filter(|(_, call)| {
                crate::truncate::has_more_chars_than(
                    &call.function.arguments,
                    self.config.max_args_chars,
                )
            })
            .filter_map(|(position, call)| {
                let cut = truncate_tool_call_args(
                    &call.function.arguments,
                    self.config.args_leaf_max_chars,
                )?;
                Some((position, cut))
            })
            .collect();
        (!cuts.is_empty()).then_some(Demotion::ArgsCut(cuts))
    }
}

/// Whether demoting `message` could change it: false for what [`Demoter::demotion_of`] is
/// certain to leave as it is, told from sizes alone (a character is at least a byte): a text
/// result of at most `min_prune_chars` bytes, calls whose arguments are all at most
/// `max_args_chars` bytes, any other role.
pub(super) fn may_change(config: &PruneConfig, message: &Message) -> bool {
    match message.role {
        Role::Tool => match &message.content {
            Some(Content::Text(text)) => text.len() > config.min_prune_chars,
            Some(Content::Parts(_)) => true,
            Some(Content::Null) | None => false,
        },
        Role::Assistant => message
            .calls()
            .iter()
            .any(|call| call.function.arguments.len() > config.max_args_chars),
        _ => false,
    }
}

/// Writes `demotion` into message `index` and counts it.
fn apply(outcome: &mut PruneOutcome<'_>, index: usize, demotion: Demotion) {
    match demotion {
        Demotion::Stub(stub) => {
            outcome.messages.set_content(index, Content::Text(stub));
            outcome.stubbed += 1;
        }
        Demotion::MediaRemoved(parts) => {
            outcome.messages.set_content(index, Content::Parts(parts));
            outcome.media_removed += 1;
        }
        Demotion::ArgsCut(cuts) => {
            if outcome.messages.set_arguments(index, cuts) {
                outcome.args_truncated += 1;
            }
        }
    }
}

/// Text of a result's parts, leaving out screenshot markers so a result whose images were
/// already replaced is judged by its own text.
fn substantive_text(parts: &[ContentPart]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(ContentPart::text_value)
        .filter(|t| *t != SCREENSHOT_MARKER)
        .collect();
    texts.join("\n")
}

/// Tail indices in the order pressure demotion may touch them: older messages first, then the
/// most recent few, and the newest tool result only as a last resort (the model is most likely
/// still working from it).
fn pressure_order(messages: &[Message], boundary: usize) -> Vec<usize> {
    let len = messages.len();
    let recent_start = len.saturating_sub(PRESSURE_KEEP_RECENT).max(boundary);
    let newest_result = (boundary..len)
        .rev()
        .find(|&i| messages[i].role == Role::Tool);
    let demotable = |i: &usize| {
        Some(*i) != newest_result && matches!(messages[*i].role, Role::Tool | Role::Assistant)
    };
    let mut order: Vec<usize> = (boundary..recent_start).filter(demotable).collect();
    order.extend((recent_start..len).filter(demotable));
    order.extend(newest_result);
    order
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(super) mod tests {
    use super::*;
    use crate::compress::prune::resolve_calls;
    use crate::split_work::SPLIT_FROM_ITEMS;
    use crate::tokens::RoughCounter;

    /// `exchanges` calls with long and short arguments and long, short, repeated and image
    /// results, with a reply now and then and a closing request: every kind of demotion.
    pub(in crate::compress) fn every_demotion(exchanges: usize) -> Vec<Message> {
        let mut messages = vec![Message::user("port the parser")];
        for t in 0..exchanges {
            let id = format!("call_{t}");
            let args = if t % 5 == 0 {
                format!(
                    r#"{{"file_path":"src/f{t}.rs","content":"{}"}}"#,
                    "x".repeat(900)
                )
            } else {
                format!(r#"{{"command":"cargo test -p crate{t}"}}"#)
            };
            messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
                &id, "Bash", &args,
            )]));
            let result = match t % 4 {
                0 => Message::tool(&id, format!("test result {t}\n").repeat(60)),
                1 => Message::tool(&id, "ok"),
                2 => {
                    let mut m = Message::tool(&id, "");
                    m.content = Some(Content::Parts(vec![
                        ContentPart::text(format!("screenshot {t}")),
                        ContentPart::image_url("data:image/png;base64,AAAA"),
                    ]));
                    m
                }
                _ => Message::tool(&id, "error[E0382]: moved value\n".repeat(20)),
            };
            messages.push(result);
            if t % 7 == 0 {
                messages.push(Message::assistant(format!("step {t} done")));
            }
        }
        messages.push(Message::user("now the lexer"));
        messages
    }

    /// A session long enough to be split.
    fn long_session() -> Vec<Message> {
        every_demotion(SPLIT_FROM_ITEMS)
    }

    #[test]
    fn decisions_taken_in_ranges_equal_those_taken_one_by_one() {
        let messages = long_session();
        let calls = resolve_calls(&messages);
        let config = PruneConfig::default();
        let demoter = Demoter {
            originals: &messages,
            calls: &calls,
            config: &config,
            counter: &RoughCounter,
        };
        let boundary = messages.len() - 10;
        assert!(boundary >= SPLIT_FROM_ITEMS);
        let mut split = PruneOutcome::unchanged(&messages);
        demoter.demote_each(&mut split, &(0..boundary).collect::<Vec<_>>());
        let mut one_by_one = PruneOutcome::unchanged(&messages);
        for index in 0..boundary {
            demoter.demote_one(&mut one_by_one, index);
        }
        assert!(split.stubbed > 0 && split.media_removed > 0 && split.args_truncated > 0);
        assert_eq!(
            (split.stubbed, split.media_removed, split.args_truncated),
            (
                one_by_one.stubbed,
                one_by_one.media_removed,
                one_by_one.args_truncated
            )
        );
        assert!(split.messages.iter().eq(one_by_one.messages.iter()));
        assert_eq!(split.actions.len(), one_by_one.actions.len());
        // The protected tail is untouched.
        assert!(!(boundary..messages.len()).any(|i| split.messages.is_changed(i)));
    }
    /// What `may_change` rules out, demotion leaves as it is, and both sides of each size
    /// limit are in the session: a result and arguments just under and just over.
    #[test]
    fn what_may_not_change_is_never_demoted() {
        let config = PruneConfig::default();
        let mut messages = long_session();
        let limit_args = |n: usize| format!(r#"{{"command":"{}"}}"#, "c".repeat(n - 14));
        for (id, args) in [("u", limit_args(500)), ("o", limit_args(501))] {
            messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
                id, "Bash", &args,
            )]));
            messages.push(Message::tool(id, "é".repeat(100)));
            messages.push(Message::tool(id, "r".repeat(200)));
            messages.push(Message::tool(id, "r\n".repeat(101)));
        }
        messages.push(Message::user("x".repeat(5_000)));
        let calls = resolve_calls(&messages);
        let demoter = Demoter {
            originals: &messages,
            calls: &calls,
            config: &config,
            counter: &RoughCounter,
        };
        let pruned = Pruned::new(&messages);
        let (mut ruled_out, mut demoted) = (0, 0);
        for (index, message) in messages.iter().enumerate() {
            let demotion = demoter.demotion_of(&pruned, index, &mut ActionTable::default());
            if !may_change(&config, message) {
                ruled_out += 1;
                assert!(demotion.is_none(), "message {index} was demoted");
            } else if demotion.is_some() {
                demoted += 1;
            }
        }
        assert!(ruled_out > 100 && demoted > 100, "{ruled_out} {demoted}");
        let last_args = messages.len() - 5;
        assert!(may_change(&config, &messages[last_args]));
        assert!(!may_change(&config, &messages[last_args - 4]));
    }
}
