//! `/new`, `/resume`, `/sessions`, `/title` and `/quit`.

use crate::harness::Tui;
use baton_scripted::{Reply, Script, ScriptedServer};

fn echo_server() -> ScriptedServer {
    ScriptedServer::start_background(Script::responder(|r| {
        Reply::text(format!("answered: {}", r.last_user_text()))
    }))
    .unwrap()
}

/// The session id the welcome line names.
fn welcome_session(tui: &Tui) -> String {
    let screen = tui.wait_for("session ");
    let line = screen
        .lines()
        .find(|l| l.starts_with("baton chat"))
        .unwrap();
    line.rsplit("session ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn slash_new_starts_a_fresh_session_and_keeps_the_old_one() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    let first = welcome_session(&tui);
    tui.submit("the secret word is marigold");
    tui.wait_for("answered: the secret word");
    tui.wait_for_prompt(2);
    tui.submit("/new");
    let screen = tui.wait_for("new session");
    assert!(
        screen.contains(&format!("the previous one, {first}, is saved")),
        "{screen}"
    );
    tui.wait_for_prompt(3);
    tui.submit("what was the word?");
    tui.wait_for("answered: what was the word?");
    // The fresh session's request carries nothing of the old one.
    let last = server.requests().last().unwrap().text();
    assert!(!last.contains("marigold"), "{last}");
}

#[test]
fn slash_resume_lists_without_an_argument_and_continues_a_titled_session() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    {
        let mut tui = Tui::start(&server, h.path(), &[]);
        tui.wait_for_prompt(1);
        tui.submit("we are fixing the login bug");
        tui.wait_for("answered: we are fixing");
        tui.wait_for_prompt(2);
        tui.submit("/title Auth work");
        tui.wait_for("titled");
        tui.wait_for_prompt(3);
        tui.submit("/quit");
        assert_eq!(tui.wait_exit(), 0);
    }
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/resume");
    let screen = tui.wait_for("/resume ID or /resume TITLE");
    assert!(screen.contains("Auth work"), "{screen}");
    tui.wait_for_prompt(2);
    tui.submit("/resume Auth work");
    let screen = tui.wait_for("resumed session");
    assert!(screen.contains("2 messages in view"), "{screen}");
    assert!(
        screen.contains("you: we are fixing the login bug"),
        "{screen}"
    );
    tui.wait_for_prompt(3);
    tui.submit("where were we?");
    tui.wait_for("answered: where were we?");
    let last = server.requests().last().unwrap().text();
    assert!(last.contains("we are fixing the login bug"), "{last}");
}

#[test]
fn slash_sessions_lists_the_stored_sessions_and_says_which_is_current() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    let current = welcome_session(&tui);
    tui.submit("list me");
    tui.wait_for("answered: list me");
    tui.wait_for_prompt(2);
    tui.submit("/sessions");
    let screen = tui.wait_for("you are in");
    assert!(
        screen.contains("preview"),
        "a table with its header: {screen}"
    );
    assert!(screen.contains("list me"), "{screen}");
    assert!(
        screen.contains(&format!("you are in {current}")),
        "{screen}"
    );
}

#[test]
fn slash_title_names_the_session_in_the_store() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/title Release prep");
    tui.wait_for("titled \"Release prep\"");
    tui.wait_for_prompt(2);
    tui.submit("/title");
    tui.wait_for("/title needs a name");
    tui.keys("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_baton"))
        .env("BATON_HOME", h.path())
        .args(["sessions", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Release prep"));
}

#[test]
fn slash_quit_leaves_with_the_usage_line_and_how_to_resume() {
    let server = echo_server();
    let h = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(&server, h.path(), &[]);
    tui.wait_for_prompt(1);
    tui.submit("/quit");
    assert_eq!(tui.wait_exit(), 0);
    let transcript = tui.transcript();
    assert!(transcript.contains("usage: 0 calls"), "{transcript}");
    assert!(transcript.contains("The session is saved: baton chat --resume"));
}
