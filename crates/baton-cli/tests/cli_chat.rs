//! `baton chat -q` end to end: the real binary against the scripted model server on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_scripted::{Api, Reply, Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `baton chat` pointed at `server` with its own home and database in `home`.
fn chat(server: &ScriptedServer, home: &Path) -> assert_cmd::Command {
    chat_window(server, home, 200_000)
}

fn chat_window(server: &ScriptedServer, home: &Path, window: u32) -> assert_cmd::Command {
    let mut cmd = common::baton();
    cmd.env("BATON_HOME", home)
        .env("OPENAI_API_KEY", "sk-cli-test-key")
        .current_dir(home)
        .args(chat_args(server, window));
    cmd
}

/// The arguments of `baton chat` against `server` with a `window`-token context.
fn chat_args(server: &ScriptedServer, window: u32) -> Vec<String> {
    let window = window.to_string();
    let base_url = server.base_url(Api::ChatCompletions);
    let args = [
        "chat",
        "--model",
        "scripted-model",
        "--context-length",
        &window,
        "--base-url",
        &base_url,
        "--summarizer",
        "extractive",
    ];
    args.iter().map(|a| a.to_string()).collect()
}

fn home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn the_answer_streams_to_stdout_and_the_usage_line_to_stderr() {
    let server =
        ScriptedServer::start_background(Script::replies([Reply::text("The build is green.")]))
            .unwrap();
    let h = home();
    let out = chat(&server, h.path())
        .args(["-q", "is the build green?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The build is green.\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("usage: 1 calls"), "{err}");
    assert!(err.contains("session "), "{err}");
    assert!(!err.contains("sk-cli-test-key"));
    // The session is stored where the next command finds it.
    let list = common::baton()
        .env("BATON_HOME", h.path())
        .args(["sessions", "list"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("is the build green"),
        "{list:?}"
    );
}

#[test]
fn json_prints_every_event_as_a_json_line() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::tool_call("terminal", json!({"command": "echo hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let h = home();
    let out = chat(&server, h.path())
        .args(["--json", "-q", "say hi"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for kind in [
        "turn_started",
        "tool_call",
        "tool_result",
        "usage",
        "text_delta",
        "turn_finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert_eq!(events.last().unwrap()["reason"], "final_answer");
}

#[test]
fn destructive_commands_are_refused_without_yes_and_run_with_it() {
    let script = || {
        Script::replies([
            Reply::tool_call("terminal", json!({"command": "rm -rf victim"})),
            Reply::text("tried"),
        ])
    };
    let h = home();
    std::fs::create_dir(h.path().join("victim")).unwrap();
    let server = ScriptedServer::start_background(script()).unwrap();
    let out = chat(&server, h.path())
        .args(["-q", "clean up"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        h.path().join("victim").exists(),
        "refused without a terminal"
    );
    let sent = server.requests()[1].body.to_string();
    assert!(
        sent.contains("rerun with --yes"),
        "the model is told how it could be allowed: {sent}"
    );
    let server = ScriptedServer::start_background(script()).unwrap();
    let out = chat(&server, h.path())
        .args(["--yes", "-q", "clean up"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!h.path().join("victim").exists(), "--yes allows it");
}

#[test]
fn resume_and_continue_pick_up_the_stored_conversation() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("third answer"),
    ]))
    .unwrap();
    let h = home();
    let out = chat(&server, h.path())
        .args(["-q", "first question"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let id = err.rsplit("session ").next().unwrap().trim().to_string();
    chat(&server, h.path())
        .args(["--resume", &id, "-q", "second question"])
        .assert()
        .success();
    chat(&server, h.path())
        .args(["--continue", "-q", "third question"])
        .assert()
        .success();
    let third = server.requests()[2].body["messages"].to_string();
    for text in [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
    ] {
        assert!(third.contains(text), "{text} in {third}");
    }
    let missing = chat(&server, h.path())
        .args(["--resume", "no-such-session", "-q", "x"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such-session"));
}

#[test]
fn an_interrupted_turn_leaves_a_session_that_resumes() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::text("too late").with_delay(Duration::from_secs(30)),
        Reply::text("resumed fine"),
    ]))
    .unwrap();
    let h = home();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("baton"))
        .env("BATON_HOME", h.path())
        .env("OPENAI_API_KEY", "sk-cli-test-key")
        .env_remove("OPENAI_BASE_URL")
        .current_dir(h.path())
        .args([
            "chat",
            "--model",
            "scripted-model",
            "--context-length",
            "200000",
        ])
        .args([
            "--base-url",
            &server.base_url(Api::ChatCompletions),
            "--summarizer",
            "extractive",
        ])
        .args(["-q", "a slow question"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.requests().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the request never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--resume"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
    chat(&server, h.path())
        .args(["--continue", "-q", "try again"])
        .assert()
        .success();
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("a slow question") && sent.contains("interrupted by the user"),
        "{sent}"
    );
}

#[test]
fn a_resumed_session_over_85_percent_is_compacted_before_its_first_call() {
    let h = home();
    // A stored session of ~55K tokens, resumed with a 32K window.
    let filler = "log line with some details about the build; ".repeat(100);
    let mut replies = Vec::new();
    for _ in 0..12 {
        replies.push(Reply::text(filler.clone()));
    }
    replies.push(Reply::text("answer after hygiene"));
    let server = ScriptedServer::start_background(Script::replies(replies)).unwrap();
    for i in 0..12 {
        let mut cmd = chat(&server, h.path());
        if i > 0 {
            cmd.arg("--continue");
        }
        cmd.args(["-q", &format!("question {i}: {filler}")])
            .assert()
            .success();
    }
    let out = chat_window(&server, h.path(), 32_000)
        .args(["--continue", "-q", "and now?"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("compacted (resume)"), "{err}");
    let last = server.requests().last().unwrap().body.to_string();
    assert!(
        last.len() < 32_000 * 4 * 85 / 100,
        "the first call went out compacted: {}",
        last.len()
    );
}

#[test]
fn config_allows_named_destructive_patterns_and_rejects_unknown_names() {
    let h = home();
    std::fs::create_dir(h.path().join("victim")).unwrap();
    std::fs::write(
        h.path().join("config.toml"),
        "[tools]\nallow_destructive = \"rm -rf\"\n[agent]\nmax_iterations = 5\n",
    )
    .unwrap();
    let server = ScriptedServer::start_background(Script::replies([
        Reply::tool_call("terminal", json!({"command": "rm -rf victim"})),
        Reply::text("removed"),
    ]))
    .unwrap();
    chat(&server, h.path())
        .args(["-q", "clean"])
        .assert()
        .success();
    assert!(!h.path().join("victim").exists(), "allowed by config.toml");
    std::fs::write(
        h.path().join("config.toml"),
        "[tools]\nallow_destructive = \"rm -rfx\"\n",
    )
    .unwrap();
    let out = chat(&server, h.path())
        .args(["-q", "clean"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown pattern \"rm -rfx\"") && err.contains("git push --force"),
        "{err}"
    );
}

#[test]
fn the_iteration_limit_stops_a_turn_that_keeps_calling_tools() {
    let server = ScriptedServer::start_background(Script::responder(|_| {
        Reply::tool_call("terminal", json!({"command": "true"}))
    }))
    .unwrap();
    let h = home();
    let out = chat(&server, h.path())
        .args(["--max-iterations", "3", "-q", "loop"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(server.requests().len(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped after 3 model calls"));
}

/// On a real pseudo-terminal (util-linux `script`), a destructive command is put to the user.
#[test]
fn on_a_terminal_the_user_is_asked_before_a_destructive_command() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipped: `script` (util-linux) is not installed, no pseudo-terminal to test on");
        return;
    }
    for (answer, removed) in [("n", false), ("y", true)] {
        let server = ScriptedServer::start_background(Script::replies([
            Reply::tool_call("terminal", json!({"command": "rm -rf victim"})),
            Reply::text("over"),
        ]))
        .unwrap();
        let h = home();
        std::fs::create_dir(h.path().join("victim")).unwrap();
        let baton = assert_cmd::cargo::cargo_bin("baton");
        let command = format!(
            "{} {} -q 'clean up'",
            baton.display(),
            chat_args(&server, 200_000).join(" ")
        );
        let mut child = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .env("BATON_HOME", h.path())
            .env("OPENAI_API_KEY", "sk-cli-test-key")
            .env_remove("OPENAI_BASE_URL")
            .current_dir(h.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while server.requests().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(20));
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(format!("{answer}\n").as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("Allow it?") && shown.contains("rm -rf victim"),
            "{shown}"
        );
        assert_eq!(
            !h.path().join("victim").exists(),
            removed,
            "answer {answer}: {shown}"
        );
    }
}

/// Without a terminal and without -q, each line of standard input is one turn of one session.
#[test]
fn piped_prompts_run_as_turns_of_one_session() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::text("first answer"),
        Reply::text("second answer"),
    ]))
    .unwrap();
    let h = home();
    let out = chat(&server, h.path())
        .write_stdin("first question\n\nsecond question\n")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "first answer\nsecond answer\n"
    );
    let second = server.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("first question") && second.contains("first answer"),
        "{second}"
    );
    let empty = chat(&server, h.path()).write_stdin("").output().unwrap();
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("standard input was empty"));
}
