//! The built-in tools on real files and real processes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_agent::approval::{AllowAll, RefuseAll};
use baton_agent::tools::{DestructivePolicy, builtin_tools};
use baton_agent::{Approver, Interrupt, Tool, ToolContext, ToolError};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ctx(dir: &Path, approver: Arc<dyn Approver>) -> ToolContext {
    ToolContext {
        workdir: dir.canonicalize().unwrap(),
        allow_outside_workdir: false,
        readable_roots: Vec::new(),
        approver,
        interrupt: Interrupt::new(),
        session_id: "s".into(),
        lineage: vec!["s".into()],
        command_timeout: Duration::from_secs(30),
    }
}

fn refuse() -> Arc<dyn Approver> {
    Arc::new(RefuseAll {
        explanation: "rerun with --yes to allow it".into(),
    })
}

fn tool(name: &str) -> Arc<dyn Tool> {
    builtin_tools(DestructivePolicy::default())
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap()
}

async fn call(name: &str, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
    tool(name).call(args, ctx).await
}

#[tokio::test]
async fn file_tools_refuse_paths_that_escape_the_working_directory() {
    let outer = tempfile::tempdir().unwrap();
    let work = outer.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), work.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outer.path(), work.join("up")).unwrap();
    let c = ctx(&work, refuse());
    for path in [
        "../secret.txt",
        "link.txt",
        "up/secret.txt",
        "/etc/passwd",
        "a/../../secret.txt",
    ] {
        let err = call("read_file", json!({"path": path}), &c)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)), "{path}: {err}");
        assert!(
            err.to_string().contains("outside the working directory"),
            "{err}"
        );
    }
    let err = call(
        "write_file",
        json!({"path": "up/new.txt", "content": "x"}),
        &c,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
    assert!(
        !outer.path().join("new.txt").exists(),
        "nothing written outside"
    );
    // Inside is fine, including a path through `..` that comes back in.
    std::fs::create_dir(work.join("sub")).unwrap();
    call(
        "write_file",
        json!({"path": "sub/../ok.txt", "content": "fine\n"}),
        &c,
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join("ok.txt")).unwrap(),
        "fine\n"
    );
    let mut open = c.clone();
    open.allow_outside_workdir = true;
    assert!(
        call("read_file", json!({"path": "../secret.txt"}), &open)
            .await
            .unwrap()
            .contains("top secret")
    );
}

#[tokio::test]
async fn terminal_returns_the_exit_code_and_interleaved_output() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path(), refuse());
    let out = call(
        "terminal",
        json!({"command": "echo one; echo two >&2; echo three; exit 3"}),
        &c,
    )
    .await
    .unwrap();
    assert!(out.starts_with("exit code: 3\n"), "{out}");
    assert!(
        out.contains("one\ntwo\nthree\n"),
        "stderr interleaved in order: {out}"
    );
    let pwd = call("terminal", json!({"command": "pwd"}), &c)
        .await
        .unwrap();
    assert!(pwd.contains(&c.workdir.display().to_string()), "{pwd}");
}

fn alive(marker: &str) -> bool {
    std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false)
}

#[tokio::test]
async fn a_timeout_stops_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path(), refuse());
    let marker = format!("sleep 3{}", std::process::id() % 1000 + 1000);
    let started = Instant::now();
    let out = call(
        "terminal",
        json!({"command": format!("{marker} & {marker} & wait"), "timeout_seconds": 1}),
        &c,
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.starts_with("timed out after 1 s"), "{out}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !alive(&marker),
        "the background sleeps were killed with the group"
    );
}

#[tokio::test]
async fn an_interrupt_stops_a_running_command() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path(), refuse());
    let interrupt = c.interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        interrupt.raise();
    });
    let started = Instant::now();
    let err = call("terminal", json!({"command": "sleep 30"}), &c)
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::Interrupted);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn destructive_commands_need_approval() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("victim")).unwrap();
    let refused = ctx(dir.path(), refuse());
    let err = call("terminal", json!({"command": "rm -rf victim"}), &refused)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Refused(m) if m.contains("rm -rf") && m.contains("--yes")),
        "{err}"
    );
    assert!(dir.path().join("victim").exists(), "not run");
    let allowed = ctx(dir.path(), Arc::new(AllowAll));
    let out = call("terminal", json!({"command": "rm -rf victim"}), &allowed)
        .await
        .unwrap();
    assert!(out.starts_with("exit code: 0"), "{out}");
    assert!(!dir.path().join("victim").exists());
    // A configured exception needs no approval.
    let policy = DestructivePolicy {
        allowed: vec!["git reset --hard".into()],
    };
    let terminal = builtin_tools(policy)
        .into_iter()
        .find(|t| t.name() == "terminal")
        .unwrap();
    let out = terminal
        .call(
            json!({"command": "git reset --hard 2>/dev/null; echo ran"}),
            &refused,
        )
        .await
        .unwrap();
    assert!(out.contains("ran"), "{out}");
}

