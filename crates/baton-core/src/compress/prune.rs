//! Phase 1 of compaction: shrink old tool output without calling a model.
//!
//! Tool results are most of a coding agent's context and lose value fastest: a file read forty
//! turns ago has usually been edited since. Four passes, cheapest information loss first:
//!
//! 1. **Dedup** (whole conversation, tail included): identical results keep only their newest
//!    copy; older copies become a marker. Lossless, since the newest copy is still there.
//! 2. **Stubs** (before the prune boundary): each large result becomes a one-line stub saying
//!    what the call did ([`summarize_tool_result`]); images become a text marker.
//! 3. **Argument truncation** (before the boundary): long string leaves inside tool-call
//!    arguments are cut, and the arguments stay valid JSON, because strict providers reject a
//!    request whose arguments do not parse, and the session then fails on every turn.
//! 4. **Pressure demotion** (token mode only): when the protected tail alone is far over its
//!    budget, tail results are stubbed too, oldest first, the newest result last of all.
//!
//! Pruning changes content only: message count, order, roles and ids are untouched, so it can
//! never orphan a tool result. Pruning its own output again changes nothing. Passes 2–4 decide
//! each message's demotion in `demote.rs`.

pub use super::stubs::{ARGS_TRUNCATION_MARKER, summarize_tool_result, truncate_tool_call_args};

use super::lazy_prune::LazyPrune;
use super::pruned::Pruned;
use super::stubs::looks_like_stub;
use crate::message::{Content, ContentPart, Message, Role};
use crate::tokens::TokenCounter;
use crate::tool_action::ActionTable;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Replaces an older copy of a result that appears again later, word for word.
pub const DUPLICATE_MARKER: &str = "[Duplicate tool output — same content as a more recent call]";
/// Replaces an image part of an old tool result.
pub const SCREENSHOT_MARKER: &str = "[screenshot removed to save context]";
/// Written by older versions of the reference design; never written here, but a result that
/// already reads this is left alone.
pub const LEGACY_CLEARED_MARKER: &str = "[Old tool output cleared to save context space]";

/// Results shorter than this are never deduplicated: the marker would save almost nothing.
const DEDUP_MIN_CHARS: usize = 200;

/// How much of the conversation is protected and what counts as worth pruning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneConfig {
    /// Messages at the end that are never stubbed or demoted (`protect_last_n`, the user's
    /// promise that they stay verbatim). In token mode this is the tail's message floor; it is
    /// not capped (the reference caps it at 8 because its default of 20 protected too much;
    /// Baton's default is 8 instead, so an explicit `--protect-last N` means N).
    pub protect_tail_count: usize,
    /// Token budget of the protected tail; 0 selects count mode.
    pub protect_tail_tokens: usize,
    /// Results of at most this many characters are left as they are.
    pub min_prune_chars: usize,
    /// Tool-call arguments longer than this (in characters) are truncated outside the tail.
    pub max_args_chars: usize,
    /// String leaves of truncated arguments keep this many characters.
    pub args_leaf_max_chars: usize,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            protect_tail_count: 20,
            protect_tail_tokens: 0,
            min_prune_chars: 200,
            max_args_chars: 500,
            args_leaf_max_chars: 200,
        }
    }
}

/// The pruned conversation and what changed. Each counter counts messages, and each message is
/// counted at most once.
#[derive(Debug, Clone)]
pub struct PruneOutcome<'a> {
    /// The conversation as pruned: the input, plus the messages pruning changed.
    pub messages: Pruned<'a>,
    /// Older copies of repeated results replaced by [`DUPLICATE_MARKER`].
    pub deduplicated: usize,
    /// Results replaced by a one-line stub.
    pub stubbed: usize,
    /// Assistant messages whose tool-call arguments were cut.
    pub args_truncated: usize,
    /// Results whose images were replaced by [`SCREENSHOT_MARKER`] (and nothing else).
    pub media_removed: usize,
    /// The calls whose results were considered for a stub, classified: the pass hands them on
    /// to the ledger and the summary, so no call is classified twice.
    pub actions: ActionTable<'a>,
}

