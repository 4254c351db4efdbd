//! Every command ends quietly when its reader goes away (`baton … | head -1`) or its output
//! cannot be written: exit 0 (or death by SIGPIPE), never a "Broken pipe" panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::sample;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_baton"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        // An empty home: never the machine's own config.toml or database.
        .env("BATON_HOME", common::empty_home());
    cmd
}

/// Exit 0, or killed by SIGPIPE: what a shell pipeline treats as a quiet end.
fn quiet_end(status: ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if status.signal() == Some(13) {
            return true;
        }
    }
    status.code() == Some(0)
}

fn assert_quiet(what: &str, status: ExitStatus, stderr: &[u8]) {
    let stderr = String::from_utf8_lossy(stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{what}: a closed stdout must not panic; stderr:\n{stderr}"
    );
    assert!(
        quiet_end(status),
        "{what}: expected exit 0 or SIGPIPE, got {status}; stderr:\n{stderr}"
    );
}

/// Stdout is a pipe whose read end is closed before the command writes anything, so its
/// first write fails with EPIPE whatever the output size (no race with the pipe buffer).
fn with_closed_stdout(what: &str, mut cmd: Command) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_quiet(what, out.status, &out.stderr);
}

/// `| head -1`: the reader takes one line of an output larger than the pipe buffer, then
/// closes. Returns that line.
fn head_1(what: &str, mut cmd: Command) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_quiet(what, out.status, &out.stderr);
    line
}

/// Standard error closed: the reports that go there must not panic either.
fn with_closed_stderr(what: &str, mut cmd: Command) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        quiet_end(out.status),
        "{what}: expected exit 0 with stderr closed, got {}",
        out.status
    );
    out
}

fn args(cmd: &mut Command, args: &[&str]) {
    cmd.args(args);
}

/// A database with one long session (output of `export` and `show` well over 64 KiB).
fn database(dir: &Path) -> (std::path::PathBuf, String) {
    let path = dir.join("state.db");
    let store = SqliteStore::open(&path).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store.set_title(&id, "Fix the parser").unwrap();
    let mut messages = vec![Message::user("修复解析器里的错误 parser")];
    for i in 0..400 {
        let call = format!("c{i}");
        messages.push(Message::assistant_tool_calls(vec![ToolCall::function(
            &call,
            "Bash",
            r#"{"command":"cargo test parser"}"#,
        )]));
        messages.push(Message::tool(
            &call,
            format!("test parser {i} ... FAILED {}", "x".repeat(200)),
        ));
    }
    messages.push(Message::assistant("The tokenizer drops quoted spaces."));
    store.append_messages(&id, &messages).unwrap();
    (path, id)
}

#[test]
fn file_commands_end_quietly_when_stdout_is_closed() {
    let conv = sample("claude-code-session.jsonl");
    let conv = conv.to_str().unwrap();
    for (what, a) in [
        ("tokens", vec!["tokens", conv]),
        ("tokens --json", vec!["tokens", "--json", conv]),
        (
            "compress -o -",
            vec!["compress", conv, "-o", "-", "--force"],
        ),
        ("--help", vec!["--help"]),
        ("sessions --help", vec!["sessions", "--help"]),
        ("--version", vec!["--version"]),
        ("config show", vec!["config", "show"]),
        ("config show --json", vec!["config", "show", "--json"]),
        ("config path", vec!["config", "path"]),
    ] {
        let mut cmd = bin();
        args(&mut cmd, &a);
        with_closed_stdout(what, cmd);
    }
    // The converted conversation is far larger than a pipe buffer.
    let mut cmd = bin();
    args(&mut cmd, &["compress", conv, "-o", "-", "--force"]);
    let first = head_1("compress -o - | head -1", cmd);
    assert!(first.starts_with('{'), "{first}");
}

