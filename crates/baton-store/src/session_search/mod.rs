//! `session_search`: the agent's recall of earlier sessions.
//!
//! Without a query it lists recent sessions, which costs no model call, so an agent can look
//! around freely. With a query it finds the sessions that mention it, reads each around its
//! matches and has a summarizer recap what that session did about the query, because raw search
//! snippets show *that* something was discussed but not what came of it.
//!
//! The summaries are the slow, fallible part, so they run a few at a time under one overall
//! time budget, and a session whose summary fails or runs out of time still comes back, with
//! the raw excerpt instead: a recall that silently drops a matching session is worse than one
//! that shows it unsummarized.

mod group;
mod lineage;
mod prompt;
mod recent;
mod summarize;
pub mod transcript;
pub mod window;

use crate::SessionStore;
use crate::error::Result;
use crate::search::SearchQuery;
use crate::session::format_utc_compact;
use baton_core::Message;
use baton_core::summary::Summarizer;
use baton_core::truncate::truncate_head_tail;
use serde::{Serialize, Serializer};
use std::fmt;
use std::time::Duration;

pub use window::{AnchorKind, Needles};

/// Sessions summarized when the caller does not say.
pub const DEFAULT_LIMIT: usize = 3;
/// Most sessions one call may summarize: each costs a model call.
pub const MAX_LIMIT: usize = 5;
pub const DEFAULT_MAX_CONCURRENCY: usize = 3;
/// Most summaries in flight at once, whatever the caller asks.
pub const MAX_CONCURRENCY: usize = 5;
/// One budget for all summarizer calls of a search; an agent turn should not hang on recall.
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(90);
/// Hits fetched before grouping, so a few chatty sessions cannot hide the others.
pub const SEARCH_OVERFETCH: usize = 50;
/// Largest excerpt of one session given to the summarizer.
pub const DEFAULT_WINDOW_CHARS: usize = 100_000;
/// Largest excerpt returned in place of a summary that could not be made.
pub const RAW_WINDOW_CHARS: usize = 2_000;
/// Target size of one session's summary.
pub const SUMMARY_BUDGET_TOKENS: usize = 2_000;
/// Longest first-user-message preview in recent mode.
pub const PREVIEW_CHARS: usize = 160;
/// Sources whose sessions are machinery, not conversations: never listed or searched.
pub const HIDDEN_SOURCES: &[&str] = &["tool"];
/// Longest text of a single message handed to the summarizer as a turn.
const TURN_TEXT_CHARS: usize = 4_000;

/// What the agent asked for. Out-of-range numbers are clamped, never rejected: a model that
/// asks for 10 sessions should get 5, not an error it has to recover from.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSearchRequest {
    /// Blank lists recent sessions instead of searching.
    pub query: String,
    /// Message roles to search (`user`, `assistant`, `tool`); empty searches all.
    pub roles: Vec<String>,
    /// Sessions returned, clamped to `1..=MAX_LIMIT`.
    pub limit: usize,
    /// The session the agent is in; its whole lineage is left out of the results.
    pub current_session_id: Option<String>,
    /// Summaries in flight at once, clamped to `1..=MAX_CONCURRENCY`.
    pub max_concurrency: usize,
    /// For all summarizer calls together.
    pub time_budget: Duration,
    /// Largest excerpt of one session given to the summarizer (in chars).
    pub window_chars: usize,
}

impl Default for SessionSearchRequest {
    fn default() -> Self {
        SessionSearchRequest {
            query: String::new(),
            roles: Vec::new(),
            limit: DEFAULT_LIMIT,
            current_session_id: None,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            time_budget: DEFAULT_TIME_BUDGET,
            window_chars: DEFAULT_WINDOW_CHARS,
        }
    }
}

impl SessionSearchRequest {
    pub fn new(query: impl Into<String>) -> Self {
        SessionSearchRequest {
            query: query.into(),
            ..Self::default()
        }
    }

    /// The limit actually used.
    pub fn effective_limit(&self) -> usize {
        self.limit.clamp(1, MAX_LIMIT)
    }

    /// The concurrency actually used.
    pub fn effective_concurrency(&self) -> usize {
        self.max_concurrency.clamp(1, MAX_CONCURRENCY)
    }
}

/// Roles from the tool's comma-separated `role_filter` argument (`"user, assistant"`), blanks
/// dropped.
pub fn parse_role_filter(filter: &str) -> Vec<String> {
    filter
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    Recent,
    Search,
}

