//! The dataset readers of `trajectories compress`: one record (JSON Lines), a JSON array
//! streamed element by element, and what the compressor does with a record that parsed
//! (count, plan, summarize extractively, assemble, write back).
#![no_main]

use baton_core::summary::extractive::summarize_extractively;
use baton_core::tokens::Encoding;
use baton_core::trajectory::source::{ArraySource, LineSource, RecordSource};
use baton_core::trajectory::{
    PlanConfig, Prepared, Record, TrajectoryCompressor, TrajectoryConfig,
};
use baton_core::summary::extractive::ExtractiveSummarizer;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

fn compressor() -> &'static TrajectoryCompressor {
    static C: OnceLock<TrajectoryCompressor> = OnceLock::new();
    C.get_or_init(|| {
        TrajectoryCompressor::new(
            TrajectoryConfig {
                plan: PlanConfig {
                    target_max_tokens: 60,
                    summary_target_tokens: 10,
                    ..PlanConfig::default()
                },
                ..TrajectoryConfig::default()
            },
            Encoding::Rough.counter(),
            Arc::new(ExtractiveSummarizer),
        )
    })
}

fn record(bytes: Vec<u8>) {
    if let Ok(r) = Record::parse(&bytes) {
        let _ = r.to_line();
        let _ = r.id();
    }
    if let Ok(Prepared::Summarize(job)) = compressor().prepare(1, bytes) {
        let summary = summarize_extractively(&job.input());
        let _ = compressor().finish(*job, Ok(summary));
    }
}

fuzz_target!(|data: &[u8]| {
    let mut lines = LineSource::new(data);
    while let Ok(Some(item)) = lines.next_item() {
        record(item.bytes);
    }
    if let Ok(mut array) = ArraySource::spawn(std::io::Cursor::new(data.to_vec())) {
        while let Ok(Some(item)) = array.next_item() {
            record(item.bytes);
        }
    }
});
