//! Format detection from content, never from the file name: datasets are renamed freely, and
//! a `.json` file is as often JSON Lines as not.

use crate::formats::error::FormatError;
use crate::formats::transcript::Transcript;
use crate::formats::{Dialect, Layout, claude_code, codex, gemini_cli};
use crate::message::describe_value;
use serde_json::{Map, Value};

/// What a file holds, as detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    pub dialect: Dialect,
    pub layout: Layout,
    /// Set for an agent-CLI transcript (then `dialect` is OpenAI and `layout` object: the
    /// transcript is imported as one OpenAI conversation).
    pub transcript: Option<Transcript>,
}

/// The parsed text: one JSON value, or JSON Lines with their 1-based line numbers.
#[derive(Debug, Clone)]
pub(crate) enum Parsed {
    Single(Value),
    Lines(Vec<(usize, Value)>),
}

/// Detects the dialect and layout of `text`.
pub fn detect(text: &str) -> Result<Detected, FormatError> {
    detect_parsed(&parse_text(text)?)
}

/// Parses `text` as one JSON value, or as JSON Lines when it is not one value but its first
/// line is.
pub(crate) fn parse_text(text: &str) -> Result<Parsed, FormatError> {
    let whole = match serde_json::from_str::<Value>(text) {
        Ok(v) => return Ok(Parsed::Single(v)),
        Err(e) => e,
    };
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first_line.len() < text.trim_end().len() && serde_json::from_str::<Value>(first_line).is_ok()
    {
        return parse_lines(text).map(Parsed::Lines);
    }
    Err(json_error(&whole, None))
}

fn parse_lines(text: &str) -> Result<Vec<(usize, Value)>, FormatError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str::<Value>(line).map_err(|e| json_error(&e, Some(i + 1)))?;
        out.push((i + 1, value));
    }
    Ok(out)
}

/// The syntax error of JSON Lines line `line`.
pub(crate) fn line_error(e: &serde_json::Error, line: usize) -> FormatError {
    json_error(e, Some(line))
}

/// A JSON syntax error; `line` overrides serde's line for JSON Lines (where serde sees one line).
fn json_error(e: &serde_json::Error, line: Option<usize>) -> FormatError {
    let message = e.to_string();
    // serde appends " at line L column C"; we report those separately.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m)
        .to_string();
    FormatError::Json {
        line: Some(line.unwrap_or(e.line())),
        column: e.column(),
        message,
    }
}

pub(crate) fn detect_parsed(parsed: &Parsed) -> Result<Detected, FormatError> {
    match parsed {
        Parsed::Single(Value::Array(items)) => detect_array(items),
        Parsed::Single(Value::Object(obj)) => detect_object(obj, Layout::Object),
        Parsed::Single(other) => Err(unknown(format!(
            "the file holds {}; expected a JSON array or object, or JSON Lines",
            describe_value(other)
        ))),
        Parsed::Lines(lines) => detect_lines(lines),
    }
}

fn detect_array(items: &[Value]) -> Result<Detected, FormatError> {
    let Some(first) = items.first() else {
        return Ok(Detected {
            dialect: Dialect::OpenAi,
            layout: Layout::MessageArray,
            transcript: None,
        });
    };
    let Value::Object(obj) = first else {
        return Err(unknown(format!(
            "element 0 of the array is {}; expected a message or a record object",
            describe_value(first)
        )));
    };
    if obj.contains_key("role") {
        return Ok(Detected {
            dialect: message_dialect(items.iter()),
            layout: Layout::MessageArray,
            transcript: None,
        });
    }
    if obj.contains_key("from") {
        return Ok(Detected {
            dialect: Dialect::ShareGpt,
            layout: Layout::MessageArray,
            transcript: None,
        });
    }
    detect_object(obj, Layout::ObjectArray)
}

