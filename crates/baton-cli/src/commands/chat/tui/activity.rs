//! Tool activity, one line per call: a mark for the outcome, the tool, its target (the
//! command, the path, the query), the size of what came back and how long it took, and a
//! number that `/tool N` expands into the full arguments and the start of the output.

use baton_core::truncate::group_digits;
use serde_json::Value;

/// Characters of a target shown on the one line.
const TARGET_CHARS: usize = 72;

#[derive(Debug, Clone)]
pub struct ToolRecord {
    pub number: usize,
    pub id: String,
    pub name: String,
    pub arguments: String,
    pub outcome: Option<ToolOutcome>,
}

#[derive(Debug, Clone)]
pub struct ToolOutcome {
    pub is_error: bool,
    pub chars: usize,
    pub preview: String,
    pub spilled_to: Option<String>,
    pub duration_ms: u64,
}

/// Every tool call of this run, numbered from 1.
#[derive(Debug, Default)]
pub struct ToolLog {
    records: Vec<ToolRecord>,
}

impl ToolLog {
    /// Records a call; returns its number.
    pub fn called(&mut self, id: &str, name: &str, arguments: &str) -> usize {
        let number = self.records.len() + 1;
        self.records.push(ToolRecord {
            number,
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            outcome: None,
        });
        number
    }

    /// Records a result against its call (the newest call with that id).
    pub fn finished(&mut self, id: &str, outcome: ToolOutcome) -> Option<&ToolRecord> {
        let record = self
            .records
            .iter_mut()
            .rev()
            .find(|r| r.id == id && r.outcome.is_none())?;
        record.outcome = Some(outcome);
        Some(record)
    }

    /// Call `number`, or the newest when `None`.
    pub fn get(&self, number: Option<usize>) -> Option<&ToolRecord> {
        match number {
            Some(n) => self.records.get(n.checked_sub(1)?),
            None => self.records.last(),
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }
}

/// What a call acts on, for the one-line view: the field that names it, else the arguments.
pub fn target(arguments: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(arguments).ok();
    let named = parsed.as_ref().and_then(|v| {
        [
            "command",
            "path",
            "pattern",
            "query",
            "reference",
            "action",
            "url",
        ]
        .iter()
        .find_map(|key| v.get(*key).and_then(Value::as_str).map(str::to_string))
    });
    let text = named.unwrap_or_else(|| arguments.to_string());
    one_line(&text, TARGET_CHARS)
}

/// The line shown when a call finishes (without colour codes; the caller styles the mark).
pub fn finished_line(record: &ToolRecord) -> String {
    let target = target(&record.arguments);
    let Some(outcome) = &record.outcome else {
        return format!("… {} {target} [#{}]", record.name, record.number);
    };
    let mark = if outcome.is_error { '✗' } else { '✓' };
    let detail = if outcome.is_error {
        format!("error: {}", one_line(strip_error(&outcome.preview), 60))
    } else {
        format!("{} chars", group_digits(outcome.chars))
    };
    let spilled = if outcome.spilled_to.is_some() {
        " · full output saved"
    } else {
        ""
    };
    format!(
        "{mark} {} {target} · {detail} · {}{spilled} [#{}]",
        record.name,
        seconds(outcome.duration_ms),
        record.number
    )
}

/// `/tool N`: the whole call and the start of what the model read.
pub fn expanded(record: &ToolRecord) -> Vec<String> {
    let mut lines = vec![format!(
        "#{} {} (call {})",
        record.number, record.name, record.id
    )];
    let arguments = serde_json::from_str::<Value>(&record.arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| record.arguments.clone());
    lines.push("arguments:".into());
    lines.extend(arguments.lines().map(|l| format!("  {l}")));
    match &record.outcome {
        None => lines.push("no result yet".into()),
        Some(o) => {
            lines.push(format!(
                "{} · {} chars · {}",
                if o.is_error { "failed" } else { "ok" },
                group_digits(o.chars),
                seconds(o.duration_ms)
            ));
            if let Some(path) = &o.spilled_to {
                lines.push(format!("full output: {path}"));
            }
            lines.push("output (start):".into());
            lines.extend(o.preview.lines().map(|l| format!("  {l}")));
            if o.chars > o.preview.chars().count() {
                lines.push("  …".into());
            }
        }
    }
    lines
}

fn strip_error(preview: &str) -> &str {
    preview.strip_prefix("Error: ").unwrap_or(preview)
}

fn seconds(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1_000.0)
    }
}

/// `text` on one line, cut to `max` characters with an ellipsis, control characters escaped.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = baton_core::terminal_text::escape_controls(&flat).into_owned();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_target_the_outcome_and_the_number() {
        let mut log = ToolLog::default();
        log.called("c1", "terminal", r#"{"command":"cargo test --workspace"}"#);
        let record = log
            .finished(
                "c1",
                ToolOutcome {
                    is_error: false,
                    chars: 12_345,
                    preview: "running 3 tests".into(),
                    spilled_to: None,
                    duration_ms: 1_250,
                },
            )
            .unwrap();
        assert_eq!(
            finished_line(record),
            "✓ terminal cargo test --workspace · 12,345 chars · 1.2 s [#1]"
        );
    }

    #[test]
    fn an_error_shows_its_first_words_and_expanding_shows_everything() {
        let mut log = ToolLog::default();
        log.called("a", "read_file", r#"{"path":"src/missing.rs"}"#);
        log.finished(
            "a",
            ToolOutcome {
                is_error: true,
                chars: 40,
                preview: "Error: src/missing.rs: no such file".into(),
                spilled_to: Some("/tmp/out.txt".into()),
                duration_ms: 3,
            },
        );
        let record = log.get(Some(1)).unwrap();
        let line = finished_line(record);
        assert!(
            line.starts_with("✗ read_file src/missing.rs · error: src/missing.rs: no such file")
        );
        assert!(line.contains("full output saved"));
        let expanded = expanded(record).join("\n");
        assert!(
            expanded.contains("\"path\": \"src/missing.rs\""),
            "{expanded}"
        );
        assert!(expanded.contains("full output: /tmp/out.txt"));
        assert!(log.get(Some(2)).is_none() && log.get(Some(0)).is_none());
    }

    #[test]
    fn a_long_or_hostile_target_is_one_escaped_line() {
        let long = format!(r#"{{"command":"echo {}\n\u001b[2J"}}"#, "x".repeat(200));
        let shown = target(&long);
        assert!(shown.chars().count() <= TARGET_CHARS);
        assert!(!shown.contains('\n') && !shown.contains('\x1b'));
    }
}
