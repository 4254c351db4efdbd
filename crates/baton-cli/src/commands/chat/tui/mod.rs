//! The interactive `baton chat`: a prompt with history, completion and multi-line input;
//! the answer streamed and rendered; one line per tool call; a status line at the bottom
//! that stays current; slash commands for the session, the context, memory and recall.
//!
//! Keys: Enter sends, Alt-Enter or Ctrl-J (or a trailing `\`) adds a line, Tab completes
//! commands, Ctrl-C interrupts a running turn (the model call and its tools; the session is
//! kept), Ctrl-C twice at the prompt or Ctrl-D leaves.

mod activity;
mod context_commands;
mod editor;
mod info_commands;
mod markdown;
mod screen;
mod session_commands;
mod slash;
mod status;
mod view;

use super::ChatArgs;
use super::launch::Launch;
use crate::commands::Failure;
use baton_agent::{Agent, AgentEvent, Interrupt};
use editor::LineEditor;
use rustyline::error::ReadlineError;
use screen::Screen;
use slash::{Input, Slash};
use status::{Activity, StatusLine};
use std::path::PathBuf;
use std::time::Duration;
use view::{Tone, View};

/// The prompt (plain: rustyline measures it).
const PROMPT: &str = "› ";

/// What the loop does after a command.
pub enum Flow {
    Continue,
    Quit,
}

/// The running terminal session: what starts agents, the current agent, and the screen.
pub struct Chat {
    launch: Launch,
    agent: Agent,
    view: View,
    interrupt: Interrupt,
    /// The hits of the last `/history` search, for `/history N`.
    history_hits: Vec<(String, usize)>,
}

pub fn run(
    args: &ChatArgs,
    launch: Launch,
    runtime: tokio::runtime::Runtime,
    interrupt: Interrupt,
) -> Result<(), Failure> {
    let color = wants_color();
    let agent = launch.first_agent(args)?;
    let history = editor::history_path(&launch.agent_config.baton_home);
    let (editor, warning) = editor::new_editor(&history, color).map_err(Failure::Other)?;
    let status = StatusLine::new(&agent.config().model, agent.config().context_length, color);
    let screen = Screen::enter(status);
    let _restore = RestoreOnDrop;
    let mut chat = Chat {
        launch,
        agent,
        view: View::new(screen, color),
        interrupt,
        history_hits: Vec::new(),
    };
    if let Some(warning) = warning {
        chat.view.line(&warning, Tone::Warn);
    }
    let outcome = runtime.block_on(chat.main_loop(editor, history));
    drop(_restore);
    let totals = chat.agent.totals();
    outln!(
        "{}",
        super::printer::usage_line(totals, chat.agent.session_id())
    );
    outln!(
        "The session is saved: baton chat --resume {} continues it.",
        chat.agent.session_id()
    );
    outcome
}

/// Colour unless `NO_COLOR` is set or the terminal is `dumb`.
fn wants_color() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    !no_color && !dumb
}

/// Restores the terminal when the loop ends, however it ends.
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        screen::restore_terminal();
    }
}

