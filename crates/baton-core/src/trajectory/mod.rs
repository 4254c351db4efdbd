//! Offline trajectory compression: shrink recorded agent episodes (JSONL of ShareGPT or OpenAI
//! records) to a training token budget, the way the reference design's trajectory compressor
//! does, but streaming, in parallel and resumable.
//!
//! - [`record`]: one input line ↔ one conversation, dialect kept;
//! - [`plan`]: protected head and tail, greedy choice of the span to summarize;
//! - [`compress`]: one trajectory, split into CPU and summarizer steps;
//! - [`metrics`]: per-trajectory rows and the batch aggregate;
//! - [`pipeline`]: bounded window, rayon for CPU work, bounded summarizer concurrency, ordered
//!   output, clean stop;
//! - [`resume`]: where an interrupted run left its output;
//! - [`source`]: JSON Lines or a JSON array of records, streamed, and the up-front check.

pub mod compress;
pub mod metrics;
mod minify;
pub mod pipeline;
pub mod plan;
pub mod record;
pub mod resume;
pub mod source;

pub use compress::{Done, Malformed, Prepared, SummaryJob, TrajectoryCompressor, TrajectoryConfig};
pub use metrics::{Action, Aggregate, OverLimitReason, TrajectoryMetrics};
pub use pipeline::{OnError, Pipeline, PipelineError, PipelineOptions, RunSummary, StopSignal};
pub use plan::{Blocked, Plan, PlanConfig, ProtectFirst, compressible_region, plan};
pub use record::{Record, RecordError, RecordFormat};
pub use resume::{
    ResumePoint, find_resume_point, find_resume_point_in, trim_to_complete_lines, truncate_to_lines,
};
pub use source::{InputCheck, Item, Layout, RecordSource, check_input, open_source};
