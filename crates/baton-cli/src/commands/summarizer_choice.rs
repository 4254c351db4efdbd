//! `--summarizer extractive|exec:COMMAND|llm` and the `--llm-*` flags, shared by `compress` and
//! `trajectories compress` so both accept the same summarizers with the same rules.

use crate::commands::Failure;
use baton_core::summary::Summarizer;
use baton_core::summary::exec::ExecSummarizer;
use baton_core::summary::extractive::ExtractiveSummarizer;
use clap::Args;
use std::sync::Arc;
use std::time::Duration;

/// Which model writes summaries when `--summarizer llm` is chosen.
#[derive(Debug, Clone, Args)]
pub struct LlmFlags {
    /// With --summarizer llm: the model that writes the summary (default: `[auxiliary.compression]
    /// model` in config.toml).
    #[arg(long)]
    pub llm_model: Option<String>,

    /// With --summarizer llm: the server's base URL (default: `[auxiliary.compression] base_url`,
    /// else with provider `auto` the `[model]` base URL, else the provider's).
    #[arg(long)]
    pub llm_base_url: Option<String>,

    /// With --summarizer llm: openai, anthropic, responses, ollama or lmstudio (default:
    /// `[auxiliary.compression] provider`, where `auto` means the `[model]` provider).
    #[arg(long, default_value = "openai")]
    pub llm_provider: String,

    /// With --summarizer llm: environment variable holding the API key (default:
    /// OPENAI_API_KEY, or ANTHROPIC_API_KEY for anthropic).
    #[arg(long)]
    pub llm_api_key_env: Option<String>,
}

/// The summarizer `spec` names; `timeout` bounds one call.
pub fn build(
    spec: &str,
    llm: &LlmFlags,
    timeout: Duration,
) -> Result<Arc<dyn Summarizer>, Failure> {
    if spec == "extractive" {
        return Ok(Arc::new(ExtractiveSummarizer));
    }
    if spec == "llm" {
        return llm_summarizer(llm, timeout);
    }
    let Some(command) = spec.strip_prefix("exec:") else {
        return Err(Failure::BadInput(format!(
            "unknown summarizer `{spec}`: expected `extractive`, `llm` or `exec:COMMAND`"
        )));
    };
    ExecSummarizer::parse(command, timeout)
        .map(|s| Arc::new(s) as Arc<dyn Summarizer>)
        .map_err(|e| Failure::BadInput(e.to_string()))
}

/// One model as summarizer (no auxiliary model on the command line: the flags name exactly
/// one).
fn llm_summarizer(llm: &LlmFlags, timeout: Duration) -> Result<Arc<dyn Summarizer>, Failure> {
    let model = llm
        .llm_model
        .clone()
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| Failure::BadInput("--summarizer llm needs --llm-model".into()))?;
    let http = baton_llm::HttpSettings {
        read_timeout: timeout,
        ..baton_llm::HttpSettings::default()
    };
    let provider = crate::commands::llm::provider_from_flags(
        &llm.llm_provider,
        llm.llm_base_url.as_deref(),
        llm.llm_api_key_env.as_deref(),
        http,
    )?;
    let route = baton_llm::summarizer::ModelRoute::new(provider, model);
    Ok(Arc::new(baton_llm::LlmSummarizer::new(Some(route), None)))
}
