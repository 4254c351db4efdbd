//! `baton chat`: the agent in a terminal. With `-q "…"` or prompts piped on stdin it runs
//! turns non-interactively ([`oneshot`]); on a terminal it is the interactive agent ([`tui`]).

mod confirm;
pub mod from_config;
mod launch;
mod oneshot;
mod printer;
mod tui;
mod typeahead;

use crate::commands::Failure;
use crate::commands::settings::Settings;
use baton_agent::approval::{AllowAll, RefuseAll};
use baton_agent::{Approver, Interrupt};
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The prompt to run (non-interactive: answer, then exit).
    #[arg(short = 'q', long = "query", value_name = "PROMPT")]
    pub query: Option<String>,

    /// Continue the session with this id or title (its newest continuation if compacted).
    #[arg(long, value_name = "ID|TITLE", conflicts_with = "continue_last")]
    pub resume: Option<String>,

    /// Continue the most recent session.
    #[arg(long = "continue")]
    pub continue_last: bool,

    /// Model to use (default: `[model] default` in config.toml).
    #[arg(long)]
    pub model: Option<String>,

    /// The model's context window in tokens (default: config, else the server's listing,
    /// else 200,000).
    #[arg(long)]
    pub context_length: Option<u64>,

    /// Print every event as a JSON line on stdout (non-interactive runs).
    #[arg(long)]
    pub json: bool,

    /// Allow destructive commands (rm -rf, git push --force, …) without asking.
    #[arg(long)]
    pub yes: bool,

    /// Directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Most model calls in the turn (default: `[agent] max_iterations`, else 90).
    #[arg(long)]
    pub max_iterations: Option<u32>,

    /// Who writes compaction summaries: `llm` (the session's model, or
    /// `[auxiliary.compression]` when configured), `extractive` (offline) or `exec:COMMAND`.
    #[arg(long, default_value = "llm")]
    pub summarizer: String,

    #[arg(long, help = crate::commands::sessions::DB_HELP)]
    pub db: Option<PathBuf>,

    /// Server base URL (default: `[model] base_url` in config.toml, else the provider's).
    #[arg(long)]
    pub base_url: Option<String>,

    /// Wire format: openai, anthropic, responses, ollama, lmstudio (default: `[model]
    /// provider` in config.toml, else openai).
    #[arg(long)]
    pub provider: Option<String>,

    /// Environment variable holding the API key (default: OPENAI_API_KEY, or
    /// ANTHROPIC_API_KEY for anthropic).
    #[arg(long)]
    pub api_key_env: Option<String>,

    /// Seconds to wait for the server (connect and each read).
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

pub fn run(args: &ChatArgs, settings: &Settings) -> Result<(), Failure> {
    let interrupt = Interrupt::new();
    let interactive = args.query.is_none()
        && !args.json
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal();
    let (launch, runtime) = launch::Launch::new(args, settings, approver(args.yes, &interrupt))?;
    if interactive {
        tui::run(args, launch, runtime, interrupt)
    } else {
        oneshot::run(args, launch, runtime, interrupt)
    }
}

/// Destructive commands: `--yes` allows them; on a terminal the user is asked (a Ctrl-C
/// while asking refuses and interrupts the turn); without one they are refused with how to
/// allow them.
fn approver(yes: bool, interrupt: &Interrupt) -> Arc<dyn Approver> {
    if yes {
        return Arc::new(AllowAll);
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        return Arc::new(confirm::TerminalApprover::new(interrupt.clone()));
    }
    Arc::new(RefuseAll {
        explanation: "there is no terminal to confirm it on; rerun with --yes to allow it".into(),
    })
}
