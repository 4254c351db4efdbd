//! Stored messages shown to the model as readable text: a header with the message's reference
//! and role, its text, its tool calls as `→ name(arguments)`.

use crate::recall::span::SpanRef;
use baton_core::{Message, Role};

pub fn render(session: &str, position: usize, message: &Message) -> String {
    let reference = SpanRef::message(session, position);
    let role = match message.role {
        Role::Tool => format!(
            "tool result{}",
            message
                .tool_call_id
                .as_deref()
                .map(|id| format!(" for {id}"))
                .unwrap_or_default()
        ),
        other => other.as_str().to_string(),
    };
    let mut out = format!("--- [{reference}] {role} ---\n");
    let text = message.text();
    if !text.is_empty() {
        out.push_str(&text);
        out.push('\n');
    }
    for call in message.calls() {
        out.push_str(&format!(
            "→ {}({}) [{}]\n",
            call.function.name, call.function.arguments, call.id
        ));
    }
    out
}
