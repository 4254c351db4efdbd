//! Output paths never destroy input (issue #13, item 1): an output that is the input under
//! another name (a hard link) is refused before anything is opened for writing; an input that
//! cannot be read leaves no output behind; and an output that is not a regular file (a device,
//! a FIFO, a symlink) is written through, never replaced by a renamed temporary file.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// A copy of a committed sample in `dir`, readable by both `compress` and `trajectories`.
fn input_in(dir: &Path) -> PathBuf {
    let path = dir.join("in.jsonl");
    std::fs::copy(sample("tau-bench-airline.jsonl"), &path).unwrap();
    path
}

/// Runs `args` with OUT a hard link to IN and checks the refusal (exit 2) and that IN still
/// holds its bytes.
fn refused_over_hard_link(args: &[&str], link_flag: &str) {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("link.jsonl");
    std::fs::hard_link(&input, &link).unwrap();
    let other_out = dir.path().join("other.jsonl");
    let mut cmd = baton();
    cmd.args(args).arg(&input);
    if link_flag != "-o" {
        cmd.arg("-o").arg(&other_out);
    }
    cmd.arg(link_flag)
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("same file"));
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "input bytes unchanged"
    );
    assert!(!other_out.exists(), "nothing written before the refusal");
}

#[test]
fn trajectories_output_hard_linked_to_the_input_is_refused() {
    refused_over_hard_link(&["trajectories", "compress", "--force"], "-o");
}

#[test]
fn trajectories_metrics_hard_linked_to_the_input_is_refused() {
    refused_over_hard_link(&["trajectories", "compress", "--force"], "--metrics");
}

#[test]
fn trajectories_summary_json_hard_linked_to_the_input_is_refused() {
    refused_over_hard_link(&["trajectories", "compress", "--force"], "--summary-json");
}

#[test]
fn compress_output_hard_linked_to_the_input_is_refused() {
    refused_over_hard_link(&["compress", "--force"], "-o");
}

#[test]
fn trajectories_two_outputs_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let out = dir.path().join("out.jsonl");
    baton()
        .args(["trajectories", "compress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--metrics")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("same file"));
    assert!(!out.exists());
}

/// A missing input, then a folder given as the input: no OUT appears, and a rerun with a
/// real input (no --force) writes it.
#[test]
fn unreadable_input_leaves_no_output_and_the_rerun_works() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for (n, bad) in [dir.path().join("missing.jsonl"), folder]
        .iter()
        .enumerate()
    {
        for command in [&["trajectories", "compress"][..], &["compress"][..]] {
            let out = dir.path().join(format!("out{n}-{}.jsonl", command.len()));
            baton()
                .args(command)
                .arg(bad)
                .arg("-o")
                .arg(&out)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("cannot read"));
            assert!(
                !out.exists(),
                "{command:?} {} left {}",
                bad.display(),
                out.display()
            );
            let good = input_in(dir.path());
            baton()
                .args(command)
                .arg(&good)
                .arg("-o")
                .arg(&out)
                .assert()
                .success();
            assert!(std::fs::metadata(&out).unwrap().len() > 0);
        }
    }
}

/// Today's `main` renamed a temporary file over the device node (as root, `/dev/null`
/// became a regular 0600 file); it must stay the character device.
#[test]
fn compress_to_dev_null_leaves_the_device_node() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    baton()
        .arg("compress")
        .arg(&input)
        .args(["-o", "/dev/null"])
        .assert()
        .success();
    let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
    assert!(
        kind.is_char_device(),
        "/dev/null is still a character device"
    );
}

#[test]
fn compress_to_a_fifo_writes_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    let expected = {
        let out = dir.path().join("plain.jsonl");
        baton()
            .arg("compress")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out).unwrap()
    };
    baton()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    // Checked first: a FIFO replaced by a file never gets a writer, and joining would hang.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO is still a FIFO");
    assert_eq!(
        reader.join().unwrap(),
        expected,
        "the reader got the output"
    );
}

#[test]
fn compress_to_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let target = dir.path().join("target.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("target.jsonl", &link).unwrap();
    baton()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&link)
        .assert()
        .success();
    let kind = std::fs::symlink_metadata(&link).unwrap().file_type();
    assert!(kind.is_symlink(), "the link is still a link");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("target.jsonl"),
        "pointing where it did"
    );
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(
        written.len() > 100 && written != "old\n",
        "the target got the output"
    );
}

#[test]
fn sessions_export_over_the_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .arg("import")
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success();
    let before = std::fs::read(&db).unwrap();
    let link = dir.path().join("export.jsonl");
    std::fs::hard_link(&db, &link).unwrap();
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["export", "1"])
        .arg("-o")
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("session database"));
    assert_eq!(std::fs::read(&db).unwrap(), before, "database unchanged");
}

/// `-o /dev/stdout` with standard output redirected to a file: the file the descriptor refers
/// to gets the output (a rename would give the name a new file the descriptor never sees).
#[test]
fn compress_to_dev_stdout_writes_through_the_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let captured = dir.path().join("captured.jsonl");
    let file = std::fs::File::create(&captured).unwrap();
    let inode = std::os::unix::fs::MetadataExt::ino(&file.metadata().unwrap());
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .env("BATON_HOME", common::empty_home())
        .env_remove("OPENAI_BASE_URL")
        .arg("compress")
        .arg(&input)
        .args(["-o", "/dev/stdout"])
        .stdout(file)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let meta = std::fs::metadata(&captured).unwrap();
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&meta),
        inode,
        "the same file, not a replacement"
    );
    assert!(meta.len() > 100, "the output went to standard output");
    let kind = std::fs::symlink_metadata("/dev/stdout")
        .unwrap()
        .file_type();
    assert!(kind.is_symlink(), "/dev/stdout is still a link");
}
