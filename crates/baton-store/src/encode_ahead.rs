//! Encoding a bulk write's rows on a helper thread while the writer inserts them.
//!
//! A row (reference columns, the rough token count, and the check that the columns rebuild
//! the message) costs about a seventh of the writer's time in a bulk import, and the writer
//! thread is what bounds an import (issue #17). A batch's sessions are new, so their rows
//! depend on nothing stored ([`codec::new_session_rows`]): a helper encodes them, in order,
//! while the writer inserts the ones before.

use crate::batch::SessionBatch;
use crate::codec::{self, MessageRow};
use std::sync::mpsc::{Receiver, channel};

/// Below this many messages a batch is encoded by the writer itself: starting a thread would
/// cost more than it saves.
const MIN_MESSAGES_TO_ENCODE_AHEAD: usize = 512;

/// Rows of a batch's sessions, by position in the batch.
pub(crate) enum EncodedRows {
    /// Encoded by the writer, as it inserts.
    Inline,
    /// Encoded by the helper: what it has sent so far, and the channel for the rest.
    Ahead {
        receive: Receiver<Vec<MessageRow>>,
        received: Vec<Vec<MessageRow>>,
    },
}

impl EncodedRows {
    /// The rows of session `i` of the batch, waiting for the helper if need be; `None` when
    /// the writer encodes them itself. A retried transaction asks again: rows are kept.
    pub(crate) fn of(&mut self, i: usize) -> Option<&[MessageRow]> {
        let EncodedRows::Ahead { receive, received } = self else {
            return None;
        };
        while received.len() <= i {
            received.push(receive.recv().ok()?);
        }
        received.get(i).map(Vec::as_slice)
    }
}

/// Runs `write` with the rows of `batch` encoded ahead on a helper thread (or inline for a
/// small batch). The helper stops as soon as `write` returns, whatever it returned.
pub(crate) fn with_rows_encoded_ahead<T>(
    batch: &[SessionBatch<'_>],
    write: impl FnOnce(&mut EncodedRows) -> T,
) -> T {
    let messages: usize = batch.iter().map(|b| b.messages.len()).sum();
    if messages < MIN_MESSAGES_TO_ENCODE_AHEAD {
        return write(&mut EncodedRows::Inline);
    }
    std::thread::scope(|scope| {
        let (send, receive) = channel();
        scope.spawn(move || {
            for b in batch {
                // The writer is gone (done, or failed): nothing more is needed.
                if send.send(codec::new_session_rows(b.messages)).is_err() {
                    return;
                }
            }
        });
        let mut rows = EncodedRows::Ahead {
            receive,
            received: Vec::new(),
        };
        write(&mut rows)
        // `rows` (the receiver) is dropped here, before the scope waits for the helper.
    })
}
