//! Compact stand-ins for old tool traffic: one-line stubs for large results, and tool-call
//! arguments with their long strings cut. [`super::prune`] decides *which* messages shrink;
//! this module decides what they shrink *to*.
//!
//! A pruned result must still tell the model (and the summarizer) *what happened*: which command
//! ran and how it ended, which file was read and how much of it, what a search found. Agents name
//! the same actions differently, so the stub is chosen from the call's
//! [`ToolAction`](crate::tool_action::ToolAction), not from the tool name; tools nobody
//! classified get their first two arguments instead.
//!
//! Every stub is a single line that starts with `[tool_name] ` and is at most
//! [`STUB_MAX_CHARS`] characters, which is what [`looks_like_stub`] recognizes, so pruning a
//! stub again is a no-op. All cutting counts characters, never bytes, so CJK and emoji content
//! cannot split a code point. Cut arguments always stay valid JSON.

mod match_count;
mod stub_text;

pub use super::argument_cut::{ARGS_TRUNCATION_MARKER, truncate_tool_call_args};

use crate::tool_action::{ActionTable, ToolAction, exit_code};
use crate::truncate::{Grouped, group_digits, grouped};
use match_count::match_count;
use serde_json::{Map, Value};
use std::borrow::Cow;
use stub_text::{cut_end, cut_end_in_place, cut_flat_end, cut_flat_start, flatten, make_one_line};

/// Upper bound of a stub's length, in characters. Stubs are far shorter in practice; the bound
/// exists so [`looks_like_stub`] can tell a stub from a real result that happens to start with
/// a bracket.
pub const STUB_MAX_CHARS: usize = 300;

/// Longest tool name shown in a stub.
const NAME_MAX_CHARS: usize = 64;
/// Commands and code are cut to this many characters: enough to recognize the command.
const COMMAND_MAX_CHARS: usize = 80;
/// Paths keep their last characters, where the file name is.
const PATH_MAX_CHARS: usize = 100;
/// Search patterns, queries and delegated goals.
const PHRASE_MAX_CHARS: usize = 60;
/// Argument values of unclassified tools.
const VALUE_MAX_CHARS: usize = 40;
/// Argument keys of unclassified tools.
const KEY_MAX_CHARS: usize = 30;

/// A one-line, informative stub replacing an old large tool result.
///
/// `arguments` is the JSON string of the call that produced `content`; broken or missing
/// arguments give a less specific stub, never an error.
pub fn summarize_tool_result(tool_name: &str, arguments: &str, content: &str) -> String {
    let chars = crate::truncate::char_count(content);
    stub_of_result(
        tool_name,
        arguments,
        content,
        chars,
        &mut ActionTable::default(),
    )
}

/// `format!` into a string sized for a stub's part: `format!` starts from a guess of a few
/// bytes and grows by reallocating, which was a third of building a stub (`perf record`,
/// real4, issue #17).
macro_rules! sized {
    ($($arg:tt)*) => {{
        let mut text = String::with_capacity(STUB_PART_CAPACITY);
        // Writing to a `String` cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut text, format_args!($($arg)*));
        text
    }};
}

/// Bytes reserved for a stub's part: most stubs are under 120 bytes.
const STUB_PART_CAPACITY: usize = 128;

/// [`summarize_tool_result`] for `content` of `chars` characters, classifying the call through
/// the pass's `actions` (which keep it for the ledger and the summary).
pub(crate) fn stub_of_result<'m>(
    tool_name: &'m str,
    arguments: &'m str,
    content: &str,
    chars: usize,
    actions: &mut ActionTable<'m>,
) -> String {
    let name = display_name(tool_name);
    let shape = ResultShape::of(content, chars);
    let body = named_stub(tool_name, arguments, content, &shape)
        .or_else(|| {
            action_stub(
                tool_name,
                actions.classify(tool_name, arguments),
                content,
                &shape,
            )
        })
        .unwrap_or_else(|| other_stub(arguments, &shape));
    // Built once and changed in place: a stub is written for every old result a pass keeps.
    // The name goes in front of the body in its own buffer (sized for a whole stub).
    let mut stub = body;
    stub.insert_str(0, "] ");
    stub.insert_str(0, &name);
    stub.insert(0, '[');
    make_one_line(&mut stub);
    cut_end_in_place(&mut stub, STUB_MAX_CHARS);
    stub
}

