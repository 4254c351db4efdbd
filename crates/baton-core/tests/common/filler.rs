//! Ordinary conversation to follow what a test plants, so a summary of the span is smaller
//! than the span and a compaction installs it.

use baton_core::message::Message;

/// Appends `steps` routine user/assistant exchanges (a log check and its all-clear) to `m`.
pub fn push_routine_steps(m: &mut Vec<Message>, steps: usize) {
    for i in 0..steps {
        m.push(Message::user(format!(
            "step {i}: {}",
            "check the logs again ".repeat(8)
        )));
        m.push(Message::assistant(format!(
            "did step {i}: {}",
            "all healthy ".repeat(12)
        )));
    }
}
