//! `baton sessions` as a new user meets it (issue #12 item 7): a first run without a
//! database, titles, what `list` and `import` print, `export --chain`, and search input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::markers::SUMMARY_KEY;
use baton_core::{Message, ToolCall};
use baton_store::{NewSession, SessionStore, SqliteStore};
use common::{baton, sample};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn sessions(db: &Path) -> assert_cmd::Command {
    let mut cmd = baton();
    cmd.args(["sessions", "--db"]).arg(db);
    cmd
}

fn stdout(cmd: &mut assert_cmd::Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

fn session_count(db: &Path) -> usize {
    let store = SqliteStore::open_read_only(db).unwrap();
    store
        .list_sessions(&baton_store::SessionFilter {
            limit: 1000,
            include_children: true,
            ..Default::default()
        })
        .unwrap()
        .len()
}

/// A JSONL file of `n` small records, each with its own `source`.
fn records(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("records.jsonl");
    let lines: Vec<String> = (0..n)
        .map(|i| {
            serde_json::json!({
                "source": "my-bench",
                "messages": [
                    {"role": "user", "content": format!("Please fix\nbug number {i} in the parser")},
                    {"role": "assistant", "content": format!("Fixed bug {i}.")},
                ]
            })
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_first_run_without_a_database_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("home").join("state.db");
    sessions(&db)
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("no sessions yet"))
        .stdout(predicate::str::contains("baton sessions import"));
    let out = stdout(sessions(&db).args(["--json", "list"]));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap(),
        serde_json::json!([])
    );
    for args in [
        &["show", "x"][..],
        &["search", "parser"],
        &["export", "x"],
        &["stats"],
        &["title", "x", "New"],
    ] {
        sessions(&db)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("no session database at"))
            .stderr(predicate::str::contains("baton sessions import"));
    }
    assert!(!db.exists(), "reading created the database");
    assert!(
        !db.parent().unwrap().exists(),
        "reading created its directory"
    );
}

#[test]
fn import_title_too_long_or_taken_fails_before_writing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let one = records(dir.path(), 1);
    let long = "x".repeat(101);
    sessions(&db)
        .args(["import", "--title", &long])
        .arg(&one)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("title too long"));
    assert!(!db.exists(), "a refused import created the database");

    let store = SqliteStore::open(&db).unwrap();
    let other = store.create_session(NewSession::new("cli")).unwrap();
    store.set_title(&other, "Parser work").unwrap();
    drop(store);
    let before = std::fs::read(&db).unwrap();
    for taken in ["Parser work", "Parser work #3"] {
        sessions(&db)
            .args(["import", "--title", taken])
            .arg(&one)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("already used by session"))
            .stderr(predicate::str::contains(&other));
        assert_eq!(session_count(&db), 1, "{taken}: a session was written");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);

    let out = stdout(
        sessions(&db)
            .args(["import", "--title", "Bench run"])
            .arg(&one),
    );
    assert!(out.starts_with("imported 1 session(s)"), "{out}");
    sessions(&db)
        .args(["show", "Bench run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("bug number 0"));
}

#[test]
fn title_sets_changes_and_clears_and_numbers_a_chain() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let store = SqliteStore::open(&db).unwrap();
    let root = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(&root, &[Message::user("one"), Message::assistant("two")])
        .unwrap();
    let tip = store
        .start_continuation(&root, &[Message::user("one"), Message::assistant("two")])
        .unwrap();
    let solo = store.create_session(NewSession::new("cli")).unwrap();
    store.set_title(&solo, "Other work").unwrap();
    drop(store);

    let out = stdout(sessions(&db).args(["title", &tip, "Refactor auth"]));
    assert!(out.contains(&format!("{root}  Refactor auth\n")), "{out}");
    assert!(out.contains(&format!("{tip}  Refactor auth #2")), "{out}");
    // The title names the chain: its newest session.
    sessions(&db)
        .args(["title", "Refactor auth", "Auth rewrite"])
        .assert()
        .success();
    let store = SqliteStore::open_read_only(&db).unwrap();
    let titles = |id: &str| store.get_session(id).unwrap().unwrap().title;
    assert_eq!(titles(&root).as_deref(), Some("Auth rewrite"));
    assert_eq!(titles(&tip).as_deref(), Some("Auth rewrite #2"));

    for (taken, why) in [
        ("Other work", "already used by session"),
        ("Other work #2", "already used by session"),
        (&"y".repeat(101)[..], "title too long"),
    ] {
        sessions(&db)
            .args(["title", &root, taken])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(why));
    }
    assert_eq!(titles(&root).as_deref(), Some("Auth rewrite"));
    sessions(&db).args(["title", &solo, ""]).assert().success();
    assert_eq!(titles(&solo), None);
}

