//! Which of the two memory files an operation addresses.

use std::fmt;
use std::str::FromStr;

/// `memory` (the agent's notes, `MEMORY.md`) or `user` (the user profile, `USER.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Memory,
    User,
}

impl Target {
    pub const ALL: [Target; 2] = [Target::Memory, Target::User];

    /// The name used by the tool and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Memory => "memory",
            Target::User => "user",
        }
    }

    /// The file under `memories/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Target::Memory => "MEMORY.md",
            Target::User => "USER.md",
        }
    }

    /// The title of this target's block in the system prompt.
    pub fn prompt_title(self) -> &'static str {
        match self {
            Target::Memory => "MEMORY (notes you kept in earlier sessions)",
            Target::User => "USER PROFILE (what you know about the user)",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text of a rejected target, so the caller can show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid target '{0}': use 'memory' or 'user'")]
pub struct InvalidTarget(pub String);

impl FromStr for Target {
    type Err = InvalidTarget;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "memory" => Ok(Target::Memory),
            "user" => Ok(Target::User),
            other => Err(InvalidTarget(other.to_string())),
        }
    }
}
