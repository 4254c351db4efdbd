//! `search_files`: a regular expression over a tree, the way `rg` does it — `.gitignore`
//! respected, hidden and binary files skipped — with caps on matches and on output size, so a
//! search for `e` in a monorepo returns a useful page and says how much it left out.

use crate::tool::{Tool, ToolContext, ToolError, function_schema};
use crate::tools::paths::{Access, resolve};
use baton_core::summary::BoxFuture;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};

pub const DEFAULT_MAX_MATCHES: usize = 200;
pub const MAX_MATCHES: usize = 2_000;
/// Bytes of output at most.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Characters of a matching line shown.
const LINE_CHARS: usize = 300;

pub struct SearchFiles;

impl Tool for SearchFiles {
    fn name(&self) -> &str {
        "search_files"
    }

    fn schema(&self) -> Value {
        function_schema(
            "search_files",
            "Search file contents with a regular expression (Rust regex syntax) under a folder, \
             skipping what .gitignore ignores, hidden files and binary files. Returns \
             `path:line: text` lines.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "description": "Folder or file to search (default: the working directory)."},
                    "glob": {"type": "string", "description": "Only files whose path matches this glob, e.g. `*.rs`."},
                    "max_matches": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES}
                },
                "required": ["pattern"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let invalid = |m: String| ToolError::InvalidArguments {
                tool: "search_files".into(),
                message: m,
            };
            let pattern = arguments
                .get("pattern")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("`pattern` (a string) is required".into()))?;
            let regex = regex::Regex::new(pattern).map_err(|e| {
                invalid(format!("`pattern` is not a valid regular expression: {e}"))
            })?;
            let root = match arguments.get("path").and_then(Value::as_str) {
                Some(p) => resolve(ctx, p, Access::Read)?,
                None => ctx.workdir.clone(),
            };
            let max = arguments
                .get("max_matches")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_MAX_MATCHES, |n| (n as usize).clamp(1, MAX_MATCHES));
            let mut walker = ignore::WalkBuilder::new(&root);
            walker.require_git(false);
            if let Some(glob) = arguments.get("glob").and_then(Value::as_str) {
                let mut overrides = ignore::overrides::OverrideBuilder::new(&root);
                overrides
                    .add(glob)
                    .map_err(|e| invalid(format!("`glob` is not valid: {e}")))?;
                walker.overrides(
                    overrides
                        .build()
                        .map_err(|e| invalid(format!("`glob` is not valid: {e}")))?,
                );
            }
            let base = ctx.workdir.clone();
            tokio::task::spawn_blocking(move || search(walker.build(), &regex, &base, max))
                .await
                .map_err(|e| ToolError::Failed(format!("search failed: {e}")))
        })
    }
}

fn search(walk: ignore::Walk, regex: &regex::Regex, base: &std::path::Path, max: usize) -> String {
    let mut out = String::new();
    let mut matches = 0usize;
    let mut more = false;
    'files: for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        let shown = entry
            .path()
            .strip_prefix(base)
            .unwrap_or(entry.path())
            .display()
            .to_string();
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let mut number = 0usize;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            number += 1;
            if line.contains(&0) {
                continue 'files;
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if !regex.is_match(text) {
                continue;
            }
            if matches == max || out.len() >= MAX_OUTPUT_BYTES {
                more = true;
                break 'files;
            }
            let cut: String = text.chars().take(LINE_CHARS).collect();
            out.push_str(&format!("{shown}:{number}: {cut}\n"));
            matches += 1;
        }
    }
    if matches == 0 {
        return "no matches".into();
    }
    if more {
        out.push_str(&format!(
            "[{matches} matches shown; more results omitted — narrow the pattern, path or glob]\n"
        ));
    }
    out
}
