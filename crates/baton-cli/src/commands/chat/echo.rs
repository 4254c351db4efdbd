//! The terminal's echo of typed keys. The interactive terminal turns it off while a turn runs,
//! so keys typed ahead wait unseen for the next prompt instead of landing in the streaming
//! answer (Ctrl-C still signals); the confirmation prompt turns it on for its own read.

use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};

/// Sets ECHO on standard input's terminal; a stdin that is not a terminal is left alone.
pub fn set(on: bool) {
    let stdin = std::io::stdin();
    let Ok(mut modes) = tcgetattr(&stdin) else {
        return;
    };
    modes.local_modes.set(LocalModes::ECHO, on);
    let _ = tcsetattr(&stdin, OptionalActions::Now, &modes);
}

/// Whether typed keys are echoed now (`true` when stdin is not a terminal).
pub fn is_on() -> bool {
    tcgetattr(std::io::stdin())
        .map(|m| m.local_modes.contains(LocalModes::ECHO))
        .unwrap_or(true)
}
