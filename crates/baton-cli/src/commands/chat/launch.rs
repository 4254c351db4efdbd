//! Everything `baton chat` needs to start an agent, kept for the whole run: the interactive
//! terminal's `/new`, `/resume` and `/model` start or reconfigure agents with the same
//! provider, store, memory, tools and prices as the first one.

use super::ChatArgs;
use super::from_config::{self, Memory};
use crate::commands::Failure;
use crate::commands::compress_settings::{Window, window};
use crate::commands::llm::provider_from_flags;
use crate::commands::prices::price_table;
use crate::commands::sessions::{
    db_path, open_for_write, postgres_url, resolve, store_err, store_location,
};
use crate::commands::settings::{FlagValue, Settings};
use baton_agent::{Agent, AgentBuilder, AgentConfig, AgentError, Approver, SystemPromptBuilder};
use baton_config::{Config, Value};
use baton_core::pricing::PriceTable;
use baton_llm::Provider;
use baton_store::{SessionFilter, SessionStore, SqliteStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Launch {
    pub config: Config,
    pub provider: Arc<dyn Provider>,
    pub store: Arc<dyn SessionStore>,
    pub memory: Memory,
    /// The model and window the next agent starts with (`/model` changes them).
    pub agent_config: AgentConfig,
    pub window: Window,
    settings: Settings,
    summarizer_spec: String,
    prices: PriceTable,
    approver: Arc<dyn Approver>,
    policy: baton_agent::tools::DestructivePolicy,
}

impl Launch {
    /// The launch and the async runtime its agents run on (apart, so a loop can borrow the
    /// launch mutably while the runtime drives it).
    pub fn new(
        args: &ChatArgs,
        settings: &Settings,
        approver: Arc<dyn Approver>,
    ) -> Result<(Launch, tokio::runtime::Runtime), Failure> {
        let config = chat_config(args, settings)?;
        let runtime = crate::commands::runtime()?;
        let model = Config::text(&config.model.default)
            .map(|(m, _)| m)
            .ok_or_else(|| {
                Failure::BadInput(
                    "no model: pass --model or set [model] default in config.toml".into(),
                )
            })?;
        let window = window(&config, &runtime);
        let (provider_name, _) = config.provider();
        let provider = provider_from_flags(
            &provider_name,
            config.base_url().map(|(u, _)| u).as_deref(),
            args.api_key_env.as_deref(),
            http_settings(args.timeout),
        )?;
        let db = store_location(args.db.as_deref(), settings);
        let store = open_store(db.as_deref())?;
        let workdir = match &args.workdir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|e| Failure::Other(format!("cannot read the current directory: {e}")))?,
        };
        let workdir = workdir
            .canonicalize()
            .map_err(|e| Failure::BadInput(format!("--workdir {}: {e}", workdir.display())))?;
        let home = baton_home(db.as_deref())?;
        let mut agent_config = from_config::agent_config(&config, &model, &window, workdir, home)?;
        if let Some(n) = args.max_iterations {
            agent_config.max_iterations = n.max(1);
        }
        agent_config.summarizer_priced = args.summarizer == "llm";
        let memory = from_config::memory(&config, &agent_config.baton_home)?;
        let policy = from_config::destructive_policy(&config)?;
        let launch = Launch {
            prices: price_table(settings)?,
            config,
            provider,
            store,
            memory,
            agent_config,
            window,
            settings: settings.clone(),
            summarizer_spec: args.summarizer.clone(),
            approver,
            policy,
        };
        Ok((launch, runtime))
    }

    /// A builder for the current model: a fresh context engine and tool registry (both hold
    /// per-session state), the shared store, memory and provider.
    pub fn builder(&self) -> Result<AgentBuilder, Failure> {
        let model = &self.agent_config.model;
        let summarizer = from_config::summarizer(
            &self.summarizer_spec,
            &self.config,
            &self.provider,
            model,
            &self.settings,
        )?;
        let engine = from_config::engine(&self.config, model, &self.window, summarizer)?;
        let prompt = SystemPromptBuilder::new(self.agent_config.workdir.clone(), model)
            .with_memory(from_config::memory_block(&self.memory));
        let tools = from_config::tools(
            &self.store,
            &self.memory,
            // `session_search` summarizes what it finds offline: it must not spend the model's
            // tokens (or fail) for a recall the model may not use.
            Arc::new(baton_core::summary::extractive::ExtractiveSummarizer),
            self.policy.clone(),
        );
        Ok(AgentBuilder::new(
            self.agent_config.clone(),
            self.provider.clone(),
            self.store.clone(),
        )
        .engine(engine)
        .prices(self.prices.clone())
        .approver(self.approver.clone())
        .system_prompt(Arc::new(prompt))
        .memory(self.memory.manager.clone())
        .tools(tools))
    }

    /// A new session.
    pub fn start(&self) -> Result<Agent, Failure> {
        self.builder()?.start().map_err(agent_failure)
    }

    /// The session `id` (its newest continuation when it was compacted).
    pub fn resume(&self, id: &str) -> Result<Agent, Failure> {
        self.builder()?.resume(id).map_err(agent_failure)
    }

    /// The agent the command line asks for: `--resume`, `--continue`, or a new session.
    pub fn first_agent(&self, args: &ChatArgs) -> Result<Agent, Failure> {
        match resume_target(args, self.store.as_ref())? {
            Some(id) => self.resume(&id),
            None => self.start(),
        }
    }

    /// The model later agents start with.
    pub fn set_model(&mut self, model: &str, window: Window) {
        self.agent_config.model = model.to_string();
        self.agent_config.context_length = window.tokens;
        self.window = window;
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
fn resume_target(args: &ChatArgs, store: &dyn SessionStore) -> Result<Option<String>, Failure> {
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

/// The store at `db`: a PostgreSQL URL, or a SQLite file (created with its folder when
/// missing; the default file when `db` is `None`).
fn open_store(db: Option<&Path>) -> Result<Arc<dyn SessionStore>, Failure> {
    if let Some(url) = postgres_url(db) {
        return Ok(Arc::new(
            baton_pg::PgStore::connect(url).map_err(store_err)?,
        ));
    }
    let path = db_path(db)?;
    if path.exists() {
        return Ok(Arc::new(open_for_write(&path, false)?));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::Other(format!("cannot create {}: {e}", parent.display())))?;
    }
    Ok(Arc::new(SqliteStore::open(&path).map_err(|e| {
        Failure::Other(format!("{}: {e}", path.display()))
    })?))
}

/// `$BATON_HOME`, else the database file's folder, else `~/.baton`: where tool outputs spill and
/// the prompt history is kept.
pub fn baton_home(db: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(home) = std::env::var_os("BATON_HOME") {
        return Ok(PathBuf::from(home));
    }
    if let Some(dir) = db
        .filter(|_| postgres_url(db).is_none())
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
    {
        return Ok(dir.to_path_buf());
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".baton"))
        .ok_or_else(|| Failure::BadInput("neither BATON_HOME nor HOME is set".into()))
}

pub fn agent_failure(error: AgentError) -> Failure {
    match error {
        AgentError::Store(e) => store_err(e),
        AgentError::NoSuchSession(_) | AgentError::Config(_) | AgentError::Pin(_) => {
            Failure::BadInput(error.to_string())
        }
    }
}