/// Whether `text` is a stub this module wrote: one line, `[name] ` first, short.
///
/// The cheap tests come first: most results do not open with `[`, and a long one is told
/// from its length, so neither is searched for a newline or counted (every kept old result
/// is asked this on every pass).
pub fn looks_like_stub(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('[') else {
        return false;
    };
    if crate::truncate::has_more_chars_than(text, STUB_MAX_CHARS) || text.contains('\n') {
        return false;
    }
    let Some(close) = rest.find("] ") else {
        return false;
    };
    let name = &rest[..close];
    !name.is_empty() && name.chars().count() <= NAME_MAX_CHARS && name.chars().all(is_name_char)
}

/// Size of a result, as the stub reports it. Its characters are known before a stub is made
/// (whether to make one depends on them); its lines are counted only for the stubs that show
/// them: each is a pass over the whole result.
struct ResultShape<'t> {
    content: &'t str,
    chars: usize,
    lines: std::cell::OnceCell<usize>,
}

impl<'t> ResultShape<'t> {
    fn of(content: &'t str, chars: usize) -> Self {
        ResultShape {
            content,
            chars,
            lines: std::cell::OnceCell::new(),
        }
    }

    fn lines(&self) -> usize {
        *self.lines.get_or_init(|| {
            if self.content.trim().is_empty() {
                0
            } else {
                crate::truncate::line_count(self.content)
            }
        })
    }

    fn chars_label(&self) -> Grouped {
        grouped(self.chars)
    }

    fn lines_label(&self) -> Grouped {
        grouped(self.lines())
    }
}

/// Stubs for tools whose *name* says more than their classified action does.
fn named_stub(name: &str, arguments: &str, content: &str, shape: &ResultShape) -> Option<String> {
    // The arguments are parsed only for the names that read them: this runs for every call,
    // so the name is compared as it is, not lowered into a copy.
    let is = |names: &[&str]| names.iter().any(|n| name.eq_ignore_ascii_case(n));
    match name {
        _ if is(&["write_stdin"]) => Some(stdin_stub(&parse_object(arguments), content, shape)),
        _ if is(&["todowrite", "write_todos", "todo", "update_plan"]) => Some(sized!(
            "updated the task list ({} chars result)",
            shape.chars_label()
        )),
        _ if is(&["execute_code", "run_ipython", "python"]) => {
            let args = parse_object(arguments);
            let code = string_value(&args, &["code", "source"])?;
            Some(sized!(
                "ran code `{}` -> {} lines output",
                cut_flat_end(code, PHRASE_MAX_CHARS),
                shape.lines_label()
            ))
        }
        _ => None,
    }
}

/// Codex polls or feeds a running process through `write_stdin`; the session id and the exit
/// status are what matter afterwards.
fn stdin_stub(args: &Map<String, Value>, content: &str, shape: &ResultShape) -> String {
    let session = args
        .get("session_id")
        .map(value_text)
        .unwrap_or_else(|| "?".into());
    let sent = string_value(args, &["chars", "input"]).unwrap_or("");
    let verb = if sent.is_empty() {
        sized!("polled session {session}")
    } else {
        sized!(
            "sent `{}` to session {session}",
            cut_flat_end(sent, PHRASE_MAX_CHARS)
        )
    };
    sized!("{verb} -> {}", outcome_label(content, shape))
}

/// Stubs chosen by what the call did, whatever the agent called the tool.
fn action_stub(
    name: &str,
    action: &ToolAction,
    content: &str,
    shape: &ResultShape,
) -> Option<String> {
    match action {
        ToolAction::Command { command } => command_stub(command, content, shape),
        ToolAction::Read {
            path,
            from_line,
            lines,
        } => read_stub(path, *from_line, *lines, content, shape),
        ToolAction::Write { path, lines } => write_stub(path, *lines),
        ToolAction::Edit { path } => edit_stub(path, shape),
        ToolAction::Patch { paths } => patch_stub(paths, shape),
        ToolAction::Search { pattern, path } => {
            Some(search_stub(pattern, path.as_deref(), content, shape))
        }
        ToolAction::Web { target } => web_stub(name, target, shape),
        ToolAction::Delegate { goal } => delegate_stub(goal, shape),
        ToolAction::Other => None,
    }
}

fn command_stub(command: &str, content: &str, shape: &ResultShape) -> Option<String> {
    if command.is_empty() {
        return None;
    }
    Some(sized!(
        "ran `{}` -> {}",
        cut_flat_end(command, COMMAND_MAX_CHARS),
        outcome_label(content, shape)
    ))
}

