//! Property fuzzing of the memory files (the `cargo test` companion of `fuzz/`): a hand-edited
//! MEMORY.md / USER.md with arbitrary bytes or entry-shaped text is read, scanned, frozen into
//! a snapshot and written to, never panicking. `PROPTEST_CASES` raises the case count
//! (default 24: each case touches the disk).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_memory::{Limits, MemoryStore, Target, entries, scan};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

fn read_memory_file(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let parsed = entries::parse(text);
        let _ = entries::join(&parsed);
        let _ = entries::round_trips(text);
        for e in &parsed {
            let _ = entries::preview(e, 40);
        }
        let _ = entries::dedupe(parsed);
        let _ = scan::scan_all(text);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MEMORY.md"), data).unwrap();
    std::fs::write(dir.path().join("USER.md"), data).unwrap();
    // A file that is not UTF-8 is refused with an error naming it (never overwritten).
    let Ok(store) = MemoryStore::open_dir(dir.path(), Limits::default()) else {
        return;
    };
    let _ = store.entries(Target::Memory);
    let _ = store.usage(Target::User);
    let _ = store.scan();
    let _ = store.refresh_snapshot().map(|s| s.system_prompt_block());
    let _ = store.add(Target::Memory, "a new fact about the build");
    let _ = store.replace(Target::User, "a", "b");
    let _ = store.remove(Target::User, "e");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn memory_files_of_any_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        read_memory_file(&data);
    }

    #[test]
    fn memory_files_of_entry_shaped_text_never_panic(
        text in "([a-zé日 \\t\\r\\n§\u{202e}\u{200b}:=-]{0,40}\n§\n){0,8}[a-z §]{0,20}"
    ) {
        read_memory_file(text.as_bytes());
    }
}
