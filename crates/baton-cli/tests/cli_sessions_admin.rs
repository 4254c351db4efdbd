//! `baton sessions delete|prune|stats` against a real database on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::usage::CanonicalUsage;
use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::baton;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

const DAY: f64 = 86_400.0;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn create(store: &SqliteStore, id: &str, source: &str, parent: Option<&str>) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            parent_session_id: parent.map(String::from),
            model: Some("openai/gpt-4o".into()),
            ..NewSession::new(source)
        })
        .unwrap();
    store
        .append_messages(id, &[Message::user(format!("hello from {id}"))])
        .unwrap();
}

fn set_times(store: &SqliteStore, id: &str, started: f64, ended: Option<f64>, reason: &str) {
    let ended = ended.map_or("NULL".to_string(), |e| e.to_string());
    let reason = if reason.is_empty() {
        "NULL".to_string()
    } else {
        format!("'{reason}'")
    };
    store
        .write(|tx| {
            tx.execute(
                &format!(
                    "UPDATE sessions SET started_at = {started}, ended_at = {ended}, \
                     end_reason = {reason} WHERE id = '{id}'"
                ),
                [],
            )?;
            Ok(())
        })
        .unwrap();
}

fn ids(path: &Path) -> Vec<String> {
    let store = SqliteStore::open_read_only(path).unwrap();
    let mut ids: Vec<String> = store
        .list_sessions(&baton_store::SessionFilter {
            include_children: true,
            limit: 1000,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|r| r.session.id)
        .collect();
    ids.sort();
    ids
}

/// old_done (40 days, ended), old_live (40 days, running), old_cron (40 days, ended, cron),
/// recent (ended now), chain1 (old root compressed 3 days ago into a recent tip), chain2 (root
/// and tip both about 60 days old and ended).
fn prune_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    let t = now();
    for (id, source) in [
        ("old_done", "cli"),
        ("old_live", "cli"),
        ("old_cron", "cron"),
        ("recent", "cli"),
        ("chain1_root", "cli"),
        ("chain2_root", "cli"),
    ] {
        create(&store, id, source, None);
    }
    create(&store, "chain1_tip", "cli", Some("chain1_root"));
    create(&store, "chain2_tip", "cli", Some("chain2_root"));
    set_times(
        &store,
        "old_done",
        t - 40.0 * DAY,
        Some(t - 40.0 * DAY + 10.0),
        "cli_close",
    );
    set_times(&store, "old_live", t - 40.0 * DAY, None, "");
    set_times(
        &store,
        "old_cron",
        t - 40.0 * DAY,
        Some(t - 40.0 * DAY + 5.0),
        "cron_complete",
    );
    set_times(&store, "recent", t - 60.0, Some(t - 30.0), "cli_close");
    set_times(
        &store,
        "chain1_root",
        t - 50.0 * DAY,
        Some(t - 3.0 * DAY),
        "compression",
    );
    set_times(
        &store,
        "chain1_tip",
        t - 3.0 * DAY,
        Some(t - 2.0 * DAY),
        "cli_close",
    );
    set_times(
        &store,
        "chain2_root",
        t - 60.0 * DAY,
        Some(t - 59.0 * DAY),
        "compression",
    );
    set_times(
        &store,
        "chain2_tip",
        t - 59.0 * DAY,
        Some(t - 58.0 * DAY),
        "cli_close",
    );
    drop(store);
    (dir, path)
}

fn sessions_cmd(db: &Path) -> assert_cmd::Command {
    let mut cmd = baton();
    cmd.env("COLUMNS", "100").args(["sessions", "--db"]).arg(db);
    cmd
}

