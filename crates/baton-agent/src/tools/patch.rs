//! `patch`: replace an exact piece of a file. The old text must appear exactly once (or
//! `replace_all`), so an edit never lands in the wrong place; when it is missing the error
//! points at the closest line, and when it repeats, at every place it occurs.

use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use crate::tools::paths::{Access, resolve};
use crate::tools::write_file::write_atomically;
use baton_core::summary::BoxFuture;
use serde_json::{Value, json};

pub struct Patch;

impl Tool for Patch {
    fn name(&self) -> &str {
        "patch"
    }

    fn schema(&self) -> Value {
        function_schema(
            "patch",
            "Replace `old_text` with `new_text` in a file. `old_text` must match exactly \
             (whitespace included) and occur once, unless `replace_all` is true.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string"},
                    "new_text": {"type": "string"},
                    "replace_all": {"type": "boolean"}
                },
                "required": ["path", "old_text", "new_text"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let field = |k: &str| args::required_str("patch", &arguments, k);
            let given = field("path")?;
            let old = field("old_text")?;
            let new = field("new_text")?;
            let all = arguments
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if old.is_empty() {
                return Err(ToolError::InvalidArguments {
                    tool: "patch".into(),
                    message: "`old_text` is empty; use write_file to create a file".into(),
                });
            }
            let path = resolve(ctx, given, Access::Write)?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| ToolError::Failed(format!("{given}: {e}")))?;
            let updated = apply(&text, old, new, all)
                .map_err(|why| ToolError::Failed(format!("{given}: {why}")))?;
            write_atomically(&path, updated.text.as_bytes())
                .map_err(|e| ToolError::Failed(format!("{given}: {e}")))?;
            Ok(format!(
                "patched {given}: {} replacement{} at line{} {}",
                updated.lines.len(),
                if updated.lines.len() == 1 { "" } else { "s" },
                if updated.lines.len() == 1 { "" } else { "s" },
                join(&updated.lines)
            ))
        })
    }
}

/// The patched text and the (1-based) lines where replacements start.
#[derive(Debug, PartialEq, Eq)]
pub struct Patched {
    pub text: String,
    pub lines: Vec<usize>,
}

/// Replaces `old` by `new` in `text`; the error says why not, in words for the model.
pub fn apply(text: &str, old: &str, new: &str, all: bool) -> Result<Patched, String> {
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    match starts.len() {
        0 => Err(missing(text, old)),
        n if n > 1 && !all => Err(format!(
            "`old_text` occurs {n} times (lines {}); add surrounding lines to make it unique, \
             or set replace_all",
            join(&starts.iter().map(|&b| line_of(b)).collect::<Vec<_>>())
        )),
        _ => Ok(Patched {
            text: text.replace(old, new),
            lines: starts.iter().map(|&b| line_of(b)).collect(),
        }),
    }
}

/// Why `old` was not found, with the best lead: a match that differs only in whitespace, or
/// the line most like the first line of `old`.
fn missing(text: &str, old: &str) -> String {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = old.lines().find(|l| !l.trim().is_empty()).unwrap_or(old);
    let wanted = squash(first);
    let mut best: Option<(usize, usize, &str)> = None;
    for (i, line) in text.lines().enumerate() {
        if squash(line) == wanted && !wanted.is_empty() {
            return format!(
                "`old_text` was not found exactly; line {} matches its first line except for \
                 whitespace (indentation or spaces differ): {:?}",
                i + 1,
                line
            );
        }
        let score = common_words(&wanted, &squash(line));
        if score > 0 && best.is_none_or(|(s, _, _)| score > s) {
            best = Some((score, i + 1, line));
        }
    }
    match best {
        Some((_, n, line)) => format!(
            "`old_text` was not found; the closest line is {n}: {line:?}. Read the file again \
             and copy the text exactly"
        ),
        None => "`old_text` was not found, and no line resembles it; read the file again".into(),
    }
}

fn common_words(a: &str, b: &str) -> usize {
    let words: std::collections::HashSet<&str> = a.split(' ').collect();
    b.split(' ')
        .filter(|w| w.len() > 1 && words.contains(w))
        .count()
}

fn join(lines: &[usize]) -> String {
    lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_unique_match_is_replaced_and_its_line_reported() {
        let p = apply(
            "a\nfn main() {}\nb\n",
            "fn main() {}",
            "fn main() { run() }",
            false,
        );
        assert_eq!(
            p,
            Ok(Patched {
                text: "a\nfn main() { run() }\nb\n".into(),
                lines: vec![2]
            })
        );
    }

    #[test]
    fn a_repeated_match_is_refused_with_every_line_unless_replace_all() {
        let text = "x = 1\ny = 2\nx = 1\n";
        let err = apply(text, "x = 1", "x = 3", false).unwrap_err();
        assert!(err.contains("occurs 2 times (lines 1, 3)"), "{err}");
        assert_eq!(
            apply(text, "x = 1", "x = 3", true).map(|p| p.lines),
            Ok(vec![1, 3])
        );
    }

    #[test]
    fn a_whitespace_only_difference_is_pointed_out() {
        let err = apply("fn a() {\n    let x = 1;\n}\n", "let x  =  1;", "", false).unwrap_err();
        assert!(
            err.contains("line 2") && err.contains("whitespace"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_text_names_the_closest_line() {
        let err = apply(
            "let total = price * count;\nreturn total;\n",
            "let total = price * qty;",
            "",
            false,
        )
        .unwrap_err();
        assert!(err.contains("closest line is 1"), "{err}");
    }
}
