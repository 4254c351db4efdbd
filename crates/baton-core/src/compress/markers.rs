//! The text markers that frame a compaction summary, and how to recognise them again.
//!
//! A summary travels inside an ordinary message, so everything downstream (the next compaction,
//! a resumed session, a memory provider, a frontend) must be able to tell it apart from a real
//! turn. Two signals do that: the in-process metadata key [`SUMMARY_KEY`] (fast, exact) and the
//! text itself (the only signal that survives a provider round trip or a store that drops
//! unknown keys). The text starts with a one-line [`SUMMARY_PREFIX`] and ends with
//! [`END_MARKER`]; when the summary had to be merged into a neighbouring message, the original
//! content sits between [`PRIOR_CONTEXT_OPEN`] and [`PRIOR_CONTEXT_CLOSE`] first.
//!
//! Summaries written by older Baton versions and by the reference design are recognised by
//! their opening tags ([`LEGACY_PREFIXES`]), so sessions stay interchangeable.

use crate::message::{Content, ContentPart, Message};
use serde_json::Value;

/// Opens every summary. Kept on one line on purpose: readers of any version strip a prefix
/// "from its tag to the end of the line", so the wording can change without stranding old
/// summaries.
pub const SUMMARY_PREFIX: &str = "[CONTEXT COMPACTION — REFERENCE ONLY] The summary below \
stands in for earlier turns of this conversation that were compacted out of an earlier context \
window. Read it as background history, not as instructions: the requests and questions it \
mentions were already dealt with, so do not take them up again. Reply only to the latest user \
message that comes after this summary; that message alone decides what to do now, even when it \
touches the same topic. Sections marked as historical describe past state and may be stale, and \
if the latest message changes direction (stop, undo, only check, something new), follow it. \
Persistent memory in the system prompt stays authoritative. Your tools remain fully available: \
keep calling them for the current task instead of describing what you would do. Files and other \
state may already reflect the work described here, so do not redo it:";

/// Tag every summary end marker starts with; readers cut at it, whatever follows on the line.
pub const END_MARKER_TAG: &str = "--- END OF CONTEXT SUMMARY";

/// Closes every summary, so a model reading a long summary knows where history stops and the
/// message it must answer begins.
pub const END_MARKER: &str =
    "--- END OF CONTEXT SUMMARY — answer the message that follows, not this summary ---";

/// Opens the original content of a message a summary was merged into.
pub const PRIOR_CONTEXT_OPEN: &str = "[PRIOR CONTEXT — for reference only; not a new message]";

/// Separates that original content from the summary that follows it.
pub const PRIOR_CONTEXT_CLOSE: &str = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]";

/// Appended once to the system prompt after the first compaction, so the model knows some of
/// its history now lives in a summary and that its persistent memory was not touched.
pub const COMPRESSION_NOTE: &str = "[Note: Earlier turns of this conversation were compacted \
into a handoff summary to save context space. The current state may already include work \
described there, so build on it rather than redoing it. Persistent memory (MEMORY.md, USER.md) \
stays authoritative whatever was compacted.]";

/// Opening tags of summary prefixes written before [`SUMMARY_PREFIX`] (by older Baton versions
/// or the reference design). The first two open a one-line prefix that runs to the end of its
/// line; the last is a whole prefix by itself, with the body right after it.
pub const LEGACY_PREFIXES: [&str; 3] = [
    "[CONTEXT COMPACTION — REFERENCE ONLY]",
    "[CONTEXT COMPACTION]",
    LEGACY_TAG_PREFIX,
];

/// The oldest, short prefix: the body follows on the same or the next line.
const LEGACY_TAG_PREFIX: &str = "[CONTEXT SUMMARY]:";

/// Metadata key marking a summary message. Keys starting with `_` never leave the process.
pub const SUMMARY_KEY: &str = "_baton_summary";

/// Prefix of every in-process metadata key Baton sets.
pub const INTERNAL_KEY_PREFIX: &str = "_baton_";

/// The reference design's metadata keys for the same facts; recognised on load and removed
/// before sending, because strict gateways reject unknown keys.
pub const FOREIGN_INTERNAL_KEYS: [&str; 2] =
    ["_compressed_summary", "_compressed_summary_has_user_turn"];

/// How a summary sits in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    /// The message is (or starts with) the summary.
    Standalone,
    /// The message's own content comes first, then [`PRIOR_CONTEXT_CLOSE`], then the summary.
    Merged,
}

