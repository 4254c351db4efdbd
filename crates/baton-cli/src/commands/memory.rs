//! `baton memory`: read and edit MEMORY.md / USER.md with the same rules as the agent's
//! `memory` tool (scanning, limits, unique-substring matching, supersession).

use crate::commands::Failure;
use crate::commands::settings::{FlagValue, Settings};
use baton_config::Value;
use baton_memory::{Limits, MemoryStore, Target, WriteOutcome};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Baton home (default: $BATON_HOME, else ~/.baton); files live in <home>/memories/.
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,

    /// Which file: `memory` (MEMORY.md, the agent's notes) or `user` (USER.md, the profile).
    #[arg(long, global = true, value_enum, default_value_t = TargetArg::Memory)]
    pub target: TargetArg,

    /// Character limit of MEMORY.md (default: `[memory] memory_char_limit` in config.toml,
    /// else this).
    #[arg(long, global = true, default_value_t = baton_memory::limits::DEFAULT_MEMORY_CHARS)]
    pub memory_limit: usize,

    /// Character limit of USER.md (default: `[memory] user_char_limit` in config.toml, else
    /// this).
    #[arg(long, global = true, default_value_t = baton_memory::limits::DEFAULT_USER_CHARS)]
    pub user_limit: usize,

    /// Print the JSON result the agent's tool would get.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: MemoryCommand,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TargetArg {
    Memory,
    User,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Memory => Target::Memory,
            TargetArg::User => Target::User,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Print the entries and usage of the target.
    Show,
    /// Add an entry. Refused if it duplicates or contradicts an existing one (unless --force).
    Add {
        content: String,
        /// Keep both even if an existing entry looks like the same fact.
        #[arg(long)]
        force: bool,
    },
    /// Replace the one entry containing OLD_TEXT with CONTENT.
    Replace { old_text: String, content: String },
    /// Remove the one entry containing OLD_TEXT.
    Remove { old_text: String },
    /// Check both files for injection and exfiltration patterns (exit 1 if any entry is flagged).
    Scan,
}

