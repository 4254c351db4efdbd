//! Usage statistics computed from sessions, usage and messages inserted with known values.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use baton_core::usage::CanonicalUsage;
use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionStore, SqliteStore, StatsQuery, UsageStats};
use common::{set_times, temp_db};
use std::path::Path;

/// 2026-05-15 14:30:00 UTC.
const NOW: f64 = 1_778_855_400.0;
/// 2026-05-15 00:00:00 UTC.
const MIDNIGHT: f64 = 1_778_803_200.0;
const DAY: f64 = 86_400.0;

fn create(store: &SqliteStore, id: &str, source: &str, model: &str) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            model: Some(model.into()),
            ..NewSession::new(source)
        })
        .unwrap();
}

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> CanonicalUsage {
    CanonicalUsage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: 0,
    }
}

fn named_tool_result(call_id: &str, name: &str) -> Message {
    let mut m = Message::tool(call_id, "ok");
    m.name = Some(name.into());
    m
}

/// a: cli, openai/gpt-4o, one second before midnight, 1 h, calls Bash + Read with results.
/// b: cli, gpt-4o, one second after midnight, 30 min, no stored cost (priced from its tokens:
///    100 input + 10 output at gpt-4o's $2.50 / $10 per million = $0.00035).
/// c: api_server, anthropic/claude-sonnet-4, 3 days ago, still running, actual cost 2.0
///    (estimate 1.25), one Bash call without a result row and two Grep results without calls.
/// old: 40 days ago, outside a 30-day window.
fn build(path: &Path) -> SqliteStore {
    let store = SqliteStore::open(path).unwrap();
    create(&store, "a", "cli", "openai/gpt-4o");
    store
        .add_usage(
            "a",
            &CanonicalUsage {
                reasoning: 20,
                ..usage(1000, 200, 300, 50)
            },
            Some(0.5),
        )
        .unwrap();
    store
        .append_messages(
            "a",
            &[
                Message::user("look"),
                Message::assistant_tool_calls(vec![
                    ToolCall::function("c1", "Bash", "{}"),
                    ToolCall::function("c2", "Read", "{}"),
                ]),
                Message::tool("c1", "out"),
                Message::tool("c2", "out"),
                Message::assistant("done"),
            ],
        )
        .unwrap();
    set_times(
        path,
        "a",
        MIDNIGHT - 1.0,
        Some(MIDNIGHT - 1.0 + 3600.0),
        Some("cli_close"),
    );

    create(&store, "b", "cli", "gpt-4o");
    store.add_usage("b", &usage(100, 10, 0, 0), None).unwrap();
    store
        .append_messages("b", &[Message::user("hi"), Message::assistant("hello")])
        .unwrap();
    set_times(
        path,
        "b",
        MIDNIGHT + 1.0,
        Some(MIDNIGHT + 1.0 + 1800.0),
        Some("cli_close"),
    );

    create(&store, "c", "api_server", "anthropic/claude-sonnet-4");
    store
        .add_usage("c", &usage(5000, 500, 0, 0), Some(1.25))
        .unwrap();
    store
        .append_messages(
            "c",
            &[
                Message::assistant_tool_calls(vec![ToolCall::function("c3", "Bash", "{}")]),
                named_tool_result("g1", "Grep"),
                named_tool_result("g2", "Grep"),
            ],
        )
        .unwrap();
    set_times(path, "c", NOW - 3.0 * DAY, None, None);
    rusqlite::Connection::open(path)
        .unwrap()
        .execute(
            "UPDATE sessions SET actual_cost_usd = 2.0 WHERE id = 'c'",
            [],
        )
        .unwrap();

    create(&store, "old", "cli", "gpt-4o");
    store
        .add_usage("old", &usage(1_000_000, 1_000_000, 0, 0), Some(100.0))
        .unwrap();
    store
        .append_messages(
            "old",
            &[Message::assistant_tool_calls(vec![ToolCall::function(
                "c4", "Bash", "{}",
            )])],
        )
        .unwrap();
    set_times(
        path,
        "old",
        NOW - 40.0 * DAY,
        Some(NOW - 40.0 * DAY + 10.0),
        Some("done"),
    );
    store
}

fn stats(store: &SqliteStore, source: Option<&str>) -> UsageStats {
    store
        .stats(&StatsQuery {
            days: 30,
            source: source.map(String::from),
            now: NOW,
        })
        .unwrap()
}

