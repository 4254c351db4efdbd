//! `baton compress`: compact a conversation file with the default engine.
//!
//! The compacted conversation goes to `-o OUT` (atomically) or stdout, in the input's format;
//! the report goes to stderr. Exit codes: 0 success or no-op, 2 bad input, 1 anything else.

use crate::commands::Failure;
use crate::commands::io::{read_input, write_output};
use crate::commands::summarizer_choice::{self, LlmFlags};
use baton_core::compress::{CompressionResult, CompressorConfig, Outcome};
use baton_core::engine::{CompressRequest, EngineRegistry};
use baton_core::feedback::{CompressionOutcome, CompressionReport};
use baton_core::formats::{Document, FormatName};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Conversation file (any supported format); `-` or nothing reads standard input.
    pub file: Option<PathBuf>,

    /// Compress a stored session (id or title) instead of a file, exactly as the agent loop
    /// does: the session ends with reason `compression` and a new session holding the
    /// compacted conversation continues its chain. Nothing stored is deleted.
    #[arg(long, conflicts_with = "file")]
    pub session: Option<String>,

    /// Session database for --session (default: $BATON_HOME/state.db, else ~/.baton/state.db).
    #[arg(long, requires = "session")]
    pub db: Option<PathBuf>,

    /// With --session: allow migrating a database of an older schema (e.g. the reference
    /// design's) first.
    #[arg(long, requires = "session")]
    pub migrate: bool,

    /// Where to write the compacted conversation (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 200_000)]
    pub context_length: u64,

    /// Fraction of the window that triggers compression.
    #[arg(long, default_value_t = 0.50)]
    pub threshold: f64,

    /// Share of the threshold kept verbatim as the recent tail.
    #[arg(long, default_value_t = 0.20)]
    pub target_ratio: f64,

    /// Minimum number of recent messages kept verbatim.
    #[arg(long, default_value_t = 20)]
    pub protect_last: usize,

    /// Keep everything about this topic in full detail.
    #[arg(long)]
    pub focus: Option<String>,

    /// `extractive` (offline, default), `exec:COMMAND` (the prompt goes to COMMAND's stdin,
    /// its stdout is the summary) or `llm` (a model server: see --llm-model, --llm-base-url,
    /// --llm-provider; the key comes from the provider's environment variable).
    #[arg(long, default_value = "extractive")]
    pub summarizer: String,

    /// Seconds allowed for one summarizer call before falling back to the extractive summary.
    #[arg(long, default_value_t = 120)]
    pub summarizer_timeout: u64,

    #[command(flatten)]
    pub llm: LlmFlags,

    /// Compress even under the threshold (like a manual /compress).
    #[arg(long)]
    pub force: bool,

    /// Report format on stderr.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,

    /// Input format (`auto` detects it from the content): openai, json, object, jsonl, records,
    /// anthropic, sharegpt, or an agent-CLI transcript: claude-code, codex, gemini-cli
    /// (imported as one OpenAI conversation object, which is what the output is written as).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

/// `auto` or a forced format.
#[derive(Debug, Clone, Copy)]
pub struct FormatChoice(pub Option<FormatName>);

pub(crate) fn parse_format(s: &str) -> Result<FormatChoice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(FormatChoice(None));
    }
    FormatName::parse(s)
        .map(|f| FormatChoice(Some(f)))
        .map_err(|e| e.to_string())
}

