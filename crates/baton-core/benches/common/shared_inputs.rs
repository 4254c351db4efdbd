//! The shared benchmark inputs (`../shared/bench/make_inputs.py`): the real and real-derived
//! transcripts the reference design's figures were taken on. Built once into
//! `target/bench-inputs` and checked against the manifest's sizes; absent `../shared` (a
//! fresh clone), benches that need them print a note and skip.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The folder holding the inputs, building it when needed; `None` (with a note) when the
/// generator is not available.
pub fn dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("../shared/bench/make_inputs.py");
    if !script.exists() {
        eprintln!(
            "note: {} not found; skipping the shared-input benchmarks",
            script.display()
        );
        return None;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let out = target.join("bench-inputs");
    if !out.join("manifest.json").exists() {
        eprintln!("building the shared benchmark inputs in {}", out.display());
        let ok = std::process::Command::new("python3")
            .arg(&script)
            .arg(&out)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("note: make_inputs.py failed; skipping the shared-input benchmarks");
            return None;
        }
    }
    Some(out)
}

/// The path of input `name` (`real1`, `synth_10k`, `normalized_all`, …), if its size matches
/// the manifest.
pub fn input(dir: &Path, name: &str) -> Option<PathBuf> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).ok()?).ok()?;
    let entry = &manifest["inputs"][name];
    let path = PathBuf::from(entry["path"].as_str()?);
    let bytes = entry["bytes"].as_u64()?;
    let size = std::fs::metadata(&path).ok()?.len();
    if size != bytes {
        eprintln!(
            "note: {} is {size} bytes, the manifest says {bytes}; skipping it",
            path.display()
        );
        return None;
    }
    Some(path)
}
