//! The interactive `baton chat` driven in a pseudo-terminal against the loopback scripted
//! model: typing, streaming, the status line, every slash command, interrupts, resizes and
//! the terminal being restored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod context;
mod harness;
mod info;
mod session;
mod terminal;
