//! Issue #13 item 5: the reading commands work on a database in a directory the user cannot
//! write (no `-shm` / `-wal` can be created beside it), as they do on a read-only file, and
//! leave the directory as it was. Root ignores permissions, so as root the commands run as
//! `nobody` through `setpriv`; without `setpriv` the test is skipped with a note.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const NOBODY: &str = "65534";

/// The command that runs `baton` as a user for whom `dir` is really read-only; `None` when
/// that cannot be arranged here.
fn baton_without_write_access(dir: &Path) -> Option<Command> {
    let bin = assert_cmd::cargo::cargo_bin("baton");
    let probe = dir.join("owner-probe");
    std::fs::write(&probe, b"").unwrap();
    let root = std::fs::metadata(&probe).unwrap().uid() == 0;
    std::fs::remove_file(&probe).unwrap();
    let mut cmd = if root {
        let ok = Command::new("setpriv")
            .args([
                "--reuid",
                NOBODY,
                "--regid",
                NOBODY,
                "--clear-groups",
                "true",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
            .arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.env("BATON_HOME", common::empty_home())
        .env_remove("OPENAI_BASE_URL");
    Some(cmd)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn reading_commands_work_in_a_directory_nobody_can_write() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let writable = tmp.path().join("state.db");
    baton()
        .args(["sessions", "--db"])
        .arg(&writable)
        .arg("import")
        .arg(sample("tielec-ja.jsonl"))
        .assert()
        .success();
    let listed: serde_json::Value = serde_json::from_slice(
        &baton()
            .args(["sessions", "--json", "--db"])
            .arg(&writable)
            .arg("list")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();

    // Only the main file, as a database closed cleanly and then moved or shared looks.
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("state.db");
    std::fs::copy(&writable, &db).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::read(&db).unwrap();

    let Some(_) = baton_without_write_access(&ro) else {
        eprintln!("note: skipped, running as root without setpriv to drop to nobody");
        return;
    };
    let commands: [Vec<&str>; 5] = [
        vec!["list"],
        vec!["search", "評価"],
        vec!["stats"],
        vec!["show", &id],
        vec!["export", &id],
    ];
    for args in &commands {
        let out = baton_without_write_access(&ro)
            .unwrap()
            .args(["sessions", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?} failed: {stderr}");
        assert!(!out.stdout.is_empty(), "{args:?} printed nothing");
        assert!(!stderr.contains("readonly"), "{args:?}: {stderr}");
    }
    assert_eq!(names(&ro), ["state.db"], "no side file was left");
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database is unchanged"
    );
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}
