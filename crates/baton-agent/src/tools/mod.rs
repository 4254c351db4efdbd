//! The built-in tools: shell, files, search. Each validates its arguments, stays inside the
//! working directory (`paths.rs`), and answers errors a model can act on. Memory, recall and
//! session-search tools live with what they reach into.

pub mod destructive;
pub mod patch;
pub mod paths;
pub mod read_file;
pub mod search_files;
pub mod terminal;
pub mod write_file;

pub use destructive::DestructivePolicy;

use crate::tool::Tool;
use std::sync::Arc;

/// terminal, read_file, write_file, patch, search_files.
pub fn builtin_tools(policy: DestructivePolicy) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(terminal::Terminal::new(policy)),
        Arc::new(read_file::ReadFile),
        Arc::new(write_file::WriteFile),
        Arc::new(patch::Patch),
        Arc::new(search_files::SearchFiles),
    ]
}
