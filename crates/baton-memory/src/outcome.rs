//! What a write did, or why it was refused, in a shape the agent can act on.
//!
//! A refusal is an answer, not a failure: it carries what the agent needs for its next move
//! (the current entries and usage when memory is full, the candidates when `old_text` was
//! ambiguous, the existing entry when a new one would duplicate or contradict it).

use crate::supersede::Similar;
use crate::target::Target;
use serde_json::{Value, json};
use std::path::PathBuf;

/// A write that reached the disk (or was a no-op, like re-adding an existing entry).
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub target: Target,
    /// The live entries after the write.
    pub entries: Vec<String>,
    /// `"85% — 1,870/2,200 chars"`.
    pub usage: String,
    pub message: String,
    /// Entries removed because they were near-copies of the one just corrected.
    pub retired: Vec<String>,
    /// Where the raw file was copied before this write, when it had hand edits the parser
    /// would not reproduce.
    pub backup: Option<PathBuf>,
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum RefusalKind {
    /// Content or `old_text` empty after trimming.
    Empty,
    /// The injection / exfiltration scan matched this rule.
    Blocked { rule: &'static str },
    /// The content holds a line that is only `§`, which would split it into two entries.
    Delimiter,
    /// The write would exceed the character limit.
    OverCapacity,
    /// No entry contains `old_text`.
    NoMatch,
    /// Several different entries contain `old_text`.
    Ambiguous { matches: Vec<String> },
    /// An existing entry duplicates or contradicts the new one.
    Similar { similar: Vec<Similar> },
}

impl RefusalKind {
    /// Stable id for scripts and tests.
    pub fn code(&self) -> &'static str {
        match self {
            RefusalKind::Empty => "empty",
            RefusalKind::Blocked { .. } => "blocked",
            RefusalKind::Delimiter => "delimiter",
            RefusalKind::OverCapacity => "over_capacity",
            RefusalKind::NoMatch => "no_match",
            RefusalKind::Ambiguous { .. } => "ambiguous",
            RefusalKind::Similar { .. } => "similar",
        }
    }
}

/// A refused write: nothing on disk changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub target: Target,
    pub kind: RefusalKind,
    /// What went wrong and what to do instead.
    pub error: String,
    /// The live entries, when choosing among them is the way forward.
    pub current_entries: Option<Vec<String>>,
    pub usage: Option<String>,
}

/// The result of `add`, `replace` or `remove`.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOutcome {
    Applied(Applied),
    Refused(Refusal),
}

impl WriteOutcome {
    pub fn is_applied(&self) -> bool {
        matches!(self, WriteOutcome::Applied(_))
    }

    /// The tool result: `{"success": true, "entries": …, "usage": …}` or
    /// `{"success": false, "error": …, …}`.
    pub fn to_json(&self) -> Value {
        match self {
            WriteOutcome::Applied(a) => a.to_json(),
            WriteOutcome::Refused(r) => r.to_json(),
        }
    }
}

impl Applied {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "success": true,
            "target": self.target.as_str(),
            "entries": self.entries,
            "usage": self.usage,
            "entry_count": self.entries.len(),
            "message": self.message,
        });
        if !self.retired.is_empty() {
            v["retired"] = json!(self.retired);
        }
        if let Some(b) = &self.backup {
            v["backup"] = json!(b.display().to_string());
        }
        v
    }
}

impl Refusal {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "success": false,
            "target": self.target.as_str(),
            "reason": self.kind.code(),
            "error": self.error,
        });
        match &self.kind {
            RefusalKind::Blocked { rule } => v["rule"] = json!(rule),
            RefusalKind::Ambiguous { matches } => v["matches"] = json!(matches),
            RefusalKind::Similar { similar } => {
                v["similar"] = similar
                    .iter()
                    .map(|s| json!({"entry": s.entry, "relation": s.relation.as_str()}))
                    .collect();
            }
            _ => {}
        }
        if let Some(e) = &self.current_entries {
            v["current_entries"] = json!(e);
        }
        if let Some(u) = &self.usage {
            v["usage"] = json!(u);
        }
        v
    }
}
