//! Peak memory of `sessions import` is bounded by a batch, not by the file (issue #17 item 3):
//! the release binary imports a generated 500 MB JSON Lines file and its peak RSS, read from
//! `/proc/<pid>/status` (`VmHWM`) while it runs, stays under 150 MiB. Skipped in debug
//! builds (too slow to be worth it): `cargo test --release -p baton-cli --test
//! cli_import_memory -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

#[test]
fn importing_a_500_mb_file_stays_under_150_mib() {
    if cfg!(debug_assertions) {
        eprintln!(
            "note: peak-RSS test runs on release builds only (cargo test --release); skipped"
        );
        return;
    }
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("note: no /proc on this system; peak-RSS test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.jsonl");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        let filler = "log line with some words and numbers 12345 ".repeat(20);
        let mut written = 0usize;
        let mut i = 0usize;
        while written < 500 * 1024 * 1024 {
            let line = serde_json::json!({"messages": [
                {"role": "user", "content": format!("task {i}: {filler}")},
                {"role": "assistant", "content": format!("done {i}: {filler}")},
            ]})
            .to_string();
            writeln!(out, "{line}").unwrap();
            written += line.len() + 1;
            i += 1;
        }
    }
    let size = std::fs::metadata(&input).unwrap().len();
    let db = dir.path().join("s.db");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_baton"));
    cmd.args(["sessions", "--db"])
        .arg(&db)
        .arg("import")
        .arg(&input)
        .stdout(std::process::Stdio::null());
    let (status, peak) = common::run_measuring_peak(cmd);
    assert!(status.success());
    eprintln!(
        "imported {} MB with a peak RSS of {} MiB",
        size / 1_000_000,
        peak / 1024
    );
    assert!(peak > 0, "the peak was read");
    assert!(
        peak < 150 * 1024,
        "peak RSS {} MiB for a {} MB file",
        peak / 1024,
        size / 1_000_000
    );
}
