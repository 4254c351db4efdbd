//! How a turn is drawn: the answer streams through the Markdown renderer, each tool call
//! becomes one line when it finishes (the status line says what is running meanwhile),
//! compactions, retries, notices and errors get a marked line, and the status line follows
//! every usage report.

use super::activity::{self, ToolLog, ToolOutcome};
use super::markdown::MarkdownStream;
use super::screen::{self, SharedScreen};
use super::status::Activity;
use baton_agent::{Agent, AgentEvent};
use baton_core::truncate::group_digits;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

pub struct View {
    pub screen: SharedScreen,
    pub color: bool,
    markdown: MarkdownStream,
    pub tools: ToolLog,
}

/// The kinds of line the terminal prints besides the answer.
#[derive(Debug, Clone, Copy)]
pub enum Tone {
    Plain,
    Dim,
    Good,
    Warn,
    Bad,
}

impl View {
    pub fn new(screen: SharedScreen, color: bool) -> Self {
        View {
            screen,
            color,
            markdown: MarkdownStream::new(color),
            tools: ToolLog::default(),
        }
    }

    /// Shows one event of a running turn.
    pub fn show(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TurnStarted { .. } => self.set_activity(Activity::Thinking),
            AgentEvent::TextDelta { text } => {
                self.set_activity(Activity::Answering);
                let rendered = self.markdown.feed(text);
                crate::output::out_bytes(rendered.as_bytes());
            }
            AgentEvent::ReasoningDelta { .. } => self.set_activity(Activity::Thinking),
            AgentEvent::ToolCall {
                id,
                name,
                arguments,
            } => {
                self.tools.called(id, name, arguments);
                let what = format!("{name} {}", activity::target(arguments));
                self.set_activity(Activity::RunningTool(activity::one_line(&what, 48)));
            }
            AgentEvent::ToolResult {
                id,
                is_error,
                chars,
                preview,
                spilled_to,
                duration_ms,
                ..
            } => {
                let outcome = ToolOutcome {
                    is_error: *is_error,
                    chars: *chars,
                    preview: preview.clone(),
                    spilled_to: spilled_to.clone(),
                    duration_ms: *duration_ms,
                };
                let line = self
                    .tools
                    .finished(id, outcome)
                    .map(activity::finished_line);
                if let Some(line) = line {
                    let tone = if *is_error { Tone::Bad } else { Tone::Good };
                    self.tool_line(&line, tone);
                }
                self.set_activity(Activity::Thinking);
            }
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => {
                let mut s = screen::lock(&self.screen);
                s.status.context_tokens = usage.prompt() + usage.output;
                s.status.context_estimated = false;
                let prompt = usage.prompt();
                s.status.cache_hit = (prompt > 0).then(|| usage.cache_read as f64 / prompt as f64);
                match cost_usd {
                    Some(c) => s.status.cost_usd += c,
                    None => s.status.unpriced_calls += 1,
                }
                s.redraw();
            }
            AgentEvent::Compaction {
                tokens_before,
                tokens_after,
                trigger,
                lineage_compactions,
                to_session,
                ..
            } => {
                self.line(
                    &format!(
                        "⟳ compacted ({trigger}): ~{} → ~{} tokens · compaction {} of this conversation · now session {to_session}",
                        group_digits(*tokens_before as usize),
                        group_digits(*tokens_after as usize),
                        lineage_compactions
                    ),
                    Tone::Warn,
                );
                let mut s = screen::lock(&self.screen);
                s.status.compactions = *lineage_compactions;
                s.status.context_tokens = *tokens_after;
                s.status.context_estimated = true;
                s.redraw();
            }
            AgentEvent::Retry { reason, .. } => self.line(&format!("↻ retry: {reason}"), Tone::Dim),
            AgentEvent::Notice { message } => self.line(&format!("note: {message}"), Tone::Warn),
            AgentEvent::Error { message } => self.line(&format!("error: {message}"), Tone::Bad),
            AgentEvent::TurnFinished { reason, .. } => {
                self.end_answer();
                if reason == "interrupted" {
                    self.line(
                        "⏹ interrupted — the session is kept; type to go on",
                        Tone::Warn,
                    );
                }
                self.set_activity(Activity::Idle);
            }
        }
    }

    /// Prints a whole line in `tone`, after ending any answer text in progress.
    pub fn line(&mut self, text: &str, tone: Tone) {
        self.end_answer();
        let style = match tone {
            Tone::Plain => "",
            Tone::Dim => DIM,
            Tone::Good => GREEN,
            Tone::Warn => YELLOW,
            Tone::Bad => RED,
        };
        let text = baton_core::terminal_text::escape_controls(text);
        if self.color && !style.is_empty() {
            crate::output::out_bytes(format!("{style}{text}{RESET}\n").as_bytes());
        } else {
            crate::output::out_bytes(format!("{text}\n").as_bytes());
        }
    }

    /// Prints several plain lines (command output).
    pub fn lines(&mut self, lines: &[String]) {
        for line in lines {
            self.line(line, Tone::Plain);
        }
    }

    /// A finished tool call: the mark in colour, the rest dim.
    fn tool_line(&mut self, line: &str, tone: Tone) {
        self.end_answer();
        let line = format!("  {line}");
        if !self.color {
            crate::output::out_bytes(format!("{line}\n").as_bytes());
            return;
        }
        let colour = if matches!(tone, Tone::Bad) {
            RED
        } else {
            GREEN
        };
        let mut chars = line.char_indices().skip(2);
        let split = chars.nth(1).map_or(line.len(), |(i, _)| i);
        let (mark, rest) = line.split_at(split);
        crate::output::out_bytes(format!("{colour}{mark}{RESET}{DIM}{rest}{RESET}\n").as_bytes());
    }

    /// Closes the answer's styles and ends its line, so what follows starts on a fresh one.
    fn end_answer(&mut self) {
        let rest = self.markdown.finish();
        let newline = if self.markdown.at_line_start() {
            ""
        } else {
            "\n"
        };
        if !rest.is_empty() || !newline.is_empty() {
            crate::output::out_bytes(format!("{rest}{newline}").as_bytes());
        }
        self.markdown = MarkdownStream::new(self.color);
    }

    pub fn set_activity(&mut self, activity: Activity) {
        let mut s = screen::lock(&self.screen);
        if s.status.activity != activity {
            s.status.set_activity(activity);
            s.redraw();
        }
    }

    /// Takes the status line's numbers from the agent (after a turn, a command, a switch).
    pub fn sync_status(&mut self, agent: &mut Agent) {
        let estimate = agent.estimated_prompt_tokens();
        let status = agent.engine_status();
        let totals = agent.totals().clone();
        let mut s = screen::lock(&self.screen);
        s.status.model = agent.config().model.clone();
        s.status.window = agent.config().context_length;
        if status.tokens.last_prompt_tokens > 0 && !s.status.context_estimated {
            // The provider's count of the last call stands until the context changes.
        } else {
            s.status.context_tokens = estimate;
            s.status.context_estimated = true;
        }
        s.status.cost_usd = totals.cost_usd;
        s.status.unpriced_calls = totals.unpriced_calls;
        s.status.compactions = agent.session().lineage_compactions();
        s.redraw();
    }

    /// The context changed outside a call (a new or resumed session, a compaction): the
    /// status line shows the estimate until the next call reports.
    pub fn context_changed(&mut self, agent: &mut Agent) {
        {
            let mut s = screen::lock(&self.screen);
            s.status.context_estimated = true;
            s.status.cache_hit = None;
        }
        self.sync_status(agent);
    }
}