/// `body` behind the current prefix. A body that already carries a known prefix is re-prefixed
/// rather than prefixed twice, so applying this again changes nothing and legacy summaries are
/// upgraded to the current wording.
pub fn with_summary_prefix(body: &str) -> String {
    let trimmed = body.trim();
    let bare = after_prefix(trimmed).unwrap_or(trimmed).trim();
    if bare.is_empty() {
        SUMMARY_PREFIX.to_string()
    } else {
        format!("{SUMMARY_PREFIX}\n{bare}")
    }
}

/// The summary body of `text`: the merged carrier's original content, the prefix (current or
/// legacy) and everything from the end marker on are removed. Text that is not a summary comes
/// back trimmed.
pub fn strip_summary_prefix(text: &str) -> String {
    let text = text.trim();
    let text = match text.find(PRIOR_CONTEXT_CLOSE) {
        Some(i) => text[i + PRIOR_CONTEXT_CLOSE.len()..].trim_start(),
        None => text,
    };
    let body = after_prefix(text).unwrap_or(text);
    before_end_marker(body).trim().to_string()
}

/// Whether `text` holds a summary, and how.
///
/// A merged carrier starts with [`PRIOR_CONTEXT_OPEN`] and has a prefix right after
/// [`PRIOR_CONTEXT_CLOSE`]; checking the opening first keeps this O(1) for ordinary messages,
/// which matters because it runs over every message of long conversations.
pub fn classify_summary_content(text: &str) -> Option<SummaryKind> {
    let text = text.trim_start();
    // Every prefix opens with `[` (`summary_prefixes_open_with_a_bracket`): most messages are
    // told apart by their first character. This runs on every message several times a pass.
    if !text.starts_with(SUMMARY_OPENER) {
        return None;
    }
    if text.starts_with(PRIOR_CONTEXT_OPEN) {
        let merged = text
            .find(PRIOR_CONTEXT_CLOSE)
            .map(|i| &text[i + PRIOR_CONTEXT_CLOSE.len()..])
            .is_some_and(|rest| after_prefix(rest.trim_start()).is_some());
        if merged {
            return Some(SummaryKind::Merged);
        }
    }
    after_prefix(text).map(|_| SummaryKind::Standalone)
}

/// Whether `message` is (or carries) a compaction summary: the metadata key decides when it is
/// set, the content otherwise (summaries loaded from elsewhere have no metadata).
pub fn is_summary_message(message: &Message) -> bool {
    if has_summary_metadata(message) {
        return true;
    }
    match &message.content {
        Some(Content::Text(s)) => classify_summary_content(s).is_some(),
        // The parts are joined only when their text could open like a summary.
        Some(c @ Content::Parts(parts)) => {
            first_visible_char(parts) == Some(SUMMARY_OPENER)
                && classify_summary_content(&c.text()).is_some()
        }
        _ => false,
    }
}

/// What every summary prefix opens with.
const SUMMARY_OPENER: char = '[';

/// The first character of the parts' text, joined as [`Content::text`] joins it, that is not
/// whitespace (the joining newlines are whitespace too).
fn first_visible_char(parts: &[ContentPart]) -> Option<char> {
    parts
        .iter()
        .filter_map(ContentPart::text_value)
        .find_map(|t| t.trim_start().chars().next())
}

/// Whether the summary metadata key (ours or the reference design's) is set to `true`.
pub fn has_summary_metadata(message: &Message) -> bool {
    [SUMMARY_KEY, FOREIGN_INTERNAL_KEYS[0]]
        .iter()
        .any(|k| message.extra.get(k) == Some(&Value::Bool(true)))
}

/// Marks `message` as a summary carrier.
pub fn mark_summary(message: &mut Message) {
    message.extra.insert(SUMMARY_KEY.into(), Value::Bool(true));
}

/// Removes the summary metadata (ours and the reference design's), for a message that no
/// longer carries a summary.
pub fn unmark_summary(message: &mut Message) {
    message.extra.remove(SUMMARY_KEY);
    for key in FOREIGN_INTERNAL_KEYS {
        message.extra.remove(key);
    }
}

/// Whether `key` is internal: Baton's own metadata (`_baton_*`), the reference design's
/// (`_compressed_summary`), a converter's round-trip notes (`_anthropic`, `_sharegpt`), any
/// other `_`-prefixed key, and the per-message `meta` object importers fill (the
/// [`synthetic`](crate::synthetic) flags). No provider schema has such a key, and strict
/// gateways reject unknown ones, so none of them may be sent.
pub fn is_internal_key(key: &str) -> bool {
    key.starts_with('_') || key == crate::synthetic::META_KEY
}

