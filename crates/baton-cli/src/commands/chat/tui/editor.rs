//! The prompt line: rustyline with slash-command completion and hints, multi-line input
//! (a paste keeps its newlines; Alt-Enter or Ctrl-J adds one; a line ending in `\` continues),
//! and a history shared by every `baton chat`, kept in `$BATON_HOME/chat_history` with secrets
//! redacted before they reach the file.

use super::slash::{COMMANDS, completions};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{DefaultHistory, History};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, CompletionType, Config, Context, Editor, EventHandler, KeyCode, KeyEvent, Modifiers,
};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Entries kept in the history file.
const HISTORY_ENTRIES: usize = 10_000;

pub type LineEditor = Editor<PromptHelper, DefaultHistory>;

/// The history file under `home`.
pub fn history_path(home: &Path) -> PathBuf {
    home.join("chat_history")
}

/// A line editor with the history at `history` loaded (a missing file is a first run; an
/// unreadable one is reported and the run goes on without it).
pub fn new_editor(history: &Path, color: bool) -> Result<(LineEditor, Option<String>), String> {
    let config = Config::builder()
        .max_history_size(HISTORY_ENTRIES)
        .map_err(|e| e.to_string())?
        .history_ignore_dups(true)
        .map_err(|e| e.to_string())?
        .history_ignore_space(true)
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .bracketed_paste(true)
        .build();
    let mut editor: LineEditor =
        Editor::with_config(config).map_err(|e| format!("cannot start the line editor: {e}"))?;
    editor.set_helper(Some(PromptHelper { color }));
    for key in [
        KeyEvent(KeyCode::Enter, Modifiers::ALT),
        KeyEvent(KeyCode::Char('J'), Modifiers::CTRL),
    ] {
        editor.bind_sequence(key, EventHandler::Simple(Cmd::Newline));
    }
    let warning = match editor.load_history(history) {
        Ok(()) => None,
        Err(rustyline::error::ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(e) => Some(format!(
            "the prompt history {} could not be read ({e}); this run starts without it",
            history.display()
        )),
    };
    Ok((editor, warning))
}

/// Adds `line` to the history and appends it to the file (appending, so two terminals
/// running `baton chat` both keep theirs). Secrets are redacted first.
pub fn remember(editor: &mut LineEditor, history: &Path, line: &str) -> Option<String> {
    let entry = baton_core::summary::redact::redact(line);
    if !editor.add_history_entry(entry.as_ref()).unwrap_or(false) {
        return None;
    }
    if let Some(dir) = history.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let outcome = editor.append_history(history);
    restrict_permissions(history);
    outcome.err().map(|e| {
        format!(
            "cannot save the prompt history to {}: {e}",
            history.display()
        )
    })
}

/// The history holds what the user typed: readable by the user only.
fn restrict_permissions(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

/// Joins continuation lines: a `\` at the end of a line asked for the next one.
pub fn join_continuations(text: &str) -> String {
    text.replace("\\\n", "\n")
}

/// How many history entries there are (for the welcome line).
pub fn history_len(editor: &LineEditor) -> usize {
    editor.history().len()
}

pub struct PromptHelper {
    color: bool,
}

impl rustyline::Helper for PromptHelper {}

impl Completer for PromptHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let Some(command) = before.strip_prefix('/') else {
            return Ok((pos, Vec::new()));
        };
        let pair = |text: String| Pair {
            display: text.clone(),
            replacement: text,
        };
        if !command.contains(char::is_whitespace) {
            let names = completions(command)
                .into_iter()
                .map(|n| pair(format!("{n} ")))
                .collect();
            return Ok((1, names));
        }
        // Second words of the commands that take a verb.
        let (name, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let verbs: &[&str] = match name {
            "memory" => &["show", "add", "user", "remove"],
            "pin" => &["list", "remove"],
            _ => &[],
        };
        if rest.contains(char::is_whitespace) {
            return Ok((pos, Vec::new()));
        }
        let start = pos - rest.len();
        let found = verbs
            .iter()
            .filter(|v| v.starts_with(rest))
            .map(|v| pair(format!("{v} ")))
            .collect();
        Ok((start, found))
    }
}

impl Hinter for PromptHelper {
    type Hint = String;

    /// The rest of a uniquely typed command name and its arguments, greyed.
    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<String> {
        if pos != line.len() {
            return None;
        }
        let typed = line.strip_prefix('/')?;
        if let Some(name) = typed.strip_suffix(' ') {
            let spec = COMMANDS.iter().find(|c| c.name == name)?;
            return (!spec.args.is_empty()).then(|| spec.args.to_string());
        }
        if typed.is_empty() || typed.contains(' ') {
            return None;
        }
        match completions(typed).as_slice() {
            [only] => {
                let spec = COMMANDS.iter().find(|c| c.name == *only)?;
                let args = if spec.args.is_empty() {
                    String::new()
                } else {
                    format!(" {}", spec.args)
                };
                Some(format!("{}{args}", &only[typed.len()..]))
            }
            _ => None,
        }
    }
}

impl Highlighter for PromptHelper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.color {
            Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
        } else {
            Cow::Borrowed(hint)
        }
    }
}

impl Validator for PromptHelper {
    /// A line ending in a backslash continues on the next.
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        if ctx.input().ends_with('\\') {
            return Ok(ValidationResult::Incomplete);
        }
        Ok(ValidationResult::Valid(None))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;

    #[test]
    fn slash_names_and_verbs_complete_and_hint() {
        let helper = PromptHelper { color: false };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let (start, found) = helper.complete("/com", 4, &ctx).unwrap();
        assert_eq!(start, 1);
        assert_eq!(
            found
                .iter()
                .map(|p| p.replacement.as_str())
                .collect::<Vec<_>>(),
            ["compress "]
        );
        let (start, found) = helper.complete("/memory re", 10, &ctx).unwrap();
        assert_eq!((start, found[0].replacement.as_str()), (8, "remove "));
        assert!(helper.complete("plain text", 5, &ctx).unwrap().1.is_empty());
        assert_eq!(helper.hint("/us", 3, &ctx).as_deref(), Some("age"));
        assert_eq!(
            helper.hint("/resume ", 8, &ctx).as_deref(),
            Some("[id|title]")
        );
        assert_eq!(
            helper.hint("/m", 2, &ctx),
            None,
            "ambiguous: /model, /memory"
        );
    }

    #[test]
    fn continuation_backslashes_become_newlines() {
        assert_eq!(join_continuations("first\\\nsecond"), "first\nsecond");
        assert_eq!(join_continuations("a \\ b"), "a \\ b");
    }

    #[test]
    fn the_history_file_gets_the_prompt_with_secrets_redacted_and_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = history_path(dir.path());
        let (mut editor, warning) = new_editor(&path, false).unwrap();
        assert!(warning.is_none());
        let secret = "use key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD please";
        assert!(remember(&mut editor, &path, secret).is_none());
        let saved = std::fs::read_to_string(&path).unwrap();
        assert!(saved.contains("use key"), "{saved}");
        assert!(
            !saved.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{saved}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (again, _) = new_editor(&path, false).unwrap();
        assert_eq!(history_len(&again), 1);
    }
}
