//! Who says yes to a destructive command. The runtime never decides alone: `baton chat -q`
//! answers from `--yes` and whether a terminal is attached, the interactive terminal asks the
//! user, the gateway answers from its configuration.

use baton_core::summary::BoxFuture;

/// The answer to one request for confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allowed,
    /// Refused, with the sentence the model (and the user) sees, e.g. how to allow it.
    Refused(String),
}

/// Decides whether a command that matched the destructive-pattern list may run.
pub trait Approver: Send + Sync {
    /// `command` is the command line as the model wrote it; `reason` names the pattern it
    /// matched (`rm -rf`, `git push --force`, …).
    fn approve<'a>(&'a self, command: &'a str, reason: &'a str) -> BoxFuture<'a, Approval>;
}

/// Allows everything (`--yes`, or a configuration that allows destructive commands).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Approver for AllowAll {
    fn approve<'a>(&'a self, _command: &'a str, _reason: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Allowed })
    }
}

/// Refuses everything with one explanation (no terminal to ask on).
#[derive(Debug, Clone)]
pub struct RefuseAll {
    pub explanation: String,
}

impl Approver for RefuseAll {
    fn approve<'a>(&'a self, command: &'a str, reason: &'a str) -> BoxFuture<'a, Approval> {
        let text = format!(
            "refused: `{command}` matches the destructive pattern `{reason}` and needs confirmation; {}",
            self.explanation
        );
        Box::pin(async move { Approval::Refused(text) })
    }
}
