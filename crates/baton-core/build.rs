//! Writes the redaction scan's automaton into `OUT_DIR` as static tables
//! (`src/summary/redact/scan_table.rs` includes them), built from the literal prefixes in
//! `scan_prefixes.rs` by the same code a process would run (`dfa_table.rs`): building it at
//! run time was 0.2 ms of every process that redacted anything (issue #17).

#[path = "src/summary/redact/dfa_table.rs"]
mod dfa_table;
#[path = "src/summary/redact/scan_prefixes.rs"]
mod scan_prefixes;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo::rerun-if-changed=src/summary/redact/dfa_table.rs");
    println!("cargo::rerun-if-changed=src/summary/redact/scan_prefixes.rs");
    let Some(table) = dfa_table::DfaTable::for_literals(&scan_prefixes::SCAN_PREFIXES) else {
        eprintln!("the scan prefixes in scan_prefixes.rs make no automaton with 16-bit states");
        return ExitCode::FAILURE;
    };
    let Some(out_dir) = std::env::var_os("OUT_DIR") else {
        eprintln!("cargo did not set OUT_DIR");
        return ExitCode::FAILURE;
    };
    let path = PathBuf::from(out_dir).join("scan_table.rs");
    if let Err(e) = std::fs::write(&path, table.to_rust("SCAN")) {
        eprintln!("cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
