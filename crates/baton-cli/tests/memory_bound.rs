//! Peak memory per message stays bounded (issue #13 item 10): `tokens` and `compress` on a file
//! of 200,000 tiny messages, measured with GNU time's maximum resident set size. Before the
//! JSON Lines fast path and the compress output shell, they peaked at ~21× and ~42× the file's
//! size on the 1,000,000-message version of this file; the bounds below fail at those ratios.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

const TIME: &str = "/usr/bin/time";

fn tiny_messages(path: &Path, n: usize) -> u64 {
    let mut text = String::with_capacity(n * 45);
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text.push_str(&format!(
            "{{\"role\": \"{role}\", \"content\": \"hi {i}\"}}\n"
        ));
    }
    std::fs::write(path, &text).unwrap();
    text.len() as u64
}

/// Peak RSS in bytes of `baton args`.
fn peak_rss(args: &[&str]) -> u64 {
    let out = std::process::Command::new(TIME)
        .arg("-f")
        .arg("PEAK %M")
        .arg(assert_cmd::cargo::cargo_bin("baton"))
        .args(args)
        .env("BATON_HOME", common::empty_home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("PEAK "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"));
    kib * 1024
}

#[test]
fn tokens_and_compress_peak_memory_stays_within_a_small_multiple_of_the_input() {
    if !Path::new(TIME).exists() {
        println!("skipped: {TIME} (GNU time) is not installed; scripts/ci-deps.sh installs it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tiny.jsonl");
    let size = tiny_messages(&input, 200_000);
    let file = input.to_str().unwrap();
    let mib = |b: u64| b as f64 / 1_048_576.0;
    let out = dir.path().join("out.jsonl");
    let out = out.to_str().unwrap();
    // (command, its arguments, the bound as a multiple of the input)
    let cases: [(&str, Vec<&str>, u64); 2] = [
        ("tokens", vec!["tokens", "--encoding", "rough", file], 12),
        (
            "compress",
            vec!["compress", file, "--context-length", "200000", "-o", out],
            26,
        ),
    ];
    for (name, args, multiple) in cases {
        let peak = peak_rss(&args);
        println!(
            "{name}: {:.0} MiB peak for a {:.1} MiB file",
            mib(peak),
            mib(size)
        );
        assert!(
            peak < multiple * size + 40 * 1_048_576,
            "{name} peaked at {:.0} MiB, over {multiple}× the input + 40 MiB",
            mib(peak)
        );
    }
}
