//! Asking the user at the terminal whether a destructive command may run. Used by `baton chat`
//! when stdin and stderr are a terminal and `--yes` was not given; the question goes to stderr
//! (stdout carries the answer text) and the reply is read from stdin. A Ctrl-C while asking
//! refuses the command and lets the interrupted turn end: the read is abandoned, not left
//! waiting to swallow the next prompt.

use baton_agent::{Approval, Approver, Interrupt};
use baton_core::summary::BoxFuture;
use std::io::BufRead;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Asks once per command; a user can answer `a` to allow every destructive command for the
/// rest of the run.
pub struct TerminalApprover {
    allow_all: Mutex<bool>,
    interrupt: Interrupt,
}

impl TerminalApprover {
    pub fn new(interrupt: Interrupt) -> Self {
        TerminalApprover {
            allow_all: Mutex::new(false),
            interrupt,
        }
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, command: &'a str, reason: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            if self.allow_all.lock().map(|g| *g).unwrap_or(false) {
                return Approval::Allowed;
            }
            let shown = baton_core::terminal_text::escape_controls(command).into_owned();
            errln!("\nThe model wants to run a destructive command ({reason}):\n  {shown}");
            crate::output::err(format_args!(
                "Allow it? [y]es / [N]o / [a]ll for this run: "
            ));
            // The interactive terminal holds typing during a turn; the answer must be seen.
            let held = super::typeahead::is_held();
            super::typeahead::hold(false);
            let abandoned = Arc::new(AtomicBool::new(false));
            let reader = {
                let abandoned = abandoned.clone();
                tokio::task::spawn_blocking(move || read_line_unless(&abandoned))
            };
            let answer = tokio::select! {
                answer = reader => answer.ok().flatten(),
                () = self.interrupt.raised() => {
                    abandoned.store(true, Ordering::Relaxed);
                    errln!("");
                    None
                }
            };
            super::typeahead::hold(held);
            match answer.as_deref().map(str::trim) {
                Some("y" | "Y" | "yes") => Approval::Allowed,
                Some("a" | "A" | "all") => {
                    if let Ok(mut g) = self.allow_all.lock() {
                        *g = true;
                    }
                    Approval::Allowed
                }
                _ => Approval::Refused(format!(
                    "refused: the user declined `{command}` ({reason}); do not retry it, ask \
                     the user or find another way"
                )),
            }
        })
    }
}

/// One line from stdin, polling so the read can be abandoned (`None`) without consuming
/// anything typed afterwards.
fn read_line_unless(abandoned: &AtomicBool) -> Option<String> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    while !abandoned.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: Duration::from_millis(100).as_nanos() as i64,
        };
        match poll(&mut fds, Some(&wait)) {
            Ok(0) => continue,
            Ok(_) => {
                let mut line = String::new();
                return stdin.lock().read_line(&mut line).ok().map(|_| line);
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
    }
    None
}
