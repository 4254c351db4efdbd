//! `baton trajectories compress`: shrink a JSONL dataset of agent trajectories to a training
//! token budget (see `baton_core::trajectory`). The input is JSON Lines or one JSON array of
//! records (LLaMA-Factory's `.json` layout), both streamed; anything else is refused before
//! an output file is created.
//!
//! Output keeps each record's dialect (ShareGPT or OpenAI), every other field, and the input
//! order; records under the target are copied byte for byte. Exit codes: 0 done, 2 bad input
//! (including a malformed record under `--on-error fail`), 1 I/O failure, 130 interrupted
//! (the output then holds only complete records; `--resume` continues).

use crate::commands::Failure;
use crate::commands::io::{refuse_same_file, same_file, write_output};
use crate::commands::settings::Settings;
use crate::commands::summarizer_choice::{self, LlmFlags};
use baton_core::tokens::Encoding;
use baton_core::trajectory::compress::DEFAULT_SUMMARY_NOTICE;
use baton_core::trajectory::resume::{
    find_resume_point_in, trim_to_complete_lines, truncate_to_lines,
};
use baton_core::trajectory::source::{Layout, check_input, open_source};
use baton_core::trajectory::{
    Action, OnError, Pipeline, PipelineError, PipelineOptions, PlanConfig, ProtectFirst,
    RunSummary, StopSignal, TrajectoryCompressor, TrajectoryConfig, TrajectoryMetrics,
};
use baton_core::truncate::group_digits;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Malformed-record warnings printed before they are only counted.
const MAX_WARNINGS: u64 = 20;

#[derive(Debug, Args)]
pub struct TrajectoriesArgs {
    #[command(subcommand)]
    pub command: TrajectoriesCommand,
}

#[derive(Debug, Subcommand)]
pub enum TrajectoriesCommand {
    /// Compress each trajectory of a JSONL file to a token budget by summarizing a span of its
    /// middle turns, keeping the protected head and tail verbatim.
    Compress(CompressTrajectoriesArgs),
}

#[derive(Debug, Args)]
pub struct CompressTrajectoriesArgs {
    /// Input records: ShareGPT (`conversations` of from/value turns) or OpenAI (`messages`),
    /// both may be mixed, as JSON Lines (one per line) or as one JSON array (the LLaMA-Factory
    /// `.json` layout); either is streamed, never loaded whole. A file that is neither is
    /// refused before anything is written.
    pub input: PathBuf,

    /// Output JSONL, one record per line whatever the input layout (default:
    /// `<input stem>_compressed.jsonl` next to the input).
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// Token budget per trajectory; records at or under it are copied unchanged.
    #[arg(long, default_value_t = 15_250)]
    pub target_max_tokens: usize,

    /// Size the summary turn aims for, reserved when choosing how much to summarize.
    #[arg(long, default_value_t = 750)]
    pub summary_target_tokens: usize,

    /// First turn of which roles to keep verbatim: a comma-separated subset of
    /// system, human, gpt, tool, or `none`.
    #[arg(long, default_value = "system,human,gpt,tool", value_parser = ProtectFirst::parse)]
    pub protect_first: ProtectFirst,

    /// Last turns kept verbatim.
    #[arg(long, default_value_t = 4)]
    pub protect_last: usize,

    /// Tokenizer used for every count: o200k or cl100k (exact BPE).
    #[arg(long, default_value = "o200k", value_parser = parse_encoding)]
    pub encoding: Encoding,

    /// `extractive` (offline, deterministic), `exec:COMMAND` (prompt on stdin, summary on
    /// stdout), or `llm` (a model server: see --llm-model, --llm-base-url, --llm-provider; the
    /// key comes from the provider's environment variable). When `[auxiliary.compression]
    /// model` is set in config.toml, `llm` with that model is the default.
    #[arg(long, default_value = "extractive")]
    pub summarizer: String,

    #[command(flatten)]
    pub llm: LlmFlags,

    /// Seconds allowed for one summarizer call; on failure the extractive summary is used and
    /// the record's metrics say so.
    #[arg(long, default_value_t = 120)]
    pub summarizer_timeout: u64,

    /// Summarizer calls in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,

    /// CPU threads for parsing and token counting (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,

