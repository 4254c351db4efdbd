//! Helpers shared by the CLI tests: the real binary and the shipped samples.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::path::PathBuf;

/// A file of `data/samples`.
pub fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/samples")
        .join(name)
}

/// The `baton` binary built by this workspace.
pub fn baton() -> Command {
    Command::cargo_bin("baton").unwrap()
}

/// Runs `baton` with `args`, expects success, and parses its stderr as the JSON report.
pub fn json_report<I, S>(args: I) -> serde_json::Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = baton().args(args).assert().success().get_output().clone();
    serde_json::from_slice(&out.stderr).unwrap()
}
