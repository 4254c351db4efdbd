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

/// The `baton` binary built by this workspace, with an empty `BATON_HOME` (never the
/// user's config.toml) and none of the environment variables that set configuration keys
/// (`OPENAI_BASE_URL` would make `compress` ask that server for the window).
/// Tests that need a home of their own set `BATON_HOME` again.
pub fn baton() -> Command {
    let mut cmd = Command::cargo_bin("baton").unwrap();
    cmd.env("BATON_HOME", empty_home())
        .env_remove("CONTEXT_COMPRESSION_THRESHOLD")
        .env_remove("CONTEXT_COMPRESSION_ENABLED")
        .env_remove("OPENAI_BASE_URL");
    cmd
}

/// A folder with no config.toml, shared by the tests of this crate.
pub fn empty_home() -> PathBuf {
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("baton-empty-home");
    std::fs::create_dir_all(&home).unwrap();
    home
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
