//! A summarizer that runs a local command: the prompt goes to its stdin, the summary comes
//! back on its stdout.
//!
//! This is how Baton uses any model without linking a client for it (`ollama run llama3`,
//! `llm -m claude`, a team's own script) and stays offline-capable. The command line is split
//! the way a shell would split it, but no shell runs: nothing in it is expanded or executed
//! except the program itself.

use super::redact::redact;
use super::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use std::io;
use std::process::{ExitStatus, Stdio};
use std::str::Chars;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// How much of the program's stderr an error shows: enough for the actual complaint at the
/// end, not a whole log.
const STDERR_TAIL_CHARS: usize = 2_000;
/// Bytes of stderr kept while reading (the tail is cut from these).
const STDERR_KEEP_BYTES: usize = 16 * 1024;
/// A summary is a few thousand tokens; output far beyond that is a misbehaving program, and
/// collecting it without limit would let it exhaust memory before the timeout fires.
const MAX_STDOUT_BYTES: usize = 16 * 1024 * 1024;
/// How long to wait for a killed child to be reaped before leaving it to `kill_on_drop`.
const REAP_GRACE: Duration = Duration::from_secs(2);

/// Runs `program args…` once per summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSummarizer {
    program: String,
    args: Vec<String>,
    timeout: Duration,
}

impl ExecSummarizer {
    pub fn new(program: impl Into<String>, args: Vec<String>, timeout: Duration) -> Self {
        ExecSummarizer {
            program: program.into(),
            args,
            timeout,
        }
    }

    /// Splits `command_line` into a program and its arguments with shell quoting rules
    /// (whitespace separates words; `'…'` is literal; `"…"` allows `\"`, `\\`, `\$`, `` \` ``;
    /// a backslash outside quotes escapes the next char).
    pub fn parse(command_line: &str, timeout: Duration) -> Result<Self, SummaryError> {
        let rejected = |why: &str| SummaryError::Failed {
            summarizer: "exec".to_string(),
            message: format!("cannot use command line `{}`: {why}", redact(command_line)),
        };
        let mut words = split_command_line(command_line).map_err(rejected)?;
        if words.is_empty() {
            return Err(rejected("it names no program"));
        }
        let program = words.remove(0);
        Ok(ExecSummarizer::new(program, words, timeout))
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    pub fn args(&self) -> &[String] {
        &self.args
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    async fn run(&self, prompt: &str) -> Result<String, SummaryError> {
        let mut child = self.spawn()?;
        let exchange = tokio::time::timeout(self.timeout, exchange(&mut child, prompt.as_bytes()));
        match exchange.await {
            Err(_elapsed) => {
                stop(&mut child).await;
                Err(SummaryError::Timeout {
                    summarizer: self.name(),
                    seconds: whole_seconds_up(self.timeout),
                })
            }
            Ok(Err(e)) => {
                stop(&mut child).await;
                Err(self.failed(format!("talking to the process failed: {e}")))
            }
            Ok(Ok(output)) => self.judge(output),
        }
    }

    fn spawn(&self) -> Result<Child, SummaryError> {
        Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| self.failed(format!("cannot start `{}`: {e}", self.program)))
    }

    /// Turns what the process did into a summary or the reason there is none. A failed exit
    /// wins over everything else: it is what the user needs to fix.
    fn judge(&self, output: Output) -> Result<String, SummaryError> {
        if !output.status.success() {
            let stderr = stderr_tail(&output.stderr_tail);
            let detail = if stderr.is_empty() {
                "no stderr output".to_string()
            } else {
                format!("stderr: {stderr}")
            };
            return Err(self.failed(format!("{}; {detail}", output.status)));
        }
        if let Some(e) = output.stdin_error {
            return Err(self.failed(format!("writing the prompt to its stdin failed: {e}")));
        }
        if output.stdout_overflowed {
            return Err(self.failed(format!(
                "it wrote more than {MAX_STDOUT_BYTES} bytes to stdout"
            )));
        }
        let summary = String::from_utf8_lossy(&output.stdout);
        let summary = summary.trim();
        if summary.is_empty() {
            return Err(SummaryError::Empty {
                summarizer: self.name(),
            });
        }
        Ok(summary.to_string())
    }

    fn failed(&self, message: String) -> SummaryError {
        SummaryError::Failed {
            summarizer: self.name(),
            message,
        }
    }
}

impl Summarizer for ExecSummarizer {
    fn name(&self) -> String {
        format!("exec:{}", self.program)
    }

    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(self.run(input.prompt))
    }
}

/// What the process did, collected in full.
struct Output {
    status: ExitStatus,
    stdout: Vec<u8>,
    stdout_overflowed: bool,
    stderr_tail: Vec<u8>,
    /// A failure to hand over the prompt other than the program closing its stdin early.
    stdin_error: Option<io::Error>,
}

