//! `baton models` and `baton ping`: what a model server offers, and whether one tiny request
//! gets through. Keys come from environment variables only, so they never land in shell
//! history or process listings, and errors never print them.

use crate::commands::Failure;
use crate::commands::settings::{FlagValue, Settings};
use baton_config::Value;
use baton_core::message::Message;
use baton_core::pricing::{Cost, PriceTable, UnknownCost, format_usd};
use baton_core::truncate::group_digits;
use baton_llm::{
    ChatRequest, ErrorKind, HttpSettings, LlmError, ModelInfo, Provider, ProviderConfig,
    ProviderKind, RetryPolicy,
};
use clap::Args;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which server to talk to, and how.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Server base URL (default: for openai/responses $OPENAI_BASE_URL when set, else
    /// `[model] base_url` in config.toml, else the provider's).
    #[arg(long)]
    pub base_url: Option<String>,

    /// Wire format and listing API: openai, anthropic, responses, ollama, lmstudio (default:
    /// `[model] provider` in config.toml, else openai).
    #[arg(long, default_value = "openai")]
    pub provider: String,

    /// Environment variable holding the API key (default: OPENAI_API_KEY, or ANTHROPIC_API_KEY
    /// for anthropic; none for ollama and lmstudio).
    #[arg(long)]
    pub api_key_env: Option<String>,

    /// Seconds to wait for the server (connect and each read).
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct PingArgs {
    #[command(flatten)]
    pub server: ServerArgs,

    /// Model to ask (default: `[model] default` in config.toml, else the first one the server
    /// lists).
    #[arg(long)]
    pub model: Option<String>,
}

impl ServerArgs {
    /// The provider these flags describe, over `[model] provider` and `base_url`.
    fn provider(&self, settings: &Settings) -> Result<Arc<dyn Provider>, Failure> {
        let config = self.config(settings)?;
        let (provider, _) = config.provider();
        provider_from_flags(
            &provider,
            config.base_url().map(|(u, _)| u).as_deref(),
            self.api_key_env.as_deref(),
            http_settings(self.timeout),
        )
    }

    fn config(&self, settings: &Settings) -> Result<baton_config::Config, Failure> {
        settings.with_flags(vec![
            FlagValue {
                id: "provider",
                flag: "--provider",
                key: "model.provider",
                value: Value::Text(self.provider.clone()),
            },
            FlagValue {
                id: "base_url",
                flag: "--base-url",
                key: "model.base_url",
                value: Value::Text(self.base_url.clone().unwrap_or_default()),
            },
        ])
    }
}

/// Builds the provider the flags describe.
pub fn provider_from_flags(
    provider: &str,
    base_url: Option<&str>,
    api_key_env: Option<&str>,
    http: HttpSettings,
) -> Result<Arc<dyn Provider>, Failure> {
    let kind = ProviderKind::parse(provider).ok_or_else(|| {
        let known: Vec<&str> = ProviderKind::ALL.iter().map(|k| k.as_str()).collect();
        Failure::BadInput(format!(
            "unknown provider `{provider}`: expected one of {}",
            known.join(", ")
        ))
    })?;
    let env_base = matches!(kind, ProviderKind::OpenAi | ProviderKind::Responses)
        .then(|| std::env::var("OPENAI_BASE_URL").ok())
        .flatten()
        .filter(|s| !s.trim().is_empty());
    let mut config = ProviderConfig::new(kind).http(http);
    config.base_url = base_url.map(str::to_string).or(env_base);
    // A server that needs a key and has none is reported here, naming the variable to set,
    // before any request.
    let config = config.key_from_env(api_key_env).map_err(llm_failure)?;
    config.build().map_err(llm_failure)
}

fn http_settings(timeout: u64) -> HttpSettings {
    let wait = Duration::from_secs(timeout.max(1));
    HttpSettings {
        connect_timeout: wait,
        read_timeout: wait,
        retry: RetryPolicy {
            max_attempts: 2,
            ..RetryPolicy::default()
        },
    }
}

/// Unreachable servers and bad settings are the user's input (exit 2); the rest exit 1.
pub fn llm_failure(error: LlmError) -> Failure {
    let text = error.to_string();
    if let LlmError::MissingApiKey { status: None, .. } = error {
        return Failure::BadInput(text);
    }
    match error.kind() {
        ErrorKind::Connect | ErrorKind::InvalidRequest => Failure::BadInput(text),
        ErrorKind::Timeout
            if matches!(
                error,
                LlmError::Timeout {
                    phase: baton_llm::TimeoutPhase::Connect,
                    ..
                }
            ) =>
        {
            Failure::BadInput(text)
        }
        _ => Failure::Other(text),
    }
}

pub fn run_models(args: &ModelsArgs, settings: &Settings) -> Result<(), Failure> {
    let s = &args.server;
    let provider = s.provider(settings)?;
    let models = crate::commands::runtime()?
        .block_on(provider.list_models())
        .map_err(llm_failure)?;
    if s.json {
        let out = json!({
            "provider": provider.name(),
            "base_url": provider.base_url(),
            "models": models,
        });
        outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    print_models_table(provider.as_ref(), &models);
    Ok(())
}

fn print_models_table(provider: &dyn Provider, models: &[ModelInfo]) {
    outln!(
        "{} models at {}",
        group_digits(models.len()),
        provider.base_url()
    );
    let width = models
        .iter()
        .map(|m| m.id.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    outln!("{:<width$}  {:>10}  SOURCE", "MODEL", "CONTEXT");
    for m in models {
        let context = m.context_length.map_or("?".to_string(), group_digits);
        let source = m.context_source.as_deref().unwrap_or("-");
        outln!("{:<width$}  {:>10}  {}", m.id, context, source);
    }
}

pub fn run_ping(args: &PingArgs, settings: &Settings) -> Result<(), Failure> {
    let s = &args.server;
    let provider = s.provider(settings)?;
    let prices = crate::commands::prices::price_table(settings)?;
    let runtime = crate::commands::runtime()?;
    let configured = baton_config::Config::text(&settings.config.model.default).map(|(m, _)| m);
    let model = match args.model.as_ref().or(configured.as_ref()) {
        Some(m) if !m.trim().is_empty() => m.clone(),
        Some(_) => return Err(Failure::BadInput("--model must not be empty".into())),
        None => {
            let models = runtime
                .block_on(provider.list_models())
                .map_err(llm_failure)?;
            models.into_iter().next().map(|m| m.id).ok_or_else(|| {
                Failure::BadInput(format!(
                    "{} lists no models; pass --model",
                    provider.base_url()
                ))
            })?
        }
    };
    let mut request = ChatRequest::new(
        model.clone(),
        vec![Message::user("Reply with the single word: pong")],
    );
    request.max_output_tokens = Some(16);
    let started = Instant::now();
    let response = runtime
        .block_on(provider.complete(&request))
        .map_err(llm_failure)?;
    let latency = started.elapsed();
    let u = response.usage;
    let cost = ping_cost(&prices, response.model.as_deref(), &model, &u);
    if s.json {
        let out = json!({
            "provider": provider.name(),
            "base_url": provider.base_url(),
            "model": model,
            "answered_by": response.model,
            "latency_ms": latency.as_millis() as u64,
            "attempts": response.attempts,
            "finish_reason": response.finish_reason.as_str(),
            "reply": response.message.text(),
            "usage": u,
            "cost_usd": cost.as_ref().ok().map(|c| c.usd),
            "cost": cost.as_ref().ok(),
            "cost_unknown_reason": cost.as_ref().err().map(ToString::to_string),
        });
        outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    outln!(
        "{model} at {}: {} ms ({} attempt{})",
        provider.base_url(),
        group_digits(latency.as_millis() as u64),
        response.attempts,
        if response.attempts == 1 { "" } else { "s" }
    );
    outln!(
        "usage: input {} + cache read {} + cache write {} = prompt {}; output {} (reasoning {})",
        group_digits(u.input),
        group_digits(u.cache_read),
        group_digits(u.cache_write),
        group_digits(u.prompt()),
        group_digits(u.output),
        group_digits(u.reasoning)
    );
    match &cost {
        Ok(c) => outln!(
            "cost: {} (priced as {}, prices of {})",
            format_usd(c.usd),
            c.priced_as,
            c.prices_as_of
        ),
        Err(reason) => outln!("cost: unknown ({reason})"),
    }
    outln!("reply: {}", response.message.text().trim());
    Ok(())
}

/// The ping's cost: by the model that answered (often a dated name), else the one asked for.
fn ping_cost(
    prices: &PriceTable,
    answered_by: Option<&str>,
    asked: &str,
    usage: &baton_core::usage::CanonicalUsage,
) -> Result<Cost, UnknownCost> {
    match answered_by.map(|m| prices.cost(Some(m), usage)) {
        Some(Ok(cost)) => Ok(cost),
        _ => prices.cost(Some(asked), usage),
    }
}