#[test]
fn list_shows_times_and_a_preview_and_import_keeps_record_sources_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let file = records(dir.path(), 3);
    let out = stdout(sessions(&db).arg("import").arg(&file));
    assert_eq!(
        out,
        "imported 3 session(s), 6 messages from 1 file(s) (source my-bench)\n"
    );
    let out = stdout(sessions(&db).arg("import").arg(&file));
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("3 already imported, skipped"), "{out}");

    let table = stdout(sessions(&db).arg("list").env("COLUMNS", "200"));
    let header = table.lines().next().unwrap();
    for col in ["started (UTC)", "last active", "preview"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(table.contains("my-bench"), "{table}");
    assert!(
        table.contains("Please fix bug number 2 in the parser"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(sessions(&db).args(["--json", "list"]))).unwrap();
    let row = &json[0];
    assert_eq!(row["source"], "my-bench");
    assert!(row["last_active"].as_f64().unwrap() >= row["started_at"].as_f64().unwrap());
    assert!(
        row["preview"]
            .as_str()
            .unwrap()
            .starts_with("Please fix bug number")
    );
}

#[test]
fn a_shipped_sample_keeps_its_own_source() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let out = stdout(
        sessions(&db)
            .arg("import")
            .arg(sample("tau-bench-airline.jsonl")),
    );
    assert!(out.contains("(source tau-bench)"), "{out}");
}

fn summary(text: &str) -> Message {
    let mut m = Message::user(format!("Summary: {text}"));
    m.extra
        .insert(SUMMARY_KEY.into(), serde_json::Value::Bool(true));
    m
}

