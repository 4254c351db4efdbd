//! Baton's persistent memory: what an agent keeps across sessions.
//!
//! Two small Markdown files under `$BATON_HOME/memories/` hold it: `MEMORY.md` (the agent's
//! notes) and `USER.md` (the user profile). They are injected into the system prompt as a
//! snapshot frozen at session start, so a write mid-session never invalidates the provider's
//! prompt cache; tool results report the live entries instead.
//!
//! - [`MemoryStore`] reads and writes the files: character limits, unique-substring edits,
//!   cross-process locking and crash-safe writes, scanning of every write for injection and
//!   exfiltration payloads, and supersession (a corrected fact replaces the wrong one).
//! - [`MemoryProvider`] and [`MemoryManager`] let one external memory backend sit next to the
//!   built-in one; recall it prefetches is fenced ([`fence`]) so the model reads it as data.
//! - [`tool`] is the `memory` tool: its schema and its JSON handler.

pub mod atomic_write;
pub mod backup;
pub mod builtin;
pub mod entries;
pub mod error;
pub mod fence;
pub mod limits;
pub mod lock;
pub mod manager;
pub mod normalize;
pub mod outcome;
pub mod provider;
pub mod scan;
pub mod snapshot;
pub mod store;
pub mod supersede;
pub mod target;
pub mod tool;

pub use builtin::BuiltinProvider;
pub use error::MemoryError;
pub use limits::Limits;
pub use manager::{ManagerError, MemoryManager};
pub use outcome::{Applied, Refusal, RefusalKind, WriteOutcome};
pub use provider::{
    MemoryProvider, MemoryWrite, ProviderError, SessionContext, SessionSwitch, WriteAction,
};
pub use snapshot::Snapshot;
pub use store::MemoryStore;
pub use target::Target;
