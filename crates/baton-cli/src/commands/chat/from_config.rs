//! What `baton chat` runs with: the agent's settings and its context engine, from
//! `config.toml`, `--set` and the command's flags. The summarizer is the session's own model
//! (with `[auxiliary.compression]` tried first when configured), as in the reference design;
//! `--summarizer extractive` keeps summaries offline.

use crate::commands::Failure;
use crate::commands::compress_settings::Window;
use crate::commands::summarizer_choice;
use baton_agent::AgentConfig;
use baton_config::Config;
use baton_core::caching::CacheTtl;
use baton_core::compress::CompressorConfig;
use baton_core::engine::{ContextEngine, EngineRegistry};
use baton_core::summary::Summarizer;
use baton_llm::summarizer::ModelRoute;
use baton_llm::{LlmSummarizer, Provider};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long one summarizer call may take.
const SUMMARY_TIMEOUT: Duration = Duration::from_secs(120);

/// The agent's settings from the configuration.
pub fn agent_config(
    config: &Config,
    model: &str,
    window: &Window,
    workdir: PathBuf,
    baton_home: PathBuf,
) -> Result<AgentConfig, Failure> {
    let mut agent = AgentConfig::new(model, window.tokens, workdir, baton_home);
    if let Some((enabled, _)) = config.compression.enabled.get() {
        agent.compression_enabled = *enabled;
    }
    if let Some((attempts, _)) = config.compression.max_attempts.get() {
        agent.max_compression_attempts = u32::try_from(*attempts).unwrap_or(u32::MAX);
    }
    let count = |s: &baton_config::Setting<u64>| s.get().map(|(v, _)| *v);
    if let Some((policy, _)) = Config::text(&config.compression.policy) {
        agent.policy =
            baton_agent::economics::CompactionPolicy::parse(&policy).ok_or_else(|| {
                Failure::BadInput(format!(
                    "{}: compression.policy = {policy:?}: expected \"threshold\" or \"cost\"",
                    config.path.display()
                ))
            })?;
    }
    if let Some(n) = count(&config.compression.cost_horizon_turns) {
        agent.cost_horizon = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(n) = count(&config.agent.max_iterations) {
        agent.max_iterations = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(n) = count(&config.agent.command_timeout) {
        agent.command_timeout = Duration::from_secs(n);
    }
    if let Some((allow, _)) = config.agent.allow_outside_workdir.get() {
        agent.allow_outside_workdir = *allow;
    }
    if let Some((ttl, _)) = Config::text(&config.cache_ttl) {
        agent.cache_ttl = Some(CacheTtl::parse(&ttl).map_err(|e| {
            Failure::BadInput(format!("{}: cache_ttl: {e}", config.path.display()))
        })?);
    }
    Ok(agent)
}

/// The summarizer `spec` names: `llm` (default) summarizes with the session's model,
/// `extractive` and `exec:COMMAND` as for `baton compress`.
pub fn summarizer(
    spec: &str,
    config: &Config,
    provider: &Arc<dyn Provider>,
    model: &str,
    settings: &crate::commands::settings::Settings,
) -> Result<Arc<dyn Summarizer>, Failure> {
    if spec != "llm" {
        return summarizer_choice::build(spec, &default_flags(), SUMMARY_TIMEOUT);
    }
    let main = ModelRoute::new(provider.clone(), model);
    let auxiliary = match Config::text(&config.auxiliary_compression.model) {
        None => None,
        Some(_) => {
            let (_, flags) = settings.summarizer("llm", "summarizer", &default_flags());
            Some(aux_route(&flags)?)
        }
    };
    Ok(Arc::new(LlmSummarizer::new(Some(main), auxiliary)))
}

fn default_flags() -> summarizer_choice::LlmFlags {
    summarizer_choice::LlmFlags {
        llm_model: None,
        llm_base_url: None,
        llm_provider: "openai".into(),
        llm_api_key_env: None,
    }
}

fn aux_route(flags: &summarizer_choice::LlmFlags) -> Result<ModelRoute, Failure> {
    let model = flags.llm_model.clone().unwrap_or_default();
    let provider = crate::commands::llm::provider_from_flags(
        &flags.llm_provider,
        flags.llm_base_url.as_deref(),
        flags.llm_api_key_env.as_deref(),
        baton_llm::HttpSettings {
            read_timeout: SUMMARY_TIMEOUT,
            ..baton_llm::HttpSettings::default()
        },
    )?;
    Ok(ModelRoute::new(provider, model))
}

/// The context engine `[context] engine` names, with the compression settings.
pub fn engine(
    config: &Config,
    model: &str,
    window: &Window,
    summarizer: Arc<dyn Summarizer>,
) -> Result<Box<dyn ContextEngine>, Failure> {
    let get_f = |s: &baton_config::Setting<f64>, d: f64| s.get().map_or(d, |(v, _)| *v);
    let compressor = CompressorConfig {
        threshold: get_f(&config.compression.threshold, 0.5),
        target_ratio: get_f(&config.compression.target_ratio, 0.2),
        protect_last_n: config
            .compression
            .protect_last_n
            .get()
            .map_or(baton_core::compress::DEFAULT_PROTECT_LAST_N, |(v, _)| {
                *v as usize
            }),
        context_length: window.tokens,
        pass_timeout: SUMMARY_TIMEOUT,
        model: model.to_string(),
        summarizer,
        ..CompressorConfig::default()
    };
    let name = Config::text(&config.engine)
        .map(|(e, _)| e)
        .unwrap_or_default();
    EngineRegistry::with_builtin()
        .create(&name, &compressor)
        .map_err(|e| Failure::BadInput(format!("{}: {e}", config.path.display())))
}

/// The memory store under `<baton_home>/memories` and the manager that serves it.
pub struct Memory {
    pub store: Arc<baton_memory::store::MemoryStore>,
    pub manager: Arc<baton_memory::MemoryManager>,
}

pub fn memory(config: &Config, baton_home: &std::path::Path) -> Result<Memory, Failure> {
    let count = |s: &baton_config::Setting<u64>, d: usize| s.get().map_or(d, |(v, _)| *v as usize);
    let limits = baton_memory::limits::Limits {
        memory_chars: count(
            &config.memory_char_limit,
            baton_memory::limits::DEFAULT_MEMORY_CHARS,
        ),
        user_chars: count(
            &config.user_char_limit,
            baton_memory::limits::DEFAULT_USER_CHARS,
        ),
    };
    let store = Arc::new(
        baton_memory::store::MemoryStore::open(baton_home, limits)
            .map_err(|e| Failure::Other(format!("memory: {e}")))?,
    );
    let manager = Arc::new(baton_memory::MemoryManager::new(
        baton_memory::builtin::BuiltinProvider::new(store.clone()),
    ));
    Ok(Memory { store, manager })
}

/// The memory part of the system prompt, re-read from disk at each build (each session
/// boundary), so what the model saved is in the next session's prompt.
pub fn memory_block(memory: &Memory) -> baton_agent::system_prompt::MemoryBlock {
    let store = memory.store.clone();
    let manager = memory.manager.clone();
    Arc::new(move || {
        let _ = store.refresh_snapshot();
        manager.build_system_prompt()
    })
}

/// `[tools] allow_destructive`: pattern names (comma-separated) that need no confirmation;
/// an unknown name is an error naming the known ones.
pub fn destructive_policy(
    config: &Config,
) -> Result<baton_agent::tools::DestructivePolicy, Failure> {
    let known = baton_agent::tools::destructive::pattern_names();
    let mut allowed = Vec::new();
    if let Some((list, _)) = Config::text(&config.agent.allow_destructive) {
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !known.contains(&name) {
                return Err(Failure::BadInput(format!(
                    "{}: tools.allow_destructive: unknown pattern {name:?}; the patterns are: {}",
                    config.path.display(),
                    known.join(", ")
                )));
            }
            allowed.push(name.to_string());
        }
    }
    Ok(baton_agent::tools::DestructivePolicy { allowed })
}

/// Every tool `baton chat` gives the model.
pub fn tools(
    store: &Arc<dyn baton_store::SessionStore>,
    memory: &Memory,
    search_summarizer: Arc<dyn Summarizer>,
    policy: baton_agent::tools::DestructivePolicy,
) -> baton_agent::ToolRegistry {
    let mut registry = baton_agent::ToolRegistry::new();
    for tool in baton_agent::tools::builtin_tools(policy) {
        registry.register(tool);
    }
    registry.register(Arc::new(baton_agent::recall::HistorySearch::new(
        store.clone(),
    )));
    registry.register(Arc::new(baton_agent::recall::HistoryExpand::new(
        store.clone(),
    )));
    registry.register(Arc::new(baton_agent::memory_tool::MemoryTool::new(
        memory.store.clone(),
    )));
    registry.register(Arc::new(
        baton_agent::session_search_tool::SessionSearchTool::new(store.clone(), search_summarizer),
    ));
    registry
}