#[test]
fn overview_sums_the_sessions_of_the_window() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let o = stats(&store, None).overview;
    assert_eq!(o.sessions, 3);
    assert_eq!(o.messages, 5 + 2 + 3);
    assert_eq!(o.tool_calls, 3);
    assert_eq!(o.input_tokens, 6100);
    assert_eq!(o.output_tokens, 710);
    assert_eq!(o.cache_read_tokens, 300);
    assert_eq!(o.cache_write_tokens, 50);
    assert_eq!(o.reasoning_tokens, 20);
    assert_eq!(o.total_tokens, 6100 + 710 + 300 + 50);
    // a's estimate plus c's actual cost (which wins over its estimate) plus b's tokens priced.
    let cost = o.cost_usd.unwrap();
    assert!((cost - 2.50035).abs() < 1e-9, "{cost}");
    assert_eq!(o.sessions_unknown_cost, 0);
    assert_eq!(o.cost_unknown_reason, None);
    // Only ended sessions count: a (1 h) and b (30 min).
    assert!((o.total_hours - 1.5).abs() < 1e-6, "{}", o.total_hours);
    assert!((o.avg_duration_secs.unwrap() - 2700.0).abs() < 1e-6);
    assert_eq!(
        (o.user_messages, o.assistant_messages, o.tool_messages),
        (2, 4, 4)
    );
    assert_eq!(o.first_started_at, Some(NOW - 3.0 * DAY));
    assert_eq!(o.last_started_at, Some(MIDNIGHT + 1.0));
}

#[test]
fn models_are_merged_without_their_provider_prefix_and_sorted_by_tokens() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let s = stats(&store, None);
    let models: Vec<(&str, u64, u64, u64)> = s
        .by_model
        .iter()
        .map(|m| (m.model.as_str(), m.sessions, m.total_tokens, m.tool_calls))
        .collect();
    assert_eq!(
        models,
        [("claude-sonnet-4", 1, 5500, 1), ("gpt-4o", 2, 1660, 2)]
    );
    assert!((s.by_model[0].cost_usd.unwrap() - 2.0).abs() < 1e-9);
    assert!((s.by_model[1].cost_usd.unwrap() - 0.50035).abs() < 1e-9);
    assert_eq!(s.by_model[1].sessions_unknown_cost, 0);

    let sources: Vec<(&str, u64, u64, u64)> = s
        .by_source
        .iter()
        .map(|x| (x.source.as_str(), x.sessions, x.messages, x.total_tokens))
        .collect();
    assert_eq!(sources, [("cli", 2, 7, 1660), ("api_server", 1, 3, 5500)]);
}

#[test]
fn days_are_utc_dates_split_at_midnight_with_quiet_days_as_zeros() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let days = stats(&store, None).by_day;
    // 2026-04-15 (window start) through 2026-05-15, every day present.
    assert_eq!(days.len(), 31);
    assert_eq!(days.first().unwrap().date, "2026-04-15");
    assert_eq!(days.last().unwrap().date, "2026-05-15");
    let day = |d: &str| days.iter().find(|x| x.date == d).unwrap();
    // a started one second before midnight, b one second after: different days.
    assert_eq!(
        (day("2026-05-14").sessions, day("2026-05-14").total_tokens),
        (1, 1550)
    );
    assert_eq!(
        (day("2026-05-15").sessions, day("2026-05-15").total_tokens),
        (1, 110)
    );
    assert_eq!(
        (day("2026-05-12").sessions, day("2026-05-12").total_tokens),
        (1, 5500)
    );
    assert_eq!(day("2026-05-12").messages, 3);
    assert_eq!(day("2026-05-13").sessions, 0);
    assert_eq!(day("2026-05-13").total_tokens, 0);
    assert_eq!(days.iter().map(|d| d.sessions).sum::<u64>(), 3);
}

#[test]
fn tools_count_the_larger_of_results_and_calls_per_tool() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let tools: Vec<(String, u64)> = stats(&store, None)
        .top_tools
        .into_iter()
        .map(|t| (t.tool, t.count))
        .collect();
    // Bash: 1 result row, 2 calls -> 2 (not 3). Grep: 2 results, no calls -> 2. Read: 1 and 1.
    // The old session's Bash call is outside the window.
    assert_eq!(
        tools,
        [("Bash".into(), 2), ("Grep".into(), 2), ("Read".into(), 1)]
    );
    let bash = &stats(&store, None).top_tools[0];
    assert!((bash.percent - 40.0).abs() < 1e-9);
}

#[test]
fn a_source_filter_applies_to_every_section() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let s = stats(&store, Some("api_server"));
    assert_eq!(s.overview.sessions, 1);
    assert_eq!(s.overview.total_tokens, 5500);
    assert_eq!(s.overview.avg_duration_secs, None);
    assert_eq!(s.by_model.len(), 1);
    assert_eq!(s.by_source.len(), 1);
    assert_eq!(s.by_day.iter().map(|d| d.sessions).sum::<u64>(), 1);
    let tools: Vec<(String, u64)> = s.top_tools.into_iter().map(|t| (t.tool, t.count)).collect();
    assert_eq!(tools, [("Grep".into(), 2), ("Bash".into(), 1)]);
    assert!(s.db_size_bytes > 0);
}

