//! `baton sessions show ID_OR_TITLE`.

use super::table::{count, fit, width};
use super::{resolve, store_err};
use crate::commands::Failure;
use baton_core::terminal_text::escape_controls;
use baton_store::SessionStore;
use baton_store::session::format_utc_minutes;
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A session id, a title (a compressed conversation's title shows its newest session), or
    /// a unique id prefix.
    pub id: String,
    /// Print stored text exactly as stored, terminal control sequences included. Without it,
    /// control characters (escape sequences, BEL, …) are shown escaped, e.g. `\x1b`.
    #[arg(long)]
    pub raw: bool,
}

pub fn run(store: &dyn SessionStore, json: bool, args: &ShowArgs) -> Result<(), Failure> {
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
    // Stored text may carry escape sequences a terminal would obey; show them, don't run them.
    let safe = |t: &str| -> String {
        if args.raw {
            t.to_string()
        } else {
            escape_controls(t).into_owned()
        }
    };
    outln!(
        "{}  {}",
        safe(&session.id),
        safe(session.title.as_deref().unwrap_or(""))
    );
    let ended = match (&session.ended_at, &session.end_reason) {
        (Some(t), reason) => format!(
            "ended {} ({})",
            format_utc_minutes(*t),
            safe(reason.as_deref().unwrap_or("-"))
        ),
        (None, _) => "not ended".to_string(),
    };
    outln!(
        "started {} UTC, {ended}",
        format_utc_minutes(session.started_at)
    );
    outln!(
        "source {}  model {}  messages {}  tokens in {} / out {} / cache read {} / cache write {} / reasoning {}",
        safe(&session.source),
        safe(session.model.as_deref().unwrap_or("-")),
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
        let text = safe(&if calls.is_empty() {
            m.text()
        } else {
            format!("[calls {}] {}", calls.join(", "), m.text())
        });
        outln!("{:<11} {}", m.role.as_str(), fit(&text, text_width));
    }
    Ok(())
}