/// Writes the prompt and reads both outputs at the same time. Doing them in turn deadlocks as
/// soon as the prompt or an output is larger than a pipe buffer: the child blocks writing
/// stdout while we block writing its stdin.
async fn exchange(child: &mut Child, prompt: &[u8]) -> io::Result<Output> {
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (fed, out, err) = tokio::join!(
        feed(stdin, prompt),
        read_capped(stdout, MAX_STDOUT_BYTES),
        read_tail(stderr, STDERR_KEEP_BYTES),
    );
    let (stdout, stdout_overflowed) = out?;
    let stderr_tail = err?;
    let status = child.wait().await?;
    Ok(Output {
        status,
        stdout,
        stdout_overflowed,
        stderr_tail,
        stdin_error: fed.err(),
    })
}

/// Writes the prompt and closes stdin so the program sees end of input. A program may exit
/// without reading everything (`echo ok`); the broken pipe that follows is its choice, not an
/// error.
async fn feed(stdin: Option<tokio::process::ChildStdin>, prompt: &[u8]) -> io::Result<()> {
    let Some(mut stdin) = stdin else {
        return Ok(());
    };
    let written = async {
        stdin.write_all(prompt).await?;
        stdin.shutdown().await
    };
    match written.await {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Reads to the end, keeping at most `cap` bytes but draining the rest so the writer never
/// blocks; the flag says whether anything was dropped.
async fn read_capped(
    reader: Option<impl AsyncRead + Unpin>,
    cap: usize,
) -> io::Result<(Vec<u8>, bool)> {
    let Some(mut reader) = reader else {
        return Ok((Vec::new(), false));
    };
    let mut kept = Vec::new();
    let mut overflowed = false;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Ok((kept, overflowed));
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        overflowed |= n > room;
    }
}

/// Reads to the end, keeping only about the last `keep` bytes: the end of stderr is where a
/// program says why it failed.
async fn read_tail(reader: Option<impl AsyncRead + Unpin>, keep: usize) -> io::Result<Vec<u8>> {
    let Some(mut reader) = reader else {
        return Ok(Vec::new());
    };
    let mut tail = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Ok(tail);
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 2 * keep {
            tail.drain(..tail.len() - keep);
        }
    }
}

/// The last [`STDERR_TAIL_CHARS`] chars of stderr, redacted: error output often echoes
/// the command or the request, credentials included, and errors end up in logs and on screen.
fn stderr_tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let total = text.chars().count();
    let start = text
        .char_indices()
        .nth(total.saturating_sub(STDERR_TAIL_CHARS))
        .map_or(text.len(), |(i, _)| i);
    redact(&text[start..]).trim().to_string()
}

/// Kills the child and reaps it, waiting briefly; `kill_on_drop` covers a child that
/// outlasts the wait.
async fn stop(child: &mut Child) {
    // Either failure means the child is already gone, which is what stopping wants.
    let _ = child.start_kill();
    let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
}

