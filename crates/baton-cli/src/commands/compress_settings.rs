//! What `baton compress` runs with, and how each value was decided: the window (flag, config,
//! the server's model listing, or the default), the output reservation, the threshold and
//! target ratio after the engine's floors and clamps, the engine, whether compression is
//! enabled. The report states all of it, so no value is changed silently.

use crate::commands::Failure;
use crate::commands::compress::CompressArgs;
use crate::commands::settings::{FlagValue, Settings, origin};
use baton_config::{Config, Value};
use baton_core::compress::CompressorConfig;
use baton_core::compress::threshold::{
    DEGENERATE_WINDOW_FRACTION, MINIMUM_THRESHOLD, SMALL_WINDOW, SMALL_WINDOW_MIN_FRACTION,
    ThresholdConfig, ThresholdExplanation,
};
use baton_core::engine::EngineRegistry;
use baton_core::truncate::group_digits;
use baton_llm::context_length::{ContextLengths, ContextSource};
use serde_json::{Value as Json, json};
use std::time::Duration;

/// Used when neither a flag, the configuration nor a server gives the window.
pub const DEFAULT_WINDOW: u64 = 200_000;

/// How long window discovery may wait for the server.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The model window and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub tokens: u64,
    /// `flag`, `file`, `env` (configured), `server` (the model listing), `table` (the
    /// model-family table, after a listing without the model's window), or `default`.
    pub source: &'static str,
    /// In words: `--context-length`, `/home/u/.baton/config.toml line 4`, `listed by … for
    /// model m`, or why discovery did not give one.
    pub detail: String,
}

/// Everything `compress` decided before compressing.
pub struct Resolved {
    pub compressor: CompressorConfig,
    pub engine: String,
    pub engine_origin: String,
    /// `Some(origin)` when compression is disabled by `[compression] enabled = false`.
    pub disabled_by: Option<String>,
    pub window: Window,
    pub explanation: ThresholdExplanation,
    pub threshold_origin: String,
    pub target_ratio_origin: String,
}

/// Applies the command's flags over the configuration and decides every setting.
pub fn resolve(
    args: &CompressArgs,
    settings: &Settings,
    runtime: &tokio::runtime::Runtime,
) -> Result<Resolved, Failure> {
    let config = settings.with_flags(vec![
        flag(
            "context_length",
            "--context-length",
            "model.context_length",
            int(args.context_length),
        ),
        flag(
            "threshold",
            "--threshold",
            "compression.threshold",
            Value::Float(args.threshold),
        ),
        flag(
            "target_ratio",
            "--target-ratio",
            "compression.target_ratio",
            Value::Float(args.target_ratio),
        ),
        flag(
            "protect_last",
            "--protect-last",
            "compression.protect_last_n",
            int(args.protect_last as u64),
        ),
        flag(
            "engine",
            "--engine",
            "context.engine",
            Value::Text(args.engine.clone().unwrap_or_default()),
        ),
    ])?;
    let (engine, engine_source) = Config::text(&config.engine).unwrap_or_else(|| {
        (
            baton_core::engine::DEFAULT_ENGINE.into(),
            baton_config::Source::Default,
        )
    });
    let engine_origin = origin(&config, &engine_source);
    let known = EngineRegistry::with_builtin().names();
    if !known.contains(&engine) {
        return Err(Failure::BadInput(format!(
            "unknown context engine `{engine}` (from {engine_origin}); known engines: {}",
            known.join(", ")
        )));
    }
    let window = window(&config, runtime);
    let max_output_tokens = args.max_output_tokens;
    if let Some(out) = max_output_tokens
        && (out == 0 || out >= window.tokens)
    {
        return Err(Failure::BadInput(format!(
            "--max-output-tokens {} leaves no room for the prompt in a {}-token window ({})",
            group_digits(out as usize),
            group_digits(window.tokens as usize),
            window.detail
        )));
    }
    let (threshold, threshold_source) = setting(&config.compression.threshold, 0.5);
    let (target_ratio, ratio_source) = setting(&config.compression.target_ratio, 0.2);
    let (protect_last, _) = setting(
        &config.compression.protect_last_n,
        baton_core::compress::DEFAULT_PROTECT_LAST_N as u64,
    );
    let (max_attempts, _) = setting(&config.compression.max_attempts, 3);
    let (enabled, enabled_source) = setting(&config.compression.enabled, true);
    let explanation = ThresholdConfig {
        fraction: threshold,
        target_ratio,
        context_length: window.tokens,
        max_output_tokens,
    }
    .explain();
    let timeout = Duration::from_secs(args.summarizer_timeout.max(1));
    let (spec, llm) = settings.summarizer(&args.summarizer, "summarizer", &args.llm);
    let compressor = CompressorConfig {
        threshold,
        target_ratio,
        protect_last_n: protect_last as usize,
        context_length: window.tokens,
        max_output_tokens,
        max_passes_per_turn: max_attempts as u32,
        pass_timeout: timeout,
        model: Config::text(&config.model.default)
            .map(|(m, _)| m)
            .unwrap_or_default(),
        summarizer: crate::commands::summarizer_choice::build(&spec, &llm, timeout)?,
        ..CompressorConfig::default()
    };
    Ok(Resolved {
        compressor,
        engine,
        engine_origin,
        disabled_by: (!enabled).then(|| origin(&config, &enabled_source)),
        window,
        explanation,
        threshold_origin: origin(&config, &threshold_source),
        target_ratio_origin: origin(&config, &ratio_source),
    })
}