#[test]
fn session_commands_end_quietly_when_stdout_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = database(dir.path());
    let db = db.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("sessions list", vec!["sessions", "--db", db, "list"]),
        (
            "sessions list --json",
            vec!["sessions", "--json", "--db", db, "list"],
        ),
        ("sessions show", vec!["sessions", "--db", db, "show", &id]),
        (
            "sessions show --json",
            vec!["sessions", "--json", "--db", db, "show", &id],
        ),
        (
            "sessions search",
            vec!["sessions", "--db", db, "search", "parser"],
        ),
        (
            "sessions search --json",
            vec!["sessions", "--json", "--db", db, "search", "parser"],
        ),
        (
            "sessions export",
            vec!["sessions", "--db", db, "export", &id],
        ),
        ("sessions stats", vec!["sessions", "--db", db, "stats"]),
        (
            "sessions stats --json",
            vec!["sessions", "--json", "--db", db, "stats"],
        ),
    ];
    for (what, a) in &cases {
        let mut cmd = bin();
        args(&mut cmd, a);
        with_closed_stdout(what, cmd);
    }
    for (what, a) in [
        (
            "sessions export | head -1",
            vec!["sessions", "--db", db, "export", &id],
        ),
        (
            "sessions show | head -1",
            vec!["sessions", "--db", db, "show", &id],
        ),
    ] {
        let mut cmd = bin();
        args(&mut cmd, &a);
        head_1(what, cmd);
    }
}

#[test]
fn an_import_whose_report_cannot_be_printed_still_imports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let mut cmd = bin();
    cmd.args(["sessions", "--db"])
        .arg(&db)
        .arg("import")
        .arg(sample("claude-code-session.jsonl"));
    with_closed_stdout("sessions import", cmd);
    let store = SqliteStore::open(&db).unwrap();
    let sessions = store.list_sessions(&Default::default()).unwrap();
    assert_eq!(sessions.len(), 1, "the import must have happened");
}

#[test]
fn memory_commands_end_quietly_when_stdout_is_closed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    // A write whose confirmation cannot be printed still happens.
    let mut cmd = bin();
    args(
        &mut cmd,
        &["memory", "--home", h, "add", "Project uses cargo nextest"],
    );
    with_closed_stdout("memory add", cmd);
    let stored = std::fs::read_to_string(home.path().join("memories/MEMORY.md")).unwrap();
    assert!(stored.contains("cargo nextest"), "{stored}");
    for (what, a) in [
        ("memory show", vec!["memory", "--home", h, "show"]),
        (
            "memory show --json",
            vec!["memory", "--home", h, "--json", "show"],
        ),
        ("memory scan", vec!["memory", "--home", h, "scan"]),
    ] {
        let mut cmd = bin();
        args(&mut cmd, &a);
        with_closed_stdout(what, cmd);
    }
}

#[test]
fn reports_on_a_closed_stderr_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let conv = sample("claude-code-session.jsonl");
    let out_file = dir.path().join("out.jsonl");
    let mut cmd = bin();
    cmd.arg("compress")
        .arg(&conv)
        .arg("-o")
        .arg(&out_file)
        .arg("--force");
    with_closed_stderr("compress -o FILE", cmd);
    assert!(out_file.exists());

    let traj_out = dir.path().join("t.jsonl");
    let mut cmd = bin();
    cmd.args(["trajectories", "compress"])
        .arg(sample("tau-bench-airline.jsonl"))
        .arg("-o")
        .arg(&traj_out)
        .args(["--target-max-tokens", "2000"]);
    with_closed_stderr("trajectories compress", cmd);
    assert!(std::fs::metadata(&traj_out).unwrap().len() > 0);
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_behind_stdout_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipping: /dev/full is not available");
        return;
    };
    let out = bin()
        .arg("tokens")
        .arg(sample("claude-code-session.jsonl"))
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_and_ping_end_quietly_when_stdout_is_closed() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let models: Vec<serde_json::Value> = (0..2000)
        .map(|i| serde_json::json!({"id": format!("model-{i}"), "object": "model", "context_length": 32768}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"object": "list", "data": models})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "x", "object": "chat.completion", "model": "model-0",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "pong"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
        })))
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    tokio::task::spawn_blocking(move || {
        for (what, a) in [
            ("models", vec!["models", "--base-url", &url]),
            (
                "models --json",
                vec!["models", "--base-url", &url, "--json"],
            ),
            (
                "ping",
                vec!["ping", "--base-url", &url, "--model", "model-0"],
            ),
            (
                "ping --json",
                vec!["ping", "--base-url", &url, "--model", "model-0", "--json"],
            ),
        ] {
            let mut cmd = bin();
            args(&mut cmd, &a);
            with_closed_stdout(what, cmd);
        }
        let mut cmd = bin();
        args(&mut cmd, &["models", "--base-url", &url]);
        head_1("models | head -1", cmd);
    })
    .await
    .unwrap();
}
