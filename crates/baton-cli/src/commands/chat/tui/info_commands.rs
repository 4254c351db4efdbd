//! `/usage`, `/memory`, `/tool` and `/help`: what the session has spent, what persists
//! between sessions, what a tool did, and what can be typed.

use super::Chat;
use super::activity::expanded;
use super::slash::{COMMANDS, MemoryAction};
use super::view::Tone;
use crate::commands::memory::outcome_lines;
use baton_core::pricing::format_usd;
use baton_core::truncate::group_digits;
use baton_memory::target::Target;

fn n(value: u64) -> String {
    group_digits(value as usize)
}

impl Chat {
    pub(super) fn usage(&mut self) -> Result<(), String> {
        let totals = self.agent.totals().clone();
        let status = self.agent.engine_status();
        let accuracy = self.agent.estimate_accuracy();
        let rough = self.agent.estimated_prompt_tokens();
        let window = self.agent.config().context_length;
        let prompt_total =
            totals.input_tokens + totals.cache_read_tokens + totals.cache_write_tokens;
        let mut lines = vec![format!(
            "calls {} · input {} · cache read {} · cache write {} · output {} · reasoning {}",
            totals.calls,
            n(totals.input_tokens),
            n(totals.cache_read_tokens),
            n(totals.cache_write_tokens),
            n(totals.output_tokens),
            n(totals.reasoning_tokens)
        )];
        if prompt_total > 0 {
            lines.push(format!(
                "cache: {:.0}% of prompt tokens read from the cache",
                totals.cache_read_tokens as f64 * 100.0 / prompt_total as f64
            ));
        }
        lines.push(match (totals.calls, totals.unpriced_calls) {
            (0, _) => "cost: no calls yet".into(),
            (c, u) if u == c => "cost: unknown (the model has no price; see baton prices)".into(),
            (_, 0) => format!("cost: {}", format_usd(totals.cost_usd)),
            (_, u) => format!(
                "cost: {} (+{u} unpriced calls)",
                format_usd(totals.cost_usd)
            ),
        });
        let last = status.tokens.last_prompt_tokens;
        lines.push(format!(
            "context: {} of {} tokens ({}%) by the last call · ~{} estimated now · compaction at {}",
            n(last),
            n(window),
            (last * 100).checked_div(window).unwrap_or(0),
            n(rough),
            n(status.tokens.threshold_tokens)
        ));
        lines.push(format!(
            "compactions: {} in this conversation, {} in this run",
            self.agent.session().lineage_compactions(),
            totals.compactions
        ));
        lines.push(if accuracy.samples == 0 {
            "estimate: no call has reported its size yet".into()
        } else {
            format!(
                "estimate: the calibrated estimate was {:+.1}% off on the last call, {:.1}% on average over {} calls",
                accuracy.last_error_percent, accuracy.mean_abs_error_percent, accuracy.samples
            )
        });
        if let Some(blocked) = status.blocked {
            lines.push(format!("automatic compaction paused: {blocked}"));
        }
        for record in self.agent.economics() {
            lines.push(record.render());
        }
        self.view.lines(&lines);
        Ok(())
    }

    pub(super) fn memory(&mut self, action: MemoryAction) -> Result<(), String> {
        let store = self.launch.memory.store.clone();
        let outcome = match action {
            MemoryAction::Show => {
                for (target, title) in [(Target::Memory, "memory"), (Target::User, "about you")] {
                    let entries = store.entries(target).map_err(|e| e.to_string())?;
                    let usage = store.usage(target).map_err(|e| e.to_string())?;
                    self.view.line(&format!("{title} [{usage}]"), Tone::Plain);
                    if entries.is_empty() {
                        self.view.line("  (empty)", Tone::Dim);
                    }
                    let lines: Vec<String> = entries
                        .iter()
                        .enumerate()
                        .map(|(i, e)| format!("  {} {}", i + 1, e.replace('\n', " ")))
                        .collect();
                    self.view.lines(&lines);
                }
                self.view.line(
                    "/memory add TEXT · /memory user TEXT · /memory remove TEXT",
                    Tone::Dim,
                );
                return Ok(());
            }
            MemoryAction::Add { user, text } => {
                let target = if user { Target::User } else { Target::Memory };
                store.add(target, &text).map_err(|e| e.to_string())?
            }
            MemoryAction::Remove(text) => {
                // The entry is in one of the two files: try the agent's notes first.
                let first = store
                    .remove(Target::Memory, &text)
                    .map_err(|e| e.to_string())?;
                if first.is_applied() {
                    first
                } else {
                    let second = store
                        .remove(Target::User, &text)
                        .map_err(|e| e.to_string())?;
                    if second.is_applied() { second } else { first }
                }
            }
        };
        let lines = outcome_lines(&outcome)?;
        self.view.lines(&lines);
        self.view.line(
            "the model sees memory changes from its next session (/new, or after a compaction)",
            Tone::Dim,
        );
        Ok(())
    }

    pub(super) fn tool(&mut self, number: Option<usize>) -> Result<(), String> {
        let record = self.view.tools.get(number).ok_or_else(|| match number {
            Some(n) => format!(
                "there is no tool call #{n} (this run has {})",
                self.view.tools.len()
            ),
            None => "no tool has run yet".into(),
        })?;
        let lines = expanded(record);
        self.view.lines(&lines);
        Ok(())
    }

    pub(super) fn help(&mut self) -> Result<(), String> {
        let width = COMMANDS
            .iter()
            .map(|c| c.name.len() + c.args.len() + 2)
            .max()
            .unwrap_or(0);
        let lines: Vec<String> = COMMANDS
            .iter()
            .map(|c| {
                let usage = format!("/{} {}", c.name, c.args);
                format!("  {usage:<width$}  {}", c.help)
            })
            .collect();
        self.view.lines(&lines);
        self.view.line(
            "Enter sends · Alt-Enter, Ctrl-J or a trailing \\ adds a line · Tab completes · Ctrl-C interrupts a turn · Ctrl-C twice or Ctrl-D quits · //text sends a line starting with /",
            Tone::Dim,
        );
        Ok(())
    }
}
