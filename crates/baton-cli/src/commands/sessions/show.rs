//! `baton sessions show ID_OR_TITLE`.

use super::table::{count, fit, width};
use super::{resolve, store_err};
use crate::commands::Failure;
use baton_store::session::format_utc_minutes;
use baton_store::{SessionStore, SqliteStore};
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A session id, a title (a compressed conversation's title shows its newest session), or
    /// a unique id prefix.
    pub id: String,
}

pub fn run(store: &SqliteStore, json: bool, args: &ShowArgs) -> Result<(), Failure> {
    let id = resolve(store, &args.id)?;
    let session = store
        .get_session(&id)
        .map_err(store_err)?
        .ok_or_else(|| Failure::Other(format!("session {id} vanished while reading it")))?;
    let messages = store.messages(&id).map_err(store_err)?;
    if json {
        let value = json!({
            "session": session,
            "messages": messages.iter().map(|m| m.to_value()).collect::<Vec<_>>(),
        });
        outln!("{value:#}");
        return Ok(());
    }
    outln!("{}  {}", session.id, session.title.as_deref().unwrap_or(""));
    let ended = match (&session.ended_at, &session.end_reason) {
        (Some(t), reason) => format!(
            "ended {} ({})",
            format_utc_minutes(*t),
            reason.as_deref().unwrap_or("-")
        ),
        (None, _) => "not ended".to_string(),
    };
    outln!(
        "started {} UTC, {ended}",
        format_utc_minutes(session.started_at)
    );
    outln!(
        "source {}  model {}  messages {}  tokens in {} / out {} / cache read {} / cache write {} / reasoning {}",
        session.source,
        session.model.as_deref().unwrap_or("-"),
        count(session.message_count),
        count(session.input_tokens),
        count(session.output_tokens),
        count(session.cache_read_tokens),
        count(session.cache_write_tokens),
        count(session.reasoning_tokens),
    );
    let text_width = width().saturating_sub(12).max(20);
    for m in &messages {
        let calls: Vec<&str> = m.calls().iter().map(|c| c.function.name.as_str()).collect();
        let text = if calls.is_empty() {
            m.text()
        } else {
            format!("[calls {}] {}", calls.join(", "), m.text())
        };
        outln!("{:<11} {}", m.role.as_str(), fit(&text, text_width));
    }
    Ok(())
}
