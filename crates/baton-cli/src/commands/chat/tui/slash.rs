//! The slash commands: their table (for `/help`, completion and hints) and the parser that
//! turns a typed line into one. A line whose first word is not a known command is an error
//! naming the closest one; `//text` sends `/text` to the model.

#[derive(Debug, Clone, Copy)]
pub struct SlashSpec {
    pub name: &'static str,
    pub args: &'static str,
    pub help: &'static str,
}

pub const COMMANDS: &[SlashSpec] = &[
    SlashSpec {
        name: "compress",
        args: "[focus]",
        help: "compact the context now, keeping [focus] in full detail",
    },
    SlashSpec {
        name: "usage",
        args: "",
        help: "tokens, cache reads and writes, cost, compactions, estimate error",
    },
    SlashSpec {
        name: "new",
        args: "",
        help: "start a fresh session",
    },
    SlashSpec {
        name: "resume",
        args: "[id|title]",
        help: "continue a stored session (lists them without an argument)",
    },
    SlashSpec {
        name: "sessions",
        args: "",
        help: "list recent sessions",
    },
    SlashSpec {
        name: "title",
        args: "NAME",
        help: "name this session",
    },
    SlashSpec {
        name: "model",
        args: "[name]",
        help: "show the models, or switch (compacts first if the window is smaller)",
    },
    SlashSpec {
        name: "memory",
        args: "[add TEXT | user TEXT | remove TEXT]",
        help: "show persistent memory, or add / remove an entry",
    },
    SlashSpec {
        name: "history",
        args: "[query | N]",
        help: "search the compacted-away messages of this conversation; N expands a hit",
    },
    SlashSpec {
        name: "pin",
        args: "[list | remove N]",
        help: "pin your last message so every compaction keeps it verbatim",
    },
    SlashSpec {
        name: "tool",
        args: "[N]",
        help: "expand tool call N (the last one without N)",
    },
    SlashSpec {
        name: "help",
        args: "",
        help: "this list",
    },
    SlashSpec {
        name: "quit",
        args: "",
        help: "leave (Ctrl-D does too); the session is saved",
    },
];

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Compress(Option<String>),
    Usage,
    New,
    Resume(Option<String>),
    Sessions,
    Title(String),
    Model(Option<String>),
    Memory(MemoryAction),
    History(Option<String>),
    Pin(PinAction),
    Tool(Option<usize>),
    Help,
    Quit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryAction {
    Show,
    Add { user: bool, text: String },
    Remove(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinAction {
    PinLast,
    List,
    Remove(usize),
}

/// What a typed line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A prompt for the model.
    Prompt(String),
    Command(Slash),
}

/// Parses a line; `Err` says what was wrong with a slash command.
pub fn parse(line: &str) -> Result<Input, String> {
    let trimmed = line.trim();
    if let Some(escaped) = trimmed.strip_prefix("//") {
        return Ok(Input::Prompt(format!("/{escaped}")));
    }
    let Some(command) = trimmed.strip_prefix('/') else {
        return Ok(Input::Prompt(line.to_string()));
    };
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (command, ""),
    };
    let arg = (!rest.is_empty()).then(|| rest.to_string());
    let slash = match name {
        "compress" | "compact" => Slash::Compress(arg),
        "usage" | "cost" => Slash::Usage,
        "new" | "clear" => Slash::New,
        "resume" => Slash::Resume(arg),
        "sessions" => Slash::Sessions,
        "title" => Slash::Title(arg.ok_or("/title needs a name: /title NAME")?),
        "model" => Slash::Model(arg),
        "memory" => Slash::Memory(memory_action(rest)?),
        "history" => Slash::History(arg),
        "pin" => Slash::Pin(pin_action(rest)?),
        "tool" => Slash::Tool(match arg {
            None => None,
            Some(n) => Some(
                n.trim_start_matches('#')
                    .parse()
                    .map_err(|_| format!("/tool takes a call number, not {n:?}"))?,
            ),
        }),
        "help" | "?" => Slash::Help,
        "quit" | "exit" | "q" => Slash::Quit,
        other => return Err(unknown(other)),
    };
    Ok(Input::Command(slash))
}

