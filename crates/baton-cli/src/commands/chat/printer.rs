//! How `baton chat -q` and piped prompts show a turn: the answer streams to stdout; tool
//! activity, notices and a final usage line go to stderr, or every event is one JSON line.

use baton_agent::AgentEvent;
use baton_core::pricing::format_usd;
use baton_core::truncate::group_digits;

/// The final stderr line: what the run cost.
pub fn usage_line(totals: &baton_agent::SessionTotals, session: &str) -> String {
    let cost = if totals.calls == 0 {
        "no calls".to_string()
    } else if totals.unpriced_calls == totals.calls {
        "cost unknown".to_string()
    } else if totals.unpriced_calls > 0 {
        format!(
            "cost {} (+{} unpriced calls)",
            format_usd(totals.cost_usd),
            totals.unpriced_calls
        )
    } else {
        format!("cost {}", format_usd(totals.cost_usd))
    };
    format!(
        "usage: {} calls · input {} · cache read {} · cache write {} · output {} · {cost} · {} compactions · session {session}",
        totals.calls,
        group_digits(totals.input_tokens as usize),
        group_digits(totals.cache_read_tokens as usize),
        group_digits(totals.cache_write_tokens as usize),
        group_digits(totals.output_tokens as usize),
        totals.compactions,
    )
}

/// Shows events: text to stdout as it streams, the rest to stderr, or JSON lines.
pub struct Printer {
    json: bool,
    /// Control characters in model text are escaped on a terminal (a model must not be able
    /// to retitle the window or clear the screen); redirected output gets the bytes.
    escape: bool,
    pub ended_with_newline: bool,
}

impl Printer {
    pub fn new(json: bool, escape: bool) -> Self {
        Printer {
            json,
            escape,
            ended_with_newline: true,
        }
    }

    pub fn show(&mut self, event: &AgentEvent) {
        if self.json {
            match serde_json::to_string(event) {
                Ok(line) => outln!("{line}"),
                Err(e) => errln!("baton: cannot encode an event: {e}"),
            }
            crate::output::flush();
            return;
        }
        match event {
            AgentEvent::TextDelta { text } => {
                if self.escape {
                    out!("{}", baton_core::terminal_text::escape_controls(text));
                } else {
                    out!("{text}");
                }
                self.ended_with_newline = text.ends_with('\n');
                crate::output::flush();
            }
            AgentEvent::ToolCall {
                name, arguments, ..
            } => errln!("→ {name} {}", abbreviate(arguments, 120)),
            AgentEvent::ToolResult {
                name,
                is_error,
                chars,
                spilled_to,
                duration_ms,
                ..
            } => {
                let status = if *is_error { "error" } else { "ok" };
                let spilled = spilled_to
                    .as_ref()
                    .map(|p| format!(", full output in {p}"))
                    .unwrap_or_default();
                errln!(
                    "← {name} {status}: {} chars in {duration_ms} ms{spilled}",
                    group_digits(*chars)
                );
            }
            AgentEvent::Compaction {
                tokens_before,
                tokens_after,
                trigger,
                to_session,
                ..
            } => errln!(
                "compacted ({trigger}): ~{} → ~{} tokens; continuing in session {to_session}",
                group_digits(*tokens_before as usize),
                group_digits(*tokens_after as usize)
            ),
            AgentEvent::Retry { reason, .. } => errln!("retry: {reason}"),
            AgentEvent::Notice { message } => errln!("note: {message}"),
            AgentEvent::Error { message } => errln!("error: {message}"),
            // Each answer ends its own line, so piped turns read one after another.
            AgentEvent::TurnFinished { .. } => {
                if !self.ended_with_newline {
                    outln!();
                    self.ended_with_newline = true;
                }
                crate::output::flush();
            }
            AgentEvent::TurnStarted { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::Usage { .. } => {}
        }
    }
}

/// `text` on one line, cut to `max` chars with an ellipsis.
pub fn abbreviate(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max).collect();
    cut.push('…');
    cut
}