pub fn run(args: &MemoryArgs, settings: &Settings) -> Result<(), Failure> {
    let config = settings.with_flags(vec![
        FlagValue {
            id: "memory_limit",
            flag: "--memory-limit",
            key: "memory.memory_char_limit",
            value: Value::Integer(i64::try_from(args.memory_limit).unwrap_or(i64::MAX)),
        },
        FlagValue {
            id: "user_limit",
            flag: "--user-limit",
            key: "memory.user_char_limit",
            value: Value::Integer(i64::try_from(args.user_limit).unwrap_or(i64::MAX)),
        },
    ])?;
    let chars = |s: &baton_config::Setting<u64>, fallback: usize| {
        s.value()
            .map_or(fallback, |n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    let limits = Limits {
        memory_chars: chars(&config.memory_char_limit, args.memory_limit),
        user_chars: chars(&config.user_char_limit, args.user_limit),
    };
    let store =
        MemoryStore::open(&home(args)?, limits).map_err(|e| Failure::Other(e.to_string()))?;
    let target = Target::from(args.target);
    let io = |e: baton_memory::MemoryError| Failure::Other(e.to_string());
    let outcome = match &args.command {
        MemoryCommand::Show => return show(&store, target, args.json),
        MemoryCommand::Scan => return scan(&store, args.json),
        MemoryCommand::Add { content, force } => {
            if *force {
                store.add_allowing_similar(target, content)
            } else {
                store.add(target, content)
            }
        }
        MemoryCommand::Replace { old_text, content } => store.replace(target, old_text, content),
        MemoryCommand::Remove { old_text } => store.remove(target, old_text),
    }
    .map_err(io)?;
    report(&outcome, args.json)
}

fn home(args: &MemoryArgs) -> Result<PathBuf, Failure> {
    if let Some(h) = &args.home {
        return Ok(h.clone());
    }
    if let Some(h) = std::env::var_os("BATON_HOME") {
        return Ok(PathBuf::from(h));
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".baton"))
        .ok_or_else(|| {
            Failure::BadInput("no --home given and neither BATON_HOME nor HOME is set".into())
        })
}

fn show(store: &MemoryStore, target: Target, json: bool) -> Result<(), Failure> {
    let io = |e: baton_memory::MemoryError| Failure::Other(e.to_string());
    let entries = store.entries(target).map_err(io)?;
    let usage = store.usage(target).map_err(io)?;
    if json {
        let v = serde_json::json!({
            "target": target.as_str(),
            "entries": entries,
            "usage": usage,
            "entry_count": entries.len(),
        });
        outln!("{v:#}");
        return Ok(());
    }
    outln!("{} [{usage}]", target.file_name());
    for (i, e) in entries.iter().enumerate() {
        outln!("\n{}. {}", i + 1, e.replace('\n', "\n   "));
    }
    Ok(())
}

fn scan(store: &MemoryStore, json: bool) -> Result<(), Failure> {
    let found = store.scan().map_err(|e| Failure::Other(e.to_string()))?;
    if json {
        let flagged: Vec<serde_json::Value> = found
            .iter()
            .map(|f| {
                serde_json::json!({
                    "target": f.target.as_str(),
                    "file": f.target.file_name(),
                    "entry_number": f.number,
                    "entry": f.entry,
                    "findings": f.findings.iter().map(|x| serde_json::json!({
                        "rule": x.rule,
                        "detail": x.detail,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!("{:#}", serde_json::json!({ "flagged": flagged }));
    } else if found.is_empty() {
        outln!("No suspicious entries.");
    }
    if found.is_empty() {
        return Ok(());
    }
    for f in found.iter().filter(|_| !json) {
        let rules: Vec<&str> = f.findings.iter().map(|x| x.rule).collect();
        outln!(
            "{} entry {}: {}\n   {}",
            f.target.file_name(),
            f.number,
            rules.join(", "),
            baton_memory::entries::preview(&f.entry, 120)
        );
    }
    Err(Failure::Other(format!(
        "{} suspicious entr{}; they are withheld from the system prompt until removed",
        found.len(),
        if found.len() == 1 { "y" } else { "ies" }
    )))
}

/// Prints an applied write to stdout; a refusal goes to stderr with exit code 2, since the
/// input is what has to change.
fn report(outcome: &WriteOutcome, json: bool) -> Result<(), Failure> {
    if json {
        outln!("{:#}", outcome.to_json());
    }
    match outcome_lines(outcome) {
        Ok(lines) => {
            if !json {
                for line in lines {
                    outln!("{line}");
                }
            }
            Ok(())
        }
        Err(why) => Err(Failure::BadInput(why)),
    }
}

/// What a memory write did, as lines to show; a refusal as its explanation (with the
/// matches, similar entries and usage that say what to do next).
pub(crate) fn outcome_lines(outcome: &WriteOutcome) -> Result<Vec<String>, String> {
    match outcome {
        WriteOutcome::Applied(a) => {
            let mut lines = vec![format!("{} [{}]", a.message, a.usage)];
            lines.extend(a.retired.iter().map(|r| format!("retired: {r}")));
            if let Some(b) = &a.backup {
                lines.push(format!("previous file kept at {}", b.display()));
            }
            Ok(lines)
        }
        WriteOutcome::Refused(r) => {
            let mut msg = r.error.clone();
            if let baton_memory::RefusalKind::Ambiguous { matches } = &r.kind {
                msg.extend(matches.iter().map(|m| format!("\n  match: {m}")));
            }
            if let baton_memory::RefusalKind::Similar { similar } = &r.kind {
                msg.extend(similar.iter().map(|s| format!("\n  existing: {}", s.entry)));
            }
            if let Some(u) = &r.usage {
                msg.push_str(&format!("\n  usage: {u}"));
            }
            if let Some(entries) = &r.current_entries {
                msg.extend(entries.iter().map(|e| format!("\n  entry: {e}")));
            }
            Err(msg)
        }
    }
}