    /// Write one JSON row of metrics per input record to FILE (JSONL).
    #[arg(long)]
    pub metrics: Option<PathBuf>,

    /// Write the aggregate report as JSON to FILE (the text report always goes to stderr).
    #[arg(long)]
    pub summary_json: Option<PathBuf>,

    /// Print the aggregate report as JSON on standard output (the same object as
    /// --summary-json writes; the text report still goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Continue an interrupted run: keep OUT's complete records, skip that many input records.
    #[arg(long)]
    pub resume: bool,

    /// Overwrite an existing OUT (and metrics / summary files).
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,

    /// What to do with a malformed record: copy it through, skip it, or fail (exit 2).
    #[arg(long, default_value = "copy", value_parser = OnError::parse)]
    pub on_error: OnError,

    /// Do not append the note about summarized turns to the system turn.
    #[arg(long)]
    pub no_summary_notice: bool,

    /// Count every turn of every record, so the metrics and the summary's totals cover every
    /// record. By default a record under the target by its byte length, and the middle of a
    /// long summarized span, are not counted (the output is the same either way).
    #[arg(long)]
    pub exact_counts: bool,
}

fn parse_encoding(s: &str) -> Result<Encoding, String> {
    match Encoding::parse(s) {
        Ok(Encoding::Rough) => {
            Err("trajectory compression counts exactly: use o200k or cl100k".into())
        }
        Ok(e) => Ok(e),
        Err(e) => Err(format!(
            "unknown encoding `{}`: expected o200k or cl100k",
            e.0
        )),
    }
}

pub fn run(args: &TrajectoriesArgs, settings: &Settings) -> Result<(), Failure> {
    match &args.command {
        TrajectoriesCommand::Compress(a) => compress(a, settings),
    }
}

fn compress(args: &CompressTrajectoriesArgs, settings: &Settings) -> Result<(), Failure> {
    // `[auxiliary.compression]` names the summarizing model for datasets too.
    let (spec, llm) = settings.summarizer(&args.summarizer, "summarizer", &args.llm);
    let summarizer = summarizer_choice::build(
        &spec,
        &llm,
        Duration::from_secs(args.summarizer_timeout.max(1)),
    )?;
    let input_label = args.input.display().to_string();
    let input_len = std::fs::metadata(&args.input)
        .map_err(|e| Failure::BadInput(format!("cannot read {input_label}: {e}")))?
        .len();
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.input));
    check_targets(args, &output)?;
    // Before any output file exists: is this a file of records at all?
    let layout = check_input(&args.input).map_err(Failure::BadInput)?.layout;

    let mut skip = None;
    if args.resume {
        skip = Some(resume_point(args, layout, &output)?);
    }
    // The input is opened before any output: a file that cannot be read leaves nothing behind.
    let input = open_source(&args.input, layout)
        .map_err(|e| Failure::BadInput(format!("cannot read {input_label}: {e}")))?;
    let out_existed = std::fs::symlink_metadata(&output).is_ok();
    let out = open_for_writing(&output, args.resume)?;
    let metrics = match &args.metrics {
        Some(p) => match open_for_writing(p, args.resume) {
            Ok(file) => Some(file),
            Err(e) => {
                // Nothing was written: an empty OUT this run created would only make the
                // rerun refuse because OUT "already exists".
                if !out_existed {
                    drop(out);
                    let _ = std::fs::remove_file(&output);
                }
                return Err(e);
            }
        },
        None => None,
    };

    let config = TrajectoryConfig {
        plan: PlanConfig {
            target_max_tokens: args.target_max_tokens,
            summary_target_tokens: args.summary_target_tokens,
            protect_first: args.protect_first,
            protect_last_n: args.protect_last,
        },
        summary_notice: (!args.no_summary_notice).then(|| DEFAULT_SUMMARY_NOTICE.to_string()),
        exact_counts: args.exact_counts,
    };
    let compressor = TrajectoryCompressor::new(config, args.encoding.counter(), summarizer);
    let pipeline = Pipeline::new(
        compressor,
        PipelineOptions {
            threads: args.threads,
            concurrency: args.concurrency.max(1),
            window: 0,
            on_error: args.on_error,
            skip_lines: skip.map_or(0, |p| p.lines_to_skip),
        },
    )
    .map_err(|e| Failure::Other(e.to_string()))?;

    let runtime = crate::commands::runtime()?;
    let stop = StopSignal::new();
    let progress = Progress::new(input_len, skip.map_or(0, |p| p.bytes_skipped));
    let mut warnings = 0u64;
    let result = runtime.block_on(async {
        let on_signal = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_signal.stop();
            }
        });
        pipeline
            .run_source(
                input,
                out,
                metrics,
                &stop,
                &mut |m: &TrajectoryMetrics, bytes| {
                    progress.record(m, bytes);
                    warn_malformed(&progress, layout, &input_label, m, &mut warnings);
                },
            )
            .await
    });
    progress.finish();
    let summary = result.map_err(|e| pipeline_failure(e, layout, &input_label, &output))?;
    if warnings > MAX_WARNINGS {
        errln!(
            "baton: {} more malformed records not shown (see --metrics rows with an `error`)",
            warnings - MAX_WARNINGS
        );
    }
    report(args, &output, &summary, skip.map_or(0, |p| p.records_done))?;
    if summary.interrupted {
        return Err(Failure::Interrupted(format!(
            "interrupted: {} holds only complete records; run again with --resume to continue",
            output.display()
        )));
    }
    Ok(())
}

