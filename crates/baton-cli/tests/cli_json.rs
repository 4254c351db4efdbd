//! `--json` is accepted by every command that prints a result, and what it prints on stdout is
//! valid JSON. The command list comes from the binary's own help, so a new command without a
//! case here fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn llm_fixture(name: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// What `--json` puts on stdout.
#[derive(Clone, Copy, Debug)]
enum Stdout {
    /// One JSON document.
    Json,
    /// One JSON document per line (a JSONL conversation).
    JsonLines,
}

fn run(args: &[String]) -> std::process::Output {
    baton()
        .env("OPENAI_API_KEY", "sk-json-walk-test-0123")
        .env_remove("ANTHROPIC_API_KEY")
        .args(args)
        .output()
        .unwrap()
}

/// The `Commands:` names of `baton ARGS --help`, without `help`.
fn subcommands(args: &[String]) -> Vec<String> {
    let out = baton().args(args).arg("--help").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect()
}

/// Every runnable command, as its path of names (`sessions list`, `tokens`).
fn leaf_commands(prefix: Vec<String>) -> Vec<String> {
    let subs = subcommands(&prefix);
    if subs.is_empty() {
        return vec![prefix.join(" ")];
    }
    subs.into_iter()
        .flat_map(|s| {
            let mut p = prefix.clone();
            p.push(s);
            leaf_commands(p)
        })
        .collect()
}

fn check(name: &str, args: &[String], kind: Stdout) -> std::process::Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "`{name}` with --json failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    match kind {
        Stdout::Json => {
            serde_json::from_str::<Value>(&stdout).unwrap_or_else(|e| {
                panic!("`{name}` --json printed invalid JSON ({e}):\n{stdout}")
            });
        }
        Stdout::JsonLines => {
            assert!(!stdout.trim().is_empty(), "`{name}` printed nothing");
            for line in stdout.lines() {
                serde_json::from_str::<Value>(line).unwrap_or_else(|e| {
                    panic!("`{name}` --json printed an invalid JSON line ({e}):\n{line}")
                });
            }
        }
    }
    out
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_that_prints_a_result_accepts_json() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(llm_fixture("vllm_models.json"), "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            llm_fixture("openai_chat_completion.json"),
            "application/json",
        ))
        .mount(&server)
        .await;
    let base_url = format!("{}/v1", server.uri());
    tokio::task::spawn_blocking(move || walk(&base_url))
        .await
        .unwrap();
}

fn walk(base_url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let conversation = sample("tau-bench-airline.jsonl");
    let db = s(&dir.path().join("state.db"));
    let home = s(&dir.path().join("home"));
    let mut covered = BTreeSet::new();
    let mut case = |name: &str, a: Vec<String>, kind: Stdout| {
        covered.insert(name.to_string());
        check(name, &a, kind)
    };

    case(
        "tokens",
        args(&["tokens", &s(&conversation), "--json"]),
        Stdout::Json,
    );
    // The compacted conversation is stdout; the report is the JSON on stderr.
    let out = case(
        "compress",
        args(&["compress", &s(&conversation), "--force", "--json"]),
        Stdout::JsonLines,
    );
    // One report per conversation of the file (tau-bench holds three).
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 3, "{stderr}");
    for line in stderr.lines() {
        let report: Value = serde_json::from_str(line).unwrap();
        assert!(report["after_messages"].is_u64(), "{report}");
    }

    case(
        "sessions import",
        args(&[
            "sessions",
            "--db",
            &db,
            "import",
            &s(&conversation),
            "--json",
        ]),
        Stdout::Json,
    );
    let out = case(
        "sessions list",
        args(&["sessions", "--db", &db, "list", "--json"]),
        Stdout::Json,
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let in_db = |rest: &[&str]| {
        let mut a = args(&["sessions", "--db", &db]);
        a.extend(args(rest));
        a.push("--json".into());
        a
    };
    case("sessions show", in_db(&["show", &id]), Stdout::Json);
    case(
        "sessions search",
        in_db(&["search", "reservation"]),
        Stdout::Json,
    );
    case(
        "sessions export",
        in_db(&["export", &id]),
        Stdout::JsonLines,
    );
    case("sessions stats", in_db(&["stats"]), Stdout::Json);
    case(
        "sessions title",
        in_db(&["title", &id, "Airline rebooking"]),
        Stdout::Json,
    );
    case(
        "sessions prune",
        in_db(&["prune", "--older-than", "1", "--dry-run"]),
        Stdout::Json,
    );
    case("sessions index", in_db(&["index"]), Stdout::Json);
    let copied = s(&dir.path().join("copied.db"));
    let out = case(
        "sessions copy",
        args(&["sessions", "copy", "--from", &db, "--to", &copied, "--json"]),
        Stdout::Json,
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["copied"], report["verified_sessions"], "{report}");
    case(
        "sessions delete",
        in_db(&["delete", &id, "--yes"]),
        Stdout::Json,
    );

    let traj_out = s(&dir.path().join("traj.jsonl"));
    let out = case(
        "trajectories compress",
        args(&[
            "trajectories",
            "compress",
            &s(&conversation),
            "-o",
            &traj_out,
            "--target-max-tokens",
            "2000",
            "--json",
        ]),
        Stdout::Json,
    );
    let agg: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(agg["records"]["total"], 3, "{agg}");

    let memory = |rest: &[&str]| {
        let mut a = args(&["memory", "--home", &home]);
        a.extend(args(rest));
        a.push("--json".into());
        a
    };
    case(
        "memory add",
        memory(&["add", "The project builds with cargo"]),
        Stdout::Json,
    );
    case("memory show", memory(&["show"]), Stdout::Json);
    case(
        "memory replace",
        memory(&[
            "replace",
            "builds with cargo",
            "The project builds with cargo 1.95",
        ]),
        Stdout::Json,
    );
    case(
        "memory remove",
        memory(&["remove", "cargo 1.95"]),
        Stdout::Json,
    );
    case("memory scan", memory(&["scan"]), Stdout::Json);

    case(
        "models",
        args(&["models", "--base-url", base_url, "--json"]),
        Stdout::Json,
    );
    case(
        "ping",
        args(&[
            "ping",
            "--base-url",
            base_url,
            "--model",
            "gpt-4o",
            "--json",
        ]),
        Stdout::Json,
    );
    case(
        "config show",
        args(&["config", "show", "--json"]),
        Stdout::Json,
    );
    // The agent's events, one JSON object per line.
    case(
        "chat",
        args(&[
            "chat",
            "--db",
            &db,
            "--base-url",
            base_url,
            "--model",
            "gpt-4o-mini",
            "--context-length",
            "128000",
            "--summarizer",
            "extractive",
            "--json",
            "-q",
            "hello",
        ]),
        Stdout::JsonLines,
    );
    case(
        "config path",
        args(&["config", "path", "--json"]),
        Stdout::Json,
    );

    let every: BTreeSet<String> = leaf_commands(Vec::new()).into_iter().collect();
    let missing: Vec<&String> = every.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "commands without a --json case here: {missing:?}"
    );
}
