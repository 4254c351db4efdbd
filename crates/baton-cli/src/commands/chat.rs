//! `baton chat -q "…"`: one prompt, non-interactive, through the agent runtime. The answer
//! streams to stdout; tool activity, notices and a final usage line go to stderr, so
//! `baton chat -q … > answer.txt` keeps only the answer. `--json` prints every event as one
//! JSON line on stdout instead.

use crate::commands::Failure;
use crate::commands::chat_settings;
use crate::commands::compress_settings::window;
use crate::commands::llm::provider_from_flags;
use crate::commands::prices::price_table;
use crate::commands::sessions::{db_path, open_for_write, resolve, store_err};
use crate::commands::settings::{FlagValue, Settings};
use baton_agent::approval::{AllowAll, RefuseAll};
use baton_agent::{
    AgentBuilder, AgentError, AgentEvent, Approver, Interrupt, StopReason, SystemPromptBuilder,
};
use baton_config::{Config, Value};
use baton_core::pricing::format_usd;
use baton_core::truncate::group_digits;
use baton_store::{SessionFilter, SessionStore, SqliteStore};
use clap::Args;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The prompt to run (non-interactive: answer, then exit).
    #[arg(short = 'q', long = "query", value_name = "PROMPT")]
    pub query: Option<String>,

    /// Continue the session with this id or title (its newest continuation if compacted).
    #[arg(long, value_name = "ID|TITLE", conflicts_with = "continue_last")]
    pub resume: Option<String>,

    /// Continue the most recent session.
    #[arg(long = "continue")]
    pub continue_last: bool,

    /// Model to use (default: `[model] default` in config.toml).
    #[arg(long)]
    pub model: Option<String>,

    /// The model's context window in tokens (default: config, else the server's listing,
    /// else 200,000).
    #[arg(long)]
    pub context_length: Option<u64>,

    /// Print every event as a JSON line on stdout.
    #[arg(long)]
    pub json: bool,

    /// Allow destructive commands (rm -rf, git push --force, …) without asking.
    #[arg(long)]
    pub yes: bool,

    /// Directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Most model calls in the turn (default: `[agent] max_iterations`, else 90).
    #[arg(long)]
    pub max_iterations: Option<u32>,

    /// Who writes compaction summaries: `llm` (the session's model, or
    /// `[auxiliary.compression]` when configured), `extractive` (offline) or `exec:COMMAND`.
    #[arg(long, default_value = "llm")]
    pub summarizer: String,

    #[arg(long, help = crate::commands::sessions::DB_HELP)]
    pub db: Option<PathBuf>,

    /// Server base URL (default: `[model] base_url` in config.toml, else the provider's).
    #[arg(long)]
    pub base_url: Option<String>,

    /// Wire format: openai, anthropic, responses, ollama, lmstudio (default: `[model]
    /// provider` in config.toml, else openai).
    #[arg(long)]
    pub provider: Option<String>,

    /// Environment variable holding the API key (default: OPENAI_API_KEY, or
    /// ANTHROPIC_API_KEY for anthropic).
    #[arg(long)]
    pub api_key_env: Option<String>,

    /// Seconds to wait for the server (connect and each read).
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

