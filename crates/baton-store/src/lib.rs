//! Baton's session store: sessions, their messages, token usage, titles and compression lineage,
//! persisted in SQLite with a schema compatible with the reference SessionDB.
//!
//! [`SessionStore`] is the interface the agent uses; [`SqliteStore`] is the embedded default.
//! Messages are stored with every field they arrived with, so reading a session gives back
//! exactly the [`baton_core::Message`] values that were appended.

pub mod archive;
pub mod batch;
mod checkpointer;
pub mod cjk_index;
pub mod codec;
pub mod continuation;
pub mod deferred_index;
mod encode_ahead;
pub mod error;
pub mod export;
mod immutable;
mod integrity;
pub mod lineage;
pub mod open;
pub mod preview;
pub mod prune;
pub mod query;
pub mod resolve;
pub mod retitle;
pub mod retry;
mod rng;
mod row_insert;
pub mod schema;
pub mod search;
pub mod search_core;
pub mod session;
pub mod session_search;
pub mod snippet;
pub mod sqlite;
pub mod stats;
pub mod stats_cost;
pub mod title;
pub mod transfer;

pub use batch::SessionBatch;
pub use error::{Result, StoreError};
pub use export::{ExportScope, export_jsonl};
pub use open::{JournalMode, OpenOptions};
pub use retry::with_write_tx;
pub use schema::SCHEMA_VERSION;
pub use search::{MAX_QUERY_CHARS, SearchError, SearchHit, SearchQuery, search};
pub use session::{ListedSession, NewSession, Session, SessionFilter, end_reason, new_session_id};
pub use session_search::{
    EntryDetail, SearchMode, SessionEntry, SessionSearchRequest, SessionSearchResult,
    SummaryStatus, session_search,
};
pub use sqlite::SqliteStore;
pub use stats::{
    DayStats, ModelStats, Overview, SourceStats, StatsQuery, ToolCount, UsageStats, usage_stats,
    usage_stats_priced,
};
pub use title::{MAX_TITLE_LENGTH, clean_title};

use baton_core::Message;
use baton_core::usage::CanonicalUsage;
use std::time::Duration;

/// Persistence of sessions and their transcripts.
pub trait SessionStore: Send + Sync {
    /// Creates a session and returns its id. An existing id is left as it was (first write
    /// wins), so retrying a create is harmless.
    fn create_session(&self, new: NewSession) -> Result<String>;

    /// Ends a session. The first end reason wins: returns `false` when it had already ended.
    fn end_session(&self, id: &str, reason: &str) -> Result<bool>;

    fn get_session(&self, id: &str) -> Result<Option<Session>>;

    /// Newest first. Unless `include_children`, compression children and subagents are hidden
    /// and each compression chain appears once, as its tip with the root's start time.
    fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<ListedSession>>;

    /// Appends messages in one transaction and updates the message and tool-call counters.
    fn append_messages(&self, session_id: &str, messages: &[Message]) -> Result<()>;

    /// Every message of the session, in append order.
    fn messages(&self, session_id: &str) -> Result<Vec<Message>>;

