//! `terminal`: one shell command, its exit code and its combined output. Stdout and stderr
//! share one pipe, so the output reads in the order the program wrote it. The command runs in
//! its own process group, so a timeout or an interrupt stops everything it started (a
//! `make -j` or a `sleep & sleep` tree), not just the shell. Output is kept bounded while it is
//! read: the head and the tail, with the count of what was left out between them.

use crate::approval::Approval;
use crate::tool::{Tool, ToolContext, ToolError, args, function_schema};
use crate::tools::destructive::DestructivePolicy;
use crate::tools::paths::{Access, resolve};
use baton_core::summary::BoxFuture;
use serde_json::{Value, json};
use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

/// The longest a command may run, whatever the model asks.
pub const MAX_TIMEOUT_SECONDS: u64 = 3_600;
/// Bytes kept from the start and from the end of a command's output.
pub const KEEP_HEAD_BYTES: usize = 256 * 1024;
pub const KEEP_TAIL_BYTES: usize = 256 * 1024;

pub struct Terminal {
    policy: DestructivePolicy,
}

impl Terminal {
    pub fn new(policy: DestructivePolicy) -> Self {
        Terminal { policy }
    }
}

impl Tool for Terminal {
    fn name(&self) -> &str {
        "terminal"
    }

    fn schema(&self) -> Value {
        function_schema(
            "terminal",
            "Run a shell command (sh -c) in the working directory and return its exit code and \
             combined stdout+stderr. Long outputs are kept head and tail; very long results are \
             saved to a file you can read with read_file. Destructive commands (rm -rf, \
             git push --force, git reset --hard, …) need the user's confirmation.",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECONDS,
                        "description": "Stop the command after this long (default 180)."},
                    "workdir": {"type": "string", "description": "Run in this directory (inside the working directory)."}
                },
                "required": ["command"]
            }),
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let command = args::required_text("terminal", &arguments, "command")?;
            let timeout = args::optional_count("terminal", &arguments, "timeout_seconds", 1)?
                .map_or(ctx.command_timeout, |s| {
                    Duration::from_secs(s.min(MAX_TIMEOUT_SECONDS))
                });
            let dir = match arguments.get("workdir").and_then(Value::as_str) {
                Some(d) => resolve(ctx, d, Access::Write)?,
                None => ctx.workdir.clone(),
            };
            if !dir.is_dir() {
                return Err(ToolError::Failed(format!(
                    "working directory {} does not exist",
                    dir.display()
                )));
            }
            if let Some(pattern) = self.policy.needs_confirmation(command)
                && let Approval::Refused(why) = ctx.approver.approve(command, pattern).await
            {
                return Err(ToolError::Refused(why));
            }
            run(command, &dir, timeout, ctx).await
        })
    }
}

/// How a run ended.
enum Ending {
    Exited(Option<i32>),
    TimedOut,
    Interrupted,
}

async fn run(
    command: &str,
    dir: &std::path::Path,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let (reader, writer) =
        std::io::pipe().map_err(|e| ToolError::Failed(format!("cannot create a pipe: {e}")))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| ToolError::Failed(format!("cannot create a pipe: {e}")))?;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_err))
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start sh: {e}")))?;
    // `cmd` still holds the pipe's write ends; drop it so the reader sees EOF when the
    // command's own copies close.
    drop(cmd);
    let pgid = child.id();
    let collector = tokio::task::spawn_blocking(move || collect(reader));
    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status.ok().and_then(|s| s.code())),
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
        () = ctx.interrupt.raised() => Ending::Interrupted,
    };
    // Stop the group: now on a timeout or interrupt; after a normal exit, whatever the
    // command left running in the background (it would hold the pipe open and outlive the
    // call the model thinks is finished).
    if let Some(pgid) = pgid {
        kill_group(pgid, !matches!(ending, Ending::Exited(_))).await;
    }
    let _ = child.wait().await;
    let output = collector
        .await
        .map_err(|e| ToolError::Failed(format!("output reader failed: {e}")))?;
    let header = match ending {
        Ending::Exited(Some(code)) => format!("exit code: {code}"),
        Ending::Exited(None) => "exit code: none (killed by a signal)".to_string(),
        Ending::TimedOut => format!(
            "timed out after {} s; the command and everything it started were stopped",
            timeout.as_secs()
        ),
        Ending::Interrupted => return Err(ToolError::Interrupted),
    };
    Ok(format!("{header}\n{output}"))
}

/// Sends the group SIGKILL when it must stop now, else SIGTERM to stragglers after the shell
/// exited (background jobs that would hold the pipe open). `kill` is a separate program because
/// this crate forbids `unsafe`.
async fn kill_group(pgid: u32, now: bool) {
    let signal = if now { "-KILL" } else { "-TERM" };
    let _ = tokio::process::Command::new("kill")
        .arg(signal)
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}

/// Reads to EOF keeping the first and last bytes, as lossy UTF-8.
fn collect(mut reader: std::io::PipeReader) -> String {
    let mut head = Vec::new();
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut omitted = 0usize;
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        if head.len() < KEEP_HEAD_BYTES {
            let take = (KEEP_HEAD_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk);
        if tail.len() > KEEP_TAIL_BYTES {
            let drop = tail.len() - KEEP_TAIL_BYTES;
            tail.drain(..drop);
            omitted += drop;
        }
    }
    let mut text = String::from_utf8_lossy(&head).into_owned();
    if omitted > 0 {
        text.push_str(&format!("\n[… {omitted} bytes of output omitted …]\n"));
    }
    let tail: Vec<u8> = tail.into_iter().collect();
    text.push_str(&String::from_utf8_lossy(&tail));
    text
}