/// Removes every internal key ([`is_internal_key`]) from the message, its content parts, its
/// tool calls and their functions: what a provider client calls on the copy it sends. Values
/// are not searched (a tool's arguments may legitimately hold `_`-keys). Never called before
/// saving: the store keeps them so a resumed session still knows which message is a summary.
pub fn strip_internal_keys(message: &mut Message) {
    strip_internal_keys_except(message, None);
}

/// [`strip_internal_keys`], but `keep` survives at every level: the Anthropic client keeps
/// its converter's notes (`_anthropic`) for the converter, which consumes them and writes none.
pub fn strip_internal_keys_except(message: &mut Message, keep: Option<&str>) {
    let drop = |key: &String| is_internal_key(key) && Some(key.as_str()) != keep;
    message.extra.retain(|k, _| !drop(k));
    if let Some(Content::Parts(parts)) = &mut message.content {
        for part in parts {
            part.fields_mut().retain(|k, _| !drop(k));
        }
    }
    for call in message.tool_calls.iter_mut().flatten() {
        call.extra.retain(|k, _| !drop(k));
        call.function.extra.retain(|k, _| !drop(k));
    }
}

/// Removes Baton's (and the reference design's) in-process metadata from the message, and
/// nothing else: what file writers call, so a compacted file carries its summary in the text
/// only (recognised again by [`is_summary_message`]) and stays sendable as it is, while the
/// user's own fields, whatever their names, round-trip.
pub fn strip_baton_metadata(message: &mut Message) {
    if has_baton_metadata(message) {
        message.extra.retain(|k, _| !is_baton_key(k));
    }
    strip_synthetic_flag(message);
}

/// Whether [`strip_baton_metadata`] would change `message`: it has Baton's metadata, or a
/// `meta` object that holds a `synthetic` field or nothing.
pub fn strip_changes(message: &Message) -> bool {
    use crate::synthetic::{META_KEY, SYNTHETIC_FIELD};
    has_baton_metadata(message)
        || matches!(
            message.extra.get(META_KEY),
            Some(Value::Object(meta)) if meta.is_empty() || meta.contains_key(SYNTHETIC_FIELD)
        )
}

/// Removes the importers' `meta.synthetic` flag (and `meta` when nothing else is left in it):
/// a file meant for a provider carries no field the provider's schema lacks, and the flag is
/// recognised again from the row's text when the file is read back.
fn strip_synthetic_flag(message: &mut Message) {
    use crate::synthetic::{META_KEY, SYNTHETIC_FIELD};
    let Some(Value::Object(meta)) = message.extra.get_mut(META_KEY) else {
        return;
    };
    meta.remove(SYNTHETIC_FIELD);
    if meta.is_empty() {
        message.extra.remove(META_KEY);
    }
}

/// Whether the message carries any of Baton's (or the reference design's) metadata keys, or
/// an importer's `meta.synthetic` flag.
pub fn has_baton_metadata(message: &Message) -> bool {
    message.extra.keys().any(|k| is_baton_key(k))
        || crate::synthetic::flagged_kind(message).is_some()
}

fn is_baton_key(key: &str) -> bool {
    key.starts_with(INTERNAL_KEY_PREFIX) || FOREIGN_INTERNAL_KEYS.contains(&key)
}

/// The text after a known leading prefix (left-trimmed), or `None` when `text` does not start
/// with one. The current prefix is matched exactly; older one-line prefixes by their tag, up to
/// the end of their line.
pub(crate) fn after_prefix(text: &str) -> Option<&str> {
    if let Some(rest) = text.strip_prefix(SUMMARY_PREFIX) {
        return Some(rest.trim_start());
    }
    if let Some(rest) = text.strip_prefix(LEGACY_TAG_PREFIX) {
        return Some(rest.trim_start());
    }
    LEGACY_PREFIXES[..2]
        .iter()
        .any(|tag| text.starts_with(tag))
        .then(|| text.find('\n').map_or("", |i| text[i + 1..].trim_start()))
}

/// `text` up to the end marker, if it has one.
pub(crate) fn before_end_marker(text: &str) -> &str {
    text.find(END_MARKER_TAG).map_or(text, |i| &text[..i])
}

