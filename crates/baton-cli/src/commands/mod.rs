//! One module per subcommand.

pub mod compress;
pub mod compress_session;
pub mod io;
pub mod llm;
pub mod memory;
pub mod sessions;
pub mod tokens;

/// How a command failed, which decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// The input (file, flags) was wrong: exit code 2.
    BadInput(String),
    /// Anything else: exit code 1.
    Other(String),
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::BadInput(_) => 2,
            Failure::Other(_) => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::BadInput(m) | Failure::Other(m) => f.write_str(m),
        }
    }
}
