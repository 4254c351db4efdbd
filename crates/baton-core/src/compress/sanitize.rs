//! Repairs and checks after assembly: tool-call pairing, old media, sequence validity.
//!
//! Cutting a conversation can orphan a tool result (its call was summarized) or leave a call
//! unanswered (its result was summarized). Providers reject both, so the assembled messages
//! are repaired here. Pairs are matched *positionally*: a tool result answers the calls of the
//! assistant message right before its tool run, never a same-id call elsewhere, because real
//! transcripts (tau-bench among them) reuse ids for different calls across turns.

use crate::compress::boundary::{is_blank_content, leading_instructions};
use crate::message::{Content, ContentPart, Message, Role, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

/// Content given to an assistant message whose only tool calls were removed, so the message
/// is not left empty (providers reject an assistant message with neither content nor calls).
pub const REMOVED_CALL_PLACEHOLDER: &str = "(tool call removed)";

/// Replaces an image in a message older than the newest user image.
pub const STRIPPED_IMAGE_TEXT: &str =
    "[Image from earlier in the conversation, removed when the context was compacted]";

/// What [`sanitize_tool_pairs`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SanitizeReport {
    /// Tool results dropped because no call of the assistant before them matched.
    pub orphan_results_removed: usize,
    /// Tool calls dropped because no result answered them.
    pub calls_removed: usize,
}

/// The assistant message whose tool run is being read, and which of its calls have a result.
struct OpenGroup {
    assistant: usize,
    answered: Vec<bool>,
}

/// Drops orphan tool results and strips unanswered tool calls (see the module docs for the
/// matching rule). An assistant message left without calls and without content gets
/// [`REMOVED_CALL_PLACEHOLDER`].
///
/// Unanswered calls are stripped rather than given stub results: a stub must repeat the call's
/// id exactly, and ids are where providers disagree (`call_id` versus `id`), so a stub that
/// looks right here can still be rejected upstream.
pub fn sanitize_tool_pairs(messages: Vec<Message>) -> (Vec<Message>, SanitizeReport) {
    let (out, report) = sanitize_kept(messages.into_iter().map(Cow::Owned).collect());
    (out.into_iter().map(Cow::into_owned).collect(), report)
}

/// [`sanitize_tool_pairs`] over messages a pass keeps, borrowed from its input until one is
/// changed (an assistant message loses a call).
pub(crate) fn sanitize_kept(
    messages: Vec<Cow<'_, Message>>,
) -> (Vec<Cow<'_, Message>>, SanitizeReport) {
    let mut out: Vec<Cow<'_, Message>> = Vec::with_capacity(messages.len());
    let mut report = SanitizeReport::default();
    let mut group: Option<OpenGroup> = None;
    for message in messages {
        if message.role == Role::Tool {
            let claimed = group.as_mut().and_then(|g| {
                let k = answering_call(
                    out[g.assistant].calls(),
                    &g.answered,
                    message.tool_call_id.as_deref(),
                )?;
                g.answered[k] = true;
                Some(())
            });
            match claimed {
                Some(()) => out.push(message),
                None => report.orphan_results_removed += 1,
            }
            continue;
        }
        if let Some(g) = group.take() {
            report.calls_removed += strip_unanswered(&mut out[g.assistant], &g.answered);
        }
        if message.role == Role::Assistant && message.has_tool_calls() {
            group = Some(OpenGroup {
                assistant: out.len(),
                answered: vec![false; message.calls().len()],
            });
        }
        out.push(message);
    }
    if let Some(g) = group {
        report.calls_removed += strip_unanswered(&mut out[g.assistant], &g.answered);
    }
    (out, report)
}

/// The call a result with `result_id` answers: the first still-unanswered call with that id
/// (or `call_id`, the Responses API's name for it). A result without an id answers the first
/// unanswered call, since datasets that drop ids still keep results in call order.
pub(crate) fn answering_call(
    calls: &[ToolCall],
    answered: &[bool],
    result_id: Option<&str>,
) -> Option<usize> {
    calls
        .iter()
        .zip(answered)
        .position(|(call, done)| !done && result_id.is_none_or(|id| call_has_id(call, id)))
}