/// `exit 101, 212 lines output`, or just the line count when the result reports no status
/// (Claude Code prints one only on failure). Written straight into the stub that shows it.
struct OutcomeLabel<'s> {
    exit: Option<i32>,
    shape: &'s ResultShape<'s>,
}

fn outcome_label<'s>(content: &str, shape: &'s ResultShape<'s>) -> OutcomeLabel<'s> {
    OutcomeLabel {
        exit: exit_code(content),
        shape,
    }
}

impl std::fmt::Display for OutcomeLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(code) = self.exit {
            write!(f, "exit {code}, ")?;
        }
        write!(f, "{} lines output", self.shape.lines_label())
    }
}

fn read_stub(
    path: &str,
    from_line: Option<u64>,
    limit: Option<u64>,
    content: &str,
    shape: &ResultShape,
) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let path = cut_flat_start(path, PATH_MAX_CHARS);
    let range = numbered_line_range(content).or_else(|| requested_range(from_line, limit, shape));
    Some(match range {
        Some((first, last)) => sized!(
            "read {path} lines {first}-{last} ({} chars)",
            shape.chars_label()
        ),
        None => sized!("read {path} ({} chars)", shape.chars_label()),
    })
}

/// First and last line numbers of a `cat -n`-style result (`     1→…` from Claude Code,
/// `     1\t…` from the editor tools), which is exactly what the model saw.
fn numbered_line_range(content: &str) -> Option<(u64, u64)> {
    // A header line or two may precede the numbered lines ("Here's the result of running…").
    let first = content.lines().take(3).find_map(line_number)?;
    let last = content.lines().rev().find_map(line_number)?;
    (last >= first).then_some((first, last))
}

fn line_number(line: &str) -> Option<u64> {
    let trimmed = line.trim_start_matches(' ');
    let digits_end = trimmed
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map(|(i, _)| i)?;
    if digits_end == 0 {
        return None;
    }
    let rest = &trimmed[digits_end..];
    if !(rest.starts_with('→') || rest.starts_with('\t')) {
        return None;
    }
    trimmed[..digits_end].parse().ok()
}

/// The range implied by the call (offset, limit) and the number of lines that came back.
fn requested_range(
    from_line: Option<u64>,
    limit: Option<u64>,
    shape: &ResultShape,
) -> Option<(u64, u64)> {
    let returned = shape.lines() as u64;
    let shown = limit.map_or(returned, |l| l.min(returned));
    if shown == 0 {
        return None;
    }
    let first = from_line.unwrap_or(1).max(1);
    Some((first, first.saturating_add(shown - 1)))
}

fn write_stub(path: &str, lines: Option<usize>) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let lines = lines.map_or_else(|| "?".to_string(), group_digits);
    Some(sized!(
        "wrote {} ({lines} lines)",
        cut_flat_start(path, PATH_MAX_CHARS)
    ))
}

fn edit_stub(path: &str, shape: &ResultShape) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    Some(sized!(
        "edited {} ({} chars result)",
        cut_flat_start(path, PATH_MAX_CHARS),
        shape.chars_label()
    ))
}

fn patch_stub(paths: &[String], shape: &ResultShape) -> Option<String> {
    let shown: Vec<String> = paths
        .iter()
        .take(2)
        .map(|p| cut_flat_start(p, PATH_MAX_CHARS / 2))
        .collect();
    if shown.is_empty() {
        return None;
    }
    let more = match paths.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => sized!(" (+{n} more)"),
    };
    Some(sized!(
        "patched {}{more} ({} chars result)",
        shown.join(", "),
        shape.chars_label()
    ))
}

fn search_stub(pattern: &str, path: Option<&str>, content: &str, shape: &ResultShape) -> String {
    let place = cut_flat_start(path.unwrap_or("."), PATH_MAX_CHARS);
    if pattern.is_empty() {
        return sized!("listed {place} ({} lines)", shape.lines_label());
    }
    let found = match match_count(content) {
        Some(n) => sized!("{} matches", grouped(n)),
        None => sized!("{} lines", shape.lines_label()),
    };
    sized!(
        "search for '{}' in {place} -> {found}",
        cut_flat_end(pattern, PHRASE_MAX_CHARS)
    )
}

