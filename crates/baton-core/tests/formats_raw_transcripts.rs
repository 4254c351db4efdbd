//! Raw agent-CLI transcripts (Claude Code JSONL, Claude Agent SDK stream-json, Codex rollouts,
//! Gemini CLI sessions) load and match the shared corpus's reference conversion
//! (`to_openai.py`, normalized records whose `file` names the raw file), and the committed
//! fixtures under `tests/fixtures/transcripts/` exercise the core rules without the corpus.
//!
//! Deliberate differences from the reference, checked here rather than hidden:
//! - reasoning is kept (`reasoning_details` with signatures for Claude thinking and Codex
//!   reasoning, `reasoning_content` for Gemini thoughts); the reference drops it by default. An
//!   assistant message holding only reasoning (an interrupted turn) is therefore kept where the
//!   reference drops it as empty; the comparison skips those.
//! - tool-call arguments built from JSON objects are compact JSON (`{"a":1}`), the reference's
//!   are Python's `json.dumps` (`{"a": 1}`): compared as parsed JSON.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use baton_core::formats::{Dialect, Layout, Transcript, claude_code, load_file};
use baton_core::{Conversation, Message, Role};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// comparison with the reference conversion

/// Reference conversations of one normalized source, by `file`.
fn reference(normalized: &Path, source: &str) -> HashMap<String, Value> {
    std::fs::read_to_string(normalized.join(format!("{source}.jsonl")))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["file"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

fn files_under(dir: &Path, pred: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, pred, out);
        } else if pred(&p) {
            out.push(p);
        }
    }
}

fn is_reasoning_only(m: &Message) -> bool {
    m.role == Role::Assistant
        && !m.has_tool_calls()
        && m.text().trim().is_empty()
        && !m.reasoning.is_empty()
}

fn same_arguments(ours: &str, theirs: &str) -> bool {
    match (
        serde_json::from_str::<Value>(ours),
        serde_json::from_str::<Value>(theirs),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => ours == theirs,
    }
}

/// Compares a loaded conversation with its reference record; returns the differences.
fn compare(ours: &Conversation, reference: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let kept: Vec<&Message> = ours
        .messages
        .iter()
        .filter(|m| !is_reasoning_only(m))
        .collect();
    let theirs = reference["messages"].as_array().unwrap();
    if kept.len() != theirs.len() {
        diffs.push(format!(
            "message count: ours {} (+{} reasoning-only), reference {}",
            kept.len(),
            ours.messages.len() - kept.len(),
            theirs.len()
        ));
    }
    for (i, (m, r)) in kept.iter().zip(theirs).enumerate() {
        if diffs.len() > 5 {
            break;
        }
        if m.role.as_str() != r["role"].as_str().unwrap() {
            diffs.push(format!(
                "[{i}] role: ours {}, reference {}",
                m.role.as_str(),
                r["role"]
            ));
            continue;
        }
        let their_text = r["content"].as_str().unwrap_or("");
        if m.text() != their_text {
            diffs.push(format!(
                "[{i}] {} content differs: ours {:?}…, reference {:?}…",
                m.role.as_str(),
                m.text().chars().take(80).collect::<String>(),
                their_text.chars().take(80).collect::<String>()
            ));
        }
        if m.tool_call_id.as_deref() != r["tool_call_id"].as_str() {
            diffs.push(format!(
                "[{i}] tool_call_id: ours {:?}, reference {}",
                m.tool_call_id, r["tool_call_id"]
            ));
        }
        let their_calls = r["tool_calls"].as_array().cloned().unwrap_or_default();
        if m.calls().len() != their_calls.len() {
            diffs.push(format!(
                "[{i}] tool call count: ours {}, reference {}",
                m.calls().len(),
                their_calls.len()
            ));
            continue;
        }
        for (c, t) in m.calls().iter().zip(&their_calls) {
            let f = &t["function"];
            if c.id != t["id"].as_str().unwrap()
                || c.function.name != f["name"].as_str().unwrap()
                || !same_arguments(&c.function.arguments, f["arguments"].as_str().unwrap())
            {
                diffs.push(format!(
                    "[{i}] tool call {} {} {} differs from reference {}",
                    c.id, c.function.name, c.function.arguments, t
                ));
            }
        }
    }
    // Compaction indices, mapped past the skipped reasoning-only messages; repair counts when
    // there were none (the reference counts those as dropped empty messages).
    let mut kept_index = Vec::new();
    let mut n = 0;
    for m in &ours.messages {
        kept_index.push((!is_reasoning_only(m)).then_some(n));
        n += usize::from(!is_reasoning_only(m));
    }
    let mut meta = ours.meta().cloned().unwrap_or_default();
    for key in ["compaction_summary_indices", "compact_boundary_indices"] {
        if let Some(Value::Array(ix)) = meta.get_mut(key) {
            for i in ix.iter_mut() {
                let k = kept_index[usize::try_from(i.as_u64().unwrap()).unwrap()];
                *i = k.map_or(Value::Null, Value::from);
            }
        }
    }
    let their_meta = reference["meta"].as_object().cloned().unwrap_or_default();
    let mut keys = vec!["compaction_summary_indices", "compact_boundary_indices"];
    if kept.len() == ours.messages.len() {
        keys.push("repairs");
    }
    {
        for key in keys {
            if meta.get(key) != their_meta.get(key) {
                diffs.push(format!(
                    "meta.{key}: ours {:?}, reference {:?}",
                    meta.get(key),
                    their_meta.get(key)
                ));
            }
        }
    }
    diffs
}

