//! What `sessions import` reports about the sessions it wrote or skipped, gathered as they go.
//!
//! Why not a list of every session: the text report is one line of totals (sessions,
//! messages, files, sources), and keeping each session's id, source and file name for it made
//! an import's memory grow with its input (a 524 MB file of 600,000 short conversations
//! peaked at 142 MiB, most of it these records). A tally holds the totals and the distinct
//! files and sources; each session is kept only when `--json`, which lists them, asks for it.

use std::collections::BTreeSet;

use super::import::Outcome;

/// Sessions of one kind (written, or skipped), counted.
pub(super) struct Tally {
    sessions: usize,
    messages: usize,
    files: BTreeSet<String>,
    sources: BTreeSet<String>,
    /// The first session added (a titled import names it when it was stored before).
    first: Option<Outcome>,
    /// Every session, in order, when the report lists them.
    listed: Option<Vec<Outcome>>,
}

impl Tally {
    /// An empty tally; `list` keeps every session for a report that lists them.
    pub(super) fn new(list: bool) -> Tally {
        Tally {
            sessions: 0,
            messages: 0,
            files: BTreeSet::new(),
            sources: BTreeSet::new(),
            first: None,
            listed: list.then(Vec::new),
        }
    }

    pub(super) fn add(&mut self, outcome: Outcome) {
        self.sessions += 1;
        self.messages += outcome.messages;
        if !self.files.contains(&outcome.file) {
            self.files.insert(outcome.file.clone());
        }
        if !self.sources.contains(&outcome.source) {
            self.sources.insert(outcome.source.clone());
        }
        if self.first.is_none() {
            self.first = Some(outcome.clone());
        }
        if let Some(listed) = &mut self.listed {
            listed.push(outcome);
        }
    }

    /// Adds every session of `other`, in its order.
    pub(super) fn append(&mut self, other: Tally) {
        match other.listed {
            Some(listed) => listed.into_iter().for_each(|o| self.add(o)),
            None => {
                self.sessions += other.sessions;
                self.messages += other.messages;
                self.files.extend(other.files);
                self.sources.extend(other.sources);
                if self.first.is_none() {
                    self.first = other.first;
                }
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        self.sessions
    }

    pub(super) fn is_empty(&self) -> bool {
        self.sessions == 0
    }

    pub(super) fn messages(&self) -> usize {
        self.messages
    }

    pub(super) fn first(&self) -> Option<&Outcome> {
        self.first.as_ref()
    }

    /// The files the sessions came from, sorted.
    pub(super) fn files(&self) -> &BTreeSet<String> {
        &self.files
    }

    /// Their sources, sorted.
    pub(super) fn sources(&self) -> &BTreeSet<String> {
        &self.sources
    }

    /// Every session, when the tally was made to list them.
    pub(super) fn listed(&self) -> &[Outcome] {
        self.listed.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: &str, source: &str, messages: usize, file: &str) -> Outcome {
        Outcome {
            id: id.into(),
            source: source.into(),
            messages,
            file: file.into(),
        }
    }

    #[test]
    fn totals_files_and_sources_are_kept_without_the_sessions() {
        let mut t = Tally::new(false);
        t.add(outcome("a", "codex", 3, "x.jsonl"));
        t.add(outcome("b", "claude-code", 4, "x.jsonl"));
        t.add(outcome("c", "codex", 5, "y.jsonl"));
        assert_eq!((t.len(), t.messages()), (3, 12));
        assert_eq!(t.files().iter().collect::<Vec<_>>(), ["x.jsonl", "y.jsonl"]);
        assert_eq!(
            t.sources().iter().collect::<Vec<_>>(),
            ["claude-code", "codex"]
        );
        assert_eq!(t.first().map(|o| o.id.as_str()), Some("a"));
        assert!(t.listed().is_empty(), "no session is kept");
    }

    #[test]
    fn a_listing_tally_keeps_every_session_in_order_also_when_appended() {
        let mut t = Tally::new(true);
        t.add(outcome("a", "codex", 1, "x"));
        let mut more = Tally::new(true);
        more.add(outcome("b", "codex", 2, "y"));
        t.append(more);
        let ids: Vec<&str> = t.listed().iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!((t.len(), t.messages(), t.files().len()), (2, 3, 2));

        let mut counted = Tally::new(false);
        let mut other = Tally::new(false);
        other.add(outcome("c", "gemini-cli", 7, "z"));
        counted.append(other);
        assert_eq!((counted.len(), counted.messages()), (1, 7));
        assert_eq!(counted.first().map(|o| o.id.as_str()), Some("c"));
    }
}
