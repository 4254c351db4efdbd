//! The system prompt of a session, assembled once when it starts and once at each compaction
//! (never per turn: it heads the cached prefix). Sections come in a fixed order, most stable
//! first — identity and tool guidance, the project's context files, the memory snapshot, then
//! the session facts (date, platform, working directory) — so a change in one input changes only
//! its own section. The date is the day only: a clock time would change the prefix every turn.

use crate::context_files::{ContextFiles, discover};
use crate::prompt_source::SystemPromptSource;
use std::path::PathBuf;
use std::sync::Arc;

/// Who the agent is and how it works with Baton. Our wording.
pub const IDENTITY: &str = "You are a software agent working in the user's project through \
tools: you run commands, read and edit files, and search the code. Work step by step, check \
your results, and say plainly what you did and what is left.\n\n\
Long conversations are compacted: older turns are replaced by a summary with a task ledger, \
and a note says which messages each summary replaced. Nothing is lost — call history_search to \
find something said or done earlier in this conversation, and history_expand with a summary's \
reference (or a message reference from a search) to read the original messages. Use \
session_search for the user's other, earlier conversations, and the memory tool to keep facts \
that matter in every future session.";

/// Where the memory blocks come from: called at each build, so a boundary re-reads memory.
pub type MemoryBlock = Arc<dyn Fn() -> String + Send + Sync>;

/// The inputs of one session's system prompt.
#[derive(Clone)]
pub struct SystemPromptBuilder {
    pub identity: String,
    pub workdir: PathBuf,
    /// Read the context files (`false` for `--no-context-files`-style hosts).
    pub context_files: bool,
    pub memory: Option<MemoryBlock>,
    /// The model, shown in the session facts.
    pub model: String,
    /// Overrides today's date (tests); `YYYY-MM-DD`.
    pub date: Option<String>,
}

/// A built prompt and what went into it (for the host to show).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltPrompt {
    pub text: String,
    pub context: ContextFiles,
}

impl SystemPromptBuilder {
    pub fn new(workdir: PathBuf, model: &str) -> Self {
        SystemPromptBuilder {
            identity: IDENTITY.to_string(),
            workdir,
            context_files: true,
            memory: None,
            model: model.to_string(),
            date: None,
        }
    }

    pub fn with_memory(mut self, memory: MemoryBlock) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Builds the prompt.
    pub fn build_detailed(&self) -> BuiltPrompt {
        let mut sections = vec![self.identity.trim().to_string()];
        let context = if self.context_files {
            discover(&self.workdir)
        } else {
            ContextFiles::default()
        };
        if !context.files.is_empty() {
            let mut block = String::from(
                "# Project instructions\nThe user keeps these files in the project; follow them.",
            );
            for file in &context.files {
                block.push_str(&format!(
                    "\n\n## {}\n{}",
                    file.path.display(),
                    file.text.trim_end()
                ));
            }
            sections.push(block);
        }
        if let Some(memory) = &self.memory {
            let text = memory();
            if !text.trim().is_empty() {
                sections.push(text.trim().to_string());
            }
        }
        sections.push(format!(
            "# Session\nDate: {}\nPlatform: {} {} (shell: {})\nWorking directory: {}\nModel: {}",
            self.date.clone().unwrap_or_else(today),
            std::env::consts::OS,
            std::env::consts::ARCH,
            std::env::var("SHELL").unwrap_or_else(|_| "sh".into()),
            self.workdir.display(),
            self.model
        ));
        BuiltPrompt {
            text: sections.join("\n\n"),
            context,
        }
    }
}

impl SystemPromptSource for SystemPromptBuilder {
    fn build(&self) -> String {
        self.build_detailed().text
    }
}

/// Today's date in UTC, `YYYY-MM-DD`, from the system clock (civil-from-days, so no date
/// crate is needed for one line).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_a_plausible_date() {
        let t = today();
        assert_eq!(t.len(), 10, "{t}");
        assert!(t.as_str() >= "2024-01-01", "{t}");
    }
}