fn call_has_id(call: &ToolCall, id: &str) -> bool {
    call.id == id || call.extra.get("call_id").and_then(Value::as_str) == Some(id)
}

/// Removes the calls not marked answered; returns how many were removed. A message that keeps
/// every call is left as it is (borrowed when it was).
fn strip_unanswered(assistant: &mut Cow<'_, Message>, answered: &[bool]) -> usize {
    let removed = answered.iter().filter(|done| !**done).count();
    if removed == 0 {
        return 0;
    }
    let assistant = assistant.to_mut();
    let kept: Vec<ToolCall> = assistant
        .calls()
        .iter()
        .zip(answered)
        .filter(|(_, done)| **done)
        .map(|(call, _)| call.clone())
        .collect();
    if kept.is_empty() {
        assistant.tool_calls = None;
        if is_blank_content(assistant.content.as_ref()) {
            assistant.content = Some(Content::Text(REMOVED_CALL_PLACEHOLDER.into()));
        }
    } else {
        assistant.tool_calls = Some(kept);
    }
    removed
}

/// Replaces image parts older than the newest user message with an image by a short text
/// part. Only the latest attachment is what the user is asking about; earlier screenshots
/// cost ~1,600 tokens each on every request and the summary already describes them.
/// Nothing changes when no user message has an image, or the only one is the first message.
pub fn strip_historical_media(messages: Vec<Message>) -> Vec<Message> {
    strip_media_kept(messages.into_iter().map(Cow::Owned).collect())
        .into_iter()
        .map(Cow::into_owned)
        .collect()
}

/// [`strip_historical_media`] over messages a pass keeps: only a message with an image to
/// replace is copied.
pub(crate) fn strip_media_kept(messages: Vec<Cow<'_, Message>>) -> Vec<Cow<'_, Message>> {
    let anchor = messages
        .iter()
        .rposition(|m| m.role == Role::User && has_image(m));
    match anchor {
        Some(anchor) if anchor > 0 => messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                if i < anchor && has_image(&m) {
                    Cow::Owned(without_images(m.into_owned()))
                } else {
                    m
                }
            })
            .collect(),
        _ => messages,
    }
}

fn has_image(message: &Message) -> bool {
    match &message.content {
        Some(Content::Parts(parts)) => parts.iter().any(ContentPart::is_image),
        _ => false,
    }
}

fn without_images(mut message: Message) -> Message {
    if let Some(Content::Parts(parts)) = &mut message.content {
        for part in parts.iter_mut().filter(|p| p.is_image()) {
            *part = ContentPart::text(STRIPPED_IMAGE_TEXT);
        }
    }
    message
}

/// Why a message sequence would be rejected by a chat API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SequenceError {
    #[error(
        "message {index}: tool result `{tool_call_id}` follows no assistant message with tool calls"
    )]
    ResultWithoutCall { index: usize, tool_call_id: String },
    #[error(
        "message {index}: tool result `{tool_call_id}` answers no open call of message {assistant}"
    )]
    UnmatchedResult {
        index: usize,
        assistant: usize,
        tool_call_id: String,
    },
    #[error(
        "message {index}: tool call `{call_id}` is never answered by the tool results after it"
    )]
    UnansweredCall { index: usize, call_id: String },
    #[error("message {index}: a second `{role}` message in a row")]
    RepeatedRole { index: usize, role: Role },
    #[error("no user message: providers reject a conversation without one")]
    NoUserMessage,
}