#[tokio::test]
async fn read_file_reads_a_large_file_in_ranges_with_an_honest_footer() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=10_000)
        .map(|i| format!("line {i:05} {}\n", "x".repeat(40)))
        .collect();
    assert!(text.len() > 500_000);
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    let c = ctx(dir.path(), refuse());
    let first = call("read_file", json!({"path": "big.txt"}), &c)
        .await
        .unwrap();
    assert!(first.contains("     1\tline 00001"));
    assert!(
        first.contains("[lines 1-2000 of 10000; read on with offset=2001]"),
        "{}",
        &first[first.len() - 100..]
    );
    let piece = call(
        "read_file",
        json!({"path": "big.txt", "offset": 9999, "limit": 5}),
        &c,
    )
    .await
    .unwrap();
    assert!(piece.contains("  9999\tline 09999") && piece.contains(" 10000\tline 10000"));
    assert!(
        piece.contains("[lines 9999-10000 of 10000; end of file]"),
        "{piece}"
    );
    let past = call(
        "read_file",
        json!({"path": "big.txt", "offset": 20_000}),
        &c,
    )
    .await
    .unwrap_err();
    assert!(past.to_string().contains("10000 lines"), "{past}");
    std::fs::write(dir.path().join("bin"), [0u8, 1, 2, 3]).unwrap();
    let bin = call("read_file", json!({"path": "bin"}), &c)
        .await
        .unwrap_err();
    assert!(bin.to_string().contains("binary"), "{bin}");
    let bad = call("read_file", json!({"path": "big.txt", "offset": 0}), &c)
        .await
        .unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments { .. }), "{bad}");
}

#[tokio::test]
async fn read_file_may_read_the_spill_folder_but_not_write_there() {
    let work = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    std::fs::write(spill.path().join("call_1.txt"), "spilled output\n").unwrap();
    let mut c = ctx(work.path(), refuse());
    c.readable_roots = vec![spill.path().to_path_buf()];
    let path = spill.path().join("call_1.txt").display().to_string();
    let out = call("read_file", json!({"path": path}), &c).await.unwrap();
    assert!(out.contains("spilled output"), "{out}");
    let err = call("write_file", json!({"path": path, "content": "x"}), &c)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
}

#[tokio::test]
async fn write_file_replaces_atomically_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "old").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let c = ctx(dir.path(), refuse());
    let out = call(
        "write_file",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
        &c,
    )
    .await
    .unwrap();
    assert!(out.starts_with("replaced run.sh"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho new\n"
    );
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".baton-write-"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files left");
    call(
        "write_file",
        json!({"path": "deep/er/new.txt", "content": "n"}),
        &c,
    )
    .await
    .unwrap();
    assert!(dir.path().join("deep/er/new.txt").exists());
}

#[tokio::test]
async fn patch_edits_once_and_explains_misses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "fn main() {\n    run(1);\n    run(1);\n}\n",
    )
    .unwrap();
    let c = ctx(dir.path(), refuse());
    let dup = call(
        "patch",
        json!({"path": "a.rs", "old_text": "run(1);", "new_text": "run(2);"}),
        &c,
    )
    .await
    .unwrap_err();
    assert!(
        dup.to_string().contains("occurs 2 times (lines 2, 3)"),
        "{dup}"
    );
    let missing = call(
        "patch",
        json!({"path": "a.rs", "old_text": "run(9);", "new_text": "x"}),
        &c,
    )
    .await
    .unwrap_err();
    assert!(missing.to_string().contains("not found"), "{missing}");
    let ok = call(
        "patch",
        json!({"path": "a.rs", "old_text": "    run(1);\n}", "new_text": "    run(3);\n}"}),
        &c,
    )
    .await
    .unwrap();
    assert!(ok.contains("line 3"), "{ok}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn main() {\n    run(1);\n    run(3);\n}\n"
    );
}

#[tokio::test]
async fn search_files_respects_gitignore_and_caps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("target")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn needle() {}\n").unwrap();
    std::fs::write(dir.path().join("target/gen.rs"), "pub fn needle() {}\n").unwrap();
    std::fs::write(dir.path().join("src/blob.bin"), b"needle\0binary").unwrap();
    let many: String = (0..5_000).map(|i| format!("needle {i}\n")).collect();
    std::fs::write(dir.path().join("src/many.txt"), many).unwrap();
    let c = ctx(dir.path(), refuse());
    let out = call(
        "search_files",
        json!({"pattern": "fn needle", "path": "."}),
        &c,
    )
    .await
    .unwrap();
    assert!(out.contains("src/lib.rs:1: pub fn needle() {}"), "{out}");
    assert!(!out.contains("target/"), "ignored by .gitignore: {out}");
    let capped = call(
        "search_files",
        json!({"pattern": "needle", "max_matches": 50}),
        &c,
    )
    .await
    .unwrap();
    assert!(capped.contains("more results omitted"), "{capped}");
    assert!(capped.lines().count() <= 51);
    assert!(!capped.contains("blob.bin"), "binary skipped");
    let only_rs = call(
        "search_files",
        json!({"pattern": "needle", "glob": "*.rs"}),
        &c,
    )
    .await
    .unwrap();
    assert!(!only_rs.contains("many.txt"), "{only_rs}");
    let bad = call("search_files", json!({"pattern": "("}), &c)
        .await
        .unwrap_err();
    assert!(
        bad.to_string().contains("not a valid regular expression"),
        "{bad}"
    );
}