fn detect_lines(lines: &[(usize, Value)]) -> Result<Detected, FormatError> {
    let Some((line, first)) = lines.first() else {
        return Err(unknown("the file is empty".into()));
    };
    if let Some(t) = transcript_lines(lines) {
        return Ok(Detected::transcript(t));
    }
    let Value::Object(obj) = first else {
        return Err(unknown(format!(
            "line {line} holds {}; expected a message or a record object",
            describe_value(first)
        )));
    };
    if obj.contains_key("role") {
        return Ok(Detected {
            dialect: message_dialect(lines.iter().map(|(_, v)| v)),
            layout: Layout::MessageLines,
            transcript: None,
        });
    }
    detect_object(obj, Layout::ObjectLines)
}

/// The transcript format of JSON Lines, decided by the first line that tells: a chat message or
/// conversation record (`role`, `messages`, `conversations`) means none; a Claude Code message
/// record or a Codex rollout envelope means that transcript. Lines that tell nothing (Claude
/// Code's `file-history-snapshot`, `progress`, `summary` records, which often open its files)
/// are passed over.
fn transcript_lines(lines: &[(usize, Value)]) -> Option<Transcript> {
    for (_, v) in lines {
        let Value::Object(obj) = v else {
            return None;
        };
        if ["role", "messages", "conversations"]
            .iter()
            .any(|k| obj.contains_key(*k))
        {
            return None;
        }
        if claude_code::is_message_record(obj) {
            return Some(Transcript::ClaudeCode);
        }
        if codex::is_rollout_record(obj) {
            return Some(Transcript::Codex);
        }
    }
    None
}

impl Detected {
    fn transcript(t: Transcript) -> Self {
        Detected {
            dialect: Dialect::OpenAi,
            layout: Layout::Object,
            transcript: Some(t),
        }
    }
}

/// A record object: ShareGPT (`conversations`) or a request with `messages`.
pub(crate) fn detect_object(
    obj: &Map<String, Value>,
    layout: Layout,
) -> Result<Detected, FormatError> {
    if layout == Layout::Object {
        if gemini_cli::is_session(obj) {
            return Ok(Detected::transcript(Transcript::GeminiCli));
        }
        // A one-record transcript is a single JSON value.
        if claude_code::is_message_record(obj) {
            return Ok(Detected::transcript(Transcript::ClaudeCode));
        }
        if codex::is_rollout_record(obj) {
            return Ok(Detected::transcript(Transcript::Codex));
        }
    }
    if obj.contains_key("conversations") {
        return Ok(Detected {
            dialect: Dialect::ShareGpt,
            layout,
            transcript: None,
        });
    }
    if let Some(messages) = obj.get("messages") {
        let dialect = if record_is_anthropic(obj) {
            Dialect::Anthropic
        } else if let Value::Array(items) = messages {
            message_dialect(items.iter())
        } else {
            Dialect::OpenAi
        };
        return Ok(Detected {
            dialect,
            layout,
            transcript: None,
        });
    }
    if obj.contains_key("role") && layout == Layout::Object {
        // A lone message object is a one-line JSONL file.
        return Ok(Detected {
            dialect: message_dialect(std::iter::once(&Value::Object(obj.clone()))),
            layout: Layout::MessageLines,
            transcript: None,
        });
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
    Err(unknown(format!(
        "an object with keys [{}]; expected `messages` (OpenAI or Anthropic), `conversations` \
         (ShareGPT), `role` (a message), or an agent-CLI transcript (claude-code, codex, \
         gemini-cli)",
        keys.join(", ")
    )))
}

/// Top-level signals only Anthropic requests have: a separate `system`, or tools described with
/// `input_schema`.
fn record_is_anthropic(obj: &Map<String, Value>) -> bool {
    if obj.contains_key("system") {
        return true;
    }
    obj.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| tools.iter().any(|t| t.get("input_schema").is_some()))
}

/// Anthropic when any message has an Anthropic-only content block; OpenAI otherwise (the two
/// coincide for plain text conversations, so the canonical reading is the safe default).
fn message_dialect<'a>(mut messages: impl Iterator<Item = &'a Value>) -> Dialect {
    if messages.any(has_anthropic_block) {
        Dialect::Anthropic
    } else {
        Dialect::OpenAi
    }
}

