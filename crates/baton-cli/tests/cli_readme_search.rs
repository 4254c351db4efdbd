//! The README's search example works from a fresh clone: its own `sessions import` of the
//! shipped samples, then its own CJK `sessions search`, run exactly as written, find a match.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README line that starts with `prefix`, without its trailing `# comment`.
fn readme_command(prefix: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("README.md has no line starting with `{prefix}`"));
    match line.find("  #") {
        Some(i) => line[..i].trim_end().to_string(),
        None => line.to_string(),
    }
}

/// Runs a README command line through `sh` (so its globs and quotes mean what they mean to
/// a reader) from the repository root, with this build's `baton` first on PATH.
fn run(line: &str, home: &std::path::Path) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("baton");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(repo_root())
        .env("PATH", path)
        .env("BATON_HOME", home)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

#[test]
fn the_readme_search_example_finds_a_match_after_the_readme_import() {
    let home = tempfile::tempdir().unwrap();
    let import = readme_command("baton sessions import data/samples");
    let search = readme_command("baton sessions search '");

    let out = run(&import, home.path());
    assert!(
        out.status.success(),
        "`{import}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run(&search, home.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "`{search}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("no messages match") && stdout.contains(">>>"),
        "`{search}` found nothing after `{import}`:\n{stdout}"
    );
}
