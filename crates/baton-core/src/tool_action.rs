//! What a tool call *did*, independent of which agent made it.
//!
//! Agents name the same action differently (`Bash`, `bash`, `exec_command`, `execute_bash`,
//! `run_shell_command`, `terminal`; `Read`, `read_file`, `str_replace_editor view`...). Pruning
//! stubs and the task ledger both need "ran this command", "read that file", so the mapping
//! lives here once. Unknown tools are [`ToolAction::Other`], never an error.

mod args;
mod exit_report;
mod table;

pub use exit_report::exit_code;
pub use table::{ActionTable, Shown};

use args::{Args, Words};
use std::borrow::Cow;
use std::sync::LazyLock;

/// The action behind one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolAction {
    /// Read a file (or a line range of it).
    Read {
        path: String,
        /// 1-based first line, when the call asked for a range.
        from_line: Option<u64>,
        /// Number of lines asked for, when given.
        lines: Option<u64>,
    },
    /// Created or overwrote a file.
    Write { path: String, lines: Option<usize> },
    /// Edited a file in place.
    Edit { path: String },
    /// Applied a patch touching these files.
    Patch { paths: Vec<String> },
    /// Ran a shell command.
    Command { command: String },
    /// Searched files by content or name.
    Search {
        pattern: String,
        path: Option<String>,
    },
    /// Fetched a URL or searched the web.
    Web { target: String },
    /// Handed work to a sub-agent.
    Delegate { goal: String },
    /// Anything else.
    Other,
}

impl ToolAction {
    /// The texts the action holds (paths, command, pattern, target, goal), in field order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        let (first, second, rest): (Option<&String>, Option<&String>, &[String]) = match self {
            ToolAction::Read { path, .. }
            | ToolAction::Write { path, .. }
            | ToolAction::Edit { path } => (Some(path), None, &[]),
            ToolAction::Patch { paths } => (None, None, paths),
            ToolAction::Command { command } => (Some(command), None, &[]),
            ToolAction::Search { pattern, path } => (Some(pattern), path.as_ref(), &[]),
            ToolAction::Web { target } => (Some(target), None, &[]),
            ToolAction::Delegate { goal } => (Some(goal), None, &[]),
            ToolAction::Other => (None, None, &[]),
        };
        first
            .into_iter()
            .chain(second)
            .chain(rest)
            .map(String::as_str)
    }

    /// [`texts`](Self::texts), to rewrite in place.
    pub fn texts_mut(&mut self) -> Vec<&mut String> {
        match self {
            ToolAction::Read { path, .. }
            | ToolAction::Write { path, .. }
            | ToolAction::Edit { path } => vec![path],
            ToolAction::Patch { paths } => paths.iter_mut().collect(),
            ToolAction::Command { command } => vec![command],
            ToolAction::Search { pattern, path } => {
                std::iter::once(pattern).chain(path.as_mut()).collect()
            }
            ToolAction::Web { target } => vec![target],
            ToolAction::Delegate { goal } => vec![goal],
            ToolAction::Other => Vec::new(),
        }
    }

    /// Files this action modified.
    pub fn modified_paths(&self) -> Vec<&str> {
        match self {
            ToolAction::Write { path, .. } | ToolAction::Edit { path } => vec![path.as_str()],
            ToolAction::Patch { paths } => paths.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }
}