fn has_anthropic_block(message: &Value) -> bool {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return false;
    };
    blocks.iter().any(|b| {
        let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
        is_anthropic_block(kind, b.get("source").is_some())
    })
}

/// A content block of type `kind` (with a `source` field or not) that only Anthropic has.
fn is_anthropic_block(kind: &str, has_source: bool) -> bool {
    matches!(
        kind,
        "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document"
    ) || (kind == "image" && has_source)
}

/// [`has_anthropic_block`] for a message already read as an OpenAI message (its content
/// parts are kept as their objects).
pub(crate) fn message_has_anthropic_block(message: &crate::message::Message) -> bool {
    let Some(crate::message::Content::Parts(parts)) = &message.content else {
        return false;
    };
    parts
        .iter()
        .any(|p| is_anthropic_block(p.type_name(), p.fields().contains_key("source")))
}

fn unknown(hint: String) -> FormatError {
    FormatError::UnknownFormat { hint }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn d(text: &str) -> (Dialect, Layout) {
        let got = detect(text).unwrap();
        (got.dialect, got.layout)
    }

    #[test]
    fn openai_message_array_is_detected() {
        let t = r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]"#;
        assert_eq!(d(t), (Dialect::OpenAi, Layout::MessageArray));
    }

    #[test]
    fn openai_object_is_detected() {
        let t = r#"{"messages":[{"role":"user","content":"hi"}],"tools":[]}"#;
        assert_eq!(d(t), (Dialect::OpenAi, Layout::Object));
    }

    #[test]
    fn message_lines_are_detected() {
        let t =
            "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"assistant\",\"content\":\"b\"}\n";
        assert_eq!(d(t), (Dialect::OpenAi, Layout::MessageLines));
    }

    #[test]
    fn record_lines_are_detected() {
        let t = "{\"id\":1,\"messages\":[]}\n{\"id\":2,\"messages\":[]}\n";
        assert_eq!(d(t), (Dialect::OpenAi, Layout::ObjectLines));
    }

    #[test]
    fn anthropic_request_is_detected_by_system_key_or_blocks() {
        let t = r#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(d(t), (Dialect::Anthropic, Layout::Object));
        let t = r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}"#;
        assert_eq!(d(t), (Dialect::Anthropic, Layout::Object));
        let t = r#"[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]"#;
        assert_eq!(d(t), (Dialect::Anthropic, Layout::MessageArray));
    }

    #[test]
    fn sharegpt_is_detected_as_object_array_and_lines() {
        let one = r#"{"conversations":[{"from":"human","value":"hi"}]}"#;
        assert_eq!(d(one), (Dialect::ShareGpt, Layout::Object));
        assert_eq!(
            d(&format!("[{one}]")),
            (Dialect::ShareGpt, Layout::ObjectArray)
        );
        assert_eq!(
            d(&format!("{one}\n{one}\n")),
            (Dialect::ShareGpt, Layout::ObjectLines)
        );
        assert_eq!(
            d(r#"[{"from":"human","value":"hi"}]"#),
            (Dialect::ShareGpt, Layout::MessageArray)
        );
    }

    #[test]
    fn invalid_json_reports_line_and_column() {
        let err = detect("[\n{\"role\": \"user\",,}\n]").unwrap_err();
        let FormatError::Json { line, column, .. } = &err else {
            panic!("expected a JSON error, got {err}");
        };
        assert_eq!(*line, Some(2));
        assert!(*column > 0);
    }

    #[test]
    fn bad_jsonl_line_reports_its_line_number() {
        let t = "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\": oops}\n";
        let err = detect(t).unwrap_err();
        assert!(
            matches!(err, FormatError::Json { line: Some(3), .. }),
            "{err}"
        );
    }

    #[test]
    fn unrecognised_object_lists_its_keys() {
        let err = detect(r#"{"foo": 1, "bar": 2}"#).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("foo") && text.contains("messages"), "{text}");
    }

    #[test]
    fn scalar_file_is_rejected_with_a_hint() {
        let err = detect("42").unwrap_err();
        assert!(err.to_string().contains("number 42"), "{err}");
    }
}
