//! Memory files as people edit them: CRLF line ends and a BOM parse like LF, every write that
//! removes or replaces content leaves the previous file recoverable beside it, and temp files
//! of killed writers are cleaned up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_memory::backup::{KEEP, backups};
use baton_memory::{Applied, Limits, MemoryStore, Target, WriteOutcome};
use std::path::{Path, PathBuf};

const FACTS: [&str; 3] = [
    "Project uses cargo nextest",
    "CI runs on Ubuntu 24.04\nand on macOS 15",
    "Deploys go through the staging cluster first",
];

fn lf() -> String {
    FACTS.join("\n§\n")
}

fn with_file(raw: &str) -> (tempfile::TempDir, MemoryStore, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mem = dir.path().join("memories");
    std::fs::create_dir_all(&mem).unwrap();
    let path = mem.join("MEMORY.md");
    std::fs::write(&path, raw).unwrap();
    let s = MemoryStore::open(dir.path(), Limits::default()).unwrap();
    (dir, s, path)
}

fn applied(o: WriteOutcome) -> Applied {
    match o {
        WriteOutcome::Applied(a) => a,
        WriteOutcome::Refused(r) => panic!("expected success, got {r:?}"),
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn crlf_and_bom_files_hold_the_same_entries_as_lf() {
    let crlf = lf().replace('\n', "\r\n");
    for raw in [
        lf(),
        crlf.clone(),
        format!("\u{feff}{}", lf()),
        format!("\u{feff}{crlf}\r\n"),
    ] {
        let (_d, s, _p) = with_file(&raw);
        assert_eq!(s.entries(Target::Memory).unwrap(), FACTS, "{raw:?}");
    }
}

#[test]
fn remove_on_a_crlf_file_removes_only_that_entry_and_keeps_the_style() {
    let raw = format!("\u{feff}{}", lf().replace('\n', "\r\n"));
    let (_d, s, path) = with_file(&raw);
    let a = applied(s.remove(Target::Memory, "staging cluster").unwrap());
    assert_eq!(a.entries, FACTS[..2]);
    let backup = a.backup.expect("a remove names its backup");
    assert_eq!(
        read(&backup),
        raw,
        "the backup is the previous file, byte for byte"
    );
    let now = read(&path);
    let expected = FACTS[..2].join("\n§\n").replace('\n', "\r\n");
    assert_eq!(now, format!("\u{feff}{expected}"), "BOM and CRLF are kept");
    assert_eq!(s.entries(Target::Memory).unwrap(), FACTS[..2]);
}

#[test]
fn remove_and_replace_keep_the_previous_version_but_a_plain_add_does_not_need_to() {
    let (_d, s, path) = with_file(&lf());
    let a = applied(
        s.add(Target::Memory, "Lint with clippy -D warnings")
            .unwrap(),
    );
    assert_eq!(
        a.backup, None,
        "an append to a canonical file loses nothing"
    );
    let before_replace = read(&path);
    let a = applied(
        s.replace(Target::Memory, "nextest", "Project uses cargo test")
            .unwrap(),
    );
    assert_eq!(read(&a.backup.expect("replace backs up")), before_replace);
    let before_remove = read(&path);
    let a = applied(s.remove(Target::Memory, "clippy").unwrap());
    assert_eq!(read(&a.backup.expect("remove backs up")), before_remove);
}

#[test]
fn backups_rotate_keeping_the_newest() {
    let many: Vec<String> = (0..KEEP + 3)
        .map(|i| format!("fact number {i} about topic {}", (b'a' + i as u8) as char))
        .collect();
    let (_d, s, path) = with_file(&many.join("\n§\n"));
    let mut last = None;
    for i in 0..KEEP + 3 {
        let a = applied(
            s.remove(Target::Memory, &format!("fact number {i} "))
                .unwrap(),
        );
        last = a.backup;
    }
    let kept = backups(&path);
    assert_eq!(kept.len(), KEEP, "{kept:?}");
    assert_eq!(kept.last().map(|(_, p)| p.clone()), last);
    assert_eq!(read(&kept.last().unwrap().1), many[KEEP + 2]);
}

#[test]
fn temp_files_left_by_killed_writers_are_cleaned_on_the_next_write() {
    let (_d, s, path) = with_file(&lf());
    let dir = path.parent().unwrap();
    let orphan = dir.join(".mem_k1lled.tmp");
    std::fs::write(&orphan, "half a file").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&orphan)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(300))
        .unwrap();
    applied(s.add(Target::Memory, "Releases are tagged vX.Y.Z").unwrap());
    assert!(!orphan.exists());
    let litter: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(litter.is_empty(), "{litter:?}");
}