/// `text` after the end marker's line (the content a prepended summary was merged into), or
/// `None` without an end marker.
pub(crate) fn after_end_marker(text: &str) -> Option<&str> {
    let at = text.find(END_MARKER_TAG)?;
    let rest = &text[at..];
    Some(rest.find('\n').map_or("", |i| rest[i + 1..].trim_start()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `classify_summary_content` turns away text that does not open with the bracket.
    #[test]
    fn summary_prefixes_open_with_a_bracket() {
        let prefixes = [SUMMARY_PREFIX, PRIOR_CONTEXT_OPEN, LEGACY_TAG_PREFIX]
            .into_iter()
            .chain(LEGACY_PREFIXES);
        for prefix in prefixes {
            assert!(prefix.starts_with(SUMMARY_OPENER), "{prefix}");
        }
    }

    proptest! {
        /// A message of several parts is a summary exactly when its joined text reads as one.
        #[test]
        fn parts_are_judged_as_their_joined_text(
            parts in proptest::collection::vec(
                "( |\n|\t|x|\\[|\\[CONTEXT SUMMARY\\]:|\\[CONTEXT COMPACTION\\] s){0,4}",
                0..4,
            ),
        ) {
            let content = Content::Parts(parts.iter().map(|p| ContentPart::text(p.as_str())).collect());
            let joined = content.text();
            let mut message = Message::user("");
            message.content = Some(content);
            prop_assert_eq!(
                is_summary_message(&message),
                classify_summary_content(&joined).is_some()
            );
        }
    }

    #[test]
    fn synthetic_flags_are_never_sent_and_never_written_but_a_users_meta_fields_are_kept() {
        let mut m = Message::user("<command-name>/clear</command-name>");
        crate::synthetic::mark(&mut m, crate::synthetic::SyntheticKind::SlashCommand);
        assert!(has_baton_metadata(&m));
        let mut sent = m.clone();
        strip_internal_keys(&mut sent);
        assert!(!sent.extra.contains_key("meta"));
        let mut written = m.clone();
        strip_baton_metadata(&mut written);
        assert!(!written.extra.contains_key("meta"));

        if let Some(Value::Object(meta)) = m.extra.get_mut("meta") {
            meta.insert("user_field".into(), Value::from(1));
        }
        strip_baton_metadata(&mut m);
        assert_eq!(m.extra["meta"], serde_json::json!({"user_field": 1}));
    }

    #[test]
    fn prefix_stays_on_one_line_and_starts_with_the_shared_tag() {
        assert!(!SUMMARY_PREFIX.contains('\n'));
        assert!(SUMMARY_PREFIX.starts_with(LEGACY_PREFIXES[0]));
        assert!(END_MARKER.starts_with(END_MARKER_TAG));
    }

    #[test]
    fn with_summary_prefix_is_idempotent_and_upgrades_legacy_prefixes() {
        let once = with_summary_prefix("## Goal\nship it");
        assert_eq!(once, format!("{SUMMARY_PREFIX}\n## Goal\nship it"));
        assert_eq!(with_summary_prefix(&once), once);
        assert_eq!(
            with_summary_prefix("[CONTEXT SUMMARY]: ## Goal\nship it"),
            once
        );
        let old = "[CONTEXT COMPACTION] Earlier turns were compacted. Old words.\n## Goal\nship it";
        assert_eq!(with_summary_prefix(old), once);
        assert_eq!(with_summary_prefix("  "), SUMMARY_PREFIX);
    }

    #[test]
    fn strip_removes_prefix_and_everything_from_the_end_marker() {
        let s = format!(
            "{}\n\n{END_MARKER}\n\nleftover",
            with_summary_prefix("body text")
        );
        assert_eq!(strip_summary_prefix(&s), "body text");
        let reference_style = "[CONTEXT COMPACTION — REFERENCE ONLY] Some other wording.\nbody\n\n--- END OF CONTEXT SUMMARY — other words ---";
        assert_eq!(strip_summary_prefix(reference_style), "body");
        assert_eq!(strip_summary_prefix("[CONTEXT SUMMARY]: short"), "short");
        assert_eq!(strip_summary_prefix("  just text  "), "just text");
    }

    #[test]
    fn strip_of_a_merged_carrier_keeps_only_the_summary() {
        let merged = format!(
            "{PRIOR_CONTEXT_OPEN}\nthe user's own words\n\n{PRIOR_CONTEXT_CLOSE}\n\n{}\n\n{END_MARKER}",
            with_summary_prefix("the body")
        );
        assert_eq!(strip_summary_prefix(&merged), "the body");
        assert_eq!(classify_summary_content(&merged), Some(SummaryKind::Merged));
    }

    #[test]
    fn classify_tells_standalone_merged_and_plain_apart() {
        assert_eq!(
            classify_summary_content(&with_summary_prefix("x")),
            Some(SummaryKind::Standalone)
        );
        assert_eq!(
            classify_summary_content("\n [CONTEXT SUMMARY]: x"),
            Some(SummaryKind::Standalone)
        );
        assert_eq!(classify_summary_content("hello"), None);
        assert_eq!(
            classify_summary_content("see [CONTEXT COMPACTION] later"),
            None
        );
        let fake = format!("{PRIOR_CONTEXT_OPEN}\nx\n{PRIOR_CONTEXT_CLOSE}\nno prefix here");
        assert_eq!(classify_summary_content(&fake), None);
    }

    #[test]
    fn summary_message_is_found_by_metadata_first_then_content() {
        let mut m = Message::user("ordinary words");
        assert!(!is_summary_message(&m));
        mark_summary(&mut m);
        assert!(is_summary_message(&m));
        let mut foreign = Message::user("ordinary words");
        foreign
            .extra
            .insert("_compressed_summary".into(), Value::Bool(true));
        assert!(is_summary_message(&foreign));
        assert!(is_summary_message(&Message::assistant(
            with_summary_prefix("b")
        )));
        let mut parts = Message::user("");
        parts.content = Some(Content::Parts(vec![ContentPart::text(
            with_summary_prefix("b"),
        )]));
        assert!(is_summary_message(&parts));
    }

    #[test]
    fn strip_internal_keys_removes_every_underscore_key_at_every_level() {
        let mut m = Message::assistant_tool_calls(vec![crate::message::ToolCall::function(
            "c1",
            "f",
            r#"{"_arg":1}"#,
        )]);
        m.content = Some(Content::Parts(vec![ContentPart::text("x")]));
        mark_summary(&mut m);
        m.extra.insert("_baton_other".into(), Value::Bool(true));
        m.extra
            .insert("_compressed_summary".into(), Value::Bool(true));
        m.extra.insert("_provider_field".into(), Value::Bool(true));
        m.extra.insert("_anthropic".into(), Value::Bool(true));
        m.extra
            .insert("thought_signature".into(), Value::String("s".into()));
        if let Some(Content::Parts(parts)) = &mut m.content {
            parts[0]
                .fields_mut()
                .insert("_note".into(), Value::Bool(true));
        }
        let calls = m.tool_calls.as_mut().unwrap();
        calls[0].extra.insert("_x".into(), Value::Bool(true));
        calls[0]
            .function
            .extra
            .insert("_y".into(), Value::Bool(true));

        let mut keeping = m.clone();
        strip_internal_keys_except(&mut keeping, Some("_anthropic"));
        let keys: Vec<&str> = keeping.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, ["_anthropic", "thought_signature"]);

        strip_internal_keys(&mut m);
        let keys: Vec<&str> = m.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, ["thought_signature"]);
        let sent = m.to_json();
        let outside_arguments = sent.replace(r#"\"_arg"#, "");
        assert!(!outside_arguments.contains("\"_"), "{sent}");
        assert!(
            sent.contains(r#"{\"_arg\":1}"#),
            "arguments untouched: {sent}"
        );
    }

    #[test]
    fn strip_baton_metadata_keeps_the_users_own_fields() {
        let mut m = Message::user("x");
        mark_summary(&mut m);
        m.extra.insert("_baton_other".into(), Value::Bool(true));
        m.extra.insert(
            "_compressed_summary_has_user_turn".into(),
            Value::Bool(true),
        );
        m.extra.insert("_dataset_id".into(), Value::from(7));
        strip_baton_metadata(&mut m);
        let keys: Vec<&str> = m.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, ["_dataset_id"]);
    }

    #[test]
    fn after_end_marker_returns_the_carried_content() {
        let s = format!(
            "{}\n\n{END_MARKER}\n\nmy question",
            with_summary_prefix("b")
        );
        assert_eq!(after_end_marker(&s), Some("my question"));
        assert_eq!(after_end_marker("no marker"), None);
    }

    proptest! {
        #[test]
        fn prefix_round_trips(body in "[^\\[\\-]{0,120}") {
            let prefixed = with_summary_prefix(&body);
            prop_assert_eq!(strip_summary_prefix(&prefixed), body.trim());
            prop_assert_eq!(with_summary_prefix(&prefixed), prefixed.clone());
            prop_assert_eq!(classify_summary_content(&prefixed), Some(SummaryKind::Standalone));
            let closed = format!("{prefixed}\n\n{END_MARKER}");
            prop_assert_eq!(strip_summary_prefix(&closed), body.trim());
        }
    }
}
