//! `/compress`, `/model`, `/pin` and `/history`.

use crate::harness::Tui;
use baton_scripted::{Reply, Script, ScriptedServer};

fn echo_server() -> ScriptedServer {
    ScriptedServer::start_background(Script::responder(|r| {
        Reply::text(format!(
            "noted: {} — and some detail to give the turn weight. {}",
            r.last_user_text(),
            "More context follows here. ".repeat(100)
        ))
    }))
    .unwrap()
}

/// Runs `prompts` as turns, waiting for each answer.
fn converse(tui: &Tui, prompts: &[&str]) {
    for (i, prompt) in prompts.iter().enumerate() {
        tui.wait_for_prompt(i + 1);
        tui.submit(prompt);
        // Long answers scroll past the screen: look in everything written.
        tui.wait_for_output(&format!("noted: {prompt}"));
        // The answer goes on streaming after that line: wait for the turn's end (an empty
        // prompt), so the prompt count the caller waits on next is this turn's.
        tui.wait_until("the turn's end", |screen| {
            screen.lines().any(|l| l.trim_end() == "›")
        });
    }
}

/// A 20,000-token window with a small tail budget (5%) and a four-message tail floor, so six
/// short turns leave a middle to compact without reaching the automatic threshold.
const SMALL_TAIL: &[&str] = &[
    "--context-length",
    "20000",
    "--set",
    "compression.target_ratio=0.05",
    "--set",
    "compression.protect_last_n=4",
];

const TURNS: [&str; 6] = [
    "the deploy key lives in vault path ops/zephyr",
    "second step: rotate the certificates",
    "third step: update the load balancer",
    "fourth step: drain the old pool",
    "fifth step: run the smoke tests",
    "sixth step: announce the change",
];

#[test]
fn slash_compress_compacts_with_feedback_and_the_status_counts_it() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), SMALL_TAIL);
    converse(&tui, &TURNS);
    tui.wait_for_prompt(TURNS.len() + 1);
    tui.submit("/compress the load balancer");
    let screen = tui.wait_for("compressed:");
    assert!(screen.contains("⟳ compacted (manual)"), "{screen}");
    assert!(
        screen.contains("kept in detail: the load balancer"),
        "{screen}"
    );
    let line = screen
        .lines()
        .find(|l| l.starts_with("compressed:"))
        .unwrap();
    assert!(
        line.contains("messages") && line.contains("tokens"),
        "{line}"
    );
    tui.wait_for_status("1 compaction");
}

#[test]
fn slash_history_finds_a_compacted_message_and_expands_it() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), SMALL_TAIL);
    converse(&tui, &TURNS);
    tui.wait_for_prompt(TURNS.len() + 1);
    tui.submit("/compress");
    tui.wait_for("compressed:");
    tui.wait_for_prompt(TURNS.len() + 2);
    tui.submit("/history certificates");
    let screen = tui.wait_for("/history N shows a hit in full");
    // The second turn's answer was summarized away: its original is found in the archived
    // session.
    let hit = screen
        .lines()
        .find(|l| l.contains("[compacted,") && l.contains("assistant: ...rotate the"))
        .unwrap_or_else(|| panic!("no compacted hit: {screen}"));
    let number = hit.split_whitespace().next().unwrap().to_string();
    tui.wait_for_prompt(TURNS.len() + 3);
    tui.submit(&format!("/history {number}"));
    tui.wait_for_prompt(TURNS.len() + 4);
    // The expanded message is long: read what was written after the command.
    let transcript = tui.transcript();
    let shown = &transcript[transcript.rfind(&format!("/history {number}")).unwrap()..];
    assert!(shown.contains("] assistant ---"), "{shown}");
    assert!(
        shown.contains("noted: second step: rotate the certificates"),
        "{shown}"
    );
    tui.submit("/history 7");
    tui.wait_for("there is no hit 7");
}

#[test]
fn slash_model_lists_switches_and_compacts_for_a_smaller_window() {
    let server = echo_server();
    server.set_models(&[("scripted-model", 200_000), ("tiny-model", 3_000)]);
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), SMALL_TAIL);
    converse(&tui, &TURNS);
    tui.wait_for_prompt(TURNS.len() + 1);
    tui.submit("/model");
    let screen = tui.wait_for("/model NAME switches");
    assert!(
        screen.contains("● scripted-model · 200,000 tokens"),
        "{screen}"
    );
    assert!(
        screen.contains("model scripted-model · window 20,000 tokens"),
        "{screen}"
    );
    assert!(screen.contains("tiny-model · 3,000 tokens"), "{screen}");
    tui.wait_for_prompt(TURNS.len() + 2);
    tui.submit("/model tiny-model");
    let screen = tui.wait_for("compacted (preflight)");
    assert!(
        screen.contains("model tiny-model · window 3,000 tokens (listed by the server)"),
        "{screen}"
    );
    tui.wait_for_status("tiny-model");
    tui.wait_for_prompt(TURNS.len() + 3);
    tui.submit("and now?");
    tui.wait_for_output("noted: and now?");
    let last = server.requests().last().unwrap().body.clone();
    assert_eq!(last["model"], "tiny-model");
}

#[test]
fn slash_pin_pins_the_last_user_message_and_lists_and_removes_pins() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/pin");
    tui.wait_for("there is no message of yours to pin yet");
    converse(&tui, &TURNS[..1]);
    tui.wait_for_prompt(3);
    tui.submit("/pin");
    tui.wait_for("pinned: the deploy key lives in vault path ops/zephyr");
    tui.wait_for_prompt(4);
    tui.submit("/pin list");
    tui.wait_for("1 the deploy key lives");
    tui.wait_for_prompt(5);
    tui.submit("/pin remove 1");
    tui.wait_for("pin 1 removed");
}
