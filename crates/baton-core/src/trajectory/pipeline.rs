//! The batch driver: streams records from a reader to a writer, in input order, with a
//! bounded number of records in memory.
//!
//! Work is split by what it waits on. Parsing, token counting and assembling are CPU-bound and
//! run on a rayon pool sized to the cores (token counting is the bottleneck, about 40x slower
//! than JSON parsing). Summarizer calls wait on a process or a network and run as tokio tasks,
//! at most `concurrency` at once. The driver itself runs on the caller's tokio runtime (this
//! crate never creates one): it reads a line, spawns its task, and writes finished records
//! strictly in order, holding at most `window` records at a time. Memory is therefore bounded
//! by the window and the largest records, never by the input size.
//!
//! Stopping: when the [`StopSignal`] fires, the driver stops reading, abandons the records in
//! flight (a resumed run redoes them) and returns. Each record is written as one whole line and
//! flushed, so the output then holds exactly the records before the first unfinished one.

use crate::trajectory::compress::{Done, Malformed, Prepared, TrajectoryCompressor};
use crate::trajectory::metrics::{Action, Aggregate, TrajectoryMetrics};
use crate::trajectory::source::{LineSource, RecordSource};
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::{Notify, Semaphore, oneshot};
use tokio::task::JoinHandle;

/// What to do with a line that is not a valid record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Write it through unchanged (the default: nothing the user had is lost).
    Copy,
    /// Leave it out of the output.
    Skip,
    /// Stop the batch with an error naming the line.
    Fail,
}

impl OnError {
    pub fn parse(s: &str) -> Result<OnError, String> {
        match s {
            "copy" => Ok(OnError::Copy),
            "skip" => Ok(OnError::Skip),
            "fail" => Ok(OnError::Fail),
            other => Err(format!(
                "`{other}` is not an --on-error mode; expected copy, skip or fail"
            )),
        }
    }
}

/// How the pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineOptions {
    /// CPU worker threads; 0 means one per core.
    pub threads: usize,
    /// Summarizer calls at once.
    pub concurrency: usize,
    /// Records in memory at once (read but not yet written); 0 picks
    /// `concurrency + 4 × threads`, enough to keep every worker and summarizer slot busy.
    pub window: usize,
    pub on_error: OnError,
    /// Input lines to skip before processing (see `resume`); line numbers still count them.
    pub skip_lines: u64,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            threads: 0,
            concurrency: 16,
            window: 0,
            on_error: OnError::Copy,
            skip_lines: 0,
        }
    }
}

/// Why a batch stopped early.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("reading the input failed after line {line}: {source}")]
    Read { line: u64, source: io::Error },
    #[error("writing the output failed: {0}")]
    Write(io::Error),
    #[error("writing the metrics failed: {0}")]
    Metrics(io::Error),
    /// `--on-error fail` met a bad record.
    #[error("line {line}: {message}")]
    Malformed { line: u64, message: String },
    #[error("cannot start the worker threads: {0}")]
    Threads(String),
    #[error("processing line {line} failed unexpectedly: {message}")]
    Worker { line: u64, message: String },
}

