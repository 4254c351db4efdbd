//! The cost policy with scripted usage: a warm cache defers compaction, a large cold prefix
//! compacts before the threshold, and every compaction's economics are stored from real usage.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_agent::AgentEvent;
use baton_agent::economics::{CompactionEconomics, CompactionPolicy, Decision};
use baton_scripted::{Api, Reply, ScriptedServer, Usage};
use baton_store::SessionStore;
use common::{Harness, turn};
use serde_json::json;

/// Turns of real content (so there is something to compact), billed as `usage` says.
fn replies(turns: usize, usage: Usage) -> Vec<Reply> {
    let mut out = Vec::new();
    for i in 0..turns {
        out.push(
            Reply::tool_call("fetch", json!({"n": 40_000, "tag": format!("part-{i}")}))
                .with_usage(usage),
        );
        out.push(Reply::text(format!("part {i} read")).with_usage(usage));
    }
    out
}

async fn run(usage: Usage) -> (Harness, Vec<AgentEvent>, baton_agent::Agent, ScriptedServer) {
    let h = Harness::new();
    let mut script = replies(4, usage);
    script.extend(replies(
        3,
        Usage {
            prompt: 40_000,
            cached: 36_000,
            cache_write: 0,
            completion: 50,
        },
    ));
    let server = common::serve(script).await;
    let mut config = h.config("claude-sonnet-4-5", 200_000);
    config.policy = CompactionPolicy::Cost;
    // An LLM summarizer, priced like the session model.
    config.summarizer_priced = true;
    let mut agent = h.builder(&server, Api::Messages, config).start().unwrap();
    let mut events = Vec::new();
    for i in 0..4 {
        let (_, e) = turn(&mut agent, &format!("read part {i}")).await;
        events.extend(e);
    }
    (h, events, agent, server)
}

fn cost_compactions(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Compaction { trigger, .. } if trigger == "cost"))
        .count()
}

#[tokio::test]
async fn a_warm_cache_defers_compaction_below_the_threshold() {
    // 120K of 150K threshold, 97% read from the cache.
    let warm = Usage {
        prompt: 120_000,
        cached: 116_000,
        cache_write: 2_000,
        completion: 100,
    };
    let (_h, events, agent, _server) = run(warm).await;
    assert_eq!(cost_compactions(&events), 0, "{events:#?}");
    assert!(agent.economics().is_empty());
}

#[tokio::test]
async fn a_large_cold_prefix_is_compacted_early_and_its_economics_recorded() {
    // 140K of 150K threshold, nothing cached.
    let cold = Usage {
        prompt: 140_000,
        cached: 0,
        cache_write: 0,
        completion: 100,
    };
    let (h, mut events, mut agent, _server) = run(cold).await;
    assert!(cost_compactions(&events) >= 1, "{events:#?}");
    let record = agent.economics()[0].clone();
    assert_eq!(record.trigger, "cost");
    assert!(
        matches!(record.decision, Some(Decision::Compact { .. })),
        "{record:?}"
    );
    assert!(!record.before.is_empty());
    assert!(
        record
            .before
            .iter()
            .all(|c| c.prompt_tokens == 140_000 && c.cost_usd.is_some())
    );
    // The calls after the compaction are recorded as they were billed.
    for i in 4..7 {
        let (_, e) = turn(&mut agent, &format!("read part {i}")).await;
        events.extend(e);
    }
    let record = agent.economics()[0].clone();
    let at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Compaction { .. }))
        .unwrap();
    let billed: Vec<u64> = events[at..]
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(usage.prompt()),
            _ => None,
        })
        .take(baton_agent::economics::record::CALLS_AFTER)
        .collect();
    let recorded: Vec<u64> = record.after.iter().map(|c| c.prompt_tokens).collect();
    assert_eq!(recorded, billed, "{record:?}");
    assert!(recorded.contains(&40_000));
    let stored = h
        .store
        .get_meta(&format!("economics:{}", record.to_session))
        .unwrap()
        .unwrap();
    let stored: CompactionEconomics = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored, record);
    let shown = record.render();
    assert!(
        shown.contains("before: 140000 prompt tokens (0 cached)"),
        "{shown}"
    );
    assert!(shown.contains("decided: compacting now"), "{shown}");
}
