//! `baton`: the command-line front end. Parsing and printing only; the work happens in the
//! library crates.

// Printing goes through `output` so a closed pipe or a full disk is never a panic.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `outln!` to standard output without panicking (see `output`).
macro_rules! outln {
    () => { $crate::output::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` to standard output without panicking (see `output`).
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::out(format_args!($($arg)*)) };
}

/// `errln!` without panicking when standard error is closed.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::err(format_args!("{}\n", format_args!($($arg)*))) };
}

mod commands;
mod output;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version,
    about = "Context management for long-running LLM agents",
    long_about = "Baton keeps long-running LLM agents inside their context window: token \
                  accounting that matches what providers bill, compaction with structured \
                  handoff summaries, and tool-output budgets.",
    disable_help_subcommand = false
)]
struct Cli {
    /// Override a config.toml key for this run, e.g. `--set compression.threshold=0.6`
    /// (repeatable; flags of the command itself still win). See `baton config show`.
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    overrides: Vec<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// Run the agent: `baton chat -q "…"` answers one prompt in a new session (or
    /// `--resume`/`--continue` one), with tools, compaction and recall.
    Chat(commands::chat::ChatArgs),
    /// Count the tokens of a conversation file, per role, estimated and exact.
    Tokens(commands::tokens::TokensArgs),
    /// Compact a conversation file: prune old tool output, summarize the middle, keep the
    /// head and the recent tail verbatim.
    Compress(commands::compress::CompressArgs),
    /// Session database: list, show, search, export, stats (read-only); import, index, title, delete, prune; copy between stores (SQLite, PostgreSQL).
    Sessions(commands::sessions::SessionsArgs),
    /// Training datasets: compress agent trajectories (JSONL, ShareGPT or OpenAI records) to
    /// a token budget.
    Trajectories(commands::trajectories::TrajectoriesArgs),
    /// Persistent memory (MEMORY.md, USER.md): show, add, replace, remove, scan.
    Memory(commands::memory::MemoryArgs),
    /// List the models a server offers, with their context lengths.
    Models(commands::llm::ModelsArgs),
    /// Send one tiny request to a model and print latency and usage.
    Ping(commands::llm::PingArgs),
    /// The configuration ($BATON_HOME/config.toml): `show` the effective settings and where
    /// each came from, `path` of the file.
    Config(commands::config::ConfigArgs),
}

fn main() -> ExitCode {
    // Parsed in place: the command tree is kept for telling typed flags from defaults, and a
    // copy of it cost a twentieth of a short command's run (`sessions search`).
    let mut command = Cli::command();
    let matches = command.get_matches_mut();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = run(cli, &command, &matches);
    output::flush();
    match result {
        // A closed pipe is not a failure (`baton … | head`); a full disk is.
        Ok(()) => match output::stdout_failure() {
            None => ExitCode::SUCCESS,
            Some(why) => {
                errln!("baton: {why}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            errln!("baton: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Loads the configuration (every command reads it, so a broken file is reported whatever
/// the command) and runs the command. `config path` works without it: it is how a user finds
/// the broken file.
fn run(
    cli: Cli,
    command: &clap::Command,
    matches: &clap::ArgMatches,
) -> Result<(), commands::Failure> {
    use commands::settings::Settings;
    let settings = match &cli.command {
        Command::Config(commands::config::ConfigArgs {
            command: commands::config::ConfigCommand::Path { .. },
        }) => Settings::defaults(command, matches),
        _ => Settings::load(command, matches, &cli.overrides)?,
    };
    match cli.command {
        Command::Chat(args) => commands::chat::run(&args, &settings),
        Command::Tokens(args) => commands::tokens::run(&args),
        Command::Compress(args) => commands::compress::run(&args, &settings),
        Command::Sessions(args) => commands::sessions::run(&args, &settings),
        Command::Memory(args) => commands::memory::run(&args, &settings),
        Command::Trajectories(args) => commands::trajectories::run(&args, &settings),
        Command::Models(args) => commands::llm::run_models(&args, &settings),
        Command::Ping(args) => commands::llm::run_ping(&args, &settings),
        Command::Config(args) => commands::config::run(&args, &settings),
    }
}
