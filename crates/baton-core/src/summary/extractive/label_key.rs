//! A digest of a call's label ([`SpanCall::label`]: what identifies "the same call again"),
//! taken without building the label.
//!
//! The blockers section drops a failure when the same call succeeded later, which compares
//! labels. Building every call's label for that (a formatted, whitespace-folded string per
//! call) was a twentieth of a real session's compaction and more of a long span's (issue
//! #17), though only labels equal to a failed call's matter. The key is a hash of a label's
//! first [`KEY_CHARS`] non-whitespace characters: equal labels have equal keys, so a call
//! whose key differs from every failed call's cannot match one, and only the few that share
//! a key have their label built and compared.
//!
//! Why the label need not be built: a label is the call's texts put together by
//! `format!`, some of them folded to one line by `one_line`, which changes only whitespace
//! until it cuts the line, and it cuts only past 120 characters of folded text, which hold at
//! least 60 non-whitespace ones. So the label's first [`KEY_CHARS`] non-whitespace characters
//! are those of the same texts written unfolded, which is what [`SpanCall::label_key`]
//! writes. `every_calls_key_is_its_labels_key` checks the two agree.

use super::span::target_text;
use crate::summary::span_calls::SpanCall;
use crate::tool_action::ToolAction;
use std::fmt::Write;
use std::hash::Hasher;

/// Non-whitespace characters of a label the key reads: fewer than `one_line` keeps of a cut
/// line (60), so a cut never reaches them.
const KEY_CHARS: usize = 40;

/// The key of a label given as text.
pub(super) fn key_of_label(label: &str) -> u64 {
    let mut key = KeyWriter::default();
    // Stops with an error once the key has its characters.
    let _ = key.write_str(label);
    key.finish()
}

impl SpanCall<'_> {
    /// [`key_of_label`] of [`Self::label`], written from the call's texts unfolded: once for
    /// all the calls of one text when the pass's table holds it (the blockers section asks for
    /// every answered call's key).
    pub(super) fn label_key(&self) -> u64 {
        self.shared_key(Self::written_label_key)
    }

    fn written_label_key(&self) -> u64 {
        let mut key = KeyWriter::default();
        // The same pieces, in the same order, as `label` and `target` put together; an error
        // only means the key is complete.
        // Written piece by piece, not through `write!`: the formatting machinery was half of
        // taking a key.
        let _ = match &*self.action {
            ToolAction::Command { command } => ["`", command, "`"]
                .iter()
                .try_for_each(|piece| key.write_str(piece)),
            ToolAction::Other => [self.name, " ", &self.arguments]
                .iter()
                .try_for_each(|piece| key.write_str(piece)),
            action => [self.name, " "]
                .iter()
                .try_for_each(|piece| key.write_str(piece))
                .and_then(|()| target_text(action, &mut key)),
        };
        key.finish()
    }
}

/// Hashes the non-whitespace characters written to it, up to [`KEY_CHARS`], then refuses more.
struct KeyWriter {
    hasher: rustc_hash::FxHasher,
    left: usize,
}

impl Default for KeyWriter {
    fn default() -> Self {
        KeyWriter {
            hasher: rustc_hash::FxHasher::default(),
            left: KEY_CHARS,
        }
    }
}

impl KeyWriter {
    fn finish(&self) -> u64 {
        self.hasher.finish()
    }
}

impl Write for KeyWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for c in s.chars().filter(|c| !c.is_whitespace()) {
            if self.left == 0 {
                return Err(std::fmt::Error);
            }
            self.hasher.write_u32(u32::from(c));
            self.left -= 1;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::{Message, ToolCall};
    use crate::summary::span_calls::SpanCalls;
    use proptest::prelude::*;
    use std::borrow::Cow;