impl<'a> PruneOutcome<'a> {
    /// `messages` before any pass ran.
    pub(super) fn unchanged(messages: &'a [Message]) -> Self {
        PruneOutcome {
            messages: Pruned::new(messages),
            deduplicated: 0,
            stubbed: 0,
            args_truncated: 0,
            media_removed: 0,
            actions: ActionTable::default(),
        }
    }

    /// Messages whose content changed.
    pub fn pruned(&self) -> usize {
        self.deduplicated + self.stubbed + self.args_truncated + self.media_removed
    }
}

/// Runs the four pruning passes over `messages`; the input is never modified, and only the
/// messages that change are copied.
pub fn prune_old_tool_results<'a>(
    messages: &'a [Message],
    config: &PruneConfig,
    counter: &dyn TokenCounter,
) -> PruneOutcome<'a> {
    LazyPrune::new(messages, config, counter, &[]).into_outcome()
}

/// Where a tool result's call is: `(assistant message index, index in its tool_calls)`.
pub(super) type CallRef = (usize, usize);

/// Maps each tool message to the call it answers, by position: the nearest preceding assistant
/// message holding that id. A global id map would be wrong, because real transcripts (tau-bench)
/// reuse one id for different calls. When one assistant message repeats an id, its results are
/// matched to those calls in order.
pub(super) fn resolve_calls(messages: &[Message]) -> Vec<Option<CallRef>> {
    let mut resolved = vec![None; messages.len()];
    // id → the calls with that id in the latest assistant message holding it
    let mut latest: FxHashMap<&str, SameId> = FxHashMap::default();
    for (index, message) in messages.iter().enumerate() {
        match message.role {
            Role::Assistant if message.has_tool_calls() => {
                for (position, call) in message.calls().iter().enumerate() {
                    match latest.get_mut(call.id.as_str()) {
                        // The id again in this same message: its results match in order.
                        Some(same) if same.first.0 == index => same.more.push((index, position)),
                        // A newer message holding the id replaces an older one.
                        _ => {
                            latest.insert(call.id.as_str(), SameId::new((index, position)));
                        }
                    }
                }
            }
            Role::Tool => {
                let Some(id) = message.tool_call_id.as_deref() else {
                    continue;
                };
                if let Some(same) = latest.get_mut(id) {
                    resolved[index] = Some(same.next_match());
                }
            }
            _ => {}
        }
    }
    resolved
}

/// The calls one assistant message made under one id, and how many results were matched to
/// them. The first call is held inline: an id almost always names one call, and a vector per
/// call was one allocation per call of the conversation.
struct SameId {
    first: CallRef,
    /// Later calls of the same message with the same id (rare).
    more: Vec<CallRef>,
    matched: usize,
}

impl SameId {
    fn new(first: CallRef) -> Self {
        SameId {
            first,
            more: Vec::new(),
            matched: 0,
        }
    }

    /// The call the next result with this id answers: the calls in order, then the last one
    /// for any further results.
    fn next_match(&mut self) -> CallRef {
        let pick = self.matched.min(self.more.len());
        self.matched += 1;
        match pick {
            0 => self.first,
            k => self.more[k - 1],
        }
    }
}

/// Pass 1: older copies of identical large results become [`DUPLICATE_MARKER`]. Returns how
/// many were replaced.
pub(super) fn deduplicate_results(pruned: &mut Pruned<'_>) -> usize {
    // The first pass: every message is still the original.
    let messages = pruned.originals();
    // Cheap key (length + the first and last 64 bytes) → indices of the newest copies with
    // that key. Hashing every byte of every result cost more than the rest of a pass on long
    // sessions; the key narrows candidates and a full comparison decides, so different results
    // are never merged.
    // The first copy with a key is held inline (most keys have one): a vector per key was one
    // allocation per candidate result.
    let mut newest: FxHashMap<(usize, u64), (usize, Vec<usize>)> = FxHashMap::default();
    let mut replaced = 0;
    for index in (0..messages.len()).rev() {
        let Some(text) = dedup_candidate(&messages[index]) else {
            continue;
        };
        let (first, more) = match newest.entry(dedup_key(&text)) {
            Entry::Vacant(slot) => {
                slot.insert((index, Vec::new()));
                continue;
            }
            Entry::Occupied(slot) => slot.into_mut(),
        };
        let repeated = std::iter::once(&*first)
            .chain(more.iter())
            .any(|&kept| dedup_candidate(&messages[kept]).as_deref() == Some(text.as_ref()));
        if repeated {
            pruned.set_content(index, Content::Text(DUPLICATE_MARKER.to_string()));
            replaced += 1;
        } else {
            more.push(index);
        }
    }
    replaced
}