pub fn run(args: &ChatArgs, settings: &Settings) -> Result<(), Failure> {
    // Without -q, prompts come from standard input one line at a time (a pipe or a file);
    // the interactive terminal is not built yet.
    if args.query.is_none() && std::io::stdin().is_terminal() {
        return Err(Failure::BadInput(
            "baton chat needs a prompt: baton chat -q \"…\", or prompts piped one per line \
             (the interactive terminal is not built yet)"
                .into(),
        ));
    }
    let query = args.query.clone();
    let config = chat_config(args, settings)?;
    let runtime = crate::commands::runtime()?;
    let model = Config::text(&config.model.default)
        .map(|(m, _)| m)
        .ok_or_else(|| {
            Failure::BadInput("no model: pass --model or set [model] default in config.toml".into())
        })?;
    let window = window(&config, &runtime);
    let (provider_name, _) = config.provider();
    let provider = provider_from_flags(
        &provider_name,
        config.base_url().map(|(u, _)| u).as_deref(),
        args.api_key_env.as_deref(),
        http_settings(args.timeout),
    )?;
    let store = Arc::new(open_store(args.db.as_deref())?);
    let workdir = match &args.workdir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::Other(format!("cannot read the current directory: {e}")))?,
    };
    let workdir = workdir
        .canonicalize()
        .map_err(|e| Failure::BadInput(format!("--workdir {}: {e}", workdir.display())))?;
    let baton_home = baton_home(args.db.as_deref())?;
    let mut agent_config =
        chat_settings::agent_config(&config, &model, &window, workdir, baton_home)?;
    if let Some(n) = args.max_iterations {
        agent_config.max_iterations = n.max(1);
    }
    agent_config.summarizer_priced = args.summarizer == "llm";
    let summarizer =
        chat_settings::summarizer(&args.summarizer, &config, &provider, &model, settings)?;
    let engine = chat_settings::engine(&config, &model, &window, summarizer)?;
    let memory = chat_settings::memory(&config, &agent_config.baton_home)?;
    let prompt = SystemPromptBuilder::new(agent_config.workdir.clone(), &model)
        .with_memory(chat_settings::memory_block(&memory));
    let tools = chat_settings::tools(
        &store,
        &memory,
        summarizer_for_search(&args.summarizer),
        chat_settings::destructive_policy(&config)?,
    );
    let builder = AgentBuilder::new(agent_config, provider, store.clone())
        .engine(engine)
        .prices(price_table(settings)?)
        .approver(approver(args.yes))
        .system_prompt(Arc::new(prompt))
        .memory(memory.manager.clone())
        .tools(tools);
    let mut agent = match resume_target(args, &store)? {
        Some(id) => builder.resume(&id),
        None => builder.start(),
    }
    .map_err(agent_failure)?;

    let interrupt = Interrupt::new();
    let mut printer = Printer::new(args.json, std::io::stdout().is_terminal());
    let outcome = runtime.block_on(async {
        let watcher = interrupt.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                watcher.raise();
            }
        });
        let mut sink = |event: AgentEvent| printer.show(&event);
        agent.resume_hygiene(&mut sink).await?;
        if let Some(query) = &query {
            return agent.run_turn(query, &interrupt, &mut sink).await.map(Some);
        }
        // One turn per line of standard input, in one session, until a turn does not end
        // with an answer (interrupt, error) or the input ends.
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut last = None;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            let outcome = agent.run_turn(line.trim(), &interrupt, &mut sink).await?;
            let answered = matches!(
                outcome.reason,
                StopReason::FinalAnswer | StopReason::IterationLimit
            );
            last = Some(outcome);
            if !answered {
                break;
            }
        }
        Ok(last)
    });
    let Some(outcome) = outcome.map_err(agent_failure)? else {
        return Err(Failure::BadInput(
            "no prompt: standard input was empty (pass -q \"…\" or pipe one prompt per line)"
                .into(),
        ));
    };
    if !args.json {
        if !printer.ended_with_newline {
            outln!();
        }
        errln!("{}", usage_line(agent.totals(), agent.session_id()));
        for record in agent.economics() {
            errln!("{}", record.render());
        }
    }
    match outcome.reason {
        StopReason::FinalAnswer | StopReason::IterationLimit => Ok(()),
        StopReason::Interrupted => Err(Failure::Interrupted(format!(
            "interrupted; the session is saved: baton chat --resume {} -q \"…\" continues it",
            agent.session_id()
        ))),
        // The error itself was shown as an event; this line says what is left.
        StopReason::Error if !args.json => Err(Failure::Other(format!(
            "the turn failed; the session is saved: baton chat --resume {} -q \"…\" continues it",
            agent.session_id()
        ))),
        StopReason::Error => Err(Failure::Other(
            outcome.error.unwrap_or_else(|| "the turn failed".into()),
        )),
    }
}

