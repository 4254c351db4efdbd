//! Asking the user at the terminal whether a destructive command may run. Used by `baton chat`
//! when stdin and stderr are a terminal and `--yes` was not given; the question goes to stderr
//! (stdout carries the answer text) and the reply is read from stdin.

use baton_agent::{Approval, Approver};
use baton_core::summary::BoxFuture;
use std::io::BufRead;
use std::sync::Mutex;

/// Asks once per command; a user can answer `a` to allow every destructive command for the
/// rest of the run.
#[derive(Default)]
pub struct TerminalApprover {
    allow_all: Mutex<bool>,
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
            let answer = tokio::task::spawn_blocking(|| {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            })
            .await;
            match answer.ok().and_then(Result::ok).as_deref().map(str::trim) {
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
