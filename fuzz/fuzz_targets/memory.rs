//! The memory files as `memory show`, `scan` and the agent's tool read them: a hand-edited
//! MEMORY.md / USER.md with any bytes, then entries, usage, scan, the frozen snapshot and a
//! write (which must keep or back up what it cannot round-trip).
#![no_main]

use baton_memory::{Limits, MemoryStore, Target, entries, scan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let parsed = entries::parse(text);
        let _ = entries::join(&parsed);
        let _ = entries::round_trips(text);
        let _ = entries::dedupe(parsed.clone());
        for e in &parsed {
            let _ = entries::preview(e, 40);
        }
        let _ = scan::scan_all(text);
    }
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    if std::fs::write(dir.path().join("MEMORY.md"), data).is_err() {
        return;
    }
    let _ = std::fs::write(dir.path().join("USER.md"), data);
    let Ok(store) = MemoryStore::open_dir(dir.path(), Limits::default()) else {
        return;
    };
    let _ = store.entries(Target::Memory);
    let _ = store.usage(Target::User);
    let _ = store.scan();
    let _ = store.refresh_snapshot().map(|s| s.system_prompt_block());
    let _ = store.add(Target::Memory, "fuzz entry");
    let _ = store.remove(Target::User, "a");
});
