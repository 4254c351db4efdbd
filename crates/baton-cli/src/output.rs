//! Standard output and standard error that never panic.
//!
//! `outln!` panics when its write fails, and the common way to make it fail is a closed
//! pipe: `baton sessions list | head -1` printed "failed printing to stdout: Broken pipe" and
//! exited 101. Every line the CLI prints goes through [`out`] / [`err`] instead (the `outln!`,
//! `out!` and `errln!` macros in `main.rs`; clippy's `print_stdout` / `print_stderr` lints keep
//! `outln!` out of this crate).
//!
//! Why not restore `SIGPIPE` to its default: the crate forbids `unsafe`, and the `exec:`
//! summarizer writes prompts into a child's stdin, where a child that exits early must be an
//! `EPIPE` error the summarizer handles, not a signal that kills the whole batch.
//!
//! Policy: once standard output is gone (`BrokenPipe`), further output is dropped and the
//! command carries on, so a command that also writes files or the database finishes that
//! work; the process then exits 0, as `head` users expect. Any other write failure (a full
//! disk behind `> file`) is remembered and turns a successful run into exit 1 with one message.
//! Standard error has nowhere to report its own failures, so they are ignored.

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output failed; nothing more is written to it.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
/// The first failure that was not a closed pipe, for the exit status.
static STDOUT_FAILURE: OnceLock<String> = OnceLock::new();

/// Writes formatted text to standard output (see the module docs for failures).
pub fn out(args: fmt::Arguments<'_>) {
    write_stdout(|w| w.write_fmt(args));
}

/// Writes bytes to standard output and flushes them.
pub fn out_bytes(bytes: &[u8]) {
    out_with(|w| w.write_all(bytes));
}

/// Runs `write` into standard output, then flushes it. Standard output writes out at every
/// newline, so a writer of many lines buffers them itself (`Document::write_text` does).
pub fn out_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
    write_stdout(|lock| {
        write(lock)?;
        lock.flush()
    });
}

/// Writes formatted text to standard error, ignoring failures.
pub fn err(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Flushes standard output (it is line-buffered; `out!` without a newline may sit there).
pub fn flush() {
    write_stdout(Write::flush);
}

/// Why standard output failed, when it failed for a reason other than a closed pipe.
pub fn stdout_failure() -> Option<&'static str> {
    STDOUT_FAILURE.get().map(String::as_str)
}

fn write_stdout(f: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut lock = io::stdout().lock();
    if let Err(e) = f(&mut lock) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != io::ErrorKind::BrokenPipe {
            let _ = STDOUT_FAILURE.set(format!("cannot write to standard output: {e}"));
        }
    }
}