/// Timeouts are reported in whole seconds, rounded up, so a sub-second limit never reads as
/// "after 0 s".
fn whole_seconds_up(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Shell-style word splitting without expansion.
fn split_command_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                read_single_quoted(&mut chars, &mut word)?;
                in_word = true;
            }
            '"' => {
                read_double_quoted(&mut chars, &mut word)?;
                in_word = true;
            }
            '\\' => match chars.next() {
                // A backslash-newline joins lines, as in a shell.
                Some('\n') => {}
                Some(escaped) => {
                    word.push(escaped);
                    in_word = true;
                }
                None => return Err("it ends with a lone backslash"),
            },
            other => {
                word.push(other);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

fn read_single_quoted(chars: &mut Chars<'_>, word: &mut String) -> Result<(), &'static str> {
    for c in chars.by_ref() {
        if c == '\'' {
            return Ok(());
        }
        word.push(c);
    }
    Err("a single quote is never closed")
}

/// Inside double quotes a backslash only escapes `"`, `\`, `$`, `` ` `` and a newline;
/// before anything else it is kept, as POSIX shells do.
fn read_double_quoted(chars: &mut Chars<'_>, word: &mut String) -> Result<(), &'static str> {
    while let Some(c) = chars.next() {
        match c {
            '"' => return Ok(()),
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                Some('\n') => {}
                Some(other) => {
                    word.push('\\');
                    word.push(other);
                }
                None => break,
            },
            other => word.push(other),
        }
    }
    Err("a double quote is never closed")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::summary::ledger::TaskLedger;
    use std::time::Instant;

    const LONG: Duration = Duration::from_secs(30);

    async fn summarize(
        command: &str,
        prompt: &str,
        timeout: Duration,
    ) -> Result<String, SummaryError> {
        let ledger = TaskLedger::default();
        let input = SummaryInput {
            turns: &[],
            previous_summary: None,
            focus_topic: None,
            budget_tokens: 100,
            ledger: &ledger,
            prompt,
            first_request: None,
            actions: None,
            calls: None,
        };
        ExecSummarizer::parse(command, timeout)
            .unwrap()
            .summarize(input)
            .await
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        let s = ExecSummarizer::parse(
            r#"llm -m "claude 3" --system 'be brief; no $HOME' a\ b "q\"x\n" ''"#,
            LONG,
        )
        .unwrap();
        assert_eq!(s.program(), "llm");
        assert_eq!(
            s.args(),
            [
                "-m",
                "claude 3",
                "--system",
                "be brief; no $HOME",
                "a b",
                "q\"x\\n",
                ""
            ]
        );
        assert_eq!(s.name(), "exec:llm");
        let joined = ExecSummarizer::parse("  ollama   run\\\n llama3 ", LONG).unwrap();
        assert_eq!(
            (joined.program(), joined.args()),
            ("ollama", &["run".to_string(), "llama3".to_string()][..])
        );
    }

    #[test]
    fn bad_command_lines_are_rejected() {
        for line in ["", "   ", "sh -c 'echo", "say \"hi", "trailing \\"] {
            let err = ExecSummarizer::parse(line, LONG).unwrap_err();
            assert!(
                matches!(err, SummaryError::Failed { .. }),
                "{line:?}: {err}"
            );
        }
        let err = ExecSummarizer::parse("run 'sk-4fGh7Jk2LmN9pQ3rS6tUv8wXy1zA5bC0dE2fG4hJ", LONG)
            .unwrap_err();
        assert!(!err.to_string().contains("sk-4fGh7"), "{err}");
    }

    #[tokio::test]
    async fn the_prompt_round_trips_through_cat() {
        let out = summarize("sh -c cat", "  ## Active Task\nNone.\n\n", LONG)
            .await
            .unwrap();
        assert_eq!(out, "## Active Task\nNone.");
    }

    #[tokio::test]
    async fn a_failed_exit_reports_status_and_stderr() {
        let cmd = "sh -c 'echo starting; echo \"model not found: llama9 (DB_PASSWORD=hunter2)\" >&2; exit 3'";
        let err = summarize(cmd, "prompt", LONG).await.unwrap_err();
        let SummaryError::Failed {
            summarizer,
            message,
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(summarizer, "exec:sh");
        assert!(
            message.contains('3') && message.contains("model not found: llama9"),
            "{message}"
        );
        assert!(
            !message.contains("hunter2"),
            "stderr is redacted: {message}"
        );
    }

    #[tokio::test]
    async fn only_the_end_of_a_long_stderr_is_kept() {
        let cmd =
            "sh -c 'i=0; while [ $i -lt 2000 ]; do echo \"line $i\" >&2; i=$((i+1)); done; exit 1'";
        let SummaryError::Failed { message, .. } = summarize(cmd, "", LONG).await.unwrap_err()
        else {
            panic!()
        };
        assert!(message.ends_with("line 1999"), "{message}");
        assert!(message.chars().count() < STDERR_TAIL_CHARS + 100);
    }

    #[tokio::test]
    async fn a_slow_program_times_out_and_is_killed() {
        let started = Instant::now();
        let err = summarize("sleep 5", "prompt", Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            SummaryError::Timeout {
                summarizer: "exec:sleep".into(),
                seconds: 1
            }
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "took {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn blank_output_is_empty() {
        for cmd in ["sh -c 'cat >/dev/null'", "printf ' \\n\\t\\n'"] {
            let err = summarize(cmd, "prompt", LONG).await.unwrap_err();
            assert!(matches!(err, SummaryError::Empty { .. }), "{cmd}: {err}");
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_named_in_the_error() {
        let err = summarize("baton-no-such-summarizer --flag", "p", LONG)
            .await
            .unwrap_err();
        let SummaryError::Failed {
            summarizer,
            message,
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(summarizer, "exec:baton-no-such-summarizer");
        assert!(
            message.contains("cannot start `baton-no-such-summarizer`"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_large_prompt_does_not_deadlock() {
        let prompt: String = (0..2 * 1024 * 1024)
            .map(|i| if i % 80 == 79 { '\n' } else { 'x' })
            .collect();
        let out = summarize("sh -c cat", &prompt, LONG).await.unwrap();
        assert_eq!(out, prompt.trim());
    }

    #[tokio::test]
    async fn a_program_that_ignores_its_input_still_succeeds() {
        let prompt = "y".repeat(2 * 1024 * 1024);
        let out = summarize("sh -c 'echo summary'", &prompt, LONG)
            .await
            .unwrap();
        assert_eq!(out, "summary");
    }

    #[tokio::test]
    async fn runaway_output_is_refused() {
        let cmd = "sh -c 'head -c 20000000 /dev/zero | tr \"\\000\" a'";
        let err = summarize(cmd, "", LONG).await.unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }

    #[test]
    fn timeouts_round_up_to_whole_seconds() {
        assert_eq!(whole_seconds_up(Duration::from_millis(200)), 1);
        assert_eq!(whole_seconds_up(Duration::from_secs(120)), 120);
        assert_eq!(whole_seconds_up(Duration::from_millis(1_500)), 2);
    }
}