pub fn run(args: &CompressArgs) -> Result<(), Failure> {
    if let Some(session) = &args.session {
        return crate::commands::compress_session::run(args, session);
    }
    let config = compressor_config(args)?;
    let (label, doc) = read_input(args.file.as_deref(), args.format.0)?;
    if let (Some(out), Some(input)) = (&args.output, &args.file)
        && same_file(out, input)
    {
        return Err(Failure::BadInput(format!(
            "refusing to overwrite the input file {} with its compacted version; choose another -o path",
            input.display()
        )));
    }
    let runtime = crate::commands::runtime()?;
    let registry = EngineRegistry::with_builtin();
    let mut results = Vec::with_capacity(doc.conversations.len());
    let mut compacted = doc.clone();
    for (conv, out) in doc
        .conversations
        .iter()
        .zip(compacted.conversations.iter_mut())
    {
        // One engine per conversation: compaction state never leaks between records.
        let mut engine = registry
            .create("compressor", &config)
            .map_err(|e| Failure::Other(e.to_string()))?;
        let result = runtime.block_on(engine.compress(CompressRequest {
            messages: &conv.messages,
            current_tokens: None,
            focus_topic: args.focus.as_deref(),
            force: args.force,
        }));
        if let Outcome::Unavailable { reason } = &result.outcome {
            // Nothing is written: a copy of the input under the output name would look like
            // a compaction that happened.
            return Err(Failure::Other(format!(
                "{label}: not compressed, the summarizer is unavailable: {reason}"
            )));
        }
        out.messages = result.messages.clone();
        results.push(result);
    }
    write_output(args.output.as_deref(), &compacted.to_text())?;
    report(args, &label, &doc, &results);
    Ok(())
}

pub(crate) fn compressor_config(args: &CompressArgs) -> Result<CompressorConfig, Failure> {
    if !(0.0..=1.0).contains(&args.threshold) || args.threshold == 0.0 {
        return Err(Failure::BadInput(format!(
            "--threshold must be a fraction in (0, 1], got {}",
            args.threshold
        )));
    }
    if args.context_length == 0 {
        return Err(Failure::BadInput(
            "--context-length must be positive".into(),
        ));
    }
    let timeout = Duration::from_secs(args.summarizer_timeout.max(1));
    Ok(CompressorConfig {
        threshold: args.threshold,
        target_ratio: args.target_ratio,
        protect_last_n: args.protect_last,
        context_length: args.context_length,
        pass_timeout: timeout,
        summarizer: summarizer_choice::build(&args.summarizer, &args.llm, timeout)?,
        ..CompressorConfig::default()
    })
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn report(args: &CompressArgs, label: &str, doc: &Document, results: &[CompressionResult]) {
    for (i, (conv, r)) in doc.conversations.iter().zip(results).enumerate() {
        match args.report {
            ReportFormat::Json => errln!("{}", json_report(r, conv.messages.len())),
            ReportFormat::Text => {
                if results.len() > 1 {
                    errln!("{label} conversation {i}:");
                }
                errln!("{}", text_report(r, &conv.messages));
            }
        }
    }
}

pub(crate) fn text_report(r: &CompressionResult, before: &[baton_core::Message]) -> String {
    let outcome = match &r.outcome {
        Outcome::Blocked { reason } | Outcome::Unavailable { reason } => {
            CompressionOutcome::Aborted {
                reason: Some(reason.clone()),
            }
        }
        _ if r.fallback_used => CompressionOutcome::Fallback {
            dropped: None,
            reason: r.escalations.last().cloned(),
        },
        _ => CompressionOutcome::Summarized,
    };
    let mut text =
        CompressionReport::from_transcripts(before, &r.messages, r.tokens_before, r.tokens_after)
            .with_outcome(outcome)
            .feedback()
            .to_string();
    if let Outcome::NoOp { reason } = &r.outcome {
        text.push_str(&format!("\n{reason}"));
    }
    for step in &r.escalations {
        text.push_str(&format!("\nnote: {step}"));
    }
    text
}

pub(crate) fn json_report(r: &CompressionResult, before_messages: usize) -> serde_json::Value {
    json!({
        "before_messages": before_messages,
        "after_messages": r.messages.len(),
        "before_tokens": r.tokens_before,
        "after_tokens": r.tokens_after,
        "summarized_range": r.summarized_range.as_ref().map(|s| [s.start, s.end]),
        "pruned": r.pruned,
        "fallback_used": r.fallback_used,
        "summary": r.summary,
        "outcome": r.outcome,
        "summarizer": r.summarizer,
        "escalations": r.escalations,
        "gate_added": r.gate_added,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
    })
}