fn memory_action(rest: &str) -> Result<MemoryAction, String> {
    let (verb, text) = match rest.split_once(char::is_whitespace) {
        Some((v, t)) => (v, t.trim()),
        None => (rest, ""),
    };
    match verb {
        "" | "show" | "list" => Ok(MemoryAction::Show),
        "add" | "user" if text.is_empty() => {
            Err(format!("/memory {verb} needs the text to remember"))
        }
        "add" => Ok(MemoryAction::Add {
            user: false,
            text: text.to_string(),
        }),
        "user" => Ok(MemoryAction::Add {
            user: true,
            text: text.to_string(),
        }),
        "remove" | "rm" if text.is_empty() => {
            Err("/memory remove needs (part of) the entry's text".into())
        }
        "remove" | "rm" => Ok(MemoryAction::Remove(text.to_string())),
        other => Err(format!(
            "/memory {other}: expected show, add TEXT, user TEXT or remove TEXT"
        )),
    }
}

fn pin_action(rest: &str) -> Result<PinAction, String> {
    let mut words = rest.split_whitespace();
    match (words.next(), words.next()) {
        (None, _) => Ok(PinAction::PinLast),
        (Some("list"), None) => Ok(PinAction::List),
        (Some("remove" | "rm"), Some(n)) => n
            .parse()
            .map(PinAction::Remove)
            .map_err(|_| format!("/pin remove takes a pin number, not {n:?}")),
        _ => Err("/pin takes no argument (pins your last message), `list` or `remove N`".into()),
    }
}

/// The error for an unknown command, with the nearest known name.
fn unknown(name: &str) -> String {
    let nearest = COMMANDS
        .iter()
        .map(|c| (edit_distance(name, c.name), c.name))
        .min()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, n)| format!(" — did you mean /{n}?"))
        .unwrap_or_default();
    format!(
        "unknown command /{name}{nearest} (/help lists them; start with // to send a line that begins with /)"
    )
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// Command names starting with `prefix` (without the slash), for completion.
pub fn completions(prefix: &str) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .map(|c| c.name)
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn command(line: &str) -> Slash {
        match parse(line) {
            Ok(Input::Command(c)) => c,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn commands_and_their_arguments_parse() {
        assert_eq!(
            command("/compress  the auth bug "),
            Slash::Compress(Some("the auth bug".into()))
        );
        assert_eq!(command("/compress"), Slash::Compress(None));
        assert_eq!(command("/resume"), Slash::Resume(None));
        assert_eq!(
            command("/title Release prep"),
            Slash::Title("Release prep".into())
        );
        assert_eq!(command("/tool #3"), Slash::Tool(Some(3)));
        assert_eq!(
            command("/memory user prefers tabs"),
            Slash::Memory(MemoryAction::Add {
                user: true,
                text: "prefers tabs".into()
            })
        );
        assert_eq!(command("/pin remove 2"), Slash::Pin(PinAction::Remove(2)));
        assert_eq!(command("/exit"), Slash::Quit);
    }

    #[test]
    fn prompts_and_escaped_slashes_go_to_the_model() {
        assert_eq!(parse("fix it").unwrap(), Input::Prompt("fix it".into()));
        assert_eq!(
            parse("//etc/hosts is wrong").unwrap(),
            Input::Prompt("/etc/hosts is wrong".into())
        );
    }

    #[test]
    fn mistakes_name_what_was_wrong() {
        let err = parse("/compres").unwrap_err();
        assert!(err.contains("did you mean /compress"), "{err}");
        assert!(parse("/title").unwrap_err().contains("/title NAME"));
        assert!(parse("/tool x").unwrap_err().contains("call number"));
        assert!(
            parse("/memory forget x")
                .unwrap_err()
                .contains("expected show")
        );
    }

    #[test]
    fn every_command_in_the_table_parses_and_completes() {
        for spec in COMMANDS {
            let line = match spec.name {
                "title" => "/title t".to_string(),
                n => format!("/{n}"),
            };
            assert!(parse(&line).is_ok(), "{line}");
            assert!(completions(&spec.name[..2]).contains(&spec.name));
        }
    }
}
