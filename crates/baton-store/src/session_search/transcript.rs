//! A session as plain text a summarizer (or a person) can read in one pass.
//!
//! Tool outputs are the bulk of an agent transcript and rarely what a recall is about, so each
//! is cut to its head and tail; the calls themselves stay, with their arguments shortened,
//! because the commands and files they name are exactly what a recap should quote.

use baton_core::truncate::truncate_head_tail;
use baton_core::{Message, Role};
use std::collections::HashMap;
use std::ops::Range;

/// Longest tool output kept whole in a transcript.
pub const TOOL_OUTPUT_CHARS: usize = 500;
/// Longest tool-call argument string kept whole.
pub const TOOL_ARGS_CHARS: usize = 200;
/// Separates messages.
const SEPARATOR: &str = "\n\n";

/// The transcript text and which bytes of it each message produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    pub text: String,
    /// In message order; messages with nothing to show have no span.
    pub spans: Vec<MessageSpan>,
}

/// The bytes of [`Transcript::text`] rendered from `messages[message]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSpan {
    pub bytes: Range<usize>,
    pub message: usize,
}

impl Transcript {
    /// Indexes of the messages whose text overlaps `range`, in order.
    pub fn messages_in(&self, range: &Range<usize>) -> Vec<usize> {
        self.spans
            .iter()
            .filter(|s| s.bytes.start < range.end && range.start < s.bytes.end)
            .map(|s| s.message)
            .collect()
    }
}

/// Renders `[USER]: ...`, `[ASSISTANT]: ...`, `[ASSISTANT]: [Called: name(args)]` and
/// `[TOOL:name]: output` blocks separated by blank lines.
pub fn format(messages: &[Message]) -> Transcript {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out = Transcript::default();
    for (index, message) in messages.iter().enumerate() {
        for call in message.calls() {
            names.insert(call.id.as_str(), call.function.name.as_str());
        }
        let block = render(message, &names);
        if block.is_empty() {
            continue;
        }
        if !out.text.is_empty() {
            out.text.push_str(SEPARATOR);
        }
        let start = out.text.len();
        out.text.push_str(&block);
        out.spans.push(MessageSpan {
            bytes: start..out.text.len(),
            message: index,
        });
    }
    out
}

fn render(message: &Message, call_names: &HashMap<&str, &str>) -> String {
    let text = message.text();
    let text = text.trim();
    match message.role {
        Role::Tool => {
            let name = message
                .name
                .as_deref()
                .or_else(|| {
                    let id = message.tool_call_id.as_deref()?;
                    call_names.get(id).copied()
                })
                .unwrap_or("?");
            format!(
                "[TOOL:{name}]: {}",
                truncate_head_tail(text, TOOL_OUTPUT_CHARS).text
            )
        }
        Role::Assistant if message.has_tool_calls() => {
            let calls: Vec<String> = message
                .calls()
                .iter()
                .map(|c| {
                    let args = truncate_head_tail(c.function.arguments.trim(), TOOL_ARGS_CHARS);
                    format!("{}({})", c.function.name, args.text)
                })
                .collect();
            let mut block = format!("[ASSISTANT]: [Called: {}]", calls.join(", "));
            if !text.is_empty() {
                block.push_str(&format!("\n[ASSISTANT]: {text}"));
            }
            block
        }
        _ if text.is_empty() => String::new(),
        role => format!("[{}]: {text}", role.as_str().to_uppercase()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use baton_core::ToolCall;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall::function(id, name, args)
    }

    #[test]
    fn renders_roles_calls_and_named_results() {
        let messages = vec![
            Message::user("Fix the build"),
            Message::assistant_tool_calls(vec![call("c1", "terminal", r#"{"command":"make"}"#)]),
            Message::tool("c1", format!("start {} end", "x".repeat(2_000))),
            Message::assistant("Done."),
        ];
        let t = format(&messages);
        assert!(t.text.starts_with("[USER]: Fix the build\n\n"));
        assert!(
            t.text
                .contains(r#"[ASSISTANT]: [Called: terminal({"command":"make"})]"#)
        );
        assert!(t.text.contains("[TOOL:terminal]: start "));
        assert!(t.text.contains(" end"));
        assert!(t.text.ends_with("[ASSISTANT]: Done."));
        assert!(t.text.chars().count() < 1_000, "tool output was not cut");
        assert_eq!(t.spans.len(), 4);
        assert_eq!(&t.text[t.spans[0].bytes.clone()], "[USER]: Fix the build");
    }

    #[test]
    fn empty_messages_have_no_span() {
        let t = format(&[
            Message::user("a"),
            Message::assistant("  "),
            Message::user("b"),
        ]);
        assert_eq!(t.text, "[USER]: a\n\n[USER]: b");
        let indexes: Vec<usize> = t.spans.iter().map(|s| s.message).collect();
        assert_eq!(indexes, [0, 2]);
        assert_eq!(t.messages_in(&(12..13)), [2]);
        assert_eq!(t.messages_in(&(0..t.text.len())), [0, 2]);
    }
}
