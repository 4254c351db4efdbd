//! One module per subcommand.

pub mod chat;
pub mod compress;
pub mod compress_session;
pub mod compress_settings;
pub mod config;
pub mod io;
pub mod llm;
pub mod memory;
pub mod prices;
pub mod sessions;
pub mod settings;
pub mod summarizer_choice;
pub mod tokens;
pub mod trajectories;

/// The single-threaded async runtime the commands run library futures on (summarizer processes
/// and HTTP calls wait here; CPU work has its own threads where it needs them).
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Other(format!("cannot start the async runtime: {e}")))
}

/// How a command failed, which decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// The input (file, flags) was wrong: exit code 2.
    BadInput(String),
    /// Anything else: exit code 1.
    Other(String),
    /// Stopped by Ctrl-C after leaving its output consistent: exit code 130 (128 + SIGINT).
    Interrupted(String),
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::BadInput(_) => 2,
            Failure::Other(_) => 1,
            Failure::Interrupted(_) => 130,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::BadInput(m) | Failure::Other(m) | Failure::Interrupted(m) => f.write_str(m),
        }
    }
}