#[test]
fn a_wider_window_includes_older_sessions_and_an_empty_one_is_all_zeros() {
    let (_dir, path) = temp_db();
    let store = build(&path);
    let wide = store
        .stats(&StatsQuery {
            days: 60,
            source: None,
            now: NOW,
        })
        .unwrap();
    assert_eq!(wide.overview.sessions, 4);
    assert_eq!(wide.overview.input_tokens, 1_006_100);
    assert_eq!(wide.by_day.len(), 61);

    // Past a year, the daily series starts at the first session instead of the window start.
    let long = store
        .stats(&StatsQuery {
            days: 400,
            source: None,
            now: NOW,
        })
        .unwrap();
    assert_eq!(long.by_day.first().unwrap().date, "2026-04-05");
    assert_eq!(long.by_day.len(), 41);

    let empty = store
        .stats(&StatsQuery {
            days: 30,
            source: Some("cron".into()),
            now: NOW,
        })
        .unwrap();
    assert_eq!(empty.overview.sessions, 0);
    assert_eq!(empty.overview.total_tokens, 0);
    assert_eq!(empty.overview.first_started_at, None);
    assert!(empty.by_model.is_empty() && empty.top_tools.is_empty());
    assert!(empty.by_day.iter().all(|d| d.sessions == 0));
    let json = serde_json::to_value(&empty).unwrap();
    assert_eq!(json["overview"]["sessions"], 0);
}

#[test]
fn stats_read_a_read_only_store() {
    let (_dir, path) = temp_db();
    drop(build(&path));
    let ro = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(stats(&ro, None).overview.sessions, 3);
}

/// Sessions without a stored cost: priced from their tokens when the model has a price, and
/// otherwise unknown with the reason, never a zero.
#[test]
fn sessions_without_a_stored_cost_are_priced_or_unknown_with_the_reason() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path).unwrap();
    // Priced: a dated, prefixed name resolves to claude-sonnet-4-5 ($3 per million input).
    create(
        &store,
        "priced",
        "cli",
        "anthropic/claude-sonnet-4-5-20250929",
    );
    store
        .add_usage("priced", &usage(1_000_000, 0, 0, 0), None)
        .unwrap();
    // A model the price list does not know.
    create(&store, "new-model", "cli", "claude-opus-4-6");
    store
        .add_usage("new-model", &usage(500, 50, 0, 0), None)
        .unwrap();
    // The reference's placeholder: estimate 0 with cost_status 'unknown'.
    create(&store, "placeholder", "gateway", "mystery-model");
    store
        .add_usage("placeholder", &usage(10, 10, 0, 0), Some(0.0))
        .unwrap();
    // No usage recorded at all.
    create(&store, "no-usage", "gateway", "gpt-4o");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE sessions SET cost_status = 'unknown' WHERE id = 'placeholder'",
        [],
    )
    .unwrap();
    for id in ["priced", "new-model", "placeholder", "no-usage"] {
        set_times(&path, id, NOW - DAY, None, None);
    }
    let s = stats(&store, None);

    let o = &s.overview;
    assert_eq!(o.cost_usd, Some(3.0));
    assert_eq!(o.sessions_unknown_cost, 3);
    assert_eq!(
        o.cost_unknown_reason.as_deref(),
        Some(
            "1 session: no price for model `claude-opus-4-6` (add [pricing.\"claude-opus-4-6\"] to config.toml); \
             1 session: no price for model `mystery-model` (add [pricing.\"mystery-model\"] to config.toml); \
             1 session: no token usage recorded"
        )
    );
    let model = |name: &str| s.by_model.iter().find(|m| m.model == name).unwrap();
    assert_eq!(model("claude-sonnet-4-5-20250929").cost_usd, Some(3.0));
    assert_eq!(model("claude-opus-4-6").cost_usd, None, "unknown, not $0");
    assert!(model("claude-opus-4-6").cost_unknown_reason.is_some());
    assert_eq!(model("gpt-4o").cost_usd, None);
    let gateway = s.by_source.iter().find(|x| x.source == "gateway").unwrap();
    assert_eq!((gateway.cost_usd, gateway.sessions_unknown_cost), (None, 2));
    let day = s.by_day.iter().find(|d| d.sessions == 4).unwrap();
    assert_eq!((day.cost_usd, day.sessions_unknown_cost), (Some(3.0), 3));
    let json = serde_json::to_value(&s).unwrap();
    assert!(
        json["by_model"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["cost_usd"].is_null())
    );

    // An override prices the new model.
    let prices = baton_core::pricing::PriceTable::with_overrides([(
        "claude-opus-4-6",
        baton_core::pricing::PriceOverride {
            input: Some(10.0),
            output: Some(100.0),
            ..Default::default()
        },
    )])
    .unwrap();
    let query = StatsQuery {
        days: 30,
        source: None,
        now: NOW,
    };
    let priced = store.stats_priced(&query, &prices).unwrap();
    let cost = priced.overview.cost_usd.unwrap();
    assert!((cost - (3.0 + 0.005 + 0.005)).abs() < 1e-9, "{cost}");
    assert_eq!(priced.overview.sessions_unknown_cost, 2);
}
