//! Project instructions the user keeps in the repository (`AGENTS.md`, `CLAUDE.md`,
//! `.cursorrules`, `.baton.md`), found from the working directory up to the repository root.
//! Each file is size-capped with a note saying what was cut, and scanned with the memory
//! scanner: a file carrying an injection ("ignore previous instructions…", hidden characters,
//! exfiltration commands) is left out with a note, since it would sit in every request's
//! system prompt.

use std::path::{Path, PathBuf};

/// The names looked for, in the order they are shown within one folder.
pub const CONTEXT_FILE_NAMES: [&str; 4] = ["AGENTS.md", "CLAUDE.md", ".baton.md", ".cursorrules"];
/// Characters of one file kept; the rest is cut with a note.
pub const MAX_FILE_CHARS: usize = 20_000;
/// Characters of all files together.
pub const MAX_TOTAL_CHARS: usize = 40_000;

/// One file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    /// What goes in the prompt (possibly cut).
    pub text: String,
    /// Characters in the file.
    pub chars: usize,
    pub cut: bool,
}

/// What discovery found and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextFiles {
    pub files: Vec<ContextFile>,
    /// One line per file left out, with the reason.
    pub dropped: Vec<String>,
}

/// Looks from `workdir` up to the folder holding `.git` (or the filesystem root when there is
/// none). Outer folders come first, so the nearest file — the most specific — is read last.
pub fn discover(workdir: &Path) -> ContextFiles {
    let mut folders = Vec::new();
    let mut current = Some(workdir);
    while let Some(dir) = current {
        folders.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
        current = dir.parent();
    }
    folders.reverse();
    let mut found = ContextFiles::default();
    let mut total = 0usize;
    for dir in folders {
        for name in CONTEXT_FILE_NAMES {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    found
                        .dropped
                        .push(format!("{}: not read ({e})", path.display()));
                    continue;
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            if let Some(finding) = baton_memory::scan::scan(&text) {
                found.dropped.push(format!(
                    "{}: left out, it looks like a prompt injection (rule {}: {})",
                    path.display(),
                    finding.rule,
                    finding.detail
                ));
                continue;
            }
            let chars = text.chars().count();
            let room = MAX_FILE_CHARS.min(MAX_TOTAL_CHARS.saturating_sub(total));
            if room == 0 {
                found.dropped.push(format!(
                    "{}: left out, the context files already fill {MAX_TOTAL_CHARS} characters",
                    path.display()
                ));
                continue;
            }
            let (kept, cut) = if chars > room {
                let head: String = text.chars().take(room).collect();
                (
                    format!(
                        "{head}\n[… cut: {} of {chars} characters not shown; read the file for the rest]",
                        chars - room
                    ),
                    true,
                )
            } else {
                (text, false)
            };
            total += chars.min(room);
            found.files.push(ContextFile {
                path,
                text: kept,
                chars,
                cut,
            });
        }
    }
    found
}