struct Tally {
    checked: usize,
    exact: Vec<String>,
    with_reasoning_only: Vec<String>,
    failures: Vec<String>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            checked: 0,
            exact: Vec::new(),
            with_reasoning_only: Vec::new(),
            failures: Vec::new(),
        }
    }

    fn check(&mut self, name: &str, ours: &Conversation, reference: Option<&Value>) {
        let Some(reference) = reference else {
            self.failures
                .push(format!("{name}: no reference conversation"));
            return;
        };
        self.checked += 1;
        assert_api_valid(name, ours);
        let diffs = compare(ours, reference);
        if !diffs.is_empty() {
            self.failures
                .push(format!("{name}:\n  {}", diffs.join("\n  ")));
        } else if ours.messages.iter().any(is_reasoning_only) {
            self.with_reasoning_only.push(name.to_string());
        } else {
            self.exact.push(name.to_string());
        }
    }

    fn finish(self, what: &str, at_least: usize) {
        eprintln!(
            "{what}: {} files checked; {} match the reference exactly (modulo kept reasoning): {:?}; \
             {} match after skipping reasoning-only messages: {:?}",
            self.checked,
            self.exact.len(),
            self.exact,
            self.with_reasoning_only.len(),
            self.with_reasoning_only
        );
        assert!(
            self.failures.is_empty(),
            "{} files differ from the reference:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
        assert!(
            self.checked >= at_least,
            "expected at least {at_least} files"
        );
    }
}

/// Every tool call is answered directly after its assistant message, every tool message answers
/// an open call.
fn assert_api_valid(name: &str, conv: &Conversation) {
    let mut pending: Vec<&str> = Vec::new();
    for (i, m) in conv.messages.iter().enumerate() {
        if m.role == Role::Tool {
            let id = m.tool_call_id.as_deref().unwrap_or("");
            let pos = pending.iter().position(|p| *p == id);
            assert!(
                pos.is_some(),
                "{name}[{i}]: tool result {id} answers no open call"
            );
            pending.remove(pos.unwrap());
        } else {
            assert!(
                pending.is_empty(),
                "{name}[{i}]: calls {pending:?} unanswered"
            );
            pending = m.calls().iter().map(|c| c.id.as_str()).collect();
        }
    }
    assert!(
        pending.is_empty(),
        "{name}: calls {pending:?} unanswered at the end"
    );
}

fn load_detected(path: &Path, expected: Transcript) -> Conversation {
    let doc = load_file(path, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.transcript, Some(expected), "{}", path.display());
    assert_eq!(doc.format_name(), expected.as_str());
    assert_eq!((doc.dialect, doc.layout), (Dialect::OpenAi, Layout::Object));
    assert_eq!(doc.conversations.len(), 1);
    doc.conversations.into_iter().next().unwrap()
}

#[test]
fn spotter_claude_code_files_match_the_reference() {
    let (Some(corpus), Some(normalized)) = (common::shared_corpus(), common::shared_normalized())
    else {
        return;
    };
    let root = corpus.join("spotter-claude-code");
    let refs = reference(&normalized, "spotter-claude-code");
    let mut files = Vec::new();
    files_under(
        &root,
        &|p| p.extension().is_some_and(|e| e == "jsonl"),
        &mut files,
    );
    let mut tally = Tally::new();
    for path in files {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let conv = load_detected(&path, Transcript::ClaudeCode);
        tally.check(&rel, &conv, refs.get(&rel));
    }
    tally.finish("spotter-claude-code", 20);
}

#[test]
fn codemie_claude_codex_and_gemini_files_match_the_reference() {
    let (Some(corpus), Some(normalized)) = (common::shared_corpus(), common::shared_normalized())
    else {
        return;
    };
    let root = corpus.join("codemie-code");
    let refs = reference(&normalized, "codemie-code");
    let mut tally = Tally::new();
    for (sub, ext, kind) in [
        ("claude", "jsonl", Transcript::ClaudeCode),
        ("codex", "jsonl", Transcript::Codex),
        ("gemini", "json", Transcript::GeminiCli),
    ] {
        let mut files = Vec::new();
        files_under(
            &root.join(sub),
            &|p| p.extension().is_some_and(|e| e == ext),
            &mut files,
        );
        assert!(!files.is_empty(), "no {sub} files");
        for path in files {
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let conv = load_detected(&path, kind);
            tally.check(&rel, &conv, refs.get(&rel));
        }
    }
    tally.finish("codemie-code", 10);
}

#[test]
fn tielec_agent_sdk_logs_match_the_reference_with_their_prompt() {
    let (Some(corpus), Some(normalized)) = (common::shared_corpus(), common::shared_normalized())
    else {
        return;
    };
    let root = corpus.join("tielec-ai-workflow-ja");
    let refs = reference(&normalized, "tielec-ai-workflow-ja");
    let mut files = Vec::new();
    files_under(
        &root,
        &|p| p.file_name().is_some_and(|n| n == "agent_log_raw.txt"),
        &mut files,
    );
    let mut tally = Tally::new();
    for path in files {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        // Detected without the prompt (the log alone starts with the assistant)...
        let alone = load_detected(&path, Transcript::ClaudeCode);
        assert_eq!(
            alone.meta().unwrap()["format"],
            "claude-agent-sdk-stream-json"
        );
        // ...and compared with the prompt prepended, as the reference does.
        let text = std::fs::read_to_string(&path).unwrap();
        let prompt = std::fs::read_to_string(path.with_file_name("prompt.txt")).unwrap();
        let conv = claude_code::parse(&text, Some(&prompt)).unwrap();
        assert_eq!(conv.messages.len(), alone.messages.len() + 1);
        tally.check(&rel, &conv, refs.get(&rel));
    }
    tally.finish("tielec-ai-workflow-ja", 10);
}
