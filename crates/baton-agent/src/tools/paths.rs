//! Where file tools may go. A path the model gives is resolved against the working directory
//! and must stay inside it — after `..` is applied and after symlinks are followed, so neither
//! `../../etc/passwd` nor a symlink planted inside the tree reaches out — unless the
//! configuration allows outside paths. Reads may also go to the tool-output spill folder.

use crate::tool::{ToolContext, ToolError};
use std::path::{Component, Path, PathBuf};

/// What the path is for: reads may also use `readable_roots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The real path `given` names, or a refusal saying why.
pub fn resolve(ctx: &ToolContext, given: &str, access: Access) -> Result<PathBuf, ToolError> {
    if given.trim().is_empty() {
        return Err(ToolError::InvalidArguments {
            tool: "file".into(),
            message: "`path` is empty".into(),
        });
    }
    if given.contains('\0') {
        return Err(ToolError::InvalidArguments {
            tool: "file".into(),
            message: "`path` contains a NUL byte".into(),
        });
    }
    let joined = if Path::new(given).is_absolute() {
        PathBuf::from(given)
    } else {
        ctx.workdir.join(given)
    };
    let real = real_path(&lexically_normal(&joined));
    if ctx.allow_outside_workdir {
        return Ok(real);
    }
    let workdir = ctx
        .workdir
        .canonicalize()
        .unwrap_or_else(|_| ctx.workdir.clone());
    if real.starts_with(&workdir) {
        return Ok(real);
    }
    if access == Access::Read
        && ctx
            .readable_roots
            .iter()
            .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()))
            .any(|root| real.starts_with(root))
    {
        return Ok(real);
    }
    Err(ToolError::Refused(format!(
        "`{given}` is outside the working directory {} (it resolves to {}); file tools stay \
         inside it unless [tools] allow_outside_workdir = true",
        workdir.display(),
        real.display()
    )))
}

/// `a/b/../c` → `a/c` without touching the file system (`..` at the root stays at the root).
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The path with symlinks resolved: the longest existing ancestor canonicalized, the rest
/// (what does not exist yet) appended.
fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(real) = current.canonicalize() {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            current.file_name().map(|n| n.to_os_string()),
            current.parent(),
        ) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
