//! `baton compress`: compact a conversation file with the default engine.
//!
//! The compacted conversation goes to `-o OUT` (atomically) or stdout, in the input's format;
//! the report goes to stderr. Exit codes: 0 success or no-op, 2 bad input, 1 anything else.

use crate::commands::Failure;
use crate::commands::compress_settings::{self, Resolved};
use crate::commands::io::{read_input, refuse_same_file, write_output_with};
use crate::commands::settings::Settings;
use crate::commands::summarizer_choice::LlmFlags;
use baton_core::compress::{CompressionResult, Outcome};
use baton_core::engine::{CompressRequest, EngineRegistry};
use baton_core::feedback::{CompressionOutcome, CompressionReport};
use baton_core::formats::{Document, FormatName};
use baton_core::tokens::{RoughCounter, TokenCounter, tools_tokens};
use baton_core::truncate::group_digits;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Conversation file (any supported format); `-` or nothing reads standard input.
    pub file: Option<PathBuf>,

    /// Compress a stored session (id or title) instead of a file, exactly as the agent loop
    /// does: the session ends with reason `compression` and a new session holding the
    /// compacted conversation continues its chain. Nothing stored is deleted.
    #[arg(long, conflicts_with = "file")]
    pub session: Option<String>,

    #[arg(long, requires = "session", value_name = "PATH", help = crate::commands::sessions::DB_HELP)]
    pub db: Option<PathBuf>,

    /// With --session: allow migrating a database of an older schema (e.g. the reference
    /// design's) first.
    #[arg(long, requires = "session")]
    pub migrate: bool,

    /// Where to write the compacted conversation (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// The model's context window, in tokens. Without it: `[model] context_length` in
    /// config.toml, else the window the `[model] base_url` server lists for `[model] default`,
    /// else 200,000. The report says which was used.
    #[arg(long, default_value_t = 200_000)]
    pub context_length: u64,

    /// Fraction (0, 1] of the usable window (the window minus --max-output-tokens) that
    /// triggers compression. The engine raises it to at least 0.75 for windows under 512,000
    /// tokens, never triggers under 64,000 tokens, and uses 85% of the window when that floor
    /// would reach it; the report states the value applied and why.
    #[arg(long, default_value_t = 0.50)]
    pub threshold: f64,

    /// Share (0, 1] of the threshold kept verbatim as the recent tail. Clamped to 0.10-0.80;
    /// the report states a clamped value.
    #[arg(long, default_value_t = 0.20)]
    pub target_ratio: f64,

    /// Keep the last N messages verbatim: never summarized, never pruned, whatever the tail's
    /// token budget (a large N can leave little or nothing to compact).
    #[arg(long, default_value_t = baton_core::compress::DEFAULT_PROTECT_LAST_N)]
    pub protect_last: usize,

    /// Keep everything about this topic in full detail.
    #[arg(long)]
    pub focus: Option<String>,

    /// `extractive` (offline, default), `exec:COMMAND` (the prompt goes to COMMAND's stdin,
    /// its stdout is the summary) or `llm` (a model server: see --llm-model, --llm-base-url,
    /// --llm-provider; the key comes from the provider's environment variable). When
    /// `[auxiliary.compression] model` is set in config.toml, `llm` with that model is the
    /// default.
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

    /// Same as `--report json`: the report as one JSON object per conversation on stderr
    /// (standard output carries the compacted conversation, unless -o is given).
    #[arg(long)]
    pub json: bool,

    /// Input format (`auto` detects it from the content): openai, json, object, jsonl, records,
    /// anthropic, sharegpt, or an agent-CLI transcript: claude-code, codex, gemini-cli
    /// (imported as one OpenAI conversation object, which is what the output is written as).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,

    /// Context engine, by registry name (default: `[context] engine` in config.toml, else
    /// `compressor`).
    #[arg(long)]
    pub engine: Option<String>,

    /// Tokens reserved for the model's reply: the threshold applies to the window minus this.
    #[arg(long)]
    pub max_output_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