/// `data.jsonl` → `data_compressed.jsonl`, as the reference tool names its output.
fn default_output(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map_or_else(|| "trajectories".into(), |s| s.to_string_lossy());
    input.with_file_name(format!("{stem}_compressed.jsonl"))
}

/// Refuses to write over the input or, without `--resume` / `--force`, over anything that
/// already exists.
fn check_targets(args: &CompressTrajectoriesArgs, output: &Path) -> Result<(), Failure> {
    let targets = [
        Some(output),
        args.metrics.as_deref(),
        args.summary_json.as_deref(),
    ];
    let outputs: Vec<&Path> = targets.into_iter().flatten().collect();
    for (i, target) in outputs.iter().enumerate() {
        refuse_same_file(target, &args.input, "input file")?;
        // Two outputs on one file would interleave (or truncate) each other's lines.
        if let Some(other) = outputs[..i]
            .iter()
            .find(|o| **o == *target || same_file(target, o))
        {
            return Err(Failure::BadInput(format!(
                "{} and {} are the same file; give each output its own path",
                other.display(),
                target.display()
            )));
        }
    }
    if args.force {
        return Ok(());
    }
    // With --resume, OUT and the metrics file are continued and the summary (which the
    // interrupted run wrote) is rewritten: all of them came from this job.
    let must_be_new: Vec<&Path> = if args.resume {
        Vec::new()
    } else {
        targets.into_iter().flatten().collect()
    };
    if let Some(existing) = must_be_new.into_iter().find(|p| p.exists()) {
        return Err(Failure::BadInput(format!(
            "{} already exists; pass --resume to continue an interrupted run or --force to overwrite it",
            existing.display()
        )));
    }
    Ok(())
}

/// Trims OUT (and the metrics file) to complete records and finds where the input continues.
fn resume_point(
    args: &CompressTrajectoriesArgs,
    layout: Layout,
    output: &Path,
) -> Result<baton_core::trajectory::ResumePoint, Failure> {
    let done = trim_to_complete_lines(output)
        .map_err(|e| Failure::Other(format!("cannot read {}: {e}", output.display())))?;
    let input = open_source(&args.input, layout)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", args.input.display())))?;
    let point = find_resume_point_in(input, done, args.on_error).map_err(|e| {
        Failure::BadInput(format!(
            "cannot resume {} from {}: {e}",
            output.display(),
            args.input.display()
        ))
    })?;
    if let Some(m) = &args.metrics {
        let kept = truncate_to_lines(m, point.records_done)
            .map_err(|e| Failure::Other(format!("cannot read {}: {e}", m.display())))?;
        if kept < point.records_done {
            errln!(
                "baton: {} has rows for {kept} of the {} records already done; the missing rows are not recreated",
                m.display(),
                point.records_done
            );
        }
    }
    errln!(
        "baton: resuming after {} records ({} input {}) already in {}",
        group_digits(point.records_done),
        group_digits(point.lines_to_skip),
        match layout {
            Layout::JsonLines => "lines",
            Layout::JsonArray => "array elements",
        },
        output.display()
    );
    Ok(point)
}