/// What the tool returns to the model, as JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSearchResult {
    pub mode: SearchMode,
    pub query: String,
    pub results: Vec<SessionEntry>,
    pub count: usize,
    /// Said when there is nothing to show, or how to go further.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Some summary was cut off by the time budget.
    pub time_budget_exceeded: bool,
}

/// One session (a compression chain counts as one, shown as its newest session).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionEntry {
    pub session_id: String,
    /// The chain's first session, when `session_id` continues a compressed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lineage_root_id: Option<String>,
    pub title: Option<String>,
    pub source: String,
    /// Start of the conversation, `YYYY-MM-DD HH:MM UTC`.
    pub when: String,
    /// Unix seconds.
    pub started_at: f64,
    /// Messages stored across the whole chain (a compaction's carried-over tail counts in both
    /// sessions that hold it).
    pub message_count: i64,
    #[serde(flatten)]
    pub detail: EntryDetail,
}

/// What differs between a listed and a found session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EntryDetail {
    Recent {
        /// The start of the first user message, on one line.
        preview: Option<String>,
    },
    Match {
        /// Hits in this session among those fetched.
        match_count: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The excerpt around the matches, when there is no summary.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_window: Option<String>,
        summary_status: SummaryStatus,
    },
}

/// How a session's summary turned out. Serialized as `ok`, `empty`, `timeout` or
/// `failed: <reason>`, so the model can tell a summary from a fallback at a glance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryStatus {
    Ok,
    /// The summarizer returned only whitespace.
    Empty,
    /// The time budget ran out before this summary finished (or started).
    Timeout,
    Failed(String),
}

impl fmt::Display for SummaryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SummaryStatus::Ok => f.write_str("ok"),
            SummaryStatus::Empty => f.write_str("empty"),
            SummaryStatus::Timeout => f.write_str("timeout"),
            SummaryStatus::Failed(reason) => write!(f, "failed: {reason}"),
        }
    }
}

impl Serialize for SummaryStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Lists recent sessions (blank query) or finds and summarizes the sessions matching the
/// query. Store reads are short and synchronous; only the summarizer calls are awaited, under
/// `request.time_budget` (tokio's clock, so a runtime with time enabled must drive this).
pub async fn session_search(
    store: &dyn SessionStore,
    summarizer: &dyn Summarizer,
    request: &SessionSearchRequest,
) -> Result<SessionSearchResult> {
    let limit = request.effective_limit();
    let current = request.current_session_id.as_deref();
    let excluded = lineage::current_lineage(store, current)?;
    let query = request.query.trim();
    if query.is_empty() {
        return recent::list(store, &excluded, limit);
    }

    let mut search_query = SearchQuery::new(query);
    search_query.roles = request.roles.clone();
    search_query.exclude_session_ids = excluded.iter().cloned().collect();
    search_query.exclude_session_ids.sort();
    search_query.limit = SEARCH_OVERFETCH;
    let hits = store.search(&search_query)?;
    let groups = group::group_hits(store, &hits, &excluded, limit)?;
    if groups.is_empty() {
        return Ok(SessionSearchResult {
            mode: SearchMode::Search,
            query: query.to_string(),
            results: Vec::new(),
            count: 0,
            message: Some(format!("No earlier session matched {query:?}.")),
            time_budget_exceeded: false,
        });
    }

    let needles = Needles::from_query(query);
    let mut jobs = Vec::with_capacity(groups.len());
    for group in &groups {
        jobs.push(prepare(store, group, &needles, request.window_chars)?);
    }
    let prompts: Vec<String> = if summarizer.needs_prompt() {
        groups
            .iter()
            .zip(&jobs)
            .map(|(g, j)| prompt::render(query, g, &j.window.text))
            .collect()
    } else {
        vec![String::new(); jobs.len()]
    };
    let turns: Vec<Vec<&baton_core::Message>> =
        jobs.iter().map(|j| j.turns.iter().collect()).collect();
    let inputs: Vec<summarize::Job<'_>> = turns
        .iter()
        .zip(&prompts)
        .map(|(t, p)| summarize::Job {
            turns: t,
            prompt: p,
        })
        .collect();
    let outcomes = summarize::summarize_all(
        summarizer,
        &inputs,
        query,
        request.effective_concurrency(),
        request.time_budget,
    )
    .await;

    let time_budget_exceeded = outcomes
        .iter()
        .any(|o| matches!(o, Err(SummaryStatus::Timeout)));
    let results: Vec<SessionEntry> = groups
        .into_iter()
        .zip(jobs)
        .zip(outcomes)
        .map(|((group, job), outcome)| match_entry(group, job, &needles, outcome))
        .collect();
    Ok(SessionSearchResult {
        mode: SearchMode::Search,
        query: query.to_string(),
        count: results.len(),
        results,
        message: None,
        time_budget_exceeded,
    })
}

