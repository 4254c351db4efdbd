//! `--help` tells the truth: the top-level help lists every command, the `sessions` one-liner
//! names every subcommand, and every `--db` help says which commands write the database.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::baton;

fn help(args: &[&str]) -> String {
    let out = baton().args(args).arg("--help").assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// The `Commands:` section of a help text: (name, one-line description).
fn commands(help: &str) -> Vec<(String, String)> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let l = l.trim_start();
            let (name, rest) = l.split_once(' ')?;
            Some((name.to_string(), rest.trim().to_string()))
        })
        .collect()
}

#[test]
fn top_level_help_lists_every_command() {
    let top = commands(&help(&[]));
    let names: Vec<&str> = top.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "tokens",
        "compress",
        "sessions",
        "trajectories",
        "memory",
        "models",
        "ping",
        "config",
    ] {
        assert!(names.contains(&expected), "`{expected}` missing: {names:?}");
    }
    // Each command has a description line, not just a name.
    for (name, about) in &top {
        assert!(!about.is_empty(), "`{name}` has no description");
    }
}

#[test]
fn the_sessions_line_names_every_sessions_subcommand() {
    let top = commands(&help(&[]));
    let (_, sessions_line) = top.iter().find(|(n, _)| n == "sessions").unwrap();
    let subcommands = commands(&help(&["sessions"]));
    assert!(
        subcommands.iter().any(|(n, _)| n == "title"),
        "`sessions title` exists"
    );
    for (name, _) in subcommands.iter().filter(|(n, _)| n != "help") {
        assert!(
            sessions_line.contains(name.as_str()),
            "the top-level `sessions` line does not name `{name}`: {sessions_line}"
        );
    }
}

#[test]
fn every_db_help_names_the_commands_that_write() {
    for command in [&["sessions"][..], &["sessions", "list"], &["compress"]] {
        let text = help(command).replace('\n', " ");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let db = &text[text
            .find("--db")
            .unwrap_or_else(|| panic!("{command:?}: no --db"))..];
        for writer in [
            "`sessions import`",
            "`sessions title`",
            "`sessions delete`",
            "`sessions prune`",
            "`compress --session`",
        ] {
            assert!(
                db.contains(writer),
                "{command:?} --db help misses {writer}: {db}"
            );
        }
        assert!(
            db.contains("`sessions list`, `show`, `search`, `export` and `stats` never write"),
            "{command:?} --db help does not name the read-only commands: {db}"
        );
    }
}