/// The configuration with this command's flags applied.
fn chat_config(args: &ChatArgs, settings: &Settings) -> Result<Config, Failure> {
    settings.with_flags(vec![
        FlagValue {
            id: "model",
            flag: "--model",
            key: "model.default",
            value: Value::Text(args.model.clone().unwrap_or_default()),
        },
        FlagValue {
            id: "context_length",
            flag: "--context-length",
            key: "model.context_length",
            value: args
                .context_length
                .map_or(Value::Text(String::new()), |n| Value::Integer(n as i64)),
        },
        FlagValue {
            id: "provider",
            flag: "--provider",
            key: "model.provider",
            value: Value::Text(args.provider.clone().unwrap_or_default()),
        },
        FlagValue {
            id: "base_url",
            flag: "--base-url",
            key: "model.base_url",
            value: Value::Text(args.base_url.clone().unwrap_or_default()),
        },
    ])
}

/// Model calls may stream for minutes: the read timeout is per read, and the client retries
/// rate limits and server errors under its own rules.
fn http_settings(timeout: u64) -> baton_llm::HttpSettings {
    let wait = std::time::Duration::from_secs(timeout.max(1));
    baton_llm::HttpSettings {
        connect_timeout: wait.min(std::time::Duration::from_secs(30)),
        read_timeout: wait,
        retry: baton_llm::RetryPolicy::default(),
    }
}

/// The session to continue: `--resume` names one, `--continue` takes the newest.
fn resume_target(args: &ChatArgs, store: &SqliteStore) -> Result<Option<String>, Failure> {
    if let Some(named) = &args.resume {
        return resolve(store, named).map(Some);
    }
    if args.continue_last {
        let newest = store
            .list_sessions(&SessionFilter {
                limit: 1,
                ..SessionFilter::default()
            })
            .map_err(store_err)?;
        return match newest.first() {
            Some(s) => Ok(Some(s.session.id.clone())),
            None => Err(Failure::BadInput(
                "--continue: there is no session to continue yet".into(),
            )),
        };
    }
    Ok(None)
}

/// `session_search` summarizes what it finds offline: it must not spend the model's tokens
/// (or fail) for a recall the model may not use.
fn summarizer_for_search(_spec: &str) -> Arc<dyn baton_core::summary::Summarizer> {
    Arc::new(baton_core::summary::extractive::ExtractiveSummarizer)
}

/// Destructive commands: `--yes` allows them; on a terminal the user is asked; without one
/// they are refused with how to allow them.
fn approver(yes: bool) -> Arc<dyn Approver> {
    if yes {
        return Arc::new(AllowAll);
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        return Arc::new(crate::commands::confirm::TerminalApprover::default());
    }
    Arc::new(RefuseAll {
        explanation: "there is no terminal to confirm it on; rerun with --yes to allow it".into(),
    })
}

fn open_store(explicit: Option<&Path>) -> Result<SqliteStore, Failure> {
    let path = db_path(explicit)?;
    if path.exists() {
        return open_for_write(&path, false);
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::Other(format!("cannot create {}: {e}", parent.display())))?;
    }
    SqliteStore::open(&path).map_err(|e| Failure::Other(format!("{}: {e}", path.display())))
}

/// `$BATON_HOME`, else the database's folder, else `~/.baton`: where tool outputs spill.
fn baton_home(db: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(home) = std::env::var_os("BATON_HOME") {
        return Ok(PathBuf::from(home));
    }
    if let Some(dir) = db
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
    {
        return Ok(dir.to_path_buf());
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".baton"))
        .ok_or_else(|| Failure::BadInput("neither BATON_HOME nor HOME is set".into()))
}

