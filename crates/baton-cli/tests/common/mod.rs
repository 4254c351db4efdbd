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

/// Runs `cmd`, expects success, and returns its standard output as text.
pub fn success_stdout(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

/// Runs `cmd` to its end, reading its peak resident memory (`VmHWM` of `/proc/<pid>/status`,
/// in KiB) every 20 ms while it runs: the measure of the peak-RSS tests (release builds).
pub fn run_measuring_peak(mut cmd: std::process::Command) -> (std::process::ExitStatus, u64) {
    let peak_kib = |pid: u32| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let mut peak = 0;
    loop {
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
