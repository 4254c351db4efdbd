//! `MemoryStore`: the two memory files, read live and written safely.
//!
//! Every mutation takes the cross-process lock, re-reads the file under it (another session
//! may have written since this one last looked), applies the change, and replaces the file
//! atomically. So concurrent sessions never lose each other's writes, and a crash leaves the
//! old file or the new one. Content is scanned before the lock is taken; refusals leave the
//! file untouched.

use crate::atomic_write::write_atomic;
use crate::backup::back_up;
use crate::entries::{LineStyle, dedupe, join, parse, preview, round_trips};
use crate::error::MemoryError;
use crate::limits::{Limits, char_count, fraction, usage};
use crate::lock::FileLock;
use crate::outcome::{Applied, Refusal, RefusalKind, WriteOutcome};
use crate::scan::{Finding, scan, scan_all};
use crate::snapshot::Snapshot;
use crate::supersede::{find_similar, near_copies, near_copy, words};
use crate::target::Target;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

/// How many characters of an entry a candidate list shows.
const PREVIEW_CHARS: usize = 80;

/// The memory files of one `$BATON_HOME`, plus the snapshot frozen for the current session.
#[derive(Debug)]
pub struct MemoryStore {
    dir: PathBuf,
    limits: Limits,
    snapshot: RwLock<Arc<Snapshot>>,
}

/// An entry the on-demand scan flagged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryFinding {
    pub target: Target,
    /// Position in the file, from 1.
    pub number: usize,
    pub entry: String,
    pub findings: Vec<Finding>,
}

/// A change computed under the lock: the new entries, or why there are none.
type Change = Result<Changed, Refusal>;

struct Changed {
    entries: Vec<String>,
    message: String,
    retired: Vec<String>,
}

impl MemoryStore {
    /// Opens `<home>/memories/` (created if missing) and captures the session's snapshot.
    pub fn open(home: &Path, limits: Limits) -> Result<MemoryStore, MemoryError> {
        Self::open_dir(&home.join("memories"), limits)
    }