#[test]
fn export_chain_is_one_valid_conversation_and_raw_gives_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let store = SqliteStore::open(&db).unwrap();
    let root = store.create_session(NewSession::new("cli")).unwrap();
    let call = |id: &str| {
        Message::assistant_tool_calls(vec![ToolCall::function(id, "Bash", r#"{"command":"ls"}"#)])
    };
    let history = vec![
        Message::user("list the files"),
        call("c1"),
        Message::tool("c1", "a.rs b.rs"),
        Message::assistant("Two files."),
    ];
    store.append_messages(&root, &history).unwrap();
    let mut view = vec![summary("listed files")];
    view.extend(history[1..].iter().cloned());
    let tip = store.start_continuation(&root, &view).unwrap();
    store
        .append_messages(
            &tip,
            &[
                Message::user("thanks"),
                Message::assistant("You're welcome."),
            ],
        )
        .unwrap();
    drop(store);

    let out = stdout(sessions(&db).args(["export", "--chain", &tip]));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let contents: Vec<&str> = lines
        .iter()
        .map(|l| l["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        contents,
        [
            "list the files",
            "",
            "a.rs b.rs",
            "Two files.",
            "thanks",
            "You're welcome."
        ]
    );
    let messages: Vec<Message> = lines
        .iter()
        .enumerate()
        .map(|(i, v)| Message::from_value(v.clone(), i).unwrap())
        .collect();
    baton_core::compress::sanitize::validate_sequence(&messages).unwrap();

    let raw = stdout(sessions(&db).args(["export", "--chain", "--raw", &tip]));
    assert_eq!(raw.lines().count(), 4 + 4 + 2);
    assert!(raw.contains("Summary: listed files"));
}

#[test]
fn search_takes_dates_rejects_unknown_roles_and_shows_calls_readably() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let store = SqliteStore::open(&db).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(
            &id,
            &[
                Message::user("run the parser tests"),
                Message::assistant_tool_calls(vec![ToolCall::function(
                    "c1",
                    "Bash",
                    r#"{"command":"cargo test \"parser\""}"#,
                )]),
                Message::tool("c1", "ok"),
            ],
        )
        .unwrap();
    drop(store);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let day =
        |offset: f64| baton_store::session::format_utc_minutes(now + offset)[..10].to_string();
    let (today, tomorrow, yesterday) = (day(0.0), day(86_400.0), day(-86_400.0));
    let count = |extra: &[&str]| -> usize {
        let out = stdout(
            sessions(&db)
                .args(["--json", "search", "parser"])
                .args(extra),
        );
        serde_json::from_str::<serde_json::Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let all = count(&[]);
    assert_eq!(all, 2);
    assert_eq!(count(&["--since", &today]), all);
    assert_eq!(
        count(&["--until", &today]),
        all,
        "--until DATE includes that day"
    );
    assert_eq!(count(&["--since", &tomorrow]), 0);
    assert_eq!(count(&["--until", &yesterday]), 0);
    assert_eq!(count(&["--since", &yesterday, "--until", &today]), all);
    sessions(&db)
        .args(["search", "parser", "--since", "2026-13-01"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`2026-13-01` is neither a date"));

    sessions(&db)
        .args(["search", "parser", "--role", "robot"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("robot"))
        .stderr(predicate::str::contains("user"))
        .stderr(predicate::str::contains("assistant"))
        .stderr(predicate::str::contains("tool"));

    let out = stdout(
        sessions(&db)
            .args(["search", "cargo"])
            .env("COLUMNS", "200"),
    );
    assert!(
        out.contains(r#"Bash(command: >>>cargo<<< test "parser")"#),
        "{out}"
    );
    assert!(
        !out.contains(r#"\""#) && !out.contains("\"function\""),
        "{out}"
    );
}

/// The chain the real compressor writes (twice over, on the shipped Claude Code sample, with a
/// turn after each pass) exports as the original history plus those turns, nothing repeated.
#[test]
fn export_chain_of_real_compactions_is_the_original_history_plus_new_turns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let out = stdout(
        sessions(&db)
            .args(["--json", "import"])
            .arg(sample("claude-code-session.jsonl")),
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let root = report["imported"][0]["id"].as_str().unwrap().to_string();
    let mut expected = SqliteStore::open_read_only(&db)
        .unwrap()
        .messages(&root)
        .unwrap();
    let mut tip = root.clone();
    for pass in 0..2 {
        let out = baton()
            .args([
                "compress",
                "--report",
                "json",
                "--force",
                "--context-length",
                "64000",
            ])
            .arg("--db")
            .arg(&db)
            .args(["--session", &tip])
            .assert()
            .success()
            .get_output()
            .clone();
        let report: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        tip = report["continuation"].as_str().unwrap().to_string();
        let turn = [
            Message::user(format!("follow-up {pass}")),
            Message::assistant(format!("reply {pass}")),
        ];
        SqliteStore::open(&db)
            .unwrap()
            .append_messages(&tip, &turn)
            .unwrap();
        expected.extend(turn);
    }
    let out = stdout(sessions(&db).args(["export", "--chain", &tip]));
    let got: Vec<String> = out
        .lines()
        .enumerate()
        .map(|(i, l)| {
            Message::from_value(serde_json::from_str(l).unwrap(), i)
                .unwrap()
                .text()
        })
        .collect();
    let want: Vec<String> = expected.iter().map(Message::text).collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the chain export differs from the history");
}
