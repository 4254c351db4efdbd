//! `write_file`: replace or create a file, atomically (a temporary file in the same folder,
//! then a rename), so a crash or a full disk never leaves half a file where the old one was.

use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use crate::tools::paths::{Access, resolve};
use baton_core::summary::BoxFuture;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }

    fn schema(&self) -> Value {
        function_schema(
            "write_file",
            "Write a file with the given content, replacing it if it exists (parent folders \
             are created). For a small change to an existing file, use patch.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let field = |k: &str| args::required_str("write_file", &arguments, k);
            let given = field("path")?;
            let content = field("content")?;
            let path = resolve(ctx, given, Access::Write)?;
            if path.is_dir() {
                return Err(ToolError::Failed(format!("{given} is a directory")));
            }
            let existed = path.exists();
            write_atomically(&path, content.as_bytes())
                .map_err(|e| ToolError::Failed(format!("{given}: {e}")))?;
            Ok(format!(
                "{} {given} ({} bytes, {} lines)",
                if existed { "replaced" } else { "created" },
                content.len(),
                content.lines().count()
            ))
        })
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder, keeping the old
/// file's permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".baton-write-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
