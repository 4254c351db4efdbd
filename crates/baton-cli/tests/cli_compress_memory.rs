//! Peak memory of `compress` is the parsed conversation once plus what the output needs, not
//! copies of it (issue #17 item 3): the release binary compacts a generated 500 MB
//! conversation (the repository's real sample transcripts repeated, tool-call ids made
//! unique) and its peak RSS, read from `/proc/<pid>/status` (`VmHWM`) while it runs, stays
//! under twice the file. Skipped in debug builds: `cargo test --release -p baton-cli --test
//! cli_compress_memory -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::formats::load_file;
use baton_core::message::Message;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The messages of every sample transcript of the repository, in order.
fn sample_messages() -> Vec<Message> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/samples");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
        .collect();
    paths.sort();
    let messages: Vec<Message> = paths
        .iter()
        .flat_map(|p| load_file(p, None).unwrap().conversations)
        .flat_map(|c| c.messages)
        .filter(|m| m.role != baton_core::message::Role::System)
        .collect();
    assert!(messages.len() > 300, "{} sample messages", messages.len());
    messages
}

/// One conversation record of at least `bytes` bytes: a system prompt, then the samples'
/// messages over and over, each round's tool-call ids suffixed so every pair stays valid.
fn write_conversation(path: &Path, bytes: usize) -> usize {
    let samples = sample_messages();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let system = Message::system("You are a coding agent working in a large repository.");
    write!(out, "{{\"id\":\"big\",\"messages\":[{}", system.to_json()).unwrap();
    let (mut written, mut count) = (0usize, 1usize);
    for round in 0.. {
        for m in &samples {
            let mut m = m.clone();
            for call in m.tool_calls.iter_mut().flatten() {
                call.id = format!("{}-{round}", call.id);
            }
            if let Some(id) = m.tool_call_id.as_mut() {
                *id = format!("{id}-{round}");
            }
            let json = m.to_json();
            write!(out, ",{json}").unwrap();
            written += json.len() + 1;
            count += 1;
        }
        if written >= bytes {
            break;
        }
    }
    write!(out, "]}}").unwrap();
    out.flush().unwrap();
    count
}

#[test]
fn compressing_a_500_mb_conversation_peaks_under_twice_the_file() {
    if cfg!(debug_assertions) {
        eprintln!(
            "note: peak-RSS test runs on release builds only (cargo test --release); skipped"
        );
        return;
    }
    if !Path::new("/proc/self/status").exists() {
        eprintln!("note: no /proc on this system; peak-RSS test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.json");
    let messages = write_conversation(&input, 500 * 1024 * 1024);
    let size = std::fs::metadata(&input).unwrap().len();
    let output = dir.path().join("out.json");
    let started = Instant::now();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_baton"));
    cmd.arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let (status, peak) = common::run_measuring_peak(cmd);
    assert!(status.success());
    let out_size = std::fs::metadata(&output).unwrap().len();
    let ratio = peak as f64 * 1024.0 / size as f64;
    eprintln!(
        "compressed {} MB ({messages} messages) to {} KB in {:.1} s with a peak RSS of {} MiB ({ratio:.2}x the file)",
        size / 1_000_000,
        out_size / 1000,
        started.elapsed().as_secs_f64(),
        peak / 1024,
    );
    assert!(peak > 0, "the peak was read");
    assert!(
        out_size > 0 && out_size < size / 10,
        "the output is compact"
    );
    assert!(ratio <= 2.0, "peak RSS {ratio:.2}x the file");
}
