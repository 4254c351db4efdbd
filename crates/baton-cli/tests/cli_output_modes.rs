//! Output files get the permissions the user's umask gives any new file (0644 under umask 022),
//! not the 0600 of a temporary file, and a replaced file keeps its mode.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{empty_home, sample};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Runs `baton ARGS` under `umask` (through `sh`, since the umask is per process) and expects
/// success.
fn baton_with_umask(umask: &str, args: &[&str]) {
    let bin = assert_cmd::cargo::cargo_bin("baton");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(&bin)
        .args(args)
        .env("BATON_HOME", empty_home())
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "baton {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn compress_output_is_0644_under_umask_022_and_follows_a_stricter_umask() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("tau-bench-airline.jsonl");
    let out = dir.path().join("out.jsonl");
    baton_with_umask("022", &["compress", s(&input), "--force", "-o", s(&out)]);
    assert_eq!(mode(&out), 0o644, "new compress output under umask 022");

    let private = dir.path().join("private.jsonl");
    baton_with_umask(
        "077",
        &["compress", s(&input), "--force", "-o", s(&private)],
    );
    assert_eq!(mode(&private), 0o600, "new compress output under umask 077");
}

#[test]
fn replacing_an_existing_output_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("tau-bench-airline.jsonl");
    let out = dir.path().join("out.jsonl");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    baton_with_umask("022", &["compress", s(&input), "--force", "-o", s(&out)]);
    assert_ne!(std::fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(mode(&out), 0o640, "the replaced file keeps its mode");
}

#[test]
fn sessions_export_and_trajectory_outputs_are_0644_under_umask_022() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let input = sample("tau-bench-airline.jsonl");
    baton_with_umask("022", &["sessions", "--db", s(&db), "import", s(&input)]);
    let listed = assert_cmd::Command::cargo_bin("baton")
        .unwrap()
        .env("BATON_HOME", empty_home())
        .args(["sessions", "--json", "--db", s(&db), "list"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let export = dir.path().join("export.jsonl");
    baton_with_umask(
        "022",
        &["sessions", "--db", s(&db), "export", &id, "-o", s(&export)],
    );
    assert_eq!(mode(&export), 0o644, "sessions export -o");

    let traj = dir.path().join("traj.jsonl");
    let summary = dir.path().join("summary.json");
    let metrics = dir.path().join("metrics.jsonl");
    baton_with_umask(
        "022",
        &[
            "trajectories",
            "compress",
            s(&input),
            "-o",
            s(&traj),
            "--summary-json",
            s(&summary),
            "--metrics",
            s(&metrics),
            "--target-max-tokens",
            "2000",
        ],
    );
    assert_eq!(mode(&traj), 0o644, "trajectories output");
    assert_eq!(mode(&summary), 0o644, "trajectories --summary-json");
    assert_eq!(mode(&metrics), 0o644, "trajectories --metrics");
}
