//! The text a search snippet is cut from, and the cut itself.
//!
//! The indexes hold a message as `content tool_name tool_calls`, the calls as the raw JSON
//! they are stored in, arguments double-encoded (`"{\\"path\\": …}"`). A snippet cut from
//! that shows escaped quotes and JSON keys instead of what matched, so a message with tool
//! calls is shown as its content followed by each call as `name(key: value, ...)`.

use serde_json::Value;

/// Readable text of a message row: its content, its tool name when it is a tool result
/// (content alone does not say which tool answered), and its calls rendered by [`render_calls`].
pub fn display_text(content: &str, tool_name: &str, tool_calls: &str) -> String {
    display_text_from(content, tool_name, tool_calls, usize::MAX)
}

/// [`display_text`], written until it holds at least `enough` bytes: a prefix of the whole
/// text, ending where one of its pieces ends. Every piece is written once into one string (a
/// written file's text in an `Edit` call was copied seven times on its way into a snippet, each
/// copy into fresh memory: a sixth of the page faults of a search whose hits are tool calls).
pub(crate) fn display_text_from(
    content: &str,
    tool_name: &str,
    tool_calls: &str,
    enough: usize,
) -> String {
    let mut out = Text::new(
        content.len() + tool_calls.len() + tool_name.len() + 3,
        enough,
    );
    if !tool_name.is_empty() && tool_calls.is_empty() {
        out.separate();
        out.push("[");
        out.push(tool_name);
        out.push("]");
    }
    if !content.trim().is_empty() {
        out.piece(content);
    }
    if !tool_calls.is_empty() {
        out.separate();
        write_calls(&mut out, tool_calls);
    }
    out.text
}

/// `name(key: value, ...)` for each call of a stored `tool_calls` array, joined by `; `.
/// String values appear as their text; other values as compact JSON. Text that is not a call
/// array is returned as it is.
pub fn render_calls(tool_calls: &str) -> String {
    let mut out = Text::new(tool_calls.len(), usize::MAX);
    write_calls(&mut out, tool_calls);
    out.text
}

/// A display text being written: pieces are separated by a space, and writing stops once
/// `enough` bytes are there.
struct Text {
    text: String,
    enough: usize,
    pieces: usize,
}

impl Text {
    fn new(capacity: usize, enough: usize) -> Self {
        Text {
            text: String::with_capacity(capacity.min(enough.saturating_add(64))),
            enough,
            pieces: 0,
        }
    }

    fn full(&self) -> bool {
        self.text.len() >= self.enough
    }

    fn push(&mut self, s: &str) {
        if !self.full() {
            self.text.push_str(s);
        }
    }

    /// The space before a piece that is not the first.
    fn separate(&mut self) {
        if self.pieces > 0 {
            self.push(" ");
        }
        self.pieces += 1;
    }

    fn piece(&mut self, s: &str) {
        self.separate();
        self.push(s);
    }
}

fn write_calls(out: &mut Text, tool_calls: &str) {
    let Ok(Value::Array(calls)) = serde_json::from_str::<Value>(tool_calls) else {
        out.push(tool_calls);
        return;
    };
    for (i, call) in calls.iter().enumerate() {
        if out.full() {
            return;
        }
        if i > 0 {
            out.push("; ");
        }
        let f = call.get("function").unwrap_or(call);
        out.push(f.get("name").and_then(Value::as_str).unwrap_or("?"));
        out.push("(");
        match f.get("arguments").or_else(|| f.get("input")) {
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(v) => write_args(out, &v),
                Err(_) => out.push(text),
            },
            Some(v) => write_args(out, v),
            None => {}
        }
        out.push(")");
    }
}

fn write_args(out: &mut Text, v: &Value) {
    match v {
        Value::Object(map) => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(", ");
                }
                out.push(k);
                out.push(": ");
                write_value(out, v);
            }
        }
        other => write_value(out, other),
    }
}

fn write_value(out: &mut Text, v: &Value) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            for (i, item) in items.iter().filter_map(Value::as_str).enumerate() {
                if i > 0 {
                    out.push(", ");
                }
                out.push(item);
            }
        }
        other => out.push(&other.to_string()),
    }
}

