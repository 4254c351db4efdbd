//! The terminal itself: streaming with the status line, multi-line input, the history kept
//! across runs, interrupts, leaving, resizing and the terminal put back.

use crate::harness::{COLS, ROWS, Tui};
use baton_scripted::{Reply, Script, ScriptedServer, Usage};
use std::time::Duration;

fn home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn an_answer_streams_with_markdown_and_the_status_line_shows_model_context_cache_cost() {
    let server = ScriptedServer::start_background(Script::replies([Reply::text(
        "Here is the fix:\n```rust\nfn main() {}\n```\nAll **done**.",
    )
    .with_usage(Usage {
        prompt: 12_000,
        cached: 9_000,
        cache_write: 0,
        completion: 40,
    })]))
    .unwrap();
    let h = home();
    let tui = Tui::start(&server, h.path(), &["--context-length", "100000"]);
    tui.wait_for_prompt(1);
    let idle = tui.status_line();
    assert!(idle.contains("scripted-model"), "{idle}");
    assert!(
        idle.contains("ctx ~"),
        "before any call the context is an estimate: {idle}"
    );
    tui.submit("fix main");
    let screen = tui.wait_for("All done.");
    assert!(screen.contains("fn main() {}"), "{screen}");
    assert!(screen.contains("```rust"), "{screen}");
    let status = tui.wait_for_status("cache 75%");
    assert!(status.contains("ctx 12k/100k"), "{status}");
    assert!(status.contains("12%"), "{status}");
    assert!(status.contains("0 compactions"), "{status}");
    // The status line is the last row and stays out of the answer text.
    let rows: Vec<&str> = screen.lines().collect();
    assert!(rows.len() < usize::from(ROWS) || !rows[usize::from(ROWS) - 1].contains("All done"));
    assert!(!tui.transcript().contains("sk-tui-test-key"));
}

#[test]
fn alt_enter_ctrl_j_and_a_trailing_backslash_make_one_multi_line_prompt() {
    let server = ScriptedServer::start_background(Script::replies([Reply::text("ok")])).unwrap();
    let h = home();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.keys("first line\x1b\r");
    tui.keys("second line\n");
    tui.keys("third \\");
    tui.keys("\r");
    tui.submit("fourth");
    tui.wait_for("ok");
    let asked = server.requests()[0].last_user_text();
    assert_eq!(asked, "first line\nsecond line\nthird \nfourth");
}

#[test]
fn prompts_are_remembered_across_runs_under_baton_home() {
    let server =
        ScriptedServer::start_background(Script::replies([Reply::text("one"), Reply::text("two")]))
            .unwrap();
    let h = home();
    {
        let mut tui = Tui::start(&server, h.path(), &[]);
        tui.wait_for_prompt(1);
        tui.submit("remember this prompt");
        tui.wait_for("one");
        tui.wait_for_prompt(2);
        tui.keys("\x04");
        assert_eq!(tui.wait_exit(), 0);
    }
    let saved = std::fs::read_to_string(h.path().join("chat_history")).unwrap();
    assert!(saved.contains("remember this prompt"), "{saved}");
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.wait_for("1 prompts in history");
    // Up arrow brings the last run's prompt back; Enter sends it.
    tui.keys("\x1b[A");
    tui.wait_for("› remember this prompt");
    tui.keys("\r");
    tui.wait_for("two");
    assert_eq!(
        server.requests()[1].last_user_text(),
        "remember this prompt"
    );
}

#[test]
fn ctrl_c_interrupts_a_streaming_answer_keeps_the_session_and_twice_at_the_prompt_quits() {
    let long = "word ".repeat(400);
    let server = ScriptedServer::start_background(Script::replies([
        Reply::text(long).with_stream_interval(Duration::from_millis(20)),
        Reply::text("still here"),
    ]))
    .unwrap();
    let h = home();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("write a lot");
    tui.wait_for("word word word");
    tui.keys("\x03");
    tui.wait_for("interrupted — the session is kept");
    tui.wait_for_prompt(2);
    tui.submit("are you there?");
    tui.wait_for("still here");
    // The second request carries the interrupted turn: the session was kept.
    let second = server.requests()[1].text();
    assert!(second.contains("write a lot"), "{second}");
    tui.wait_for_prompt(3);
    tui.keys("\x03");
    tui.wait_for("Ctrl-C again to quit");
    tui.keys("\x03");
    assert_eq!(tui.wait_exit(), 0);
    assert!(
        tui.transcript()
            .contains("The session is saved: baton chat --resume")
    );
}

#[test]
fn ctrl_d_leaves_and_the_terminal_is_restored() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = home();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.keys("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let transcript = tui.transcript();
    let reset = transcript
        .rfind("\x1b[r")
        .expect("the scroll region is reset");
    let set = transcript.rfind(&format!("\x1b[1;{}r", ROWS - 1)).unwrap();
    assert!(reset > set, "the reset comes after the last region set");
    assert!(
        tui.status_line().is_empty(),
        "the status row is cleared: {:?}",
        tui.status_line()
    );
}