/// One found session, read and cut down for its summarizer.
struct Prepared {
    window: window::Window,
    turns: Vec<Message>,
}

/// Loads the whole chain (the match may be in any of its sessions), renders it and cuts the
/// window; the turns are the messages the window shows, each capped so a pasted log cannot
/// outweigh the rest.
fn prepare(
    store: &dyn SessionStore,
    group: &group::SessionGroup,
    needles: &Needles,
    window_chars: usize,
) -> Result<Prepared> {
    let mut messages = Vec::new();
    for id in &group.chain {
        messages.extend(store.messages(id)?);
    }
    let transcript = transcript::format(&messages);
    let window = window::cut(&transcript.text, needles, window_chars);
    let turns = transcript
        .messages_in(&window.range)
        .into_iter()
        .filter_map(|i| messages.get(i))
        .map(capped_turn)
        .collect();
    Ok(Prepared { window, turns })
}

fn capped_turn(message: &Message) -> Message {
    let mut turn = message.clone();
    let text = message.text();
    if text.chars().count() > TURN_TEXT_CHARS {
        let cut = truncate_head_tail(&text, TURN_TEXT_CHARS).text.into_owned();
        turn.content = Some(baton_core::Content::Text(cut));
    }
    turn
}

fn match_entry(
    group: group::SessionGroup,
    job: Prepared,
    needles: &Needles,
    outcome: std::result::Result<String, SummaryStatus>,
) -> SessionEntry {
    let (summary, raw_window, summary_status) = match outcome {
        Ok(text) => (Some(text), None, SummaryStatus::Ok),
        Err(status) => {
            let raw = window::cut(&job.window.text, needles, RAW_WINDOW_CHARS).text;
            (None, Some(raw), status)
        }
    };
    let match_count = group.match_count;
    SessionEntry::for_chain(
        group,
        EntryDetail::Match {
            match_count,
            summary,
            raw_window,
            summary_status,
        },
    )
}

impl SessionEntry {
    /// The entry of a compression chain: resumed by its tip's id, dated and sourced by its
    /// root, titled by the tip (the root's title when the tip has none).
    fn for_chain(group: group::SessionGroup, detail: EntryDetail) -> Self {
        let lineage_root_id = (group.root.id != group.tip.id).then(|| group.root.id.clone());
        SessionEntry {
            session_id: group.tip.id,
            lineage_root_id,
            title: group.tip.title.or(group.root.title),
            source: group.root.source,
            when: format_when(group.root.started_at),
            started_at: group.root.started_at,
            message_count: group.message_count,
            detail,
        }
    }
}

/// `YYYY-MM-DD HH:MM UTC`: readable by the model and unambiguous across time zones.
fn format_when(started_at: f64) -> String {
    let compact = format_utc_compact(started_at.max(0.0) as u64);
    let (date, time) = compact.split_at(8);
    let time = &time[1..];
    format!(
        "{}-{}-{} {}:{} UTC",
        &date[..4],
        &date[4..6],
        &date[6..8],
        &time[..2],
        &time[2..4]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_concurrency_are_clamped() {
        let mut r = SessionSearchRequest::new("x");
        for (asked, used) in [(0, 1), (1, 1), (3, 3), (5, 5), (99, 5)] {
            r.limit = asked;
            r.max_concurrency = asked;
            assert_eq!(r.effective_limit(), used);
            assert_eq!(r.effective_concurrency(), used);
        }
    }

    #[test]
    fn role_filter_is_split_and_trimmed() {
        assert_eq!(
            parse_role_filter(" user, ,assistant "),
            ["user", "assistant"]
        );
        assert!(parse_role_filter(" , ").is_empty());
    }

    #[test]
    fn when_is_a_utc_date_and_minute() {
        assert_eq!(format_when(1_778_855_400.0), "2026-05-15 14:30 UTC");
        assert_eq!(format_when(-5.0), "1970-01-01 00:00 UTC");
    }

    #[test]
    fn status_serializes_as_a_string() {
        let s = |st: SummaryStatus| serde_json::to_value(st).ok();
        assert_eq!(s(SummaryStatus::Ok), Some("ok".into()));
        assert_eq!(s(SummaryStatus::Timeout), Some("timeout".into()));
        assert_eq!(
            s(SummaryStatus::Failed("boom".into())),
            Some("failed: boom".into())
        );
    }
}
