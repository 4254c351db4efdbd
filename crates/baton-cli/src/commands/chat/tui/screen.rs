//! The terminal under `baton chat`: the bottom row is the status line, kept out of the
//! scrolling text with a scroll region (DECSTBM), and the terminal is put back as it was on
//! every way out — a normal exit, a panic, SIGTERM, SIGHUP or SIGQUIT. (SIGKILL cannot be
//! caught; `reset` or `stty sane` mends a terminal left behind by one.)
//!
//! Why a scroll region rather than a full-screen UI: the conversation stays in the terminal's
//! own scrollback, where a user can scroll, select and copy it, as in a shell; only one row is
//! ours. All writes go through the crate's output functions, one escape sequence per write, so
//! a redraw from the ticker never splits a sequence from the answer text.

use super::status::StatusLine;
use rustix::termios::{OptionalActions, Termios, tcgetattr, tcgetwinsize, tcsetattr};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The terminal modes `baton chat` started with, restored on the way out.
static ORIGINAL_MODES: OnceLock<Termios> = OnceLock::new();
/// Whether a scroll region is set, so restoring knows to undo it.
static REGION_SET: Mutex<Option<u16>> = Mutex::new(None);

/// Rows below which there is no room for a status line.
const MIN_ROWS_FOR_STATUS: u16 = 4;

/// The screen size and the last status text, shared by the main loop, the resize watcher and
/// the ticker.
#[derive(Debug)]
pub struct Screen {
    rows: u16,
    cols: u16,
    pub status: StatusLine,
}

pub type SharedScreen = Arc<Mutex<Screen>>;

pub fn lock(screen: &SharedScreen) -> MutexGuard<'_, Screen> {
    screen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Screen {
    /// Saves the terminal modes, installs the restore-on-panic hook and reserves the bottom
    /// row.
    pub fn enter(status: StatusLine) -> SharedScreen {
        if let Ok(modes) = tcgetattr(std::io::stdin()) {
            let _ = ORIGINAL_MODES.set(modes);
        }
        install_panic_hook();
        let (rows, cols) = size();
        let mut screen = Screen { rows, cols, status };
        if rows >= MIN_ROWS_FOR_STATUS {
            // A newline and back up: when the cursor sits on the last row, the text above
            // scrolls up one so the status line does not cover it.
            crate::output::out_bytes(b"\n\x1b[1A");
        }
        screen.set_region();
        Arc::new(Mutex::new(screen))
    }

    pub fn cols(&self) -> u16 {
        self.cols
    }

    pub fn has_status_line(&self) -> bool {
        self.rows >= MIN_ROWS_FOR_STATUS
    }

    /// Draws the status line on the bottom row, leaving the cursor where it was.
    pub fn redraw(&self) {
        if !self.has_status_line() {
            return;
        }
        let sequence = format!(
            "\x1b7\x1b[{};1H\x1b[2K{}\x1b8",
            self.rows,
            self.status.render(usize::from(self.cols))
        );
        crate::output::out_bytes(sequence.as_bytes());
    }

    /// The terminal was resized: move the region and the status line to the new bottom.
    /// Returns whether the size changed.
    pub fn resize(&mut self) -> bool {
        let (rows, cols) = size();
        if (rows, cols) == (self.rows, self.cols) {
            return false;
        }
        if self.has_status_line() && self.rows <= rows {
            // The old status row is now a text row: blank it.
            let clear = format!("\x1b7\x1b[{};1H\x1b[2K\x1b8", self.rows);
            crate::output::out_bytes(clear.as_bytes());
        }
        self.rows = rows;
        self.cols = cols;
        self.set_region();
        true
    }

    fn set_region(&mut self) {
        let bottom = self.rows.saturating_sub(1);
        let mut region = REGION_SET
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.has_status_line() {
            // Setting a region homes the cursor: save and restore around it.
            let sequence = format!("\x1b7\x1b[1;{bottom}r\x1b8");
            crate::output::out_bytes(sequence.as_bytes());
            *region = Some(self.rows);
        } else if region.take().is_some() {
            crate::output::out_bytes(b"\x1b7\x1b[r\x1b8");
        }
    }
}

/// Puts the terminal back: no scroll region, status row cleared, cursor shown, bracketed
/// paste off, the original modes. Safe to call more than once and from any thread.
pub fn restore_terminal() {
    let region = REGION_SET
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(rows) = region {
        let sequence = format!("\x1b7\x1b[r\x1b[{rows};1H\x1b[2K\x1b8");
        crate::output::out_bytes(sequence.as_bytes());
    }
    crate::output::out_bytes(b"\x1b[0m\x1b[?25h\x1b[?2004l");
    if let Some(modes) = ORIGINAL_MODES.get() {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, modes);
    }
}

/// Restores the terminal before the default hook prints the panic, so the message is
/// readable and the shell usable afterwards.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// Rows and columns of the terminal (24×80 when it cannot be read).
fn size() -> (u16, u16) {
    match tcgetwinsize(std::io::stdout()) {
        Ok(w) if w.ws_row > 0 && w.ws_col > 0 => (w.ws_row, w.ws_col),
        _ => (24, 80),
    }
}

/// Restores the terminal and exits when the process is asked to stop (SIGTERM, SIGHUP,
/// SIGQUIT). The session needs nothing more: every message is stored as it happens.
pub fn exit_on_termination_signals() {
    use tokio::signal::unix::{SignalKind, signal};
    for (kind, number) in [
        (SignalKind::terminate(), 15),
        (SignalKind::hangup(), 1),
        (SignalKind::quit(), 3),
    ] {
        let Ok(mut stream) = signal(kind) else {
            continue;
        };
        tokio::spawn(async move {
            if stream.recv().await.is_some() {
                restore_terminal();
                crate::output::flush();
                std::process::exit(128 + number);
            }
        });
    }
}

/// Redraws the status line whenever the terminal is resized.
pub fn follow_resizes(screen: SharedScreen) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut stream) = signal(SignalKind::window_change()) else {
        return;
    };
    tokio::spawn(async move {
        while stream.recv().await.is_some() {
            let mut s = lock(&screen);
            s.resize();
            s.redraw();
        }
    });
}