fn open_for_writing(path: &Path, append: bool) -> Result<File, Failure> {
    let mut options = OpenOptions::new();
    options.create(true);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    options
        .open(path)
        .map_err(|e| Failure::Other(format!("cannot write {}: {e}", path.display())))
}

fn pipeline_failure(e: PipelineError, layout: Layout, input: &str, output: &Path) -> Failure {
    match e {
        PipelineError::Malformed { line, message } => Failure::BadInput(format!(
            "{}: malformed record: {message} (--on-error fail); {} holds the records before it",
            layout.locate(input, line),
            output.display()
        )),
        // serde_json's message already says where in the array.
        PipelineError::Read { line, source } if layout == Layout::JsonArray => Failure::BadInput(
            format!("{input}: reading the array failed after record {line}: {source}"),
        ),
        PipelineError::Read { .. } => Failure::BadInput(format!("{input}: {e}")),
        other => Failure::Other(other.to_string()),
    }
}

fn warn_malformed(
    progress: &Progress,
    layout: Layout,
    input: &str,
    m: &TrajectoryMetrics,
    count: &mut u64,
) {
    let what = match m.action {
        Action::CopiedMalformed => "copied unchanged",
        Action::SkippedMalformed => "left out",
        _ => return,
    };
    *count += 1;
    if *count <= MAX_WARNINGS {
        let error = m.error.as_deref().unwrap_or("malformed");
        progress.println(format!(
            "baton: {}: malformed record ({what}): {error}",
            layout.locate(input, m.line)
        ));
    }
}

fn report(
    args: &CompressTrajectoriesArgs,
    output: &Path,
    summary: &RunSummary,
    resumed_after: u64,
) -> Result<(), Failure> {
    let agg = &summary.aggregate;
    if resumed_after > 0 {
        errln!(
            "(resumed: the {} records already done are not counted below)",
            group_digits(resumed_after)
        );
    }
    errln!("{}", agg.to_text());
    errln!(
        "wrote {} lines to {}",
        group_digits(summary.lines_written),
        output.display()
    );
    if args.summary_json.is_none() && !args.json {
        return Ok(());
    }
    let mut json = agg.to_json();
    if let Some(obj) = json.as_object_mut() {
        obj.insert("interrupted".into(), summary.interrupted.into());
        obj.insert("resumed_after_records".into(), resumed_after.into());
        obj.insert("output".into(), output.display().to_string().into());
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    if let Some(path) = &args.summary_json {
        write_output(Some(path), &text)?;
    }
    if args.json {
        out!("{text}");
    }
    Ok(())
}

/// The progress bar: input bytes for the bar and ETA, records/s and tokens saved in the
/// message. Drawn on stderr only when stderr is a terminal.
struct Progress {
    bar: ProgressBar,
    started: Instant,
    records: std::cell::Cell<u64>,
    saved: std::cell::Cell<u64>,
}

impl Progress {
    fn new(total_bytes: u64, already: u64) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total_bytes), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {percent:>3}% {binary_bytes}/{binary_total_bytes} · {msg} · ETA {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_position(already);
        bar.reset_eta();
        Progress {
            bar,
            started: Instant::now(),
            records: std::cell::Cell::new(0),
            saved: std::cell::Cell::new(0),
        }
    }

    fn record(&self, m: &TrajectoryMetrics, input_bytes: u64) {
        self.bar.inc(input_bytes);
        let n = self.records.get() + 1;
        self.records.set(n);
        self.saved.set(self.saved.get() + m.tokens_saved() as u64);
        if n % 16 == 1 && !self.bar.is_hidden() {
            let secs = self.started.elapsed().as_secs_f64().max(1e-3);
            self.bar.set_message(format!(
                "{} records ({:.0}/s) · {} tokens saved",
                group_digits(n),
                n as f64 / secs,
                group_digits(self.saved.get())
            ));
        }
    }

    fn println(&self, line: String) {
        if self.bar.is_hidden() {
            errln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
