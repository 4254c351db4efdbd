//! The prompt a model-backed summarizer gets for one recalled session.
//!
//! The recap is for an agent that is about to act on it, so the prompt asks for outcomes and
//! reusable specifics (paths, commands, errors) about the query rather than a general summary,
//! and for an explicit "not shown" rather than a plausible guess.

use super::format_when;
use super::group::SessionGroup;

const TEMPLATE: &str = include_str!("../../templates/session_search_summary.md");
const TRANSCRIPT_SLOT: &str = "{transcript}";

/// Fills the template. The transcript goes in last and is never scanned for placeholders, so a
/// transcript that happens to contain `{query}` comes through unchanged.
pub fn render(query: &str, group: &SessionGroup, transcript: &str) -> String {
    let (head, tail) = TEMPLATE
        .split_once(TRANSCRIPT_SLOT)
        .unwrap_or((TEMPLATE, ""));
    let fill = |part: &str| {
        part.replace("{query}", query)
            .replace("{session_id}", &group.tip.id)
            .replace("{source}", &group.root.source)
            .replace("{when}", &format_when(group.root.started_at))
            .replace("{match_count}", &group.match_count.to_string())
    };
    let mut out = fill(head);
    out.push_str(transcript);
    out.push_str(&fill(tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    fn session(id: &str) -> Session {
        Session {
            id: id.into(),
            source: "cli".into(),
            user_id: None,
            model: None,
            system_prompt: None,
            parent_session_id: None,
            started_at: 1_778_855_400.0,
            ended_at: None,
            end_reason: None,
            message_count: 2,
            tool_call_count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
            estimated_cost_usd: None,
            title: None,
            api_call_count: 0,
        }
    }

    #[test]
    fn fills_every_slot_and_leaves_the_transcript_alone() {
        let group = SessionGroup {
            root: session("root"),
            tip: session("tip"),
            chain: vec!["root".into(), "tip".into()],
            match_count: 4,
            message_count: 2,
        };
        let transcript = "[USER]: what does {query} mean in {source}?";
        let prompt = render("nginx timeout", &group, transcript);
        assert!(prompt.contains(transcript));
        assert!(prompt.contains(
            "Session tip (source: cli, started 2026-05-15 14:30 UTC, 4 matching messages)"
        ));
        assert!(prompt.ends_with("Now write the recap about: nginx timeout\n"));
        let outside = prompt.replace(transcript, "");
        assert!(!outside.contains('{'), "unfilled slot in {outside}");
    }
}