/// Classifies a tool call from its name and JSON-string arguments.
pub fn classify(name: &str, arguments: &str) -> ToolAction {
    #[cfg(test)]
    tests::CLASSIFIED.with(|n| n.set(n.get() + 1));
    let args = Args::parse(arguments);
    // Lowered on the stack when it fits (every tool name the table knows does): a heap
    // copy per classified call was a few hundred instructions of each.
    let mut buffer = [0u8; 32];
    let heap;
    let lower: &str = match buffer.get_mut(..name.len()) {
        Some(room) => {
            room.copy_from_slice(name.as_bytes());
            room.make_ascii_lowercase();
            // Lowering ASCII letters keeps the text UTF-8.
            std::str::from_utf8(room).unwrap_or(name)
        }
        None => {
            heap = name.to_ascii_lowercase();
            &heap
        }
    };
    let text = |keys: &[&str]| args.str_arg(keys).unwrap_or_default().into_owned();
    match lower {
        "bash" | "shell" | "terminal" | "exec_command" | "execute_bash" | "run_shell_command"
        | "run" | "execute_command" | "local_shell" | "container.exec" => command(&args, arguments),
        "read" | "read_file" | "view" | "open" | "cat" => read(&args),
        "write" | "write_file" | "create" | "create_file" => write(&args),
        "edit" | "multiedit" | "replace" | "edit_file" | "insert" | "str_replace" | "patch" => {
            ToolAction::Edit {
                path: text(&PATH_KEYS),
            }
        }
        "apply_patch" => ToolAction::Patch {
            paths: patch_paths(
                &args
                    .str_arg(&["input", "patch"])
                    .unwrap_or(arguments.into()),
            ),
        },
        "str_replace_editor" | "str_replace_based_edit_tool" | "text_editor" => editor(&args),
        "grep"
        | "glob"
        | "search_files"
        | "find_file"
        | "search_file_content"
        | "search_dir"
        | "search_file"
        | "find"
        | "list_directory"
        | "ls" => search(&args),
        "webfetch" | "web_fetch" | "web_extract" | "browser_navigate" => ToolAction::Web {
            target: text(&["url", "urls"]),
        },
        "websearch" | "web_search" => ToolAction::Web {
            target: text(&["query", "q"]),
        },
        "task" | "delegate_task" | "delegate_to_agent" | "agent" => ToolAction::Delegate {
            goal: text(&["description", "goal", "objective", "prompt"]),
        },
        _ => ToolAction::Other,
    }
}

const PATH_KEYS: [&str; 6] = [
    "file_path",
    "path",
    "filename",
    "file",
    "absolute_path",
    "target_file",
];

fn path(args: &Args<'_>) -> String {
    args.str_arg(&PATH_KEYS).unwrap_or_default().into_owned()
}

fn command(args: &Args<'_>, raw: &str) -> ToolAction {
    let words = args.words("command").or_else(|| args.words("cmd"));
    let command = match words {
        Some(Words::One(s)) => s.trim().to_string(),
        // Codex `shell` sends `["bash", "-lc", "cmd"]`.
        Some(Words::Many(words)) => match words.as_slice() {
            [shell, flag, cmd] if shell.ends_with("sh") && flag.starts_with('-') => {
                cmd.trim().to_string()
            }
            _ => words.join(" ").trim().to_string(),
        },
        None if args.is_empty() => raw.trim().to_string(),
        _ => String::new(),
    };
    ToolAction::Command { command }
}

fn read(args: &Args<'_>) -> ToolAction {
    ToolAction::Read {
        path: path(args),
        from_line: args.num_arg(&["offset", "start_line", "line", "from_line"]),
        lines: args.num_arg(&["limit", "lines", "num_lines"]),
    }
}

fn write(args: &Args<'_>) -> ToolAction {
    let lines = args.line_count(&["content", "file_text", "text"]);
    ToolAction::Write {
        path: path(args),
        lines,
    }
}

/// SWE-agent / OpenHands / Anthropic text editor: one tool, the action in `command`.
fn editor(args: &Args<'_>) -> ToolAction {
    let path = path(args);
    match args.str_arg(&["command"]).as_deref().unwrap_or("") {
        "view" => {
            let (start, end) = args.range("view_range");
            let lines = match (start, end) {
                (Some(s), Some(e)) if e >= s as i64 => Some(e as u64 - s + 1),
                _ => None,
            };
            ToolAction::Read {
                path,
                from_line: start,
                lines,
            }
        }
        "create" => {
            let lines = args.line_count(&["file_text"]);
            ToolAction::Write { path, lines }
        }
        _ => ToolAction::Edit { path },
    }
}

fn search(args: &Args<'_>) -> ToolAction {
    ToolAction::Search {
        pattern: args
            .str_arg(&[
                "pattern",
                "regex",
                "query",
                "search_term",
                "file_name",
                "glob",
            ])
            .unwrap_or_default()
            .into_owned(),
        path: args
            .str_arg(&["path", "dir", "dir_path", "directory"])
            .map(Cow::into_owned),
    }
}