impl Chat {
    async fn main_loop(&mut self, mut editor: LineEditor, history: PathBuf) -> Result<(), Failure> {
        screen::exit_on_termination_signals();
        screen::follow_resizes(self.view.screen.clone());
        self.watch_ctrl_c();
        self.tick_status();
        self.welcome(&editor);
        {
            let view = &mut self.view;
            let mut sink = |event: AgentEvent| view.show(&event);
            if let Err(e) = self.agent.resume_hygiene(&mut sink).await {
                self.view.line(&format!("error: {e}"), Tone::Bad);
            }
        }
        let mut quit_armed = false;
        loop {
            self.view.sync_status(&mut self.agent);
            let (returned, read) = tokio::task::spawn_blocking(move || {
                let read = editor.readline(PROMPT);
                (editor, read)
            })
            .await
            .map_err(|e| Failure::Other(format!("the prompt stopped: {e}")))?;
            editor = returned;
            match read {
                Ok(line) => {
                    quit_armed = false;
                    let text = editor::join_continuations(&line);
                    if text.trim().is_empty() {
                        continue;
                    }
                    // Debug builds only: lets the pty tests check the terminal is restored
                    // after a panic.
                    #[cfg(debug_assertions)]
                    if text.trim() == "/__panic" {
                        panic!("deliberate panic (debug builds: /__panic)");
                    }
                    if let Some(warning) = editor::remember(&mut editor, &history, &text) {
                        self.view.line(&warning, Tone::Warn);
                    }
                    // Keys typed while the turn or command runs wait for the next prompt.
                    super::typeahead::hold(true);
                    let flow = match slash::parse(&text) {
                        Err(why) => {
                            self.view.line(&why, Tone::Bad);
                            Flow::Continue
                        }
                        Ok(Input::Prompt(prompt)) => {
                            self.turn(&prompt).await;
                            Flow::Continue
                        }
                        Ok(Input::Command(command)) => self.command(command).await,
                    };
                    super::typeahead::hold(false);
                    if let Flow::Quit = flow {
                        return Ok(());
                    }
                }
                Err(ReadlineError::Interrupted) => {
                    if quit_armed {
                        return Ok(());
                    }
                    quit_armed = true;
                    self.view
                        .line("(Ctrl-C again to quit, or Ctrl-D)", Tone::Dim);
                }
                Err(ReadlineError::Eof) => return Ok(()),
                Err(e) => return Err(Failure::Other(format!("cannot read the prompt: {e}"))),
            }
        }
    }

    /// Runs one turn; Ctrl-C (SIGINT: the prompt is not in raw mode during a turn) ends it.
    async fn turn(&mut self, prompt: &str) {
        self.interrupt.clear();
        let view = &mut self.view;
        let mut sink = |event: AgentEvent| view.show(&event);
        let result = self
            .agent
            .run_turn(prompt, &self.interrupt, &mut sink)
            .await;
        if let Err(e) = result {
            self.view.line(&format!("error: {e}"), Tone::Bad);
            self.view.set_activity(Activity::Idle);
        }
        // A blank line between one exchange and the next prompt.
        self.view.line("", Tone::Plain);
        self.view.sync_status(&mut self.agent);
    }

    async fn command(&mut self, command: Slash) -> Flow {
        let result = match command {
            Slash::Compress(focus) => self.compress(focus.as_deref()).await,
            Slash::Usage => self.usage(),
            Slash::New => self.new_session(),
            Slash::Resume(target) => self.resume(target.as_deref()).await,
            Slash::Sessions => self.sessions(),
            Slash::Title(name) => self.title(&name),
            Slash::Model(name) => self.model(name.as_deref()).await,
            Slash::Memory(action) => self.memory(action),
            Slash::History(query) => self.history(query.as_deref()).await,
            Slash::Pin(action) => self.pin(action),
            Slash::Tool(n) => self.tool(n),
            Slash::Help => self.help(),
            Slash::Quit => return Flow::Quit,
        };
        if let Err(why) = result {
            self.view.line(&why, Tone::Bad);
        }
        self.view.set_activity(Activity::Idle);
        Flow::Continue
    }

    fn welcome(&mut self, editor: &LineEditor) {
        let session = self.agent.session();
        let resumed = session.messages.len() > 1;
        let mut line = format!(
            "baton chat · {} · session {}",
            self.agent.config().model,
            session.id
        );
        if resumed {
            line.push_str(&format!(" (resumed, {} messages)", session.messages.len()));
        }
        self.view.line(&line, Tone::Plain);
        self.view.line(
            &format!(
                "/help for commands · Alt-Enter: new line · Ctrl-C: interrupt · Ctrl-D: quit · {} prompts in history",
                editor::history_len(editor)
            ),
            Tone::Dim,
        );
    }

    /// SIGINT raises the turn's interrupt (during a turn the terminal is in cooked mode, so
    /// Ctrl-C arrives as a signal; at the prompt rustyline reads it as a key).
    fn watch_ctrl_c(&self) {
        let interrupt = self.interrupt.clone();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                interrupt.raise();
            }
        });
    }

    /// Redraws the status line every second while the agent works, so elapsed time moves.
    fn tick_status(&self) {
        let screen = self.view.screen.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                let s = screen::lock(&screen);
                if s.status.activity != Activity::Idle {
                    s.redraw();
                }
            }
        });
    }
}
