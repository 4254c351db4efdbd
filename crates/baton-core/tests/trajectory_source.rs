//! Records from JSON Lines or a JSON array: the array is streamed element by element (with a
//! bounded read-ahead, measured against a generated input that is never held in memory), its
//! elements keep their exact text, and files that are not records are refused up front.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::summary::extractive::ExtractiveSummarizer;
use baton_core::tokens::Encoding;
use baton_core::trajectory::source::{
    ArraySource, Layout, LineSource, RecordSource, check_input, minify,
};
use baton_core::trajectory::{
    OnError, Pipeline, PipelineOptions, PlanConfig, StopSignal, TrajectoryCompressor,
    TrajectoryConfig, find_resume_point_in,
};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

fn record(i: u64) -> String {
    format!(
        r#"{{"id": {i}, "conversations": [{{"from": "human", "value": "question {i}"}}, {{"from": "gpt", "value": "answer {i}"}}]}}"#
    )
}

/// A pretty-printed JSON array of `n` records, produced on demand: the whole text never
/// exists, and `produced` says how far the reader has been pulled.
struct GeneratedArray {
    n: u64,
    next: u64,
    pending: Vec<u8>,
    pos: usize,
    produced: Arc<AtomicU64>,
}

impl GeneratedArray {
    fn new(n: u64) -> (Self, Arc<AtomicU64>) {
        let produced = Arc::new(AtomicU64::new(0));
        let g = GeneratedArray {
            n,
            next: 0,
            pending: b"[\n".to_vec(),
            pos: 0,
            produced: Arc::clone(&produced),
        };
        (g, produced)
    }
}

impl Read for GeneratedArray {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.pending.len() {
            self.pos = 0;
            self.pending.clear();
            if self.next < self.n {
                let sep = if self.next + 1 < self.n {
                    ",\n"
                } else {
                    "\n]\n"
                };
                self.pending = format!("  {}{sep}", record(self.next)).into_bytes();
                self.next += 1;
            } else {
                return Ok(0);
            }
        }
        let k = buf.len().min(self.pending.len() - self.pos);
        buf[..k].copy_from_slice(&self.pending[self.pos..self.pos + k]);
        self.pos += k;
        self.produced.fetch_add(k as u64, Ordering::SeqCst);
        Ok(k)
    }
}

#[test]
fn minify_drops_only_the_whitespace_between_tokens() {
    let text =
        "{ \"a b\" : \"x \\\" y\\\\\" ,\n \"n\" : [ 1 , 2.50e3 , -0.0 ] , \"u\":\"\\u00e9 \" }";
    assert_eq!(
        String::from_utf8(minify(text)).unwrap(),
        "{\"a b\":\"x \\\" y\\\\\",\"n\":[1,2.50e3,-0.0],\"u\":\"\\u00e9 \"}"
    );
}

