//! The import's writing side: conversations grouped into batches of about
//! [`BATCH_MESSAGES`] messages, each batch written in one transaction on a writer thread
//! while the reading thread parses and converts the next one. Reading and writing took turns
//! before, each leaving a core idle: on PostgreSQL the client waited for every COPY, and on
//! SQLite the parser waited for every commit.
//!
//! At most one batch waits for the writer (a bounded channel), so memory holds two batches,
//! not the file. Which conversations are new is decided inside each write transaction
//! (another process may import the same file at the same time), so nothing is looked up per
//! conversation beforehand.

use super::import::{Outcome, Planned};
use super::import_tally::Tally;
use super::store_err;
use crate::commands::Failure;
use baton_store::{NewSession, SessionBatch, SessionStore, end_reason};
use indicatif::ProgressBar;
use std::collections::HashSet;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Sessions per transaction: whole conversations, about this many messages at a time. With
/// indexing after the rows, a transaction is cheap to commit; larger ones only hold more in
/// memory.
const BATCH_MESSAGES: usize = 5_000;

/// Why reading the input stopped.
pub(super) enum ReadFailure {
    /// The importer or the store failed.
    Failed(Failure),
    /// The input has a bad record; `Failure::BadInput` with this text, plus how many sessions
    /// were written before it.
    BadInput(String),
}

/// What the import stored: the sessions written and those already there (or met twice).
pub(super) struct Imported {
    pub fresh: Tally,
    pub skipped: Tally,
}

/// Groups conversations into batches as they arrive and hands full ones to the writer.
pub(super) struct Importer {
    batch: Vec<Planned>,
    batch_messages: usize,
    /// Ids met so far in this import, as 128-bit digests ([`id_digest`]): the same
    /// conversation twice is stored once.
    seen: HashSet<u128>,
    /// Conversations met twice in this import.
    repeated: Tally,
    to_writer: SyncSender<Vec<Planned>>,
}

impl Importer {
    /// Queues one conversation, sending the batch to the writer when it is full.
    pub(super) fn add(&mut self, p: Planned) -> Result<(), Failure> {
        if !self.seen.insert(id_digest(&p.id)) {
            self.repeated.add(Outcome::from(&p));
            return Ok(());
        }
        self.batch_messages += p.conversation.messages.len();
        self.batch.push(p);
        if self.batch_messages >= BATCH_MESSAGES {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<(), Failure> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.batch_messages = 0;
        // Fails only when the writer stopped on an error, which the caller reports.
        self.to_writer
            .send(std::mem::take(&mut self.batch))
            .map_err(|_| Failure::BadInput("the import's writer stopped".into()))
    }
}

/// An id as 128 bits, for the set of ids an import has met: 16 bytes a session instead of
/// the id's text (18 MiB less at the peak of a 600,000-session import). Two ids of one import
/// share a digest with a probability around 10^-27, and the store still refuses a stored id
/// twice.
fn id_digest(id: &str) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        id.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

/// Runs `read` with an [`Importer`] whose batches are written to `store` on a writer thread,
/// every session titled `title` when given; `progress` counts the messages written, and
/// `list_sessions` keeps each session for a report that lists them (`--json`). When
/// `read` succeeds, what it queued last is written too; when it fails, only the batches it
/// had filled are (each whole, and a re-run skips them).
pub(super) fn import_with(
    store: &dyn SessionStore,
    title: Option<&str>,
    list_sessions: bool,
    progress: &ProgressBar,
    read: impl FnOnce(&mut Importer) -> Result<(), ReadFailure>,
) -> Result<Imported, Failure> {
    std::thread::scope(|scope| {
        let (to_writer, batches) = sync_channel::<Vec<Planned>>(1);
        let writer =
            scope.spawn(move || write_batches(store, title, list_sessions, progress, batches));
        let mut importer = Importer {
            batch: Vec::new(),
            batch_messages: 0,
            seen: HashSet::new(),
            repeated: Tally::new(list_sessions),
            to_writer,
        };
        let read = read(&mut importer).and_then(|()| importer.send().map_err(ReadFailure::Failed));
        let Importer {
            repeated,
            to_writer,
            ..
        } = importer;
        // Hanging up: the writer finishes what it was given and stops.
        drop(to_writer);
        let written = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let mut imported = written?;
        imported.skipped.append(repeated);
        match read {
            Ok(()) => Ok(imported),
            Err(ReadFailure::Failed(failure)) => Err(failure),
            Err(ReadFailure::BadInput(text)) => {
                let written = imported.fresh.len();
                Err(Failure::BadInput(if written == 0 {
                    text
                } else {
                    format!(
                        "{text}\n{} session(s) read before it were imported; importing the file \
                         again after the fix skips them",
                        super::table::count(written)
                    )
                }))
            }
        }
    })
}

/// The writer thread: each batch in one transaction, until the reader hangs up or a write
/// fails (then the reader's next send fails, and it stops).
fn write_batches(
    store: &dyn SessionStore,
    title: Option<&str>,
    list_sessions: bool,
    progress: &ProgressBar,
    batches: Receiver<Vec<Planned>>,
) -> Result<Imported, Failure> {
    let mut imported = Imported {
        fresh: Tally::new(list_sessions),
        skipped: Tally::new(list_sessions),
    };
    for batch in batches {
        let sessions: Vec<SessionBatch<'_>> = batch
            .iter()
            .map(|p| SessionBatch {
                session: NewSession {
                    id: Some(p.id.clone()),
                    model: p.model.clone(),
                    system_prompt: p.conversation.system_prompt(),
                    started_at: p.started_at,
                    ..NewSession::new(p.source.clone())
                },
                messages: &p.conversation.messages,
                end_reason: Some(end_reason::IMPORTED),
                ended_at: p.ended_at.or(p.started_at),
                usage: p.usage,
                title: title.map(str::to_string),
            })
            .collect();
        let written = store
            .write_new_sessions_deferred(&sessions)
            .map_err(store_err)?;
        drop(sessions);
        let mut messages = 0;
        for (p, (_, was_stored)) in batch.iter().zip(written) {
            messages += p.conversation.messages.len();
            if was_stored {
                imported.fresh.add(Outcome::from(p));
            } else {
                imported.skipped.add(Outcome::from(p));
            }
        }
        progress.inc(messages as u64);
    }
    Ok(imported)
}