fn web_stub(name: &str, target: &str, shape: &ResultShape) -> Option<String> {
    if target.is_empty() {
        return None;
    }
    let target = flatten(target);
    Some(if name.to_ascii_lowercase().contains("search") {
        sized!(
            "searched the web for '{}' ({} chars result)",
            cut_end(&target, PHRASE_MAX_CHARS),
            shape.chars_label()
        )
    } else {
        sized!(
            "fetched {} ({} chars)",
            cut_end(&target, PATH_MAX_CHARS),
            shape.chars_label()
        )
    })
}

fn delegate_stub(goal: &str, shape: &ResultShape) -> Option<String> {
    if goal.is_empty() {
        return None;
    }
    Some(sized!(
        "delegated '{}' ({} chars result)",
        cut_flat_end(goal, PHRASE_MAX_CHARS),
        shape.chars_label()
    ))
}

/// `k1=v1 k2=v2 (N chars result)`: the first two arguments are usually the identifying ones
/// (`reservation_id`, `query`, `url`).
fn other_stub(arguments: &str, shape: &ResultShape) -> String {
    let args = parse_object(arguments);
    let mut parts: Vec<String> = args
        .iter()
        .take(2)
        .map(|(k, v)| {
            sized!(
                "{}={}",
                cut_flat_end(k, KEY_MAX_CHARS),
                cut_flat_end(&value_text(v), VALUE_MAX_CHARS)
            )
        })
        .collect();
    parts.push(sized!("({} chars result)", shape.chars_label()));
    parts.join(" ")
}