#[test]
fn array_elements_arrive_one_by_one_with_their_positions() {
    let text = "\u{feff}[\n  {\"conversations\": [], \"x\": 1.50},\n\n  {\"messages\": [ ]}\n]\n";
    let mut src = ArraySource::spawn(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
    let a = src.next_item().unwrap().unwrap();
    assert_eq!(
        (a.number, a.bytes.as_slice()),
        (1, &br#"{"conversations":[],"x":1.50}"#[..])
    );
    let b = src.next_item().unwrap().unwrap();
    assert_eq!(
        (b.number, b.bytes.as_slice()),
        (2, &br#"{"messages":[]}"#[..])
    );
    assert!(src.next_item().unwrap().is_none());
    assert!(src.next_item().unwrap().is_none());
}

#[test]
fn a_cut_short_array_yields_its_complete_elements_then_an_error_with_the_position() {
    let text = "[{\"messages\":[]},\n{\"messages\":[]},\n{\"messa";
    let mut src = ArraySource::spawn(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
    assert_eq!(src.next_item().unwrap().unwrap().number, 1);
    assert_eq!(src.next_item().unwrap().unwrap().number, 2);
    let e = src.next_item().unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
}

#[test]
fn the_array_is_streamed_with_a_bounded_read_ahead() {
    // ~10 MB of records that exist only as they are read.
    let n = 100_000;
    let (input, produced) = GeneratedArray::new(n);
    let mut src = ArraySource::spawn(input).unwrap();
    let first = src.next_item().unwrap().unwrap();
    assert_eq!(first.number, 1);
    // Give the reader thread time to run ahead as far as it can.
    std::thread::sleep(Duration::from_millis(200));
    let ahead = produced.load(Ordering::SeqCst);
    assert!(
        ahead < 256 * 1024,
        "the reader ran {ahead} bytes ahead of the first record; it must stop after a few"
    );
    let mut count = 1;
    while let Some(item) = src.next_item().unwrap() {
        count += 1;
        assert_eq!(item.number, count);
    }
    assert_eq!(count, n);
    assert!(produced.load(Ordering::SeqCst) > 9_000_000);
}

fn pipeline(window: usize) -> Pipeline {
    let compressor = TrajectoryCompressor::new(
        TrajectoryConfig {
            plan: PlanConfig {
                target_max_tokens: 1_500,
                summary_target_tokens: 200,
                ..PlanConfig::default()
            },
            ..TrajectoryConfig::default()
        },
        Encoding::Rough.counter(),
        Arc::new(ExtractiveSummarizer),
    );
    Pipeline::new(
        compressor,
        PipelineOptions {
            threads: 1,
            concurrency: 1,
            window,
            ..PipelineOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn the_pipeline_writes_array_records_before_the_array_ends() {
    let n = 20_000;
    let (input, produced) = GeneratedArray::new(n);
    let total = {
        let (mut all, _) = GeneratedArray::new(n);
        std::io::copy(&mut all, &mut std::io::sink()).unwrap()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let p = pipeline(8);
    let mut first_seen_at = None;
    let mut out = Vec::new();
    let summary = runtime
        .block_on(p.run_source(
            ArraySource::spawn(input).unwrap(),
            &mut out,
            None::<Vec<u8>>,
            &StopSignal::new(),
            &mut |m, _| {
                if first_seen_at.is_none() {
                    first_seen_at = Some((m.line, produced.load(Ordering::SeqCst)));
                }
            },
        ))
        .unwrap();
    let (line, at) = first_seen_at.unwrap();
    assert_eq!(line, 1);
    assert!(
        at < total / 20,
        "the first record was written after {at} of {total} input bytes were read"
    );
    assert!(summary.peak_in_flight <= 8, "{}", summary.peak_in_flight);
    assert_eq!(summary.lines_written, n);
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap().as_bytes(), minify(&record(0)));
    assert_eq!(lines.last().unwrap().as_bytes(), minify(&record(n - 1)));
}

#[test]
fn resume_counts_array_elements() {
    let text = format!("[{},\n{{\"x\":1}},\n{}]", record(0), record(1));
    let src = ArraySource::spawn(std::io::Cursor::new(text.clone().into_bytes())).unwrap();
    let p = find_resume_point_in(src, 2, OnError::Copy).unwrap();
    assert_eq!((p.lines_to_skip, p.records_done), (2, 2));
    let src = ArraySource::spawn(std::io::Cursor::new(text.into_bytes())).unwrap();
    let p = find_resume_point_in(src, 2, OnError::Skip).unwrap();
    assert_eq!((p.lines_to_skip, p.records_done), (3, 3));
}

#[test]
fn json_lines_skip_blank_lines_and_a_byte_order_mark() {
    let text = "\u{feff}{\"messages\":[]}\n\n  \n{\"messages\":[]}";
    let mut src = LineSource::new(text.as_bytes());
    let a = src.next_item().unwrap().unwrap();
    assert_eq!(
        (a.number, a.bytes.as_slice()),
        (1, &b"{\"messages\":[]}"[..])
    );
    let b = src.next_item().unwrap().unwrap();
    assert_eq!(b.number, 4);
    assert_eq!(b.input_bytes, 1 + 3 + 15);
    assert!(src.next_item().unwrap().is_none());
}

fn check(text: &str) -> Result<(Layout, Option<u64>), String> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("data.json");
    std::fs::write(&p, text).unwrap();
    check_input(&p).map(|c| (c.layout, c.records))
}

#[test]
fn files_of_records_pass_the_check() {
    let array = format!("[\n{},\n{}\n]\n", record(0), record(1));
    assert_eq!(check(&array), Ok((Layout::JsonArray, Some(2))));
    assert_eq!(check("[]"), Ok((Layout::JsonArray, Some(0))));
    let lines = format!("{}\n{}\n", record(0), record(1));
    assert_eq!(check(&lines), Ok((Layout::JsonLines, None)));
    assert_eq!(check(""), Ok((Layout::JsonLines, None)));
    // A record whose turns do not read is still a record: --on-error decides.
    let odd = r#"[{"conversations":[{"from":"wizard","value":"x"}]}]"#;
    assert_eq!(check(odd), Ok((Layout::JsonArray, Some(1))));
}

#[test]
fn files_that_are_not_records_are_refused_saying_what_they_are() {
    for (text, expect) in [
        (r#"{"a": 1}"#, "data.json:1: not a trajectory record"),
        ("{\n  \"messages\": []\n}\n", "not JSON Lines"),
        ("42", "starts with a number"),
        ("\"text\"", "starts with a JSON string"),
        ("[1, 2, 3]", "data.json: record 1: not a trajectory record"),
        ("[[1], {\"messages\": []}]", "record 1"),
        (
            "[{\"messages\": []}, {\"messages\": [",
            "not a readable JSON array of records",
        ),
        ("[{\"messages\": []}] trailing", "trailing characters"),
        ("<html>", "starts with `<`"),
    ] {
        let e = check(text).unwrap_err();
        assert!(e.contains(expect), "{text:?}: {e}");
        assert!(e.contains("data.json"), "{text:?}: {e}");
    }
    let e = check("[{\"messages\": []},\n {\"messages\": [}]").unwrap_err();
    assert!(e.contains("line 2"), "{e}");
}