/// Files named by an `apply_patch` envelope (`*** Update File: path`, Add, Delete, Move to).
pub fn patch_paths(patch: &str) -> Vec<String> {
    static FILE_LINE: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        regex::Regex::new(r"(?m)^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$|^\+\+\+ b/(.+?)\s*$").ok()
    });
    let Some(re) = FILE_LINE.as_ref() else {
        return Vec::new();
    };
    let mut paths: Vec<String> = Vec::new();
    for caps in re.captures_iter(patch) {
        if let Some(p) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) {
            let p = p.as_str().to_string();
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    paths
}

/// Whether a tool result reads like a failure: a non-zero exit, or an error word near the start.
pub fn looks_like_error(result: &str) -> bool {
    if let Some(code) = exit_code(result) {
        return code != 0;
    }
    static ERROR_WORDS: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(error|failed|failure|exception|traceback|panicked|fatal|timed out|command not found|no such file)\b").ok()
    });
    let head: String = result.chars().take(500).collect();
    ERROR_WORDS.as_ref().is_some_and(|re| re.is_match(&head))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// Calls classified on this thread: what tests of "classified once per pass" count.
        pub(crate) static CLASSIFIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn shell_tools_of_every_agent_are_commands() {
        for (name, args) in [
            ("Bash", r#"{"command":"cargo test","description":"run"}"#),
            ("exec_command", r#"{"cmd":"cargo test"}"#),
            ("execute_bash", r#"{"command":"cargo test"}"#),
            ("run_shell_command", r#"{"command":"cargo test"}"#),
            ("shell", r#"{"command":["bash","-lc","cargo test"]}"#),
            ("terminal", r#"{"command":"cargo test"}"#),
        ] {
            assert_eq!(
                classify(name, args),
                ToolAction::Command {
                    command: "cargo test".into()
                },
                "{name}"
            );
        }
    }

    #[test]
    fn reads_keep_path_and_range() {
        assert_eq!(
            classify("Read", r#"{"file_path":"/a/b.rs","offset":10,"limit":50}"#),
            ToolAction::Read {
                path: "/a/b.rs".into(),
                from_line: Some(10),
                lines: Some(50)
            }
        );
        assert_eq!(
            classify(
                "str_replace_editor",
                r#"{"command":"view","path":"/x.c","view_range":[5,9]}"#
            ),
            ToolAction::Read {
                path: "/x.c".into(),
                from_line: Some(5),
                lines: Some(5)
            }
        );
    }

    #[test]
    fn writes_edits_and_patches_report_modified_paths() {
        let w = classify("Write", r#"{"file_path":"a.md","content":"x\ny\n"}"#);
        assert_eq!(w.modified_paths(), vec!["a.md"]);
        let e = classify(
            "Edit",
            r#"{"file_path":"b.rs","old_string":"a","new_string":"b"}"#,
        );
        assert_eq!(e.modified_paths(), vec!["b.rs"]);
        let p = classify(
            "apply_patch",
            r#"{"input":"*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: src/b.ts\n+z\n*** End Patch"}"#,
        );
        assert_eq!(p.modified_paths(), vec!["src/a.ts", "src/b.ts"]);
        let s = classify(
            "str_replace_editor",
            r#"{"command":"str_replace","path":"/c.py"}"#,
        );
        assert_eq!(s.modified_paths(), vec!["/c.py"]);
    }

    #[test]
    fn unknown_tools_and_broken_arguments_are_other_not_errors() {
        assert_eq!(classify("book_flight", r#"{"id":1}"#), ToolAction::Other);
        assert_eq!(
            classify("Read", "{not json"),
            ToolAction::Read {
                path: String::new(),
                from_line: None,
                lines: None
            }
        );
    }

    #[test]
    fn error_detection_uses_exit_status_first() {
        assert!(looks_like_error("error: could not compile\nexit code: 101"));
        assert!(!looks_like_error("0 errors found\nexit code: 0"));
        assert!(looks_like_error("Traceback (most recent call last):"));
        assert!(!looks_like_error("wrote 3 files"));
    }
}
