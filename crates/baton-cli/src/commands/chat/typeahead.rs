//! Keys typed while Baton works (a turn, or a slash command) wait for the next prompt. While it
//! works the terminal stops echoing keys, so they do not land in the streaming answer, and stops
//! turning Enter into a line feed (`ICRNL`), so an Enter typed ahead reaches the line editor as
//! Enter and submits the line once the prompt is back; as a line feed it would read as Ctrl-J,
//! a new line inside the prompt. Ctrl-C still signals. The confirmation prompt releases the
//! hold for its own cooked-mode read, where the answer must be seen and Enter must end it.

use rustix::termios::{InputModes, LocalModes, OptionalActions, tcgetattr, tcsetattr};

/// Holds (or releases) typed keys on standard input's terminal; a stdin that is not a
/// terminal is left alone.
pub fn hold(held: bool) {
    let stdin = std::io::stdin();
    let Ok(mut modes) = tcgetattr(&stdin) else {
        return;
    };
    modes.local_modes.set(LocalModes::ECHO, !held);
    modes.input_modes.set(InputModes::ICRNL, !held);
    let _ = tcsetattr(&stdin, OptionalActions::Now, &modes);
}

/// Whether typed keys are held now (`false` when stdin is not a terminal).
pub fn is_held() -> bool {
    tcgetattr(std::io::stdin())
        .map(|m| !m.local_modes.contains(LocalModes::ECHO))
        .unwrap_or(false)
}