/// Checks that `messages` is a sequence chat APIs accept: every tool result sits in the tool
/// run right after the assistant that called it and answers one of its calls, every call is
/// answered, there is a user message, and no two consecutive messages share a role except tool
/// results and the leading system/developer messages. The compressor's property tests run
/// every output through this.
pub fn validate_sequence(messages: &[Message]) -> Result<(), SequenceError> {
    let head = leading_instructions(messages);
    let mut group: Option<OpenGroup> = None;
    for (index, message) in messages.iter().enumerate() {
        if message.role == Role::Tool {
            check_result(messages, index, group.as_mut())?;
            continue;
        }
        if let Some(g) = group.take() {
            check_answered(messages, &g)?;
        }
        if index > head && messages[index - 1].role == message.role {
            return Err(SequenceError::RepeatedRole {
                index,
                role: message.role,
            });
        }
        if message.role == Role::Assistant && message.has_tool_calls() {
            group = Some(OpenGroup {
                assistant: index,
                answered: vec![false; message.calls().len()],
            });
        }
    }
    if let Some(g) = group {
        check_answered(messages, &g)?;
    }
    if messages.iter().any(|m| m.role == Role::User) {
        Ok(())
    } else {
        Err(SequenceError::NoUserMessage)
    }
}

fn check_result(
    messages: &[Message],
    index: usize,
    group: Option<&mut OpenGroup>,
) -> Result<(), SequenceError> {
    let id = messages[index].tool_call_id.as_deref();
    let tool_call_id = id.unwrap_or("").to_string();
    let Some(g) = group else {
        return Err(SequenceError::ResultWithoutCall {
            index,
            tool_call_id,
        });
    };
    match answering_call(messages[g.assistant].calls(), &g.answered, id) {
        Some(k) => {
            g.answered[k] = true;
            Ok(())
        }
        None => Err(SequenceError::UnmatchedResult {
            index,
            assistant: g.assistant,
            tool_call_id,
        }),
    }
}

fn check_answered(messages: &[Message], group: &OpenGroup) -> Result<(), SequenceError> {
    let calls = messages[group.assistant].calls();
    match group.answered.iter().position(|done| !done) {
        Some(k) => Err(SequenceError::UnansweredCall {
            index: group.assistant,
            call_id: calls[k].id.clone(),
        }),
        None => Ok(()),
    }
}