fn dedup_key(text: &str) -> (usize, u64) {
    use std::hash::{Hash, Hasher};
    let bytes = text.as_bytes();
    let edge = 64.min(bytes.len());
    // Any hash will do: the key only narrows the candidates a full comparison decides on.
    let mut h = rustc_hash::FxHasher::default();
    bytes[..edge].hash(&mut h);
    bytes[bytes.len() - edge..].hash(&mut h);
    (bytes.len(), h.finish())
}

/// The text of a tool result that is eligible for dedup: plain text (or text-only parts), large
/// enough, and not already a marker or stub.
fn dedup_candidate(message: &Message) -> Option<std::borrow::Cow<'_, str>> {
    if message.role != Role::Tool {
        return None;
    }
    let text = match message.content.as_ref()? {
        Content::Text(s) => std::borrow::Cow::Borrowed(s.as_str()),
        Content::Parts(parts) if !parts.is_empty() && parts.iter().all(is_text_part) => {
            std::borrow::Cow::Owned(Content::Parts(parts.clone()).text())
        }
        _ => return None,
    };
    let eligible = at_least_chars(&text, DEDUP_MIN_CHARS) && !is_already_pruned(&text);
    eligible.then_some(text)
}

/// `text` has at least `n` characters, without counting them when the byte length decides
/// (a character is 1 to 4 bytes).
fn at_least_chars(text: &str, n: usize) -> bool {
    let bytes = text.len();
    bytes >= n.saturating_mul(4) || (bytes >= n && text.chars().count() >= n)
}

fn is_text_part(part: &ContentPart) -> bool {
    part.type_name() == "text" && part.text_value().is_some()
}

/// Markers and stubs are the output of pruning; touching them again would break idempotence.
pub(super) fn is_already_pruned(text: &str) -> bool {
    text.starts_with("[Duplicate tool output")
        || text.starts_with("[screenshot removed")
        || text == LEGACY_CLEARED_MARKER
        || looks_like_stub(text)
}

/// Index of the first message of the protected tail.
///
/// Count mode keeps the last `protect_tail_count` messages. Token mode keeps the longest suffix
/// that fits `protect_tail_tokens`, but never fewer than `protect_tail_count` messages.
/// `original[i]`, when given, is the tokens of message `i` before pruning (a pass has them).
pub(super) fn prune_boundary(
    messages: &Pruned<'_>,
    config: &PruneConfig,
    counter: &dyn TokenCounter,
    original: &[u64],
) -> usize {
    let len = messages.len();
    if config.protect_tail_tokens == 0 {
        return len.saturating_sub(config.protect_tail_count);
    }
    let floor = config.protect_tail_count.min(len);
    let mut spent = 0usize;
    let mut boundary = len;
    for index in (0..len).rev() {
        let tokens = pruned_tokens(messages, index, counter, original.get(index).copied()) as usize;
        let floor_met = len - boundary >= floor;
        if floor_met && spent.saturating_add(tokens) > config.protect_tail_tokens {
            break;
        }
        spent = spent.saturating_add(tokens);
        boundary = index;
    }
    boundary
}