    /// Texts that exercise folding: runs of ASCII and Unicode whitespace, non-ASCII words, and
    /// lengths on both sides of the 120 characters a line keeps.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just(" ".to_string()),
                Just("\n\t ".to_string()),
                Just("\u{3000}".to_string()),
                Just("\u{a0}".to_string()),
                "[a-z]{1,12}",
                "[a-z/._-]{1,30}",
                "[日本語テスト]{1,6}",
                Just("\\\"".to_string()),
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    fn json_string(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    /// One call of each kind a label is written for, with `a` and `b` as its texts.
    fn calls_of(a: &str, b: &str) -> Vec<Message> {
        let (a, b) = (json_string(a), json_string(b));
        let calls = [
            ("Bash", format!(r#"{{"command":{a}}}"#)),
            (
                "Read",
                format!(r#"{{"file_path":{a},"offset":3,"limit":9}}"#),
            ),
            ("Read", format!(r#"{{"file_path":{a}}}"#)),
            ("Write", format!(r#"{{"file_path":{a},"content":{b}}}"#)),
            ("Edit", format!(r#"{{"file_path":{a},"old_string":{b}}}"#)),
            ("Grep", format!(r#"{{"pattern":{a},"path":{b}}}"#)),
            ("Grep", format!(r#"{{"pattern":{a}}}"#)),
            ("WebFetch", format!(r#"{{"url":{a}}}"#)),
            ("Task", format!(r#"{{"prompt":{a}}}"#)),
            ("lookup_account", format!(r#"{{"query":{a},"note":{b}}}"#)),
            (
                "apply_patch",
                format!(
                    r#"{{"input":{}}}"#,
                    json_string(&format!(
                        "*** Begin Patch\n*** Update File: {}\n*** End Patch",
                        a.trim_matches('"')
                    ))
                ),
            ),
        ];
        calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                Message::assistant_tool_calls(vec![ToolCall::function(
                    format!("c{i}"),
                    *name,
                    args.as_str(),
                )])
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The key written from a call's texts is the key of its label as built, for every kind
        /// of call and whatever whitespace, script or length the texts have.
        #[test]
        fn every_calls_key_is_its_labels_key(a in text(), b in text()) {
            let turns = calls_of(&a, &b);
            let calls = SpanCalls::new(&turns, None);
            for call in calls.as_slice() {
                prop_assert_eq!(
                    call.label_key(),
                    key_of_label(&call.label()),
                    "{:?} {:?}: {}",
                    call.name,
                    call.action,
                    call.label()
                );
            }
        }
    }

    /// From a pass's table, the calls of one text share one label, written once (the very
    /// same text), and one key; both are what the call's own texts give without a table.
    #[test]
    fn the_calls_of_one_text_share_the_tables_label_and_key() {
        let once = calls_of("src/lib.rs", "fn main() {}");
        let turns: Vec<Message> = once.iter().chain(&once).cloned().collect();
        let mut table = crate::tool_action::ActionTable::default();
        for c in turns.iter().flat_map(|m| m.calls()) {
            table.classify(&c.function.name, &c.function.arguments);
        }
        let shared = SpanCalls::new(&turns, Some(&table));
        let own = SpanCalls::new(&turns, None);
        let (shared, own) = (shared.as_slice(), own.as_slice());
        let n = once.len();
        assert_eq!(shared.len(), 2 * n);
        for i in 0..n {
            let (first, again) = (shared[i].label(), shared[i + n].label());
            assert!(matches!(first, Cow::Borrowed(_)), "{first}");
            assert!(std::ptr::eq(&*first, &*again), "{first}");
            assert_eq!(first, own[i].label());
            assert_eq!(shared[i].label_key(), own[i].label_key());
            assert_eq!(shared[i + n].label_key(), key_of_label(&first));
        }
    }

    /// Labels that differ in their first characters have different keys (the key does tell
    /// calls apart), and labels that differ only past them share one.
    #[test]
    fn keys_tell_labels_apart_by_their_first_characters() {
        assert_ne!(key_of_label("`cargo test`"), key_of_label("`cargo build`"));
        assert_eq!(key_of_label("`cargo  test`"), key_of_label("`cargo test`"));
        let long = "x".repeat(KEY_CHARS);
        assert_eq!(
            key_of_label(&format!("{long} one")),
            key_of_label(&format!("{long} two"))
        );
    }
}