fn json_out(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn prune_dry_run_lists_old_ended_sessions_and_whole_chains_only() {
    let (_dir, db) = prune_db();
    let before = std::fs::read(&db).unwrap();
    let out = sessions_cmd(&db)
        .args(["prune", "--older-than", "30", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("would prune 4 session(s)"), "{text}");
    for id in ["old_done", "old_cron", "chain2_root", "chain2_tip"] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    for id in ["old_live", "recent", "chain1_root", "chain1_tip"] {
        assert!(!text.contains(id), "{id} listed:\n{text}");
    }
    let listed = json_out(sessions_cmd(&db).args([
        "--json",
        "prune",
        "--older-than",
        "30",
        "--dry-run",
        "--source",
        "cli",
    ]));
    assert_eq!(
        listed["would_delete"],
        serde_json::json!(["chain2_root", "chain2_tip", "old_done"])
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "dry run changed the db"
    );
}

#[test]
fn prune_needs_yes_and_then_deletes_only_what_it_listed() {
    let (_dir, db) = prune_db();
    let before = std::fs::read(&db).unwrap();
    sessions_cmd(&db)
        .args(["prune", "--older-than", "30"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("old_done"))
        .stderr(predicate::str::contains("--yes"));
    assert_eq!(std::fs::read(&db).unwrap(), before);

    let pruned = json_out(sessions_cmd(&db).args([
        "--json",
        "prune",
        "--older-than",
        "30",
        "--source",
        "cli",
        "--yes",
    ]));
    assert_eq!(
        pruned["deleted"],
        serde_json::json!(["chain2_root", "chain2_tip", "old_done"])
    );
    assert_eq!(
        ids(&db),
        [
            "chain1_root",
            "chain1_tip",
            "old_cron",
            "old_live",
            "recent"
        ]
    );
    sessions_cmd(&db)
        .args(["prune", "--older-than", "30", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pruned 1 session(s)"))
        .stdout(predicate::str::contains("old_cron"));
    assert_eq!(
        ids(&db),
        ["chain1_root", "chain1_tip", "old_live", "recent"]
    );
}

#[test]
fn delete_needs_yes_deletes_by_id_or_title_and_names_unknown_input() {
    let (_dir, db) = prune_db();
    {
        let store = SqliteStore::open(&db).unwrap();
        store.set_title("recent", "Quick question").unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    sessions_cmd(&db)
        .args(["delete", "Quick question"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("would delete 1 session(s)"))
        .stdout(predicate::str::contains("recent"))
        .stderr(predicate::str::contains("without --yes"));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "refused delete changed the db"
    );

    let deleted = json_out(sessions_cmd(&db).args(["--json", "delete", "Quick question", "--yes"]));
    assert_eq!(deleted["deleted"], serde_json::json!(["recent"]));
    assert!(!ids(&db).contains(&"recent".to_string()));

    sessions_cmd(&db)
        .args(["delete", "no-such-session", "--yes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`no-such-session`"));

    // --chain takes the whole compression chain, found from its tip.
    sessions_cmd(&db)
        .args(["delete", "chain1_tip", "--chain", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "deleted 2 session(s): chain1_root, chain1_tip",
        ));
    assert_eq!(
        ids(&db),
        [
            "chain2_root",
            "chain2_tip",
            "old_cron",
            "old_done",
            "old_live"
        ]
    );
}

#[test]
fn writing_commands_refuse_an_older_schema_unless_told_to_migrate() {
    let (_dir, db) = prune_db();
    {
        let store = SqliteStore::open(&db).unwrap();
        store
            .write(|tx| {
                tx.execute("UPDATE schema_version SET version = 11", [])?;
                Ok(())
            })
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    sessions_cmd(&db)
        .args(["delete", "old_done", "--yes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("schema version 11"))
        .stderr(predicate::str::contains("--migrate"));
    sessions_cmd(&db)
        .args(["prune", "--older-than", "30", "--yes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--migrate"));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "refusal changed the db"
    );

    sessions_cmd(&db)
        .args(["delete", "old_done", "--yes", "--migrate"])
        .assert()
        .success();
    assert!(!ids(&db).contains(&"old_done".to_string()));
    let store = SqliteStore::open_read_only(&db).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        Some(baton_store::SCHEMA_VERSION)
    );
}

/// Two sessions today (openai/gpt-4o, cli; anthropic/claude-sonnet-4, api_server) and one two
/// days ago with fewer tokens.
fn stats_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    let usage = |input, output| CanonicalUsage {
        input,
        output,
        ..CanonicalUsage::default()
    };
    create(&store, "today_a", "cli", None);
    store
        .add_usage("today_a", &usage(1000, 100), Some(0.25))
        .unwrap();
    store
        .append_messages(
            "today_a",
            &[
                Message::assistant_tool_calls(vec![ToolCall::function("c1", "Bash", "{}")]),
                Message::tool("c1", "ok"),
            ],
        )
        .unwrap();
    store
        .create_session(NewSession {
            id: Some("today_b".into()),
            model: Some("anthropic/claude-sonnet-4".into()),
            ..NewSession::new("api_server")
        })
        .unwrap();
    store.add_usage("today_b", &usage(4000, 400), None).unwrap();
    create(&store, "earlier", "cli", None);
    store
        .add_usage("earlier", &usage(500, 50), Some(0.1))
        .unwrap();
    let t = now();
    set_times(
        &store,
        "earlier",
        t - 2.0 * DAY,
        Some(t - 2.0 * DAY + 60.0),
        "cli_close",
    );
    drop(store);
    (dir, path)
}

#[test]
fn stats_print_overview_model_and_source_tables_within_the_width() {
    let (_dir, db) = stats_db();
    let before = std::fs::read(&db).unwrap();
    let out = baton()
        .env("COLUMNS", "70")
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["stats", "--days", "7"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for needle in [
        "Usage in the last 7 days (all sources)",
        "By model",
        "By source",
        "Top tools",
        "claude-sonnet-4",
        "api_server",
        "6,050", // total tokens: 1100 + 4400 + 550
        "Bash",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    assert!(!text.contains("openai/"), "provider prefix shown:\n{text}");
    assert!(!text.contains("Tokens per day"), "chart without --chart");
    for line in text.lines() {
        assert!(line.chars().count() <= 70, "too wide: {line:?}");
    }
    // claude (4,400 tokens) is listed before gpt-4o (1,650).
    let claude = text.find("claude-sonnet-4").unwrap();
    let gpt = text.find("gpt-4o").unwrap();
    assert!(claude < gpt, "{text}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "stats changed the db");
}

#[test]
fn stats_json_is_the_stats_struct_and_the_chart_shows_every_day() {
    let (_dir, db) = stats_db();
    let stats = json_out(sessions_cmd(&db).args(["--json", "stats", "--days", "7"]));
    assert_eq!(stats["overview"]["sessions"], 3);
    assert_eq!(stats["overview"]["total_tokens"], 6050);
    // today_b stored no cost: its tokens are priced (claude-sonnet-4: 4000 × $3 + 400 × $15
    // per million = $0.018).
    assert_eq!(stats["overview"]["sessions_unknown_cost"], 0);
    let cost = stats["overview"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.368).abs() < 1e-9, "{cost}");
    assert_eq!(stats["by_model"][0]["model"], "claude-sonnet-4");
    assert_eq!(stats["by_model"][1]["model"], "gpt-4o");
    assert_eq!(stats["by_model"][1]["sessions"], 2);
    let days = stats["by_day"].as_array().unwrap();
    assert_eq!(days.len(), 8, "7 days back through today");
    let today = days.last().unwrap();
    assert_eq!(today["total_tokens"], 5500);
    let earlier = &days[days.len() - 3];
    assert_eq!(earlier["total_tokens"], 550);

    let out = baton()
        .env("COLUMNS", "60")
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["stats", "--days", "7", "--chart"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let chart: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Tokens per day (UTC)"))
        .skip(1)
        .collect();
    assert_eq!(chart.len(), days.len(), "one line per day:\n{text}");
    let full = |l: &str| l.chars().filter(|c| *c == '█').count();
    for (line, day) in chart.iter().zip(days) {
        let date = day["date"].as_str().unwrap();
        assert!(line.trim_start().starts_with(date), "{line:?} vs {date}");
        assert!(line.chars().count() <= 60, "too wide: {line:?}");
        if day["total_tokens"] == 0 {
            assert_eq!(full(line), 0, "zero day with a bar: {line:?}");
            assert!(line.ends_with(" 0"), "{line:?}");
        }
    }
    let today_bar = full(chart.last().unwrap());
    let earlier_bar = full(chart[chart.len() - 3]);
    assert!(
        today_bar > 20,
        "the busiest day fills the width: {today_bar}"
    );
    // 550 is a tenth of 5,500.
    assert_eq!(earlier_bar, today_bar / 10, "{text}");
    assert!(chart.last().unwrap().ends_with("5,500"));
}

#[test]
fn stats_of_an_empty_window_say_so() {
    let (_dir, db) = stats_db();
    sessions_cmd(&db)
        .args(["stats", "--source", "cron"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "no sessions started in the last 30 days",
        ));
}

#[test]
fn an_ambiguous_title_is_bad_input_naming_the_candidates() {
    let (_dir, db) = prune_db();
    {
        let store = SqliteStore::open(&db).unwrap();
        store.set_title("old_done", "Notes #2").unwrap();
        store.set_title("recent", "Notes #5").unwrap();
    }
    for sub in ["show", "export", "delete"] {
        sessions_cmd(&db)
            .args([sub, "Notes"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("more than one session"))
            .stderr(predicate::str::contains("old_done"))
            .stderr(predicate::str::contains("recent"));
    }
    sessions_cmd(&db)
        .args(["show", "Notes #5"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("recent  Notes #5"));
}