fn parse_object(arguments: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn string_value<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// A value as shown in a stub: strings bare, everything else as compact JSON.
fn value_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// The tool name as it appears between the brackets: characters that could break the stub's
/// shape (brackets, spaces, newlines) become `_`.
fn display_name(name: &str) -> Cow<'_, str> {
    // Almost every tool's name is shown as it is.
    if !name.is_empty()
        && !crate::truncate::has_more_chars_than(name, NAME_MAX_CHARS)
        && name.chars().all(is_name_char)
    {
        return Cow::Borrowed(name);
    }
    let cleaned: String = name
        .chars()
        .take(NAME_MAX_CHARS)
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    if cleaned.is_empty() {
        Cow::Borrowed("tool")
    } else {
        Cow::Owned(cleaned)
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn numbered(lines: usize, sep: &str) -> String {
        let all: Vec<String> = (1..=lines)
            .map(|i| format!("{i:>6}{sep}let v{i} = f({i});"))
            .collect();
        all.join("\n")
    }

    fn output(lines: usize) -> String {
        let all: Vec<String> = (0..lines)
            .map(|i| format!("test case_{i} ... ok"))
            .collect();
        all.join("\n")
    }

    /// Each case: tool name, arguments, result, expected stub (or its prefix, ending in `(`).
    fn check(cases: &[(&str, &str, &str, &str)]) {
        for (name, args, content, expected) in cases {
            let stub = summarize_tool_result(name, args, content);
            if expected.ends_with('(') {
                assert!(stub.starts_with(expected), "{stub}\n  expected {expected}");
            } else {
                assert_eq!(&stub, expected);
            }
            assert!(looks_like_stub(&stub), "{stub}");
        }
    }

    #[test]
    #[rustfmt::skip]
    fn claude_code_tools_get_informative_stubs() {
        let failing = format!("Exit code 101\n{}", output(211));
        let (read, big) = (numbered(400, "→"), "z".repeat(1234));
        let found = "Found 3 files\nsrc/a.rs\nsrc/b.rs\nsrc/c.rs";
        check(&[
            ("Bash", r#"{"command":"cargo test","description":"Run"}"#, &failing,
                "[Bash] ran `cargo test` -> exit 101, 212 lines output"),
            ("Read", r#"{"file_path":"/repo/src/lib.rs"}"#, &read,
                "[Read] read /repo/src/lib.rs lines 1-400 ("),
            ("Edit", r#"{"file_path":"src/a.rs","old_string":"x","new_string":"y"}"#, &big,
                "[Edit] edited src/a.rs (1,234 chars result)"),
            ("Write", r#"{"file_path":"notes.md","content":"a\nb\nc\n"}"#, "File created",
                "[Write] wrote notes.md (3 lines)"),
            ("Grep", r#"{"pattern":"fn main","path":"src","output_mode":"files_with_matches"}"#,
                found, "[Grep] search for 'fn main' in src -> 3 matches"),
            ("Glob", r#"{"pattern":"**/*.rs"}"#, "a.rs\nb.rs",
                "[Glob] search for '**/*.rs' in . -> 2 lines"),
            ("WebFetch", r#"{"url":"https://docs.rs/regex","prompt":"summarize"}"#, &big,
                "[WebFetch] fetched https://docs.rs/regex (1,234 chars)"),
            ("WebSearch", r#"{"query":"tokio select"}"#, &big,
                "[WebSearch] searched the web for 'tokio select' (1,234 chars result)"),
            ("Task", r#"{"description":"Explore the parser","prompt":"..."}"#, &big,
                "[Task] delegated 'Explore the parser' (1,234 chars result)"),
            ("TodoWrite", r#"{"todos":[]}"#, &big, "[TodoWrite] updated the task list ("),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn read_ranges_come_from_line_numbers_or_offset_and_limit() {
        let all: Vec<String> = (100..150).map(|i| format!("{i:>6}→line {i}")).collect();
        let (shifted, plain) = (all.join("\n"), output(30));
        check(&[
            ("Read", r#"{"file_path":"a.rs","offset":100,"limit":50}"#, &shifted,
                "[Read] read a.rs lines 100-149 ("),
            // Gemini's output is not numbered: offset plus the number of lines returned.
            ("read_file", r#"{"absolute_path":"/w/b.py","offset":10,"limit":100}"#, &plain,
                "[read_file] read /w/b.py lines 10-39 ("),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn codex_tools_get_informative_stubs() {
        let exec = format!(
            "Chunk ID: 1a2b\nWall time: 3.2 seconds\nProcess exited with code 101\nOutput:\n{}",
            output(40)
        );
        let patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: src/b.ts\n+z\n*** Add File: src/c.ts\n+w\n*** End Patch";
        let patch_args = serde_json::json!({ "input": patch }).to_string();
        check(&[
            ("exec_command", r#"{"cmd":"cargo test -p core","yield_time_ms":1000}"#, &exec,
                "[exec_command] ran `cargo test -p core` -> exit 101, 44 lines output"),
            ("shell", r#"{"command":["bash","-lc","ls -la"],"workdir":"/repo"}"#, &output(5),
                "[shell] ran `ls -la` -> 5 lines output"),
            ("apply_patch", &patch_args, "Success. Updated the following files:\nM src/a.ts",
                "[apply_patch] patched src/a.ts, src/b.ts (+1 more) (48 chars result)"),
            ("write_stdin", r#"{"session_id":48230,"chars":""}"#, "Process exited with code 0\nok",
                "[write_stdin] polled session 48230 -> exit 0, 2 lines output"),
            ("write_stdin", r#"{"session_id":7,"chars":"y\n"}"#, "Continue? yes",
                "[write_stdin] sent `y` to session 7 -> 1 lines output"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn openhands_and_swe_agent_tools_get_informative_stubs() {
        let finished = format!("{}\n[Command finished with exit code 1]", output(9));
        let view = format!(
            "Here's the result of running `cat -n` on /w/p.c:\n{}",
            numbered(120, "\t")
        );
        check(&[
            ("execute_bash", r#"{"command":"python -m pytest tests/"}"#, &finished,
                "[execute_bash] ran `python -m pytest tests/` -> exit 1, 10 lines output"),
            ("str_replace_editor", r#"{"command":"view","path":"/w/p.c"}"#, &view,
                "[str_replace_editor] read /w/p.c lines 1-120 ("),
            ("str_replace_editor", r#"{"command":"str_replace","path":"/w/x.py","old_str":"a"}"#,
                &"y".repeat(300), "[str_replace_editor] edited /w/x.py (300 chars result)"),
            ("str_replace_editor", r#"{"command":"create","path":"/w/n.py","file_text":"a\nb"}"#,
                "File created", "[str_replace_editor] wrote /w/n.py (2 lines)"),
            ("bash", r#"{"command":"grep -rn foo ."}"#, &output(3),
                "[bash] ran `grep -rn foo .` -> 3 lines output"),
            ("run_ipython", r#"{"code":"import os\nprint(os.getcwd())"}"#, &output(2),
                "[run_ipython] ran code `import os print(os.getcwd())` -> 2 lines output"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn gemini_tools_get_informative_stubs() {
        let failed = format!("Command: npm test\nExit Code: 1\n{}", output(10));
        let found = "Found 47 matches for pattern \"CredentialStore\" in path \".\":\n---";
        check(&[
            ("run_shell_command", r#"{"command":"npm test","description":"tests"}"#, &failed,
                "[run_shell_command] ran `npm test` -> exit 1, 12 lines output"),
            ("replace", r#"{"file_path":"/w/a.ts","old_string":"x","new_string":"y"}"#,
                &"o".repeat(250), "[replace] edited /w/a.ts (250 chars result)"),
            ("search_file_content", r#"{"pattern":"CredentialStore"}"#, found,
                "[search_file_content] search for 'CredentialStore' in . -> 47 matches"),
            ("list_directory", r#"{"path":"/w/src"}"#, "a\nb\nc",
                "[list_directory] listed /w/src (3 lines)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn reference_tool_names_get_informative_stubs() {
        let json_output = r#"{"output": "a\nb", "exit_code": 101}"#;
        check(&[
            ("terminal", r#"{"command":"cargo test"}"#, json_output,
                "[terminal] ran `cargo test` -> exit 101, 1 lines output"),
            ("read_file", r#"{"path":"src/lib.rs","offset":1,"limit":400}"#, &output(400),
                "[read_file] read src/lib.rs lines 1-400 ("),
            ("write_file", r#"{"path":"out.txt","content":"1\n2"}"#, "ok",
                "[write_file] wrote out.txt (2 lines)"),
            ("search_files", r#"{"pattern":"TODO","path":"src"}"#, r#"{"total_count": 12}"#,
                "[search_files] search for 'TODO' in src -> 12 matches"),
            ("patch", r#"{"path":"a.py","mode":"replace"}"#, "done",
                "[patch] edited a.py (4 chars result)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn unclassified_tools_show_their_first_two_arguments() {
        let long_query = format!(r#"{{"query":"{}"}}"#, "q".repeat(100));
        let cut = format!("[lookup] query={}... (1 chars result)", "q".repeat(37));
        check(&[
            ("get_reservation_details", r#"{"reservation_id":"XEWRD9","verbose":true,"x":1}"#,
                &"r".repeat(2500), "[get_reservation_details] reservation_id=XEWRD9 verbose=true (2,500 chars result)"),
            ("lookup", &long_query, "x", &cut),
            ("mystery", "not json", "abc", "[mystery] (3 chars result)"),
            ("", "", "abc", "[tool] (3 chars result)"),
            // Missing arguments make a classified tool fall back to the generic stub.
            ("Bash", "", "abc", "[Bash] (3 chars result)"),
        ]);
    }

    #[test]
    fn stubs_stay_on_one_line_and_within_bounds() {
        let deep_path = format!(r#"{{"file_path":"/{}/f.rs"}}"#, "d".repeat(400));
        let cases = [
            (
                "Bash",
                r#"{"command":"cd a &&\n cargo build\n"}"#.to_string(),
            ),
            ("weird name]\n", r#"{"k":"v\nw"}"#.to_string()),
            ("Read", deep_path),
        ];
        for (name, args) in cases {
            let stub = summarize_tool_result(name, &args, &output(300));
            assert!(
                !stub.contains('\n') && stub.chars().count() <= STUB_MAX_CHARS,
                "{stub}"
            );
            assert!(looks_like_stub(&stub), "{stub}");
        }
    }

    #[test]
    fn real_results_are_not_mistaken_for_stubs() {
        assert!(!looks_like_stub(
            r#"[{"flight_number": "HAT069"}, {"x": 1}]"#
        ));
        assert!(!looks_like_stub("[INFO] started\n[INFO] done"));
        assert!(!looks_like_stub("plain text"));
        assert!(!looks_like_stub(&format!("[Bash] {}", "x".repeat(400))));
    }

    #[test]
    fn cjk_and_emoji_never_split_a_character() {
        let cjk = "日本語のテキスト🎉".repeat(200);
        let args = serde_json::json!({
            "command": "echo 你好".repeat(30), "file_path": format!("/データ/{}.md", "長い".repeat(90)),
            "pattern": "検索".repeat(80), "q": "질문".repeat(60), "code": "变量".repeat(70),
        })
        .to_string();
        for name in [
            "Bash",
            "Read",
            "Write",
            "Edit",
            "Grep",
            "WebSearch",
            "Task",
            "x",
            "run_ipython",
        ] {
            let stub = summarize_tool_result(name, &args, &cjk);
            assert!(stub.chars().count() <= STUB_MAX_CHARS, "{stub}");
            assert!(stub.starts_with(&format!("[{name}] ")), "{stub}");
        }
        assert_eq!(stub_text::cut_start("日本語のテキスト", 6), "...キスト");
        assert_eq!(cut_end("日本語のテキスト", 6), "日本語...");
    }
}