fn agent_failure(error: AgentError) -> Failure {
    match error {
        AgentError::Store(e) => store_err(e),
        AgentError::NoSuchSession(_) | AgentError::Config(_) | AgentError::Pin(_) => {
            Failure::BadInput(error.to_string())
        }
    }
}

/// The final stderr line: what the run cost.
fn usage_line(totals: &baton_agent::SessionTotals, session: &str) -> String {
    let cost = if totals.calls == 0 {
        "no calls".to_string()
    } else if totals.unpriced_calls == totals.calls {
        "cost unknown".to_string()
    } else if totals.unpriced_calls > 0 {
        format!(
            "cost {} (+{} unpriced calls)",
            format_usd(totals.cost_usd),
            totals.unpriced_calls
        )
    } else {
        format!("cost {}", format_usd(totals.cost_usd))
    };
    format!(
        "usage: {} calls · input {} · cache read {} · cache write {} · output {} · {cost} · {} compactions · session {session}",
        totals.calls,
        group_digits(totals.input_tokens as usize),
        group_digits(totals.cache_read_tokens as usize),
        group_digits(totals.cache_write_tokens as usize),
        group_digits(totals.output_tokens as usize),
        totals.compactions,
    )
}

/// Shows events: text to stdout as it streams, the rest to stderr, or JSON lines.
struct Printer {
    json: bool,
    /// Control characters in model text are escaped on a terminal (a model must not be able
    /// to retitle the window or clear the screen); redirected output gets the bytes.
    escape: bool,
    ended_with_newline: bool,
}

impl Printer {
    fn new(json: bool, escape: bool) -> Self {
        Printer {
            json,
            escape,
            ended_with_newline: true,
        }
    }

    fn show(&mut self, event: &AgentEvent) {
        if self.json {
            match serde_json::to_string(event) {
                Ok(line) => outln!("{line}"),
                Err(e) => errln!("baton: cannot encode an event: {e}"),
            }
            crate::output::flush();
            return;
        }
        match event {
            AgentEvent::TextDelta { text } => {
                if self.escape {
                    out!("{}", baton_core::terminal_text::escape_controls(text));
                } else {
                    out!("{text}");
                }
                self.ended_with_newline = text.ends_with('\n');
                crate::output::flush();
            }
            AgentEvent::ToolCall {
                name, arguments, ..
            } => errln!("→ {name} {}", abbreviate(arguments, 120)),
            AgentEvent::ToolResult {
                name,
                is_error,
                chars,
                spilled_to,
                duration_ms,
                ..
            } => {
                let status = if *is_error { "error" } else { "ok" };
                let spilled = spilled_to
                    .as_ref()
                    .map(|p| format!(", full output in {p}"))
                    .unwrap_or_default();
                errln!(
                    "← {name} {status}: {} chars in {duration_ms} ms{spilled}",
                    group_digits(*chars)
                );
            }
            AgentEvent::Compaction {
                tokens_before,
                tokens_after,
                trigger,
                to_session,
                ..
            } => errln!(
                "compacted ({trigger}): ~{} → ~{} tokens; continuing in session {to_session}",
                group_digits(*tokens_before as usize),
                group_digits(*tokens_after as usize)
            ),
            AgentEvent::Retry { reason, .. } => errln!("retry: {reason}"),
            AgentEvent::Notice { message } => errln!("note: {message}"),
            AgentEvent::Error { message } => errln!("error: {message}"),
            // Each answer ends its own line, so piped turns read one after another.
            AgentEvent::TurnFinished { .. } => {
                if !self.ended_with_newline {
                    outln!();
                    self.ended_with_newline = true;
                }
                crate::output::flush();
            }
            AgentEvent::TurnStarted { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::Usage { .. } => {}
        }
    }
}

/// `text` on one line, cut to `max` chars with an ellipsis.
fn abbreviate(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max).collect();
    cut.push('…');
    cut
}
