//! Baton's session store on PostgreSQL: [`PgStore`] implements the same
//! [`baton_store::SessionStore`] trait as the embedded SQLite store, with the same search
//! semantics, for services that run many sessions on several hosts and teams that keep years
//! of transcripts.
//!
//! The trait is synchronous (the SQLite store is), while the driver is `tokio-postgres`: each
//! call runs on the store's own small runtime and the caller waits for it ([`bridge`]), so a
//! `PgStore` works from plain threads and from inside another async runtime alike.

mod archive;
mod bridge;
mod bulk;
mod continuation;
mod deferred_index;
mod error;
mod lineage;
mod listing;
mod maintenance;
mod messages;
mod schema;
pub mod search;
mod search_window;
mod stats;
mod store;
mod transfer;
pub mod tsvector;

pub use store::PgStore;

/// Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`).
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}