/// Generators of realistic conversations for property tests across the `compress` modules:
/// parallel tool calls, ids reused within and across groups, null/empty content, multimodal
/// parts and CJK text. Every generated conversation passes [`validate_sequence`].
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod strategies {
    use crate::message::{Content, ContentPart, Message, ToolCall};
    use proptest::prelude::*;

    pub fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("  \n ".to_string()),
            "[a-z ]{1,40}",
            "[一-龥]{1,16}",
            "[a-zA-Z0-9 .,!?\n]{20,400}",
            Just("héllo 👋 мир — 東京".to_string()),
        ]
    }

    fn with_image(text: String) -> Content {
        Content::Parts(vec![
            ContentPart::text(text),
            ContentPart::image_url("data:image/png;base64,AAAA"),
        ])
    }

    /// Content of any shape: absent, null, text, or text plus an image.
    pub fn content() -> impl Strategy<Value = Option<Content>> {
        prop_oneof![
            Just(None),
            Just(Some(Content::Null)),
            text().prop_map(|t| Some(Content::Text(t))),
            text().prop_map(|t| Some(with_image(t))),
        ]
    }

    fn message(role: fn(String) -> Message, content: Option<Content>) -> Message {
        let mut m = role(String::new());
        m.content = content;
        m
    }

    /// One assistant message with 1-3 calls (ids from a pool of three, so duplicates happen)
    /// and one result per call, in call order or reversed.
    fn tool_round() -> impl Strategy<Value = Vec<Message>> {
        (
            prop_oneof![Just(None), Just(Some(Content::Null)), content()],
            prop::collection::vec((0u8..3, content()), 1..4),
            any::<bool>(),
        )
            .prop_map(|(content, calls, reverse)| {
                let ids: Vec<String> = calls.iter().map(|(k, _)| format!("call_{k}")).collect();
                let mut a = Message::assistant_tool_calls(
                    ids.iter()
                        .map(|id| ToolCall::function(id, "lookup", "{\"q\":1}"))
                        .collect(),
                );
                a.content = content;
                let mut results: Vec<Message> = ids
                    .iter()
                    .zip(calls)
                    .map(|(id, (_, c))| {
                        let mut t = Message::tool(id.clone(), "");
                        t.content = c;
                        t
                    })
                    .collect();
                if reverse {
                    results.reverse();
                }
                std::iter::once(a).chain(results).collect()
            })
    }

    /// A user message, 0-2 tool rounds, and a final reply (optional after a tool round).
    fn turn() -> impl Strategy<Value = Vec<Message>> {
        (
            content(),
            prop::collection::vec(tool_round(), 0..3),
            prop::option::of(content()),
        )
            .prop_map(|(user, rounds, reply)| {
                let mut v = vec![message(Message::user, user)];
                let had_rounds = !rounds.is_empty();
                v.extend(rounds.into_iter().flatten());
                match reply {
                    Some(c) => v.push(message(Message::assistant, c)),
                    None if !had_rounds => v.push(Message::assistant("ok")),
                    None => {}
                }
                v
            })
    }

    /// An optional system prompt, 1-8 turns, and maybe a pending user message at the end.
    pub fn conversation() -> impl Strategy<Value = Vec<Message>> {
        (
            any::<bool>(),
            prop::collection::vec(turn(), 1..9),
            prop::option::of(text()),
        )
            .prop_map(|(system, turns, pending)| {
                let mut v = Vec::new();
                if system {
                    v.push(Message::system("You are a helpful agent."));
                }
                v.extend(turns.into_iter().flatten());
                if let Some(t) = pending {
                    v.push(Message::user(t));
                }
                v
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn call(id: &str) -> ToolCall {
        ToolCall::function(id, "read", "{}")
    }

    #[test]
    fn orphan_results_are_dropped_and_unanswered_calls_stripped() {
        let v = vec![
            Message::tool("gone", "result of a summarized call"),
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("a"), call("b")]),
            Message::tool("a", "1"),
        ];
        let (out, report) = sanitize_tool_pairs(v);
        assert_eq!(report.orphan_results_removed, 1);
        assert_eq!(report.calls_removed, 1);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].calls().len(), 1);
        assert_eq!(out[1].calls()[0].id, "a");
        validate_sequence(&out).unwrap();
    }

    #[test]
    fn an_assistant_left_without_calls_or_text_gets_a_placeholder() {
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("a")]),
        ];
        let (out, report) = sanitize_tool_pairs(v);
        assert_eq!(report.calls_removed, 1);
        assert!(out[1].tool_calls.is_none());
        assert_eq!(out[1].text(), REMOVED_CALL_PLACEHOLDER);
    }

    #[test]
    fn reused_ids_match_the_nearest_assistant_only() {
        // tau-bench reuses ids: the second result must not be paired with the first call.
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("x")]),
            Message::tool("x", "1"),
            Message::user("again"),
            Message::assistant_tool_calls(vec![call("x")]),
            Message::user("interrupted"),
            Message::tool("x", "late"),
        ];
        let (out, report) = sanitize_tool_pairs(v);
        assert_eq!(report.orphan_results_removed, 1);
        assert_eq!(report.calls_removed, 1);
        assert_eq!(out.len(), 6);
    }

    #[test]
    fn duplicate_ids_in_one_group_pair_in_order() {
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![call("d"), call("d")]),
            Message::tool("d", "1"),
        ];
        let (out, report) = sanitize_tool_pairs(v);
        assert_eq!(
            (report.calls_removed, report.orphan_results_removed),
            (1, 0)
        );
        assert_eq!(out[1].calls().len(), 1);
        validate_sequence(&out).unwrap();
    }

    #[test]
    fn responses_call_id_is_accepted_as_the_calls_id() {
        let mut c = call("fc_1");
        c.extra
            .insert("call_id".into(), Value::String("call_9".into()));
        let v = vec![
            Message::user("go"),
            Message::assistant_tool_calls(vec![c]),
            Message::tool("call_9", "ok"),
        ];
        let (_, report) = sanitize_tool_pairs(v);
        assert_eq!(report, SanitizeReport::default());
    }

    #[test]
    fn only_images_before_the_newest_user_image_are_replaced() {
        let image = |t: &str| {
            let mut m = Message::user("");
            m.content = Some(Content::Parts(vec![
                ContentPart::text(t),
                ContentPart::image_url("https://x/y.png"),
            ]));
            m
        };
        let mut shot = Message::tool("a", "");
        shot.content = image("shot").content;
        let v = vec![
            image("first"),
            shot,
            Message::assistant("seen"),
            image("latest"),
        ];
        let out = strip_historical_media(v.clone());
        assert_eq!(out[0].text(), format!("first\n{STRIPPED_IMAGE_TEXT}"));
        assert_eq!(out[1].text(), format!("shot\n{STRIPPED_IMAGE_TEXT}"));
        assert_eq!(out[3], v[3]);
        assert_eq!(strip_historical_media(v[..3].to_vec()), v[..3].to_vec());
    }

    #[test]
    fn validator_names_the_rule_and_the_index() {
        let ok = vec![
            Message::system("s"),
            Message::system("s2"),
            Message::user("u"),
        ];
        validate_sequence(&ok).unwrap();
        let cases: Vec<(Vec<Message>, SequenceError)> = vec![
            (
                vec![Message::user("u"), Message::tool("a", "r")],
                SequenceError::ResultWithoutCall {
                    index: 1,
                    tool_call_id: "a".into(),
                },
            ),
            (
                vec![
                    Message::user("u"),
                    Message::assistant_tool_calls(vec![call("a")]),
                    Message::tool("b", "r"),
                ],
                SequenceError::UnmatchedResult {
                    index: 2,
                    assistant: 1,
                    tool_call_id: "b".into(),
                },
            ),
            (
                vec![
                    Message::user("u"),
                    Message::assistant_tool_calls(vec![call("a")]),
                    Message::user("v"),
                ],
                SequenceError::UnansweredCall {
                    index: 1,
                    call_id: "a".into(),
                },
            ),
            (
                vec![Message::user("u"), Message::user("v")],
                SequenceError::RepeatedRole {
                    index: 1,
                    role: Role::User,
                },
            ),
            (
                vec![Message::system("s"), Message::assistant("a")],
                SequenceError::NoUserMessage,
            ),
        ];
        for (messages, expected) in cases {
            assert_eq!(validate_sequence(&messages), Err(expected));
        }
        let msg = SequenceError::RepeatedRole {
            index: 4,
            role: Role::User,
        }
        .to_string();
        assert!(msg.contains("message 4") && msg.contains("user"), "{msg}");
    }

    proptest! {
        #[test]
        fn generated_conversations_are_valid_and_sanitize_leaves_them_alone(v in strategies::conversation()) {
            validate_sequence(&v).unwrap();
            let (out, report) = sanitize_tool_pairs(v.clone());
            prop_assert_eq!(report, SanitizeReport::default());
            prop_assert_eq!(out, v);
        }

        #[test]
        fn sanitize_repairs_windows_cut_out_of_a_valid_conversation(
            v in strategies::conversation(),
            a in 0usize..60,
            b in 0usize..60,
        ) {
            let head = leading_instructions(&v);
            let body = &v[head..];
            let (s, e) = (a.min(body.len()), b.min(body.len()));
            let (s, e) = (s.min(e), s.max(e));
            let window: Vec<Message> = v[..head].iter().chain(&body[s..e]).cloned().collect();
            prop_assume!(window.iter().any(|m| m.role == Role::User));
            let (out, _) = sanitize_tool_pairs(window);
            prop_assert_eq!(validate_sequence(&out), Ok(()));
        }

        #[test]
        fn each_removed_result_strips_exactly_one_call(
            v in strategies::conversation(),
            drop in prop::collection::vec(any::<bool>(), 80),
        ) {
            let mut removed = 0;
            let kept: Vec<Message> = v.iter().enumerate().filter(|(i, m)| {
                let gone = m.role == Role::Tool && drop[*i % drop.len()];
                removed += usize::from(gone);
                !gone
            }).map(|(_, m)| m.clone()).collect();
            let (out, report) = sanitize_tool_pairs(kept);
            prop_assert_eq!(report.calls_removed, removed);
            prop_assert_eq!(report.orphan_results_removed, 0);
            match validate_sequence(&out) {
                Ok(()) | Err(SequenceError::RepeatedRole { .. }) => {}
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
    }
}
