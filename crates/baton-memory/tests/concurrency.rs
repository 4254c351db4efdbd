//! Cross-process safety of the memory files, with real processes.
//!
//! The test binary re-executes itself (`current_exe() --exact child --ignored`) with
//! `BATON_MEMORY_CHILD` set, so the writers are separate processes with separate lock handles,
//! exactly like two agent sessions sharing one `$BATON_HOME`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_memory::{Limits, MemoryStore, Target, WriteOutcome};
use std::path::Path;
use std::process::{Command, Stdio};

const PROCESSES: usize = 8;
const OPS_PER_PROCESS: usize = 200;
/// Entries in each state written by the crash test's child.
const CRASH_ENTRIES: usize = 40;

fn big_limits() -> Limits {
    Limits {
        memory_chars: 10_000_000,
        user_chars: 10_000_000,
    }
}

/// Child entry point; does nothing unless spawned by one of the tests below.
#[test]
#[ignore = "spawned by the concurrency tests"]
fn child() {
    let Ok(mode) = std::env::var("BATON_MEMORY_CHILD") else {
        return;
    };
    let dir = std::env::var("BATON_MEMORY_DIR").unwrap();
    let store = MemoryStore::open_dir(Path::new(&dir), big_limits()).unwrap();
    match mode.as_str() {
        "writer" => {
            let id: usize = std::env::var("BATON_MEMORY_ID").unwrap().parse().unwrap();
            write_and_rewrite(&store, id);
        }
        "crasher" => rewrite_forever(&store),
        other => panic!("unknown child mode {other}"),
    }
}

/// Adds `OPS_PER_PROCESS` entries; every second one is then replaced by a new version.
fn write_and_rewrite(store: &MemoryStore, id: usize) {
    for n in 0..OPS_PER_PROCESS {
        let o = store
            .add(Target::Memory, &format!("[p{id}-n{n}] checkpoint"))
            .unwrap();
        assert!(o.is_applied(), "{:?}", o.to_json());
        if n % 2 == 1 {
            let o = store
                .replace(
                    Target::Memory,
                    &format!("[p{id}-n{n}]"),
                    &format!("[p{id}-n{n}] revised checkpoint"),
                )
                .unwrap();
            assert!(o.is_applied(), "{:?}", o.to_json());
        }
    }
}

/// Rewrites the whole file as generation 1, 2, 3… until killed. Every entry of a generation
/// carries its number, so a torn file would show mixed generations or a wrong count.
fn rewrite_forever(store: &MemoryStore) {
    let mut generation = 1usize;
    loop {
        for i in 0..CRASH_ENTRIES {
            let content = format!("gen {generation} entry {i} {}", "x".repeat(500));
            let old = format!("gen {} entry {i} ", generation - 1);
            let o = store.replace(Target::Memory, &old, &content).unwrap();
            assert!(matches!(o, WriteOutcome::Applied(_)), "{:?}", o.to_json());
        }
        generation += 1;
    }
}

fn spawn(mode: &str, dir: &Path, id: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BATON_MEMORY_CHILD", mode)
        .env("BATON_MEMORY_DIR", dir)
        .env("BATON_MEMORY_ID", id.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_processes_lose_no_adds_or_replaces() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("memories");
    let children: Vec<_> = (0..PROCESSES).map(|id| spawn("writer", &dir, id)).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = MemoryStore::open_dir(&dir, big_limits()).unwrap();
    let entries = store.entries(Target::Memory).unwrap();
    assert_eq!(entries.len(), PROCESSES * OPS_PER_PROCESS);
    for id in 0..PROCESSES {
        for n in 0..OPS_PER_PROCESS {
            let want = if n % 2 == 1 {
                format!("[p{id}-n{n}] revised checkpoint")
            } else {
                format!("[p{id}-n{n}] checkpoint")
            };
            assert!(entries.contains(&want), "lost {want}");
        }
    }
}

/// Whether `entries` is one complete generation written by `rewrite_forever` (or the
/// initial generation 0), possibly mid-way through replacing entry by entry: each entry `i`
/// is at generation g or g+1, and all the g+1 entries come first.
fn is_complete_state(entries: &[String]) -> bool {
    if entries.len() != CRASH_ENTRIES {
        return false;
    }
    let gens: Vec<Option<usize>> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let rest = e.strip_prefix("gen ")?;
            let (g, tail) = rest.split_once(' ')?;
            let want_tail = format!("entry {i} ");
            let payload = tail.strip_prefix(&want_tail)?;
            let g: usize = g.parse().ok()?;
            let ok = if g == 0 {
                payload == "seed"
            } else {
                payload == "x".repeat(500)
            };
            ok.then_some(g)
        })
        .collect();
    let Some(gens) = gens.into_iter().collect::<Option<Vec<_>>>() else {
        return false;
    };
    let low = gens.iter().min().copied().unwrap_or_default();
    let high_first = gens.iter().take_while(|&&g| g == low + 1).count();
    gens[high_first..].iter().all(|&g| g == low)
}

#[test]
fn sigkill_mid_write_leaves_the_old_or_the_new_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("memories");
    std::fs::create_dir_all(&dir).unwrap();
    let seed: Vec<String> = (0..CRASH_ENTRIES)
        .map(|i| format!("gen 0 entry {i} seed"))
        .collect();
    std::fs::write(dir.join("MEMORY.md"), seed.join("\n§\n")).unwrap();
    let file = dir.join("MEMORY.md");
    for round in 0..12u64 {
        let mut child = spawn("crasher", &dir, 0);
        // Varied delays so kills land in different phases of the write; the assertions
        // below do not depend on when the kill lands.
        std::thread::sleep(std::time::Duration::from_millis(20 + round * 37 % 200));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let raw = std::fs::read_to_string(&file).unwrap();
        let entries = baton_memory::entries::parse(&raw);
        assert!(
            is_complete_state(&entries),
            "round {round}: torn state with {} entries",
            entries.len()
        );
    }
}