impl CompressArgs {
    /// The report format: `--json` wins over the default `--report text`.
    pub fn report_format(&self) -> ReportFormat {
        if self.json {
            ReportFormat::Json
        } else {
            self.report
        }
    }
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

pub fn run(args: &CompressArgs, settings: &Settings) -> Result<(), Failure> {
    if let Some(session) = &args.session {
        return crate::commands::compress_session::run(args, settings, session);
    }
    let runtime = crate::commands::runtime()?;
    let resolved = compress_settings::resolve(args, settings, &runtime)?;
    let (label, doc) = read_input(args.file.as_deref(), args.format.0)?;
    if let (Some(out), Some(input)) = (&args.output, &args.file)
        && input.as_os_str() != "-"
    {
        refuse_same_file(out, input, "input file")?;
    }
    refuse_orphan_results(&label, &doc)?;
    let registry = EngineRegistry::with_builtin();
    let mut results = Vec::with_capacity(doc.conversations.len());
    // The output document: the input's records without their messages (each gets its
    // compacted messages below). Cloning the whole input here doubled the peak memory.
    let mut compacted = baton_core::formats::Document {
        conversations: doc
            .conversations
            .iter()
            .map(|c| baton_core::Conversation {
                messages: Vec::new(),
                tools: c.tools.clone(),
                extra: c.extra.clone(),
                field_order: c.field_order.clone(),
            })
            .collect(),
        dialect: doc.dialect,
        layout: doc.layout,
        transcript: doc.transcript,
    };
    for (conv, out) in doc
        .conversations
        .iter()
        .zip(compacted.conversations.iter_mut())
    {
        // Tool schemas are part of the prompt: they count toward the threshold and the totals.
        let schema_tokens = conv
            .tools
            .as_deref()
            .map_or(0, |t| tools_tokens(&RoughCounter, t) as u64);
        let mut result = match &resolved.disabled_by {
            Some(by) if !args.force => disabled(&conv.messages, schema_tokens, by),
            _ => {
                // One engine per conversation: compaction state never leaks between records.
                let mut engine = registry
                    .create(&resolved.engine, &resolved.compressor)
                    .map_err(|e| Failure::BadInput(e.to_string()))?;
                let current_tokens = (schema_tokens > 0).then(|| {
                    conv.messages
                        .iter()
                        .map(|m| RoughCounter.count_message(m) as u64)
                        .sum::<u64>()
                        + schema_tokens
                });
                let mut result = runtime.block_on(engine.compress(CompressRequest {
                    messages: (&conv.messages).into(),
                    current_tokens,
                    focus_topic: args.focus.as_deref(),
                    force: args.force,
                }));
                if result.changed() {
                    // The engine counts the messages it wrote; the schemas are sent unchanged.
                    result.tokens_after += schema_tokens;
                }
                result
            }
        };
        if let Outcome::Unavailable { reason } = &result.outcome {
            // Nothing is written: a copy of the input under the output name would look like
            // a compaction that happened.
            return Err(Failure::Other(format!(
                "{label}: not compressed, the summarizer is unavailable: {reason}"
            )));
        }
        // Lent to the output document while it is written, then returned for the report:
        // copying them was a tenth of a short compaction.
        out.messages = std::mem::take(&mut result.messages);
        results.push((result, schema_tokens));
    }
    write_output_with(args.output.as_deref(), |out| compacted.write_text(out))?;
    for (out, (result, _)) in compacted.conversations.iter_mut().zip(&mut results) {
        result.messages = std::mem::take(&mut out.messages);
    }
    report(args, &resolved, &label, &doc, &results);
    // The process ends right after this command: freeing the parsed input, the compacted
    // conversations and the runtime piece by piece only costs time (~1.5% of compressing a
    // real session, `perf record`), and the OS takes the memory back at exit anyway.
    std::mem::forget((doc, compacted, results, runtime));
    Ok(())
}

/// The result when `[compression] enabled = false` and `--force` was not given: nothing
/// changes, and the report says why.
pub(crate) fn disabled(
    messages: &[baton_core::Message],
    schema_tokens: u64,
    by: &str,
) -> CompressionResult {
    let tokens = messages
        .iter()
        .map(|m| RoughCounter.count_message(m) as u64)
        .sum::<u64>()
        + schema_tokens;
    CompressionResult::unchanged(
        messages,
        tokens,
        Outcome::NoOp {
            reason: format!(
                "compression is disabled (compression.enabled = false, from {by}); --force compresses anyway"
            ),
        },
    )
}

/// Refuses (exit 2) a conversation holding a tool result without its call, whatever `--force`
/// says: a no-op writes its input back unchanged, and a provider rejects that sequence, so the
/// output would be as broken as the input. (A trailing call without a result is an exchange
/// in progress and is accepted.)
fn refuse_orphan_results(label: &str, doc: &Document) -> Result<(), Failure> {
    for (i, conv) in doc.conversations.iter().enumerate() {
        let which = if doc.conversations.len() > 1 {
            format!("{label} conversation {i}")
        } else {
            label.to_string()
        };
        refuse_orphans(&which, &conv.messages)?;
    }
    Ok(())
}

/// A tool result without its call is refused (exit 2) naming `what`: a provider rejects it,
/// so a compacted copy (a file or a continuation session) would be unusable.
pub(crate) fn refuse_orphans(what: &str, messages: &[baton_core::Message]) -> Result<(), Failure> {
    use baton_core::compress::sanitize::{SequenceError, validate_sequence};
    if let Err(
        e @ (SequenceError::ResultWithoutCall { .. } | SequenceError::UnmatchedResult { .. }),
    ) = validate_sequence(messages)
    {
        return Err(Failure::BadInput(format!(
            "{what}: {e}; providers reject a tool result without its call, so it cannot be compacted (or written back) as it is: restore the call or remove the result"
        )));
    }
    Ok(())
}

fn report(
    args: &CompressArgs,
    resolved: &Resolved,
    label: &str,
    doc: &Document,
    results: &[(CompressionResult, u64)],
) {
    if args.report_format() == ReportFormat::Text {
        // A fallback is the one thing the user must not miss: its reason comes first.
        for (i, (r, _)) in results.iter().enumerate() {
            if let Some(reason) = fallback_reason(r) {
                if results.len() > 1 {
                    errln!("{label} conversation {i}: {reason}");
                } else {
                    errln!("{reason}");
                }
            }
        }
        for line in compress_settings::text_lines(resolved) {
            errln!("{line}");
        }
    }
    for (i, (conv, (r, schema_tokens))) in doc.conversations.iter().zip(results).enumerate() {
        match args.report_format() {
            ReportFormat::Json => {
                let mut report = json_report(r, conv.messages.len());
                if let Some(obj) = report.as_object_mut() {
                    obj.insert("settings".into(), compress_settings::json(resolved));
                    obj.insert(
                        "tool_schemas".into(),
                        json!({
                            "count": conv.tools.as_ref().map_or(0, Vec::len),
                            "tokens": schema_tokens,
                        }),
                    );
                }
                errln!("{report}");
            }
            ReportFormat::Text => {
                if results.len() > 1 {
                    errln!("{label} conversation {i}:");
                }
                if let Some(tools) = conv.tools.as_ref().filter(|t| !t.is_empty()) {
                    errln!(
                        "tool schemas: {} tool{}, ~{} tokens, counted in the threshold decision and in both totals",
                        tools.len(),
                        if tools.len() == 1 { "" } else { "s" },
                        group_digits(*schema_tokens as usize)
                    );
                }
                errln!("{}", text_report(r, conv.messages.len()));
            }
        }
    }
}

/// The report of one conversation: headline, request size, and one `note:` line per step of
/// the escalation ladder. A fallback's reason is not repeated here: [`fallback_reason`] is
/// printed first, above the settings.
pub fn text_report(r: &CompressionResult, before_messages: usize) -> String {
    let outcome = match &r.outcome {
        Outcome::Blocked { reason } | Outcome::Unavailable { reason } => {
            CompressionOutcome::Aborted {
                reason: Some(reason.clone()),
            }
        }
        _ => CompressionOutcome::Summarized,
    };
    let mut text = CompressionReport::from_counts(
        (before_messages, r.tokens_before),
        (r.messages.len(), r.tokens_after),
        !r.changed(),
    )
    .with_outcome(outcome)
    .feedback()
    .to_string();
    if let Outcome::NoOp { reason } = &r.outcome {
        text.push_str(&format!("\n{reason}"));
    }
    if r.fallback_used
        && let Some(by) = &r.summarizer
    {
        text.push_str(&format!("\nsummary written by: {by} (fallback)"));
    }
    let decisive = r.fallback_used.then(|| decisive_step(r)).flatten();
    for step in &r.escalations {
        if !decisive.is_some_and(|d| std::ptr::eq(d, step)) {
            text.push_str(&format!("\nnote: {step}"));
        }
    }
    text
}

/// The step of the escalation ladder that decided a fallback: the last one that is not about
/// trimming the extractive summary itself (a gate rejection is followed by a retry, and only
/// the retry's rejection ends the ladder).
fn decisive_step(r: &CompressionResult) -> Option<&String> {
    r.escalations
        .iter()
        .rev()
        .find(|step| !step.starts_with("extractive summary"))
}

/// Why the configured summarizer's output was not used, in one line that ends with what was
/// used instead, e.g. "summarizer `exec:foo` failed: exit status: 1; no stderr output; used
/// the extractive summary". `None` when no fallback happened.
pub fn fallback_reason(r: &CompressionResult) -> Option<String> {
    if !r.fallback_used || !r.changed() {
        return None;
    }
    let truncated = r
        .summarizer
        .as_deref()
        .is_some_and(|by| by.contains("truncated"));
    let used = if truncated {
        "used the extractive summary, truncated to the budget"
    } else {
        "used the extractive summary"
    };
    Some(match decisive_step(r) {
        Some(step) if step.ends_with("used the extractive summary") && !truncated => step.clone(),
        Some(step) => {
            let step = step
                .strip_suffix("; used the extractive summary")
                .unwrap_or(step);
            format!("{step}; {used}")
        }
        None => format!("the configured summarizer's summary was not used; {used}"),
    })
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
        "fallback_reason": fallback_reason(r),
        "summary": r.summary,
        "outcome": r.outcome,
        "summarizer": r.summarizer,
        "escalations": r.escalations,
        "gate_added": r.gate_added,
        "gate_rejections": r.gate_rejections,
        "tail": r.tail.map(|t| json!({
            "messages": t.messages,
            "tokens": t.tokens,
            "budget_tokens": t.budget_tokens,
            "floor_messages": t.floor_messages,
            "floor_tokens": t.floor_tokens,
            "below_floor": t.below_floor(),
        })),
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
    })
}
