//! `baton`: the command-line front end. Parsing and printing only; the work happens in the
//! library crates.

// Printing goes through `output` so a closed pipe or a full disk is never a panic.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `println!` to standard output without panicking (see `output`).
macro_rules! outln {
    () => { $crate::output::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` to standard output without panicking (see `output`).
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::out(format_args!($($arg)*)) };
}

/// `eprintln!` without panicking when standard error is closed.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::err(format_args!("{}\n", format_args!($($arg)*))) };
}

mod commands;
mod output;

use clap::{Parser, Subcommand};
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
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count the tokens of a conversation file, per role, estimated and exact.
    Tokens(commands::tokens::TokensArgs),
    /// Compact a conversation file: prune old tool output, summarize the middle, keep the
    /// head and the recent tail verbatim.
    Compress(commands::compress::CompressArgs),
    /// Session database: list, show, search, export, stats (read-only); delete, prune.
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tokens(args) => commands::tokens::run(&args),
        Command::Compress(args) => commands::compress::run(&args),
        Command::Sessions(args) => commands::sessions::run(&args),
        Command::Memory(args) => commands::memory::run(&args),
        Command::Trajectories(args) => commands::trajectories::run(&args),
        Command::Models(args) => commands::llm::run_models(&args),
        Command::Ping(args) => commands::llm::run_ping(&args),
    };
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
