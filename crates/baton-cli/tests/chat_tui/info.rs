//! `/usage`, `/memory`, `/tool` and `/help`, and a destructive command's confirmation.

use crate::harness::Tui;
use baton_scripted::{Reply, Script, ScriptedServer, Usage};
use serde_json::json;

#[test]
fn slash_usage_shows_tokens_cache_cost_compactions_and_the_estimate_error() {
    let server = ScriptedServer::start_background(Script::replies([Reply::text("done")
        .with_usage(Usage {
            prompt: 5_000,
            cached: 4_000,
            cache_write: 0,
            completion: 70,
        })]))
    .unwrap();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("go");
    tui.wait_for("done");
    tui.wait_for_prompt(2);
    tui.submit("/usage");
    let screen = tui.wait_for("estimate:");
    assert!(screen.contains("calls 1"), "{screen}");
    // Chat Completions reports cached tokens inside the prompt count, and no cache writes.
    assert!(
        screen.contains("input 1,000 · cache read 4,000 · cache write 0"),
        "{screen}"
    );
    assert!(
        screen.contains("cache: 80% of prompt tokens read from the cache"),
        "{screen}"
    );
    assert!(screen.contains("output 70"), "{screen}");
    assert!(
        screen.contains("compactions: 0 in this conversation"),
        "{screen}"
    );
    assert!(screen.contains("the calibrated estimate was"), "{screen}");
    assert!(screen.contains("off on the last call"), "{screen}");
}

#[test]
fn slash_memory_shows_adds_and_removes_entries_on_disk() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/memory add The project builds with cargo xtask dist");
    tui.wait_for("from its next session");
    let file = std::fs::read_to_string(h.path().join("memories").join("MEMORY.md")).unwrap();
    assert!(file.contains("cargo xtask dist"), "{file}");
    tui.wait_for_prompt(2);
    tui.submit("/memory user Prefers short answers");
    // The prompt count also grows with the editor's redraws: wait for the command's own line.
    tui.wait_until("the second entry added", |screen| {
        screen.matches("Entry added.").count() >= 2
    });
    tui.wait_for_prompt(3);
    tui.submit("/memory");
    let screen = tui.wait_for("about you");
    assert!(
        screen.contains("1 The project builds with cargo xtask dist"),
        "{screen}"
    );
    assert!(screen.contains("1 Prefers short answers"), "{screen}");
    tui.wait_for_prompt(4);
    tui.submit("/memory remove xtask dist");
    // The prompt count also grows with the editor's redraws, so it can be reached before the
    // command has run (seen once on a loaded CI machine): wait for the file itself.
    let memory = h.path().join("memories").join("MEMORY.md");
    tui.wait_until("MEMORY.md without the removed entry", |_| {
        !std::fs::read_to_string(&memory)
            .unwrap_or_default()
            .contains("cargo xtask dist")
    });
    tui.wait_for_prompt(5);
    let file = std::fs::read_to_string(&memory).unwrap();
    assert!(!file.contains("cargo xtask dist"), "{file}");
    tui.submit("/memory forget it");
    tui.wait_for("expected show, add TEXT");
}

#[test]
fn slash_tool_expands_a_call_shown_as_one_line() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::tool_call("terminal", json!({"command": "echo tool-output-marker"})),
        Reply::text("the command ran"),
    ]))
    .unwrap();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("run it");
    let screen = tui.wait_for("the command ran");
    let line = screen
        .lines()
        .find(|l| l.contains("terminal echo tool-output-marker"))
        .unwrap_or_else(|| panic!("no tool line: {screen}"));
    assert!(line.trim_start().starts_with('✓'), "{line}");
    assert!(line.contains("[#1]"), "{line}");
    tui.wait_for_prompt(2);
    tui.submit("/tool 1");
    let screen = tui.wait_for("output (start):");
    assert!(
        screen.contains("\"command\": \"echo tool-output-marker\""),
        "{screen}"
    );
    tui.wait_for_prompt(3);
    tui.submit("/tool 9");
    tui.wait_for("there is no tool call #9");
}

#[test]
fn slash_help_lists_every_command_and_the_keys() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/help");
    let screen = tui.wait_for("Tab completes");
    for command in [
        "/compress [focus]",
        "/usage",
        "/new",
        "/resume [id|title]",
        "/sessions",
        "/title NAME",
        "/model [name]",
        "/memory",
        "/history",
        "/pin",
        "/tool [N]",
        "/help",
        "/quit",
    ] {
        assert!(screen.contains(command), "{command}: {screen}");
    }
    tui.wait_for_prompt(2);
    tui.submit("/hepl");
    tui.wait_for("did you mean /help?");
}

#[test]
fn tab_completes_a_slash_command() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.keys("/hel\t");
    tui.wait_for("› /help ");
    tui.keys("\r");
    tui.wait_for("Tab completes");
}

#[test]
fn a_destructive_command_asks_first_and_no_refuses_it() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::tool_call("terminal", json!({"command": "rm -rf build"})),
        Reply::text("understood, I will not delete it"),
    ]))
    .unwrap();
    let h = tempfile::tempdir().unwrap();
    std::fs::create_dir(h.path().join("build")).unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("clean up");
    tui.wait_for("Allow it? [y]es / [N]o");
    tui.submit("n");
    let screen = tui.wait_for("understood, I will not delete it");
    assert!(screen.contains("✗ terminal rm -rf build"), "{screen}");
    assert!(h.path().join("build").exists());
}
