//! `sessions show` and `sessions search` never send a stored transcript's terminal control
//! sequences to the terminal: OSC titles, hyperlinks, screen clears and BEL come out escaped
//! (`\x1b`), and only `--raw` prints the bytes as stored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::baton;
use std::path::Path;

/// Sets the window title, rings the bell, clears the screen and hides a link target.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\";

fn imported(dir: &Path) -> (std::path::PathBuf, String) {
    let db = dir.join("state.db");
    let file = dir.join("hostile.jsonl");
    let lines = [
        serde_json::json!({"role": "user", "content": format!("zebraword {HOSTILE} done")}),
        serde_json::json!({"role": "assistant", "content": "noted"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = report["imported"][0]["id"].as_str().unwrap().to_string();
    (db, id)
}

fn stdout(db: &Path, args: &[&str]) -> Vec<u8> {
    baton()
        .env("COLUMNS", "400")
        .args(["sessions", "--db"])
        .arg(db)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b == 0x1b || b == 0x07)
}

#[test]
fn show_and_search_escape_control_sequences_and_raw_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = imported(dir.path());
    for args in [vec!["show", id.as_str()], vec!["search", "zebraword"]] {
        let out = stdout(&db, &args);
        let text = String::from_utf8_lossy(&out);
        assert!(!has_control(&out), "{args:?} printed ESC/BEL: {text:?}");
        assert!(
            text.contains("\\x1b]0;pwned\\x07\\x1b[2J"),
            "{args:?} does not show the escaped title/clear: {text}"
        );
        assert!(text.contains("\\x1b]8;;http://evil"), "{args:?}: {text}");

        let mut raw_args = args.clone();
        raw_args.push("--raw");
        let raw = stdout(&db, &raw_args);
        assert!(
            String::from_utf8_lossy(&raw).contains("\x1b]0;pwned\x07\x1b[2J"),
            "{raw_args:?} does not print the stored bytes: {:?}",
            String::from_utf8_lossy(&raw)
        );
    }
}

#[test]
fn json_output_is_unchanged_by_escaping() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = imported(dir.path());
    let out = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .args(["show", &id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(!has_control(&out), "serde escapes controls in JSON");
    let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let text = value["messages"][0]["content"].as_str().unwrap();
    assert!(
        text.contains(HOSTILE),
        "JSON keeps the stored text exactly: {text:?}"
    );
}

/// Titles and previews in `sessions list`: Baton's own writes clean titles, but a title stored
/// by another program (the reference design's code, a `sqlite3` shell) must still be shown,
/// not obeyed.
#[test]
fn list_escapes_titles_another_program_stored() {
    if std::process::Command::new("sqlite3")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipped: the sqlite3 shell is not installed (scripts/ci-deps.sh installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = imported(dir.path());
    let sql = format!(
        "UPDATE sessions SET title = 'report' || char(27) || ']0;pwned' || char(7) WHERE id = '{id}';"
    );
    let status = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg(sql)
        .status()
        .unwrap();
    assert!(status.success());
    let out = stdout(&db, &["list"]);
    assert!(!has_control(&out), "{}", String::from_utf8_lossy(&out));
    assert!(String::from_utf8_lossy(&out).contains("report"));
}