/// A shared "please stop" flag that async code can also wait on.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    stopped: AtomicBool,
    notify: Notify,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::SeqCst)
    }

    /// Resolves once [`StopSignal::stop`] has been called.
    pub async fn stopped(&self) {
        loop {
            let notified = self.0.notify.notified();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub aggregate: Aggregate,
    /// The stop signal fired before the input was exhausted.
    pub interrupted: bool,
    /// Output lines written by this run.
    pub lines_written: u64,
    /// The window in effect.
    pub window: usize,
    /// Most records alive at once (read, not yet written or dropped), counted by a guard that
    /// travels with each record: the memory bound, measured.
    pub peak_in_flight: usize,
}

/// Counts records alive anywhere in the pipeline.
#[derive(Debug, Default)]
struct Live {
    now: AtomicUsize,
    peak: AtomicUsize,
}

/// Held by every record from the moment it is read until it is written or dropped.
struct LiveGuard(Arc<Live>);

impl LiveGuard {
    fn new(live: &Arc<Live>) -> Self {
        let now = live.now.fetch_add(1, Ordering::SeqCst) + 1;
        live.peak.fetch_max(now, Ordering::SeqCst);
        LiveGuard(Arc::clone(live))
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

type Outcome = Result<Result<Done, Malformed>, String>;

struct InFlight {
    line: u64,
    input_bytes: u64,
    handle: JoinHandle<(Outcome, LiveGuard)>,
}

/// Compresses a stream of records.
#[derive(Debug)]
pub struct Pipeline {
    compressor: Arc<TrajectoryCompressor>,
    options: PipelineOptions,
    pool: Arc<rayon::ThreadPool>,
    permits: Arc<Semaphore>,
}

impl Pipeline {
    pub fn new(
        compressor: TrajectoryCompressor,
        options: PipelineOptions,
    ) -> Result<Self, PipelineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .thread_name(|i| format!("baton-traj-{i}"))
            .build()
            .map_err(|e| PipelineError::Threads(e.to_string()))?;
        let permits = Arc::new(Semaphore::new(options.concurrency.max(1)));
        Ok(Pipeline {
            compressor: Arc::new(compressor),
            options,
            pool: Arc::new(pool),
            permits,
        })
    }

    /// The window in effect.
    pub fn window(&self) -> usize {
        if self.options.window > 0 {
            self.options.window
        } else {
            self.options.concurrency.max(1) + 4 * self.pool.current_num_threads()
        }
    }

    /// Runs the batch. `observe` sees every record's metrics as it is written, with the size
    /// of its input line, for progress display and warnings.
    pub async fn run<R: BufRead, W: Write, M: Write>(
        &self,
        input: R,
        out: W,
        metrics: Option<M>,
        stop: &StopSignal,
        observe: &mut dyn FnMut(&TrajectoryMetrics, u64),
    ) -> Result<RunSummary, PipelineError> {
        self.run_source(LineSource::new(input), out, metrics, stop, observe)
            .await
    }

    /// [`Pipeline::run`] over any [`RecordSource`] (a JSON array, for one); `skip_lines`
    /// then counts the source's record numbers.
    pub async fn run_source<S: RecordSource, W: Write, M: Write>(
        &self,
        mut input: S,
        mut out: W,
        mut metrics: Option<M>,
        stop: &StopSignal,
        observe: &mut dyn FnMut(&TrajectoryMetrics, u64),
    ) -> Result<RunSummary, PipelineError> {
        let window = self.window();
        let live = Arc::new(Live::default());
        let mut pending: VecDeque<InFlight> = VecDeque::with_capacity(window);
        let mut summary = RunSummary {
            aggregate: Aggregate::default(),
            interrupted: false,
            lines_written: 0,
            window,
            peak_in_flight: 0,
        };
        let mut line_no = 0u64;
        let mut eof = false;
        let result = 'run: loop {
            if stop.is_stopped() {
                summary.interrupted = true;
                break Ok(());
            }
            // Write whatever is finished at the front, in order.
            while pending.front().is_some_and(|f| f.handle.is_finished()) {
                let Some(mut front) = pending.pop_front() else {
                    break;
                };
                let joined = (&mut front.handle).await;
                if let Err(e) = self.complete(
                    &front,
                    joined,
                    &mut out,
                    metrics.as_mut(),
                    &mut summary,
                    stop,
                    observe,
                ) {
                    break 'run Err(e);
                }
            }
            if !eof && pending.len() < window {
                match input.next_item() {
                    Ok(None) => eof = true,
                    Ok(Some(item)) => {
                        line_no = item.number;
                        if line_no <= self.options.skip_lines {
                            continue;
                        }
                        let guard = LiveGuard::new(&live);
                        let handle = tokio::spawn(self.process(line_no, item.bytes, guard));
                        pending.push_back(InFlight {
                            line: line_no,
                            input_bytes: item.input_bytes,
                            handle,
                        });
                    }
                    Err(source) => {
                        break Err(PipelineError::Read {
                            line: line_no,
                            source,
                        });
                    }
                }
                continue;
            }
            let Some(front) = pending.front_mut() else {
                break Ok(());
            };
            // Wait for the oldest record (the only one that can be written next) or a stop.
            tokio::select! {
                biased;
                _ = stop.stopped() => {
                    summary.interrupted = true;
                    break Ok(());
                }
                joined = &mut front.handle => {
                    let Some(front) = pending.pop_front() else {
                        break Ok(());
                    };
                    if let Err(e) =
                        self.complete(&front, joined, &mut out, metrics.as_mut(), &mut summary, stop, observe)
                    {
                        break Err(e);
                    }
                }
            }
        };
        // Interrupted or failed: abandon what is in flight; nothing of it reaches the output.
        for f in pending.drain(..) {
            f.handle.abort();
            let _ = f.handle.await;
        }
        summary.peak_in_flight = live.peak.load(Ordering::SeqCst);
        result.map(|()| summary)
    }

    /// One record's task: CPU steps on the pool, the summarizer call under a permit.
    fn process(
        &self,
        line: u64,
        bytes: Vec<u8>,
        guard: LiveGuard,
    ) -> impl Future<Output = (Outcome, LiveGuard)> + Send + 'static {
        let compressor = Arc::clone(&self.compressor);
        let pool = Arc::clone(&self.pool);
        let permits = Arc::clone(&self.permits);
        async move {
            let c = Arc::clone(&compressor);
            let prepared = match on_pool(&pool, move || c.prepare(line, bytes)).await {
                Ok(Ok(p)) => p,
                Ok(Err(malformed)) => return (Ok(Err(malformed)), guard),
                Err(e) => return (Err(e), guard),
            };
            let job = match prepared {
                Prepared::Done(done) => return (Ok(Ok(done)), guard),
                Prepared::Summarize(job) => job,
            };
            let summary = {
                let _permit = permits.acquire().await;
                let views = job.view_refs();
                compressor.summarizer().summarize(job.input(&views)).await
            };
            let c = Arc::clone(&compressor);
            let done = on_pool(&pool, move || c.finish(*job, summary)).await;
            (done.map(Ok), guard)
        }
    }

    /// Writes one finished record (metrics row first, then the output line, so a crash between
    /// the two leaves a metrics row that resume trims, never a record without its row).
    #[allow(clippy::too_many_arguments)]
    fn complete<W: Write, M: Write>(
        &self,
        front: &InFlight,
        joined: Result<(Outcome, LiveGuard), tokio::task::JoinError>,
        out: &mut W,
        metrics: Option<&mut M>,
        summary: &mut RunSummary,
        stop: &StopSignal,
        observe: &mut dyn FnMut(&TrajectoryMetrics, u64),
    ) -> Result<(), PipelineError> {
        let line = front.line;
        let (outcome, _guard) = joined.map_err(|e| PipelineError::Worker {
            line,
            message: e.to_string(),
        })?;
        if stop.is_stopped() {
            // A record finished while the stop arrived may have had its summarizer killed by
            // the same Ctrl-C; it is redone on resume rather than written with a fallback.
            return Ok(());
        }
        let done = match outcome.map_err(|message| PipelineError::Worker { line, message })? {
            Ok(done) => done,
            Err(Malformed { error, bytes }) => match self.options.on_error {
                OnError::Fail => {
                    return Err(PipelineError::Malformed {
                        line,
                        message: error.to_string(),
                    });
                }
                OnError::Copy => Done {
                    output: Some(bytes),
                    metrics: TrajectoryMetrics::malformed(
                        line,
                        Action::CopiedMalformed,
                        error.to_string(),
                    ),
                },
                OnError::Skip => Done {
                    output: None,
                    metrics: TrajectoryMetrics::malformed(
                        line,
                        Action::SkippedMalformed,
                        error.to_string(),
                    ),
                },
            },
        };
        if let Some(m) = metrics {
            let mut row = serde_json::to_vec(&done.metrics)
                .map_err(|e| PipelineError::Metrics(io::Error::other(e)))?;
            row.push(b'\n');
            m.write_all(&row)
                .and_then(|()| m.flush())
                .map_err(PipelineError::Metrics)?;
        }
        if let Some(mut bytes) = done.output {
            bytes.push(b'\n');
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(PipelineError::Write)?;
            summary.lines_written += 1;
        }
        summary.aggregate.add(&done.metrics);
        observe(&done.metrics, front.input_bytes);
        Ok(())
    }
}

/// Runs `f` on the pool and waits for it without blocking the async thread.
async fn on_pool<T: Send + 'static>(
    pool: &rayon::ThreadPool,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = oneshot::channel();
    pool.spawn(move || {
        let _ = tx.send(f());
    });
    rx.await
        .map_err(|_| "a worker thread stopped without a result".to_string())
}