/// Tokens of message `index` as pruned so far: `original` (a pass's count of the input
/// message, when it has one) while pruning has not changed it, else counted.
pub(super) fn pruned_tokens(
    messages: &Pruned<'_>,
    index: usize,
    counter: &dyn TokenCounter,
    original: Option<u64>,
) -> u64 {
    match original {
        Some(count) if !messages.is_changed(index) => count,
        _ => messages
            .get(index)
            .map_or(0, |m| counter.count_message(m) as u64),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use crate::tokens::RoughCounter;
    use proptest::prelude::*;
    use serde_json::Value;

    fn call(id: &str, name: &str, args: &str) -> Message {
        Message::assistant_tool_calls(vec![ToolCall::function(id, name, args)])
    }

    fn lines(n: usize, word: &str) -> String {
        let all: Vec<String> = (0..n).map(|i| format!("{word} line {i}")).collect();
        all.join("\n")
    }

    /// system, user, `turns` × (Bash call, 40-line result), user.
    fn session(turns: usize) -> Vec<Message> {
        let mut messages = vec![Message::system("sys"), Message::user("fix the build")];
        for t in 0..turns {
            let id = format!("call_{t}");
            messages.push(call(&id, "Bash", &format!(r#"{{"command":"step {t}"}}"#)));
            messages.push(Message::tool(id, lines(40, &format!("output{t}"))));
        }
        messages.push(Message::user("thanks"));
        messages
    }

    fn count_mode(tail: usize) -> PruneConfig {
        PruneConfig {
            protect_tail_count: tail,
            ..PruneConfig::default()
        }
    }

    fn token_mode(tail: usize, budget: usize) -> PruneConfig {
        PruneConfig {
            protect_tail_tokens: budget,
            ..count_mode(tail)
        }
    }

    /// A pruning's result with the pruned conversation copied out, for comparisons.
    #[derive(Debug)]
    struct Out {
        messages: Vec<Message>,
        deduplicated: usize,
        stubbed: usize,
        args_truncated: usize,
        media_removed: usize,
        pruned: usize,
    }

    impl Out {
        fn pruned(&self) -> usize {
            self.pruned
        }
    }

    fn prune(messages: &[Message], config: &PruneConfig) -> Out {
        let out = prune_old_tool_results(messages, config, &RoughCounter);
        let changed = (0..messages.len())
            .filter(|&i| out.messages.is_changed(i))
            .count();
        // Every counted change is one changed message, and nothing else was copied.
        assert_eq!(changed, out.pruned());
        assert_eq!(out.messages.changed_count(), out.pruned());
        Out {
            deduplicated: out.deduplicated,
            stubbed: out.stubbed,
            args_truncated: out.args_truncated,
            media_removed: out.media_removed,
            pruned: out.pruned(),
            messages: out.messages.into_vec(),
        }
    }

    fn tokens(messages: &[Message]) -> usize {
        messages.iter().map(|m| RoughCounter.count_message(m)).sum()
    }

    #[test]
    fn dedup_keeps_the_newest_copy_even_inside_the_tail() {
        let big = lines(30, "same");
        let mut messages = vec![Message::user("go")];
        for id in ["a", "b", "c"] {
            messages.push(call(id, "Read", r#"{"file_path":"x.rs"}"#));
            messages.push(Message::tool(id, big.clone()));
        }
        // Identical but short results are left alone: a marker would save nothing.
        messages.extend([Message::tool("c", "a.rs"), Message::tool("c", "a.rs")]);
        let out = prune(&messages, &count_mode(100));
        assert_eq!((out.deduplicated, out.pruned()), (2, 2));
        assert_eq!(out.messages[2].text(), DUPLICATE_MARKER);
        assert_eq!(out.messages[4].text(), DUPLICATE_MARKER);
        assert_eq!(out.messages[6].text(), big);
    }

    /// Results whose cheap keys collide (same length, same first and last 64 bytes) but
    /// differ inside: each is compared in full, and an older copy of the second one kept is
    /// still found.
    #[test]
    fn dedup_compares_every_kept_result_under_a_colliding_key() {
        let (edge, middle) = ("e".repeat(80), |c: &str| c.repeat(100));
        let result = |c: &str| format!("{edge}{}{edge}", middle(c));
        let mut messages = vec![Message::user("go")];
        for (id, c) in [("a", "y"), ("b", "y"), ("c", "x")] {
            messages.push(call(id, "Read", r#"{"file_path":"x.rs"}"#));
            messages.push(Message::tool(id, result(c)));
        }
        let out = prune(&messages, &count_mode(100));
        assert_eq!(out.deduplicated, 1);
        assert_eq!(out.messages[2].text(), DUPLICATE_MARKER);
        assert_eq!(out.messages[4].text(), result("y"));
        assert_eq!(out.messages[6].text(), result("x"));
    }

    #[test]
    fn old_large_results_become_stubs_and_the_tail_is_untouched() {
        let messages = session(6);
        let out = prune(&messages, &count_mode(5));
        let boundary = messages.len() - 5;
        assert_eq!(out.stubbed, 4);
        let stub = out.messages[3].text();
        assert_eq!(stub, "[Bash] ran `step 0` -> 40 lines output");
        assert_eq!(&out.messages[boundary..], &messages[boundary..]);
        assert_eq!(out.messages.len(), messages.len());
        for (a, b) in out.messages.iter().zip(&messages) {
            assert_eq!((a.role, &a.tool_call_id), (b.role, &b.tool_call_id));
        }
    }

    #[test]
    fn pruning_twice_changes_nothing_more() {
        let mut messages = session(8);
        messages.insert(3, Message::tool("call_0", lines(40, "output1")));
        let big_args = format!(r#"{{"file_path":"a.md","content":"{}"}}"#, "w".repeat(900));
        messages.insert(2, call("w", "Write", &big_args));
        for config in [count_mode(4), token_mode(20, 300)] {
            let once = prune(&messages, &config);
            assert!(once.pruned() > 0);
            let twice = prune(&once.messages, &config);
            assert_eq!(twice.pruned(), 0, "{twice:?}");
            assert_eq!(twice.messages, once.messages);
        }
    }

    #[test]
    fn the_input_is_never_modified() {
        let messages = session(5);
        let copy = messages.clone();
        assert!(prune(&messages, &count_mode(2)).pruned() > 0);
        assert_eq!(messages, copy);
    }

    #[test]
    fn large_arguments_outside_the_tail_stay_valid_json() {
        let content = "日本".repeat(400);
        let args = format!(r#"{{"file_path":"big.txt","content":"{content}","n":7}}"#);
        let mut messages = vec![call("w", "Write", &args), Message::tool("w", "ok")];
        messages.extend(session(2));
        let out = prune(&messages, &count_mode(3));
        assert_eq!(out.args_truncated, 1);
        let cut = &out.messages[0].calls()[0].function.arguments;
        let parsed: Value = serde_json::from_str(cut).unwrap();
        assert_eq!(parsed["n"], 7);
        let leaf = parsed["content"].as_str().unwrap();
        assert_eq!(
            leaf,
            format!("{}{ARGS_TRUNCATION_MARKER}", "日本".repeat(100))
        );
    }

    #[test]
    fn argument_truncation_recurses_and_leaves_non_json_alone() {
        let raw = format!("*** Begin Patch\n{}", "+x\n".repeat(400));
        assert_eq!(truncate_tool_call_args(&raw, 200), None);
        let bare_string = format!("\"{}\"", "s".repeat(900));
        assert_eq!(truncate_tool_call_args(&bare_string, 200), None);
        assert_eq!(truncate_tool_call_args(r#"{"a":"short"}"#, 200), None);
        let messages = vec![call("p", "apply_patch", &raw), Message::tool("p", "ok")];
        let out = prune(&messages, &count_mode(0));
        assert_eq!(out.messages[0].calls()[0].function.arguments, raw);

        let args = format!(
            r#"{{"edits":[{{"old":"{}","new":"short"}}],"n":1.5}}"#,
            "o".repeat(300)
        );
        let once = truncate_tool_call_args(&args, 10).unwrap();
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(
            v["edits"][0]["old"],
            format!("oooooooooo{ARGS_TRUNCATION_MARKER}")
        );
        assert_eq!(
            (&v["edits"][0]["new"], &v["n"]),
            (&Value::from("short"), &Value::from(1.5))
        );
        assert_eq!(truncate_tool_call_args(&once, 10), None);
    }

    #[test]
    fn reused_tool_call_ids_map_to_the_nearest_preceding_call() {
        let messages = vec![
            call("call_1", "get_user_details", r#"{"user_id":"mia_li_3668"}"#),
            Message::tool("call_1", "u".repeat(400)),
            call(
                "call_1",
                "search_direct_flight",
                r#"{"origin":"JFK","dest":"SEA"}"#,
            ),
            Message::tool("call_1", "f".repeat(400)),
            Message::user("ok"),
        ];
        let out = prune(&messages, &count_mode(1));
        let (first, second) = (out.messages[1].text(), out.messages[3].text());
        assert!(
            first.starts_with("[get_user_details] user_id=mia_li_3668 "),
            "{first}"
        );
        assert!(
            second.starts_with("[search_direct_flight] origin=JFK dest=SEA "),
            "{second}"
        );
    }

    #[test]
    fn results_resolve_to_calls_by_position_with_ids_repeated_inside_and_across_messages() {
        let twice = Message::assistant_tool_calls(vec![
            ToolCall::function("a", "f", "{}"),
            ToolCall::function("b", "g", "{}"),
            ToolCall::function("a", "h", "{}"),
        ]);
        let messages = vec![
            twice,                    // 0: a, b, a
            Message::tool("a", "1"),  // 1 → (0, 0)
            Message::tool("a", "2"),  // 2 → (0, 2)
            Message::tool("a", "3"),  // 3 → (0, 2): more results than calls
            Message::tool("b", "4"),  // 4 → (0, 1)
            call("a", "f", "{}"),     // 5: a newer message holding `a`
            Message::tool("a", "5"),  // 6 → (5, 0)
            Message::tool("b", "6"),  // 7 → (0, 1): `b` was not replaced
            Message::tool("zz", "7"), // 8 → no call
            Message::user("u"),       // 9
        ];
        assert_eq!(
            resolve_calls(&messages),
            [
                None,
                Some((0, 0)),
                Some((0, 2)),
                Some((0, 2)),
                Some((0, 1)),
                None,
                Some((5, 0)),
                Some((0, 1)),
                None,
                None,
            ]
        );
    }

    #[test]
    fn images_in_old_results_are_replaced_with_a_marker() {
        let mut shot = Message::tool("s", "");
        shot.content = Some(Content::Parts(vec![
            ContentPart::text("page loaded"),
            ContentPart::image_url("data:image/png;base64,AAAA"),
        ]));
        let messages = vec![
            call("s", "browser_snapshot", "{}"),
            shot,
            Message::user("u"),
        ];
        let out = prune(&messages, &count_mode(1));
        assert_eq!(out.media_removed, 1);
        let Some(Content::Parts(parts)) = &out.messages[1].content else {
            panic!("parts expected")
        };
        assert_eq!(parts[1].text_value(), Some(SCREENSHOT_MARKER));
        assert_eq!(prune(&out.messages, &count_mode(1)).pruned(), 0);
    }

    #[test]
    fn token_mode_message_floor_is_the_protected_count_uncapped() {
        let messages = session(10);
        let tight = token_mode(20, 1);
        assert_eq!(
            prune_boundary(&Pruned::new(&messages), &tight, &RoughCounter, &[]),
            messages.len() - 20,
            "--protect-last 20 means 20, not 8"
        );
        let roomy = token_mode(20, 1_000_000);
        assert_eq!(
            prune_boundary(&Pruned::new(&messages), &roomy, &RoughCounter, &[]),
            0
        );
        // Counts the caller already has give the same boundary as counting.
        let counts: Vec<u64> = messages
            .iter()
            .map(|m| RoughCounter.count_message(m) as u64)
            .collect();
        for budget in [1, 50, 200, 600, 1_000_000] {
            let config = token_mode(3, budget);
            assert_eq!(
                prune_boundary(&Pruned::new(&messages), &config, &RoughCounter, &counts),
                prune_boundary(&Pruned::new(&messages), &config, &RoughCounter, &[]),
                "budget {budget}"
            );
        }
    }

    #[test]
    fn pressure_demotion_never_touches_the_protected_last_messages() {
        let messages = vec![
            Message::user("read it"),
            call("r", "Read", r#"{"file_path":"huge.rs"}"#),
            Message::tool("r", lines(2000, "huge")),
        ];
        let out = prune(&messages, &token_mode(2, 100));
        assert_eq!(
            out.pruned(),
            0,
            "the last 2 messages are verbatim by promise"
        );
        assert_eq!(out.messages, messages);
    }

    #[test]
    fn pressure_demotion_spares_the_newest_result_when_it_can() {
        let mut messages = session(4);
        let last = messages.len() - 2;
        messages[last] = Message::tool("call_3", lines(20, "newest"));
        let config = token_mode(1, 150);
        let out = prune(&messages, &config);
        assert_eq!(out.messages[last], messages[last]);
        let boundary = prune_boundary(&Pruned::new(&out.messages), &config, &RoughCounter, &[]);
        assert!(tokens(&out.messages[boundary..]) <= 225);
        assert!(out.stubbed >= 3);
    }

    #[test]
    fn pressure_demotion_takes_the_newest_result_as_a_last_resort() {
        let messages = vec![
            Message::user("read it"),
            call("r", "Read", r#"{"file_path":"huge.rs"}"#),
            Message::tool("r", lines(2000, "huge")),
        ];
        let out = prune(&messages, &token_mode(0, 100));
        assert_eq!(out.stubbed, 1);
        let stub = out.messages[2].text();
        assert!(
            stub.starts_with("[Read] read huge.rs lines 1-2000 ("),
            "{stub}"
        );
    }

    #[test]
    fn real_claude_code_sessions_shrink_without_losing_messages() {
        let name = "shared/data/normalized/spotter-claude-code.jsonl";
        let candidates = [
            format!("{}/../../../{name}", env!("CARGO_MANIFEST_DIR")),
            format!("/work/{name}"),
        ];
        let Some(text) = candidates
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
        else {
            eprintln!("note: spotter-claude-code.jsonl not found; skipping the real-data test");
            return;
        };
        let config = token_mode(20, 8_000);
        let (mut before, mut after, mut stubbed) = (0, 0, 0);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let record: Value = serde_json::from_str(line).unwrap();
            let values = record["messages"].as_array().unwrap().iter().cloned();
            let messages: Vec<Message> = values
                .enumerate()
                .map(|(i, v)| Message::from_value(v, i).unwrap())
                .collect();
            let out = prune(&messages, &config);
            assert_eq!(out.messages.len(), messages.len());
            for (new, old) in out.messages.iter().zip(&messages) {
                assert_eq!((new.role, &new.tool_call_id), (old.role, &old.tool_call_id));
                if new != old && new.role == Role::Tool && looks_like_stub(&new.text()) {
                    assert!(new.text().chars().count() < old.text().chars().count());
                }
            }
            assert_eq!(prune(&out.messages, &config).pruned(), 0);
            stubbed += out.stubbed;
            before += tokens(&messages);
            after += tokens(&out.messages);
        }
        assert!(stubbed > 0 && after < before, "{before} -> {after}");
    }

    fn arb_conversation() -> impl Strategy<Value = Vec<Message>> {
        let step = (0usize..4, 0usize..3, 0usize..600, "[a-z日本 \\n]{0,12}");
        prop::collection::vec(step, 0..24).prop_map(|steps| {
            let build = |(i, (kind, id, size, word)): (usize, (usize, usize, usize, String))| {
                let id = format!("id{id}");
                match kind {
                    0 => Message::user(word.repeat(size / 8 + 1)),
                    1 => call(
                        &id,
                        "Bash",
                        &format!(r#"{{"command":"{}"}}"#, "c".repeat(size)),
                    ),
                    2 => Message::tool(id, word.repeat(size / 4)),
                    _ => Message::tool(id, format!("{i}{}", "r".repeat(size))),
                }
            };
            steps.into_iter().enumerate().map(build).collect()
        })
    }

    proptest! {
        #[test]
        fn pruning_preserves_shape_and_is_idempotent(
            messages in arb_conversation(),
            tail in 0usize..10,
            budget in prop::sample::select(vec![0usize, 50, 400]),
        ) {
            let config = token_mode(tail, budget);
            let once = prune(&messages, &config);
            prop_assert_eq!(once.messages.len(), messages.len());
            prop_assert!(tokens(&once.messages) <= tokens(&messages));
            let twice = prune(&once.messages, &config);
            prop_assert_eq!(twice.pruned(), 0);
            prop_assert_eq!(twice.messages, once.messages);
        }
    }
}
