//! Which output writes are flushed to the disk before their rename: a file that replaces one
//! the user had is (a power loss must not leave an empty file where their data was); a new
//! file is not (nothing is lost if it is missing after a crash, and the flush was the largest
//! part of a short `baton compress` not spent computing, issue #17). Seen through `strace`,
//! which `scripts/ci-deps.sh` installs; without it (or where tracing is not allowed) the test
//! prints a note and skips.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{empty_home, sample};
use std::path::Path;
use std::process::Command;

/// Whether `strace` runs here and may trace a child.
fn strace_works() -> bool {
    Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=none", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The flushes (`fsync`, `fdatasync`) `baton compress --force INPUT -o OUTPUT` made.
fn flushes_of_compress(input: &Path, output: &Path, log: &Path) -> Vec<String> {
    let status = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(log)
        .arg(assert_cmd::cargo::cargo_bin("baton"))
        .args(["compress", "--force"])
        .arg(input)
        .arg("-o")
        .arg(output)
        .env("BATON_HOME", empty_home())
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(status.status.success(), "compress failed: {status:?}");
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("fsync(") || l.contains("fdatasync("))
        .map(str::to_string)
        .collect()
}

#[test]
fn only_a_write_that_replaces_a_file_is_flushed_before_its_rename() {
    if !strace_works() {
        eprintln!("note: strace is not available or may not trace here; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = sample("tau-bench-airline.jsonl");
    let output = dir.path().join("out.jsonl");
    let log = dir.path().join("strace.log");

    let new_file = flushes_of_compress(&input, &output, &log);
    assert!(
        new_file.is_empty(),
        "a new output file is not flushed: {new_file:?}"
    );
    let written = std::fs::read(&output).unwrap();
    assert!(!written.is_empty(), "the new file holds the output");

    let replacing = flushes_of_compress(&input, &output, &log);
    assert_eq!(
        replacing.len(),
        1,
        "replacing the file flushes the new content once: {replacing:?}"
    );
    assert_eq!(std::fs::read(&output).unwrap(), written, "the same output");
}