#[test]
fn sigterm_restores_the_terminal_before_exiting() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = home();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    // The shell's builtin `kill`: no procps needed on a bare machine.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", tui.pid())])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(tui.wait_exit(), 143);
    let transcript = tui.transcript();
    let tail = &transcript[transcript.rfind(&format!("\x1b[1;{}r", ROWS - 1)).unwrap()..];
    assert!(tail.contains("\x1b[r"), "scroll region reset after SIGTERM");
    assert!(tail.contains("\x1b[?2004l"), "bracketed paste turned off");
}

#[test]
fn a_resize_moves_the_status_line_to_the_new_bottom_row() {
    let server = ScriptedServer::start_background(Script::replies([Reply::text("fine")])).unwrap();
    let h = home();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.wait_for_status("scripted-model");
    tui.resize(30, 80);
    tui.wait_for_status("scripted-model");
    tui.submit("still fine?");
    tui.wait_for("fine");
    let status = tui.wait_for_status("scripted-model");
    assert!(status.chars().count() <= 80, "{status}");
    assert!(
        tui.transcript().contains("\x1b[1;29r"),
        "region set for 30 rows"
    );
    let _ = COLS;
}

#[test]
fn a_panic_restores_the_terminal_before_the_message_is_printed() {
    let server = ScriptedServer::start_background(Script::replies([])).unwrap();
    let h = home();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    // A debug-build command that panics inside the loop.
    tui.submit("/__panic");
    assert_eq!(tui.wait_exit(), 101);
    let transcript = tui.transcript();
    let set = transcript.rfind(&format!("\x1b[1;{}r", ROWS - 1)).unwrap();
    let reset = transcript.rfind("\x1b[r").expect("scroll region reset");
    let message = transcript
        .rfind("deliberate panic")
        .expect("the panic message");
    assert!(
        set < reset && reset < message,
        "restored first, then the message"
    );
}

#[test]
fn ctrl_c_stops_a_running_tool_and_the_turn_ends_interrupted() {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::tool_call("terminal", serde_json::json!({"command": "sleep 30"})),
        Reply::text("after the interrupt"),
    ]))
    .unwrap();
    let h = home();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("wait a while");
    tui.wait_for_status("running terminal sleep 30");
    // The status is drawn as the tool starts its command. During a turn Ctrl-C is a SIGINT to
    // the terminal's foreground group, which a command still being spawned belongs to (it
    // moves to its own group just before exec, with the signal held pending): on a loaded
    // machine it then died of that SIGINT and reported "killed by a signal" instead of being
    // stopped as interrupted. Give the spawn time to finish first.
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    tui.keys("\x03");
    let screen = tui.wait_for("interrupted — the session is kept");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the sleep was stopped"
    );
    assert!(screen.contains("✗ terminal sleep 30"), "{screen}");
    tui.wait_for_prompt(2);
    tui.submit("go on");
    tui.wait_for("after the interrupt");
}

/// A session whose first answer streams for ~0.6 s, with keys to type into it: the server
/// (its second reply is "second answer"), the home and the terminal, the first turn running.
fn typing_during_a_streaming_answer() -> (ScriptedServer, tempfile::TempDir, Tui) {
    let server = ScriptedServer::start_background(Script::replies([
        Reply::text("streaming ".repeat(30)).with_stream_interval(Duration::from_millis(20)),
        Reply::text("second answer"),
    ]))
    .unwrap();
    let h = home();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("first");
    tui.wait_for("streaming streaming");
    (server, h, tui)
}

fn assert_not_echoed_into_the_answer(screen: &str, typed: &str) {
    assert!(
        !screen
            .lines()
            .any(|l| l.contains("streaming") && l.contains(typed)),
        "echoed into the answer: {screen}"
    );
}

#[test]
fn keys_typed_during_a_turn_are_not_echoed_into_the_answer_and_wait_for_the_prompt() {
    let (server, _home, tui) = typing_during_a_streaming_answer();
    tui.keys("typed ahead");
    tui.wait_for_prompt(2);
    let screen = tui.wait_for("› typed ahead");
    let answer_rows = screen.lines().filter(|l| l.contains("streaming")).count();
    assert!(answer_rows > 0);
    assert_not_echoed_into_the_answer(&screen, "typed ahead");
    tui.keys("\r");
    tui.wait_for("second answer");
    assert_eq!(server.requests()[1].last_user_text(), "typed ahead");
}

#[test]
fn a_line_typed_with_enter_during_a_turn_is_submitted_when_the_prompt_returns() {
    let (server, _home, tui) = typing_during_a_streaming_answer();
    // Enter typed ahead must stay Enter: as a line feed the editor would read Ctrl-J and wait
    // with a two-line prompt.
    tui.submit("typed ahead");
    let screen = tui.wait_for("second answer");
    assert_eq!(server.requests()[1].last_user_text(), "typed ahead");
    assert_not_echoed_into_the_answer(&screen, "typed ahead");
}