fn flag<'a>(id: &'a str, name: &'a str, key: &'a str, value: Value) -> FlagValue<'a> {
    FlagValue {
        id,
        flag: name,
        key,
        value,
    }
}

fn int(n: u64) -> Value {
    Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

fn setting<T: Clone>(s: &baton_config::Setting<T>, fallback: T) -> (T, baton_config::Source) {
    s.get()
        .map_or((fallback, baton_config::Source::Default), |(v, src)| {
            (v.clone(), src)
        })
}

/// `[model] context_length` (or `--context-length`); else the server's listing when a base
/// URL is configured; else [`DEFAULT_WINDOW`].
pub(crate) fn window(config: &Config, runtime: &tokio::runtime::Runtime) -> Window {
    if let Some((tokens, source)) = config.model.context_length.get() {
        return Window {
            tokens: *tokens,
            source: source.kind(),
            detail: origin(config, &source),
        };
    }
    let Some((base_url, _)) = config.base_url() else {
        return Window {
            tokens: DEFAULT_WINDOW,
            source: "default",
            detail: "default; set [model] context_length or --context-length".into(),
        };
    };
    match discover(config, &base_url, runtime) {
        Ok(found) => found,
        Err(why) => Window {
            tokens: DEFAULT_WINDOW,
            source: "default",
            detail: format!("default: {why}"),
        },
    }
}

/// Asks the configured server for the model's window (`baton models` logic).
fn discover(
    config: &Config,
    base_url: &str,
    runtime: &tokio::runtime::Runtime,
) -> Result<Window, String> {
    let (provider_name, _) = config.provider();
    let http = baton_llm::HttpSettings {
        connect_timeout: DISCOVERY_TIMEOUT,
        read_timeout: DISCOVERY_TIMEOUT,
        retry: baton_llm::RetryPolicy {
            max_attempts: 1,
            ..baton_llm::RetryPolicy::default()
        },
    };
    let provider =
        crate::commands::llm::provider_from_flags(&provider_name, Some(base_url), None, http)
            .map_err(|e| format!("cannot ask {base_url} for the window: {e}"))?;
    let model = Config::text(&config.model.default).map(|(m, _)| m);
    let Some(model) = model else {
        let models = runtime
            .block_on(provider.list_models())
            .map_err(|e| format!("cannot list the models at {base_url}: {e}"))?;
        return match models.as_slice() {
            [only] => only
                .context_length
                .map(|tokens| Window {
                    tokens,
                    source: "server",
                    detail: format!("listed by {base_url} for its only model {}", only.id),
                })
                .ok_or_else(|| format!("{base_url} does not say the window of {}", only.id)),
            many => Err(format!(
                "{base_url} lists {} models; set [model] default to choose one",
                many.len()
            )),
        };
    };
    let (tokens, source) =
        runtime.block_on(ContextLengths::new().resolve(provider.as_ref(), &model));
    match source {
        ContextSource::Server => Ok(Window {
            tokens,
            source: "server",
            detail: format!("listed by {base_url} for model {model}"),
        }),
        ContextSource::Table => Ok(Window {
            tokens,
            source: "table",
            detail: format!("known window of the {model} family; {base_url} did not list it"),
        }),
        _ => Err(format!(
            "{base_url} did not report a window for model {model}"
        )),
    }
}

/// Report lines stating the window, reservation, threshold and tail budget, with every
/// adjustment the engine made to the requested values.
pub fn text_lines(r: &Resolved) -> Vec<String> {
    let e = &r.explanation;
    let n = |x: u64| group_digits(x as usize);
    let mut lines = vec![format!(
        "window: {} tokens ({})",
        n(r.window.tokens),
        r.window.detail
    )];
    if e.reserved_output > 0 {
        lines.push(format!(
            "output reserve: {} tokens (--max-output-tokens); the threshold applies to the remaining {}",
            n(e.reserved_output),
            n(e.usable_window)
        ));
    }
    let threshold_tokens = n(e.budgets.threshold_tokens);
    let requested = format!("{:.2} ({})", e.fraction_requested, r.threshold_origin);
    let mut threshold = if e.raised_for_small_window {
        format!(
            "threshold: {requested} raised to {:.2}, the least for windows under {} tokens",
            SMALL_WINDOW_MIN_FRACTION,
            n(SMALL_WINDOW)
        )
    } else {
        format!("threshold: {requested}")
    };
    if e.degenerate {
        threshold.push_str(&format!(
            "; the {}-token floor reaches the {}-token window, so {:.0}% of it is used",
            n(MINIMUM_THRESHOLD),
            n(e.usable_window),
            DEGENERATE_WINDOW_FRACTION * 100.0
        ));
    } else if e.floored {
        threshold.push_str(&format!(
            "; {:.2} of {} is under the {}-token floor, which is used",
            e.fraction_used,
            n(e.usable_window),
            n(MINIMUM_THRESHOLD)
        ));
    }
    threshold.push_str(&format!(": compresses at {threshold_tokens} tokens"));
    lines.push(threshold);
    let ratio = format!(
        "{:.2} ({})",
        e.target_ratio_requested, r.target_ratio_origin
    );
    if (e.target_ratio_used - e.target_ratio_requested).abs() > f64::EPSILON {
        lines.push(format!(
            "target ratio: {ratio} clamped to {:.2} (allowed 0.10-0.80): tail budget {} tokens",
            e.target_ratio_used,
            n(e.budgets.tail_tokens)
        ));
    } else {
        lines.push(format!(
            "target ratio: {ratio}: tail budget {} tokens",
            n(e.budgets.tail_tokens)
        ));
    }
    if r.engine_origin != "default" {
        lines.push(format!("engine: {} ({})", r.engine, r.engine_origin));
    }
    lines
}

/// The same, as the `settings` object of `--report json`.
pub fn json(r: &Resolved) -> Json {
    let e = &r.explanation;
    json!({
        "context_length": r.window.tokens,
        "context_length_source": r.window.source,
        "context_length_detail": r.window.detail,
        "max_output_tokens": r.compressor.max_output_tokens,
        "usable_window": e.usable_window,
        "threshold": {
            "requested": e.fraction_requested,
            "from": r.threshold_origin,
            "applied": e.fraction_used,
            "raised_for_small_window": e.raised_for_small_window,
            "floored": e.floored,
            "degenerate_window": e.degenerate,
            "tokens": e.budgets.threshold_tokens,
        },
        "target_ratio": {
            "requested": e.target_ratio_requested,
            "from": r.target_ratio_origin,
            "applied": e.target_ratio_used,
            "tail_tokens": e.budgets.tail_tokens,
        },
        "engine": r.engine,
        "compression_enabled": r.disabled_by.is_none(),
    })
}
