//! `read_file`: a piece of a text file by lines, numbered, with a footer saying where the
//! file goes on — the way to read a spilled tool output or a large file without flooding the
//! context. Exempt from the tool-output spill (a read that spilled would be read again).

use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use crate::tools::paths::{Access, resolve};
use baton_core::summary::BoxFuture;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

pub const DEFAULT_LIMIT: u64 = 2_000;
pub const MAX_LIMIT: u64 = 10_000;
/// Characters of one line shown; longer lines are cut with a note.
pub const MAX_LINE_CHARS: usize = 2_000;

pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn schema(&self) -> Value {
        function_schema(
            "read_file",
            "Read a text file, numbered by line. `offset` (1-based line) and `limit` read a \
             piece; the footer says how many lines the file has and how to read on.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to read (default 1)."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Lines to read (default 2000)."}
                },
                "required": ["path"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let given = args::required_str("read_file", &arguments, "path")?;
            let offset = args::optional_count("read_file", &arguments, "offset", 1)?.unwrap_or(1);
            let limit = args::optional_count("read_file", &arguments, "limit", 1)?
                .unwrap_or(DEFAULT_LIMIT)
                .min(MAX_LIMIT);
            let path = resolve(ctx, given, Access::Read)?;
            let given = given.to_string();
            tokio::task::spawn_blocking(move || read_lines(&path, &given, offset, limit))
                .await
                .map_err(|e| ToolError::Failed(format!("read failed: {e}")))?
        })
    }
}

fn read_lines(
    path: &std::path::Path,
    given: &str,
    offset: u64,
    limit: u64,
) -> Result<String, ToolError> {
    let file = std::fs::File::open(path).map_err(|e| {
        ToolError::Failed(match e.kind() {
            std::io::ErrorKind::NotFound => format!("{given}: no such file"),
            _ => format!("{given}: {e}"),
        })
    })?;
    if path.is_dir() {
        return Err(ToolError::Failed(format!(
            "{given} is a directory; use search_files or terminal `ls`"
        )));
    }
    let mut probe = Vec::with_capacity(8192);
    let mut file = file;
    (&mut file)
        .take(8192)
        .read_to_end(&mut probe)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .map_err(|e| ToolError::Failed(format!("{given}: {e}")))?;
    if probe.contains(&0) {
        return Err(ToolError::Failed(format!(
            "{given} looks binary (it contains NUL bytes); read_file reads text"
        )));
    }
    let mut out = String::new();
    let mut total = 0u64;
    let mut shown = 0u64;
    let mut line = Vec::new();
    let mut reader = BufReader::new(file);
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| ToolError::Failed(format!("{given}: {e}")))?;
        if n == 0 {
            break;
        }
        total += 1;
        if total >= offset && shown < limit {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            let count = text.chars().count();
            if count > MAX_LINE_CHARS {
                let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
                out.push_str(&format!(
                    "{total:>6}\t{cut} [… {} more chars on this line]\n",
                    count - MAX_LINE_CHARS
                ));
            } else {
                out.push_str(&format!("{total:>6}\t{text}\n"));
            }
            shown += 1;
        }
    }
    if total == 0 {
        return Ok(format!("{given} is empty."));
    }
    if offset > total {
        return Err(ToolError::Failed(format!(
            "{given} has {total} lines; offset {offset} is past the end"
        )));
    }
    let last = offset + shown - 1;
    if last < total {
        out.push_str(&format!(
            "[lines {offset}-{last} of {total}; read on with offset={}]\n",
            last + 1
        ));
    } else {
        out.push_str(&format!(
            "[lines {offset}-{last} of {total}; end of file]\n"
        ));
    }
    Ok(out)
}