    /// Adds one API call's token usage (and its estimated cost, if known) to the session.
    fn add_usage(
        &self,
        session_id: &str,
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()>;

    /// Appends a model's answer together with the usage of the call that produced it, in one
    /// transaction: a crash never stores an answer without its cost or a cost without its
    /// answer, and a turn pays one commit.
    fn append_answer(
        &self,
        session_id: &str,
        messages: &[Message],
        usage: &CanonicalUsage,
        cost_usd: Option<f64>,
    ) -> Result<()>;

    /// Cleans and sets the title; an empty title clears it. Returns the stored title.
    fn set_title(&self, session_id: &str, title: &str) -> Result<Option<String>>;

    /// The title a continuation of `title` should get ("Refactor auth" -> "Refactor auth #2").
    fn next_title_in_lineage(&self, title: &str) -> Result<String>;

    /// The newest session of the compression chain that starts at `id` (`id` itself when it
    /// was not compressed, or does not exist).
    fn compression_tip(&self, id: &str) -> Result<String>;

    /// The ids of the compression chain containing `id`, root first.
    fn compression_chain(&self, id: &str) -> Result<Vec<String>>;

    /// The session `id_or_title` names: an exact id; else a title (cleaned), exact or numbered
    /// along a compression lineage ("Refactor auth" finds "Refactor auth #3"), resolved to the
    /// tip of its chain; else a unique id prefix. `Ok(None)` when nothing matches;
    /// [`StoreError::Ambiguous`] naming the candidates when several sessions or chains do.
    fn resolve_session(&self, id_or_title: &str) -> Result<Option<String>>;

    /// Deletes a session and its messages; its children are kept and detached. `false` when
    /// there was no such session.
    fn delete_session(&self, id: &str) -> Result<bool>;

    /// Deletes ended sessions older than `older_than`, a compression chain only when all of it
    /// qualifies. Returns the ids deleted, oldest first.
    fn prune_sessions(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>>;

    /// The ids `prune_sessions(older_than, source)` would delete now, oldest first. Read-only.
    fn prune_candidates(&self, older_than: Duration, source: Option<&str>) -> Result<Vec<String>>;

    /// Deletes every session of the compression chain containing `id` in one transaction
    /// (children outside the chain are detached). Returns the ids deleted, root first; empty
    /// when there was no such session.
    fn delete_chain(&self, id: &str) -> Result<Vec<String>>;

    /// Titles the compression chain containing `id`: its root `raw` (cleaned), each
    /// continuation numbered after it; a blank `raw` clears them. All or nothing; a title
    /// whose lineage another session holds is [`StoreError::TitleInUse`]. Returns each
    /// session of the chain, root first, with its new title.
    fn retitle_chain(&self, id: &str, raw: &str) -> Result<Vec<(String, Option<String>)>>;

    /// Creates and fills every session of `batch` whose id is not stored yet, in one
    /// transaction; a session already there is left untouched. Returns, in batch order, each
    /// session's id and whether this call stored it. The check is made inside the write
    /// transaction, so concurrent imports of the same file store each conversation once.
    fn write_new_sessions(&self, batch: &[SessionBatch<'_>]) -> Result<Vec<(String, bool)>>;

    /// [`SessionStore::write_new_sessions`] for a bulk import: a backend that can writes the
    /// rows now and brings its search indexes up to date in [`SessionStore::catch_up_index`];
    /// searches find the waiting rows meanwhile. Others index inline, as the plain call does.
    fn write_new_sessions_deferred(
        &self,
        batch: &[SessionBatch<'_>],
    ) -> Result<Vec<(String, bool)>> {
        self.write_new_sessions(batch)
    }

    /// How many messages the search indexes have not seen yet (0 on backends that always
    /// index inline).
    fn index_backlog(&self) -> Result<usize> {
        Ok(0)
    }

    /// Indexes up to `limit` of the oldest waiting messages in one transaction; returns how
    /// many (0: up to date).
    fn catch_up_index(&self, _limit: usize) -> Result<usize> {
        Ok(0)
    }

    fn get_meta(&self, key: &str) -> Result<Option<String>>;
    fn set_meta(&self, key: &str, value: &str) -> Result<()>;

    /// Ends `parent_id` with reason `compression` and starts its continuation holding
    /// `messages`, in one transaction; the child inherits what `settings` does not set, and
    /// the parent's title numbered along the lineage. A parent already continued is refused
    /// ([`StoreError::AlreadyContinued`]). Returns the child's id.
    fn start_continuation_with(
        &self,
        parent_id: &str,
        messages: &[Message],
        settings: &continuation::ChildSettings,
    ) -> Result<String>;

    /// Messages `start..end` of a session by position (append order from 0; `end` clamped).
    fn messages_range(&self, session_id: &str, start: usize, end: usize) -> Result<Vec<Message>>;

    /// How many messages a session has ([`StoreError::NotFound`] when there is no such
    /// session).
    fn message_count(&self, session_id: &str) -> Result<usize>;

    /// The session and position (from 0, in append order) of the stored message `message_id`,
    /// a search hit's id.
    fn message_position(&self, message_id: i64) -> Result<(String, usize)>;

    /// The ids of the sessions whose parent is `parent_id` (continuations, branches,
    /// subagents), oldest first.
    fn child_sessions(&self, parent_id: &str) -> Result<Vec<String>>;

    /// Every session id, oldest first (so a parent comes before its children).
    fn session_ids(&self) -> Result<Vec<String>>;

    /// A session with everything a copy carries; `None` when there is no such session.
    fn export_session(&self, id: &str) -> Result<Option<transfer::SessionExport>>;

    /// Writes an exported session (row, messages, timestamps) in one transaction. A session
    /// already there with the same checksum is left alone; a different one with the same id
    /// is [`StoreError::CopyConflict`].
    fn import_session(&self, export: &transfer::SessionExport) -> Result<transfer::ImportOutcome>;

    /// Usage statistics over `query`'s window ([`stats`] documents them), pricing sessions
    /// without a stored cost by `prices`. Read-only.
    fn stats(
        &self,
        query: &StatsQuery,
        prices: &baton_core::pricing::PriceTable,
    ) -> Result<UsageStats>;

    /// Full-text search over stored messages, with the same semantics on every backend
    /// ([`search`] documents them). Failures are [`StoreError::Search`].
    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>>;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod search_tests;
