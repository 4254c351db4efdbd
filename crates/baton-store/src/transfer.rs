//! Moving sessions between stores (`baton sessions copy`): a session with everything a copy
//! must carry ([`SessionExport`]), and its checksum, computed the same way on every backend so
//! a copy can be verified end to end.

use crate::session::Session;
use baton_core::Message;
use sha2::{Digest, Sha256};

/// One session as a copy carries it: the row (ids, lineage link, times, end, title, counters,
/// usage and cost), its messages exactly as stored, and each message's timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionExport {
    pub session: Session,
    pub messages: Vec<Message>,
    pub timestamps: Vec<f64>,
}

/// What importing one session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportOutcome {
    /// Written in one transaction.
    Imported,
    /// The target already holds the same session (same checksum): nothing written. This is
    /// what makes a copy resumable and idempotent.
    AlreadyPresent,
    /// Written with its parent link dropped: the parent is in neither the target nor (so far)
    /// the copy (a source with a dangling link).
    ImportedDetached,
}

impl ImportOutcome {
    /// What writing `session` did, given whether its parent link was kept.
    pub fn written(session: &Session, kept_parent: bool) -> ImportOutcome {
        if session.parent_session_id.is_some() && !kept_parent {
            ImportOutcome::ImportedDetached
        } else {
            ImportOutcome::Imported
        }
    }
}

/// A digest of everything a copy must preserve, identical across backends for identical
/// content: the session's fields and, in order, each message's JSON and timestamp bits.
pub fn checksum(export: &SessionExport) -> String {
    let s = &export.session;
    let mut h = Sha256::new();
    let mut field = |text: &str| {
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    };
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "\u{0}none".into());
    let num = |v: Option<f64>| v.map_or_else(|| "none".into(), |x| x.to_bits().to_string());
    for text in [
        s.id.clone(),
        s.source.clone(),
        opt(&s.user_id),
        opt(&s.model),
        opt(&s.system_prompt),
        opt(&s.parent_session_id),
        num(Some(s.started_at)),
        num(s.ended_at),
        opt(&s.end_reason),
        s.message_count.to_string(),
        s.tool_call_count.to_string(),
        s.input_tokens.to_string(),
        s.output_tokens.to_string(),
        s.cache_read_tokens.to_string(),
        s.cache_write_tokens.to_string(),
        s.reasoning_tokens.to_string(),
        num(s.estimated_cost_usd),
        opt(&s.title),
        s.api_call_count.to_string(),
    ] {
        field(&text);
    }
    for (m, ts) in export.messages.iter().zip(&export.timestamps) {
        field(&m.to_json());
        field(&ts.to_bits().to_string());
    }
    field(&export.messages.len().to_string());
    format!("{:x}", h.finalize())
}