/// A window of `ctx` characters either side of the char range `range`,
/// with the match marked `>>>`/`<<<`. Works on chars, never splits one. Reads `hay` only up
/// to the window's end: a hit's text can be a 64 KiB tool output.
pub fn window_snippet(hay: &str, range: (usize, usize), ctx: usize) -> String {
    let (ms, me) = range;
    let start = ms.saturating_sub(ctx);
    let end = me + ctx;
    let marked = me > ms;
    let mut s = String::new();
    if start > 0 {
        s.push_str("...");
    }
    let mut chars = hay
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .skip(start);
    for i in start.. {
        if marked && i == ms {
            s.push_str(">>>");
        }
        if marked && i == me {
            s.push_str("<<<");
        }
        if i >= end {
            if chars.next().is_some() {
                s.push_str("...");
            }
            break;
        }
        match chars.next() {
            Some(c) => s.push(c),
            None => break,
        }
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_as_name_and_argument_text() {
        let stored = r#"[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"cargo test \\\"parser\\\"\",\"timeout\":30}"}}]"#;
        assert_eq!(
            render_calls(stored),
            r#"terminal(command: cargo test "parser", timeout: 30)"#
        );
        assert_eq!(render_calls("not json"), "not json");
        assert_eq!(
            display_text("", "terminal", ""),
            "[terminal]",
            "a tool result names its tool"
        );
    }

    /// The display text as it was written first: each part, call and argument rendered into
    /// a string of its own and joined.
    fn display_text_joined(content: &str, tool_name: &str, tool_calls: &str) -> String {
        fn render_value(v: &Value) -> String {
            match v {
                Value::String(s) => s.clone(),
                Value::Array(items) if items.iter().all(Value::is_string) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            }
        }
        fn render_args(v: &Value) -> String {
            match v {
                Value::Object(map) => map
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", render_value(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => render_value(other),
            }
        }
        fn render_calls(tool_calls: &str) -> String {
            let Ok(Value::Array(calls)) = serde_json::from_str::<Value>(tool_calls) else {
                return tool_calls.to_string();
            };
            calls
                .iter()
                .map(|call| {
                    let f = call.get("function").unwrap_or(call);
                    let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
                    let args = match f.get("arguments").or_else(|| f.get("input")) {
                        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                            Ok(v) => render_args(&v),
                            Err(_) => text.clone(),
                        },
                        Some(v) => render_args(v),
                        None => String::new(),
                    };
                    format!("{name}({args})")
                })
                .collect::<Vec<_>>()
                .join("; ")
        }
        let mut parts: Vec<String> = Vec::new();
        if !tool_name.is_empty() && tool_calls.is_empty() {
            parts.push(format!("[{tool_name}]"));
        }
        if !content.trim().is_empty() {
            parts.push(content.to_string());
        }
        if !tool_calls.is_empty() {
            parts.push(render_calls(tool_calls));
        }
        parts.join(" ")
    }

    /// Written into one string, the display text is the joined one, whole or (stopped at a
    /// size) a prefix at least that long: every kind of call, argument and value, calls that
    /// are not JSON, empty arrays, content that is only whitespace, a tool name alone.
    #[test]
    fn display_text_reads_as_the_joined_parts() {
        let calls = [
            "",
            "[]",
            "not json",
            r#"{"a":1}"#,
            r#"[{"id":"c","type":"function","function":{"name":"Edit","arguments":"{\"file_path\":\"src/数据.rs\",\"old_string\":\"a\\nb\",\"n\":[1,2],\"tags\":[\"x\",\"y\"],\"deep\":{\"k\":null}}"}},{"function":{"name":"Bash","arguments":"not json {"}},{"function":{"arguments":{"command":"ls"}}},{"name":"direct","input":[1,"a"]},{"function":{"name":"empty"}}]"#,
        ];
        let contents = ["", "  \n", "确认しました the result", "x"];
        for tool_calls in calls {
            for content in contents {
                for tool_name in ["", "terminal"] {
                    let joined = display_text_joined(content, tool_name, tool_calls);
                    assert_eq!(
                        display_text(content, tool_name, tool_calls),
                        joined,
                        "{content:?} {tool_name:?} {tool_calls}"
                    );
                    for enough in [0, 1, 5, 17, 40, joined.len()] {
                        let part = display_text_from(content, tool_name, tool_calls, enough);
                        assert!(joined.starts_with(&part), "{part:?} of {joined:?}");
                        assert!(part.len() >= enough.min(joined.len()), "{enough}: {part:?}");
                    }
                }
            }
        }
    }

    /// The windowing as it was written first, over the whole text as chars.
    fn window_over_all_chars(hay: &str, range: (usize, usize), ctx: usize) -> String {
        let chars: Vec<char> = hay
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect();
        let (ms, me) = range;
        let start = ms.saturating_sub(ctx);
        let end = (me + ctx).min(chars.len());
        let mut s = String::new();
        if start > 0 {
            s.push_str("...");
        }
        s.extend(&chars[start..ms]);
        if me > ms {
            s.push_str(">>>");
            s.extend(&chars[ms..me]);
            s.push_str("<<<");
        }
        s.extend(&chars[me..end]);
        if end < chars.len() {
            s.push_str("...");
        }
        s.trim().to_string()
    }

    #[test]
    fn the_window_reads_as_one_over_all_chars_would() {
        let texts = [
            String::new(),
            "short".to_string(),
            "tab\there\nand 数据 there ".repeat(9),
            "x".repeat(300),
        ];
        for hay in &texts {
            let len = hay.chars().count();
            for ctx in [0, 1, 5, 40, 500] {
                for ms in [0, 1.min(len), len / 2, len.saturating_sub(3), len] {
                    for me in [ms, (ms + 1).min(len), (ms + 4).min(len), len] {
                        assert_eq!(
                            window_snippet(hay, (ms, me), ctx),
                            window_over_all_chars(hay, (ms, me), ctx),
                            "{hay:?} {ms}..{me} ctx {ctx}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn window_snippet_is_char_safe() {
        let s = "数据".repeat(60) + "用户" + &"配置".repeat(60);
        let start = s.chars().position(|c| c == '用').unwrap_or(0);
        let snip = window_snippet(&s, (start, start + 2), 40);
        assert!(snip.contains(">>>用户<<<"));
        assert_eq!(
            snip.chars().filter(|c| crate::query::is_cjk(*c)).count(),
            82
        );
    }
}