    /// Opens a memories directory directly.
    pub fn open_dir(dir: &Path, limits: Limits) -> Result<MemoryStore, MemoryError> {
        std::fs::create_dir_all(dir).map_err(|source| MemoryError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let store = MemoryStore {
            dir: dir.to_path_buf(),
            limits,
            snapshot: RwLock::new(Arc::new(Snapshot::default())),
        };
        store.refresh_snapshot()?;
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// `MEMORY.md` or `USER.md` in this store's directory.
    pub fn path(&self, target: Target) -> PathBuf {
        self.dir.join(target.file_name())
    }

    /// The snapshot frozen for the current session: what the system prompt shows.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Captures a new snapshot from disk: call at session start and after a compaction.
    pub fn refresh_snapshot(&self) -> Result<Arc<Snapshot>, MemoryError> {
        let mut lists = Vec::new();
        for t in Target::ALL {
            lists.push((t, self.entries(t)?));
        }
        let snap = Arc::new(Snapshot::capture(&self.limits, |t| {
            lists
                .iter()
                .find(|(x, _)| *x == t)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        }));
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::clone(&snap);
        Ok(snap)
    }

    /// The live entries on disk (no lock needed: files are only ever replaced whole).
    pub fn entries(&self, target: Target) -> Result<Vec<String>, MemoryError> {
        let raw = read_raw(&self.path(target))?.unwrap_or_default();
        Ok(dedupe(parse(&raw)))
    }

    /// Live usage: `"85% — 1,870/2,200 chars"`.
    pub fn usage(&self, target: Target) -> Result<String, MemoryError> {
        let entries = self.entries(target)?;
        Ok(usage(char_count(&entries), self.limits.for_target(target)))
    }

    /// Adds an entry, refusing one that duplicates or contradicts an existing entry.
    pub fn add(&self, target: Target, content: &str) -> Result<WriteOutcome, MemoryError> {
        self.add_checked(target, content, true)
    }

    /// Adds an entry even if a similar one exists (the user said both are meant).
    pub fn add_allowing_similar(
        &self,
        target: Target,
        content: &str,
    ) -> Result<WriteOutcome, MemoryError> {
        self.add_checked(target, content, false)
    }

    fn add_checked(
        &self,
        target: Target,
        content: &str,
        check_similar: bool,
    ) -> Result<WriteOutcome, MemoryError> {
        let content = content.trim();
        if let Some(r) =
            self.check_content(target, content, "Nothing to save: the content is empty.")
        {
            return Ok(WriteOutcome::Refused(r));
        }
        let limit = self.limits.for_target(target);
        self.mutate(target, |entries| {
            if entries.iter().any(|e| e == content) {
                return Ok(Changed {
                    entries: entries.to_vec(),
                    message: "Entry already present; nothing added.".into(),
                    retired: Vec::new(),
                });
            }
            if check_similar {
                let similar = find_similar(entries, content);
                if let Some(first) = similar.first() {
                    let error = format!(
                        "An existing entry already covers this ({}): '{}'. If the new text \
                         corrects it, use replace with old_text taken from that entry; if it is \
                         already stored, there is nothing to do.",
                        first.relation.as_str().replace('_', " "),
                        preview(&first.entry, PREVIEW_CHARS)
                    );
                    return Err(refusal(target, RefusalKind::Similar { similar }, error));
                }
            }
            let current = char_count(entries);
            let mut next = entries.to_vec();
            next.push(content.to_string());
            if char_count(&next) > limit {
                let error = format!(
                    "{} is at {} chars; this entry ({} chars) would take it over the \
                     limit. Make room first: merge entries with replace or remove stale ones \
                     (current_entries lists them), then add again.",
                    target.file_name(),
                    fraction(current, limit),
                    content.chars().count()
                );
                return Err(with_state(
                    refusal(target, RefusalKind::OverCapacity, error),
                    entries,
                    limit,
                ));
            }
            Ok(Changed {
                entries: next,
                message: "Entry added.".into(),
                retired: Vec::new(),
            })
        })
    }

    /// Replaces the one entry containing `old_text` with `content`, and retires near-copies
    /// of the replaced entry so the corrected fact is the only version left.
    pub fn replace(
        &self,
        target: Target,
        old_text: &str,
        content: &str,
    ) -> Result<WriteOutcome, MemoryError> {
        let (old_text, content) = (old_text.trim(), content.trim());
        if old_text.is_empty() {
            return Ok(WriteOutcome::Refused(empty_old_text(target)));
        }
        if let Some(r) = self.check_content(
            target,
            content,
            "The new content is empty; to delete an entry, use remove.",
        ) {
            return Ok(WriteOutcome::Refused(r));
        }
        let limit = self.limits.for_target(target);
        self.mutate(target, |entries| {
            let index = find_one(target, entries, old_text, true)?;
            let old = entries[index].clone();
            let copies = near_copies(entries, &old, index);
            let mut next = Vec::with_capacity(entries.len());
            let mut retired = Vec::new();
            for (i, e) in entries.iter().enumerate() {
                if i == index {
                    next.push(content.to_string());
                } else if copies.contains(&i) || e == content {
                    retired.push(e.clone());
                } else {
                    next.push(e.clone());
                }
            }
            // The entry replaced may now equal one that was kept; `retired` lists that too.
            let (current, total) = (char_count(entries), char_count(&next));
            if total > limit && total > current {
                let error = format!(
                    "After this replacement {} would be at {} chars. Shorten the new content, \
                     or remove other entries first.",
                    target.file_name(),
                    fraction(total, limit)
                );
                return Err(with_state(
                    refusal(target, RefusalKind::OverCapacity, error),
                    entries,
                    limit,
                ));
            }
            let message = match retired.len() {
                0 => "Entry replaced.".to_string(),
                n => format!(
                    "Entry replaced; {n} other entr{} saying the same old thing retired.",
                    if n == 1 { "y" } else { "ies" }
                ),
            };
            Ok(Changed {
                entries: next,
                message,
                retired,
            })
        })
    }

    /// Removes the one entry containing `old_text`.
    pub fn remove(&self, target: Target, old_text: &str) -> Result<WriteOutcome, MemoryError> {
        let old_text = old_text.trim();
        if old_text.is_empty() {
            return Ok(WriteOutcome::Refused(empty_old_text(target)));
        }
        self.mutate(target, |entries| {
            let index = find_one(target, entries, old_text, false)?;
            let mut next = entries.to_vec();
            next.remove(index);
            Ok(Changed {
                entries: next,
                message: "Entry removed.".into(),
                retired: Vec::new(),
            })
        })
    }

    /// Scans every entry of both files (they may have been edited by hand).
    pub fn scan(&self) -> Result<Vec<EntryFinding>, MemoryError> {
        let mut out = Vec::new();
        for target in Target::ALL {
            for (i, entry) in self.entries(target)?.into_iter().enumerate() {
                let findings = scan_all(&entry);
                if !findings.is_empty() {
                    out.push(EntryFinding {
                        target,
                        number: i + 1,
                        entry,
                        findings,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The checks that need no lock: emptiness, the threat scan, the delimiter.
    fn check_content(&self, target: Target, content: &str, empty: &str) -> Option<Refusal> {
        if content.is_empty() {
            return Some(refusal(target, RefusalKind::Empty, empty.to_string()));
        }
        if let Some(f) = scan(content) {
            return Some(refusal(
                target,
                RefusalKind::Blocked { rule: f.rule },
                f.blocked_message(),
            ));
        }
        if content.lines().any(|l| l == "§") {
            return Some(refusal(
                target,
                RefusalKind::Delimiter,
                "The content has a line holding only '§', which separates entries in the memory \
                 file; reword that line."
                    .into(),
            ));
        }
        None
    }

    /// Lock, re-read, apply `change`, write if anything changed.
    fn mutate(
        &self,
        target: Target,
        change: impl FnOnce(&[String]) -> Change,
    ) -> Result<WriteOutcome, MemoryError> {
        let path = self.path(target);
        let _lock = FileLock::acquire(&path)?;
        let raw = read_raw(&path)?.unwrap_or_default();
        let entries = dedupe(parse(&raw));
        let changed = match change(&entries) {
            Ok(c) => c,
            Err(refusal) => return Ok(WriteOutcome::Refused(refusal)),
        };
        let mut backup = None;
        let style = LineStyle::of(&raw);
        let text = style.apply(&join(&changed.entries));
        if text != raw {
            // Only a pure append to a file already in canonical form loses nothing; anything
            // else (a remove, a replace, duplicates dropped, a hand edit normalized) keeps the
            // previous file beside it first.
            let appended = round_trips(&raw) && changed.entries.starts_with(&parse(&raw));
            if !raw.is_empty() && !appended {
                backup = Some(back_up(&path, &raw)?);
            }
            write_atomic(&path, &text)?;
        }
        let limit = self.limits.for_target(target);
        Ok(WriteOutcome::Applied(Applied {
            target,
            usage: usage(char_count(&changed.entries), limit),
            entries: changed.entries,
            message: changed.message,
            retired: changed.retired,
            backup,
        }))
    }
}

/// The file's text, `None` if it does not exist. A file that is not UTF-8 is an error rather
/// than an empty list, so a write never replaces content we could not read.
fn read_raw(path: &Path) -> Result<Option<String>, MemoryError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| MemoryError::NotUtf8 {
                path: path.to_path_buf(),
                valid_up_to: e.utf8_error().valid_up_to(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(MemoryError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The index of the one entry containing `needle`. Matches that are copies of the first
/// (identical, or — when `near_copies_are_one`, as for `replace`, which retires them — near
/// copies) count as one.
fn find_one(
    target: Target,
    entries: &[String],
    needle: &str,
    near_copies_are_one: bool,
) -> Result<usize, Refusal> {
    let same = |a: &str, b: &str| a == b || (near_copies_are_one && is_copy(a, b));
    let matches: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].contains(needle))
        .collect();
    match matches.as_slice() {
        [] => {
            let error = format!(
                "No {target} entry contains '{needle}'. The entries are listed in \
                 current_entries; retry with text copied from one of them."
            );
            let mut r = refusal(target, RefusalKind::NoMatch, error);
            r.current_entries = Some(entries.iter().map(|e| preview(e, PREVIEW_CHARS)).collect());
            Err(r)
        }
        [one] => Ok(*one),
        [first, rest @ ..] if rest.iter().all(|&i| same(&entries[i], &entries[*first])) => {
            Ok(*first)
        }
        many => {
            let error = format!(
                "'{needle}' appears in {} entries; use a longer piece of text that appears in \
                 only one of them (see matches).",
                many.len()
            );
            let matches = many
                .iter()
                .map(|&i| preview(&entries[i], PREVIEW_CHARS))
                .collect();
            Err(refusal(target, RefusalKind::Ambiguous { matches }, error))
        }
    }
}

fn is_copy(a: &str, b: &str) -> bool {
    near_copy(&words(a), &words(b))
}

fn refusal(target: Target, kind: RefusalKind, error: String) -> Refusal {
    Refusal {
        target,
        kind,
        error,
        current_entries: None,
        usage: None,
    }
}

fn with_state(mut r: Refusal, entries: &[String], limit: usize) -> Refusal {
    r.current_entries = Some(entries.to_vec());
    r.usage = Some(usage(char_count(entries), limit));
    r
}

fn empty_old_text(target: Target) -> Refusal {
    refusal(
        target,
        RefusalKind::Empty,
        "old_text is empty: give a short piece of text that appears in exactly one entry.".into(),
    )
}
