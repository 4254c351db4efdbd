//! Tests of [`super::truncate_tool_call_args`]: the rewriter against the `Value` path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::rewriter::Rewriter;
use super::*;
use crate::json_check::next_special;
use proptest::prelude::*;

/// Skipping the parse for arguments without a long string token never changes the
/// result: checked against always parsing, on escapes, multi-byte text, nesting, keys and
/// broken JSON around the limit.
#[test]
fn the_long_token_scan_only_skips_arguments_with_nothing_to_cut() {
    let mut cases = vec![
        r#"{"command":"ls"}"#.to_string(),
        r#"["a","b"]"#.to_string(),
        "not json".to_string(),
        r#"{"unterminated": "abc"#.to_string(),
        r#"{"a": 12345678901234567890}"#.to_string(),
    ];
    for n in [7, 8, 9, 10, 11] {
        let s = "x".repeat(n);
        let e = "é".repeat(n);
        let esc = "\\n".repeat(n);
        cases.push(format!(r#"{{"content":"{s}"}}"#));
        cases.push(format!(r#"{{"content":"{e}"}}"#));
        cases.push(format!(r#"{{"content":"{esc}"}}"#));
        cases.push(format!(r#"{{"{s}":1}}"#));
        cases.push(format!(r#"{{"a":{{"b":["{s}", "q\\"{s}"]}}}}"#));
    }
    for case in &cases {
        assert_eq!(
            truncate_tool_call_args(case, 8),
            through_value(case, 8),
            "{case}"
        );
    }
}

/// The definition of the long-token scan: every token read to its closing quote.
fn has_long_token_read_whole(json: &[u8], max: usize) -> bool {
    let mut at = 0;
    while let Some(i) = json.get(at..).and_then(|rest| memchr::memchr(b'"', rest)) {
        let open = at + i + 1;
        let close = closing_quote(json, open);
        if close - open > max {
            return true;
        }
        at = close + 1;
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// Reading each token only as far as `max + 1` bytes answers as reading it whole: escapes
    /// (escaped quotes and backslashes) on and across the window's end, unclosed tokens, text
    /// ending inside a window.
    #[test]
    fn the_windowed_long_token_scan_answers_as_reading_tokens_whole(
        text in r#"[a"\\:{} ]{0,40}"#,
        max in 0usize..10,
    ) {
        prop_assert_eq!(
            has_string_token_longer_than(text.as_bytes(), max),
            has_long_token_read_whole(text.as_bytes(), max),
            "{:?} max {}", text, max
        );
    }
}

/// JSON text for a generated tree, written in one of many styles: each choice comes from
/// `style`, so one tree is tried with compact and spaced separators, characters raw or
/// `\u` escaped (either case of hex), `\/`, short escapes, and numbers as written.
#[derive(Clone, Debug)]
enum Node {
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Text(String),
    Number(&'static str),
    Word(&'static str),
}

const NUMBERS: [&str; 12] = [
    "0",
    "-0",
    "7",
    "-12",
    "1.50",
    "-0.0",
    "1E5",
    "2e-7",
    "3.25E+10",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890.5e3",
];

fn arb_node() -> impl Strategy<Value = Node> {
    let text = prop::collection::vec(
        prop::sample::select(vec![
            "a",
            "Z",
            " ",
            "é",
            "日本",
            "😀",
            "\"",
            "\\",
            "/",
            "\n",
            "\t",
            "\r",
            "\u{8}",
            "\u{c}",
            "\u{1}",
            "\u{1f}",
            "\u{7f}",
            "\u{2028}",
            "x",
            "...[truncated]",
        ]),
        0..14,
    )
    .prop_map(|parts| parts.concat());
    let leaf = prop_oneof![
        4 => text.prop_map(Node::Text),
        1 => prop::sample::select(NUMBERS.to_vec()).prop_map(Node::Number),
        1 => prop::sample::select(vec!["true", "false", "null"]).prop_map(Node::Word),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        let key = prop::sample::select(vec!["a", "b", "path", "content", "é", "k\"q", "n\\m"]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Node::Array),
            prop::collection::vec((key.prop_map(String::from), inner), 0..5).prop_map(Node::Object),
        ]
    })
}

/// A small deterministic generator of style choices.
struct Style(u64);

impl Style {
    fn pick(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn space(&mut self, out: &mut String) {
        out.push_str(["", "", " ", "\n  ", "\t", "\r\n"][self.pick(6) as usize]);
    }

    fn string(&mut self, text: &str, out: &mut String) {
        out.push('"');
        for c in text.chars() {
            let code = c as u32;
            match (c, self.pick(4)) {
                ('"', _) => out.push_str("\\\""),
                ('\\', _) => out.push_str("\\\\"),
                ('/', 0) => out.push_str("\\/"),
                ('\n', 1) => out.push_str("\\u000A"),
                ('\n', _) => out.push_str("\\n"),
                ('\t', _) => out.push_str("\\t"),
                ('\r', _) => out.push_str("\\r"),
                ('\u{8}', _) => out.push_str("\\b"),
                ('\u{c}', _) => out.push_str("\\f"),
                (_, _) if code < 0x20 => out.push_str(&format!("\\u{code:04x}")),
                (_, 0) if code > 0xFFFF => {
                    let v = code - 0x10000;
                    let (hi, lo) = (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                    out.push_str(&format!("\\u{hi:04x}\\u{lo:04X}"));
                }
                (_, 1) if code <= 0xFFFF => out.push_str(&format!("\\u{code:04X}")),
                (_, 2) if code <= 0xFFFF => out.push_str(&format!("\\u{code:04x}")),
                _ => out.push(c),
            }
        }
        out.push('"');
    }

    fn write(&mut self, node: &Node, out: &mut String) {
        self.space(out);
        match node {
            Node::Text(t) => self.string(t, out),
            Node::Number(n) => out.push_str(n),
            Node::Word(w) => out.push_str(w),
            Node::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write(item, out);
                    self.space(out);
                }
                out.push(']');
            }
            Node::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.space(out);
                    // Keys as agents write them: escaped only where JSON needs it.
                    out.push_str(&serde_json::to_string(key).unwrap());
                    self.space(out);
                    out.push(':');
                    self.write(value, out);
                    self.space(out);
                }
                out.push('}');
            }
        }
    }
}

/// Breaks well-formed text in one of the ways serde_json refuses (or, for a raw
/// control byte, a way the scan must notice inside a string).
fn broken(text: &str, how: u64, at: u64) -> String {
    let cut = text.floor_char_boundary(at as usize % (text.len() + 1));
    match how {
        0 => text[..cut].to_string(),
        1 => format!("{}\u{1}{}", &text[..cut], &text[cut..]),
        2 => format!("{}\\x{}", &text[..cut], &text[cut..]),
        3 => format!("{},", text),
        4 => format!("{} x", text),
        _ => format!("{}\\ud800{}", &text[..cut], &text[cut..]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// The rewriter's result is the `Value` path's, byte for byte, for every style of
    /// writing the same arguments and for broken ones; and where the text is whole and
    /// free of what the rewriter leaves to serde_json, the rewriter answers itself.
    #[test]
    fn the_rewriter_writes_what_the_value_path_writes(
        root in arb_node().prop_map(|n| match n {
            Node::Object(_) | Node::Array(_) => n,
            other => Node::Array(vec![other]),
        }),
        seed in 1u64..u64::MAX,
        max in 0usize..12,
        breakage in prop::option::weighted(0.2, (0u64..6, any::<u64>())),
    ) {
        let mut text = String::new();
        Style(seed).write(&root, &mut text);
        if let Some((how, at)) = breakage {
            text = broken(&text, how, at);
        }
        prop_assert_eq!(truncate_tool_call_args(&text, max), through_value(&text, max), "{}", text);
        let left_to_serde = text.contains("\\u") && text.to_lowercase().contains("\\ud")
            || text.contains("\"k\\\"q\"") || text.contains("\"n\\\\m\"")
            || breakage.is_some();
        if !left_to_serde && !has_repeated_keys(&root) {
            prop_assert!(Rewriter::rewrite(&text, max).is_ok(), "gave up on {}", text);
        }
    }
}

fn has_repeated_keys(node: &Node) -> bool {
    match node {
        Node::Object(fields) => {
            let mut keys: Vec<&String> = fields.iter().map(|(k, _)| k).collect();
            keys.sort();
            keys.windows(2).any(|w| w[0] == w[1])
                || fields.iter().any(|(_, v)| has_repeated_keys(v))
        }
        Node::Array(items) => items.iter().any(has_repeated_keys),
        _ => false,
    }
}

/// What the rewriter leaves to serde_json, and a leaf cut before, each give the `Value`
/// path's answer.
#[test]
fn what_the_rewriter_leaves_to_serde_json_still_comes_out_right() {
    let long = "x".repeat(30);
    for text in [
        format!(r#"{{"a":"{long}","a":"{long}"}}"#),
        format!(r#"{{"k\"q":"{long}"}}"#),
        format!(r#"{{"a":"\ud83d\ude00{long}"}}"#),
        format!(r#"{{"a":"{long}\ud83d\ude00"}}"#),
        format!(r#"{{"a":"{long}\ud800"}}"#),
        format!(r#"{{"a":"{long}"}} trailing"#),
        format!("{{\"a\":\"{long}\u{1}\"}}"),
        format!(r#"{{"a":"{long}\q"}}"#),
        format!("{}\"{long}\"{}", "[".repeat(101), "]".repeat(101)),
        format!(r#"{{"a":"{}{ARGS_TRUNCATION_MARKER}"}}"#, "y".repeat(10)),
        format!(r#"{{"a":"{}\u002e..[truncated]"}}"#, "y".repeat(10)),
        format!(r#"{{"a":"{}...[truncated]!"}}"#, "y".repeat(10)),
        format!(r#"{{"a": 1e5, "b": "{long}", "c": [true, false, null, -0.5E-3]}}"#),
        // A control byte, or a broken escape, deep in a long dropped part (past the first
        // blocks the control-byte test reads at once) and in its last partial block.
        format!(
            "{{\"a\":\"{}\u{1}{}\"}}",
            "x\\n".repeat(70),
            "y".repeat(100)
        ),
        format!("{{\"a\":\"{}\u{1f}\"}}", "x".repeat(200)),
        format!(r#"{{"a":"{}\q{}"}}"#, "x\\n".repeat(70), "y".repeat(9)),
    ] {
        assert_eq!(
            truncate_tool_call_args(&text, 10),
            through_value(&text, 10),
            "{text}"
        );
    }
    let cut_before = format!(r#"{{"a":"{}{ARGS_TRUNCATION_MARKER}"}}"#, "y".repeat(10));
    assert_eq!(truncate_tool_call_args(&cut_before, 10), None);
    let spelled = format!(r#"{{"a":"{}\u002e..[truncated]"}}"#, "y".repeat(10));
    assert_eq!(truncate_tool_call_args(&spelled, 10), None);
}

/// Every tool call's arguments in the shared corpus come out as the `Value` path writes
/// them, at the pass's limit and at a small one that cuts nearly every leaf, and the
/// rewriter answers nearly all of them itself.
#[test]
fn corpus_arguments_come_out_as_the_value_path_writes_them() {
    let dir = format!(
        "{}/../../../shared/data/normalized",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("note: {dir} not found; skipping the corpus arguments test");
        return;
    };
    let (mut calls, mut answered) = (0, 0);
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let record: Value = serde_json::from_str(line).unwrap();
            let messages = record["messages"].as_array().cloned().unwrap_or_default();
            for call in messages
                .iter()
                .filter_map(|m| m["tool_calls"].as_array())
                .flatten()
            {
                let Some(arguments) = call["function"]["arguments"].as_str() else {
                    continue;
                };
                calls += 1;
                for max in [200, 5] {
                    assert_eq!(
                        truncate_tool_call_args(arguments, max),
                        through_value(arguments, max),
                        "{}: {arguments}",
                        path.display()
                    );
                }
                answered += usize::from(Rewriter::rewrite(arguments, 5).is_ok());
            }
        }
    }
    assert!(calls > 1000, "{calls} calls");
    assert!(answered * 100 >= calls * 95, "{answered} of {calls}");
}

#[test]
fn the_word_scan_finds_the_first_special_byte() {
    let text = "abcdefgh\u{e9}ijklmnopq\"rs\\t\u{1}";
    let first = |from: usize| next_special(text.as_bytes(), from);
    assert_eq!(first(0), text.find('"'));
    assert_eq!(first(text.find('"').unwrap() + 1), text.find('\\'));
    assert_eq!(first(text.len() - 1), Some(text.len() - 1));
    assert_eq!(next_special(b"plain text without any", 0), None);
    assert_eq!(next_special(b"\x7f\xff\x80 ok \x1f", 0), Some(7));
}
