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

use baton_core::formats::{
    Dialect, FormatName, Layout, LoadError, Transcript, claude_code, load_file, parse_document,
};
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

// ---------------------------------------------------------------------------------------------
// committed fixtures (no shared corpus needed)

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(name)
}

fn fixture_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn roles(conv: &Conversation) -> Vec<&'static str> {
    conv.messages.iter().map(|m| m.role.as_str()).collect()
}

fn call_ids(m: &Message) -> Vec<&str> {
    m.calls().iter().map(|c| c.id.as_str()).collect()
}

fn meta_of<'a>(conv: &'a Conversation, key: &str) -> &'a Value {
    conv.meta().unwrap().get(key).unwrap_or(&Value::Null)
}

#[test]
fn claude_code_fixture_merges_records_by_message_id_and_keeps_results_after_calls() {
    let conv = load_detected(
        &fixture("claude-code-tool-heavy.jsonl"),
        Transcript::ClaudeCode,
    );
    assert_api_valid("tool_heavy", &conv);
    assert_eq!(
        roles(&conv),
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "user",
            "user",
            "user",
            "user",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "tool",
            "user"
        ]
    );
    // One API response logged as four records (text, thinking, two tool_use): one message,
    // both calls, the thinking kept with its signature.
    let m = &conv.messages[10];
    assert_eq!(
        call_ids(m),
        [
            "toolu_01DKTWcKpZ2ksZQmoKKfxiw6",
            "toolu_01JJds55jYrYwd9TktNGndRY"
        ]
    );
    assert_eq!(m.calls()[0].function.name, "WebSearch");
    assert_eq!(m.calls()[1].function.name, "Glob");
    let args: Value = serde_json::from_str(&m.calls()[1].function.arguments).unwrap();
    assert_eq!(args, serde_json::json!({"pattern": "assets/js/**/*.js"}));
    let details = m.reasoning["reasoning_details"].as_array().unwrap();
    assert_eq!(details.len(), 1);
    assert_eq!(details[0]["type"], "reasoning.text");
    assert!(details[0]["signature"].is_string());
    assert!(!m.reasoning_text().is_empty());
    // Results in the order they were logged (the second call's first), both answering m.
    assert_eq!(
        conv.messages[11].tool_call_id.as_deref(),
        Some("toolu_01JJds55jYrYwd9TktNGndRY")
    );
    assert_eq!(
        conv.messages[12].tool_call_id.as_deref(),
        Some("toolu_01DKTWcKpZ2ksZQmoKKfxiw6")
    );
    // The WebFetch tool_use was logged after the Read call's result (line 37 after line 36);
    // it joins its message, and its result still follows.
    let late = &conv.messages[13];
    assert_eq!(
        call_ids(late),
        [
            "toolu_01VpPeBD2ziigLLpybShAGoU",
            "toolu_017Q5Sr8KaSgowYhbKXBnfV2"
        ]
    );
    assert_eq!(late.calls()[1].function.name, "WebFetch");
    assert_eq!(
        conv.messages[15].tool_call_id.as_deref(),
        Some("toolu_017Q5Sr8KaSgowYhbKXBnfV2")
    );
    assert!(
        conv.messages[15]
            .text()
            .starts_with("# Scroll Issues in xterm.js")
    );
    // Metadata.
    assert_eq!(
        meta_of(&conv, "session_id"),
        "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    );
    assert_eq!(meta_of(&conv, "cwd"), "/home/marco/projects/spotter");
    assert_eq!(
        meta_of(&conv, "models"),
        &serde_json::json!(["claude-opus-4-6"])
    );
    assert_eq!(meta_of(&conv, "format"), "claude-code-jsonl");
    assert_eq!(meta_of(&conv, "thinking_blocks"), 1);
    assert!(meta_of(&conv, "repairs").is_null());
}

#[test]
fn claude_code_repair_pass_fills_missing_results_and_turns_orphans_into_user_messages() {
    let lines = fixture_lines("claude-code-tool-heavy.jsonl");
    // Cut after line 34: the Read call (line 34) has no result in the log.
    let cut = lines[..34].join("\n");
    let conv = claude_code::parse(&cut, None).unwrap();
    assert_api_valid("cut", &conv);
    let last = conv.messages.last().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert_eq!(
        last.tool_call_id.as_deref(),
        Some("toolu_01VpPeBD2ziigLLpybShAGoU")
    );
    assert_eq!(
        last.text(),
        baton_core::formats::transcript::PLACEHOLDER_RESULT
    );
    assert_eq!(
        meta_of(&conv, "repairs"),
        &serde_json::json!({"missing_tool_results": 1})
    );
    // Without line 5 (the first tool_use), its result (line 11) answers nothing.
    let orphan: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 4)
        .map(|(_, l)| l.as_str())
        .collect();
    let conv = claude_code::parse(&orphan.join("\n"), None).unwrap();
    assert_api_valid("orphan", &conv);
    assert_eq!(conv.messages[1].role, Role::User);
    assert!(
        conv.messages[1]
            .text()
            .starts_with("[tool result toolu_018GZVh9ymkrdx1TnR8reg5Y] Command running"),
        "{}",
        conv.messages[1].text()
    );
    assert_eq!(meta_of(&conv, "repairs")["orphan_tool_results"], 1);
}

#[test]
fn claude_code_sidechains_compaction_and_sdk_logs() {
    let rec = |ty: &str, side: bool, message: Value| {
        serde_json::json!({"type": ty, "isSidechain": side, "uuid": "u", "sessionId": "s",
                           "message": message})
        .to_string()
    };
    let text = [
        rec("user", false, serde_json::json!({"role": "user", "content": "main"})),
        rec("user", true, serde_json::json!({"role": "user", "content": "side"})),
        serde_json::json!({"type": "system", "subtype": "compact_boundary", "uuid": "b"})
            .to_string(),
        serde_json::json!({"type": "user", "isCompactSummary": true, "uuid": "c", "sessionId": "s",
                           "message": {"role": "user", "content": "This session is being continued..."}})
        .to_string(),
        rec(
            "assistant",
            false,
            serde_json::json!({"id": "m1", "role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "text", "text": "ok"}]}),
        ),
    ]
    .join("\n");
    let doc = parse_document(&text, None).unwrap();
    assert_eq!(doc.transcript, Some(Transcript::ClaudeCode));
    let conv = &doc.conversations[0];
    assert_eq!(roles(conv), ["user", "user", "assistant"]);
    assert_eq!(conv.messages[0].text(), "main");
    assert_eq!(
        meta_of(conv, "compaction_summary_indices"),
        &serde_json::json!([1])
    );
    assert_eq!(
        meta_of(conv, "compact_boundary_indices"),
        &serde_json::json!([1])
    );
    assert_eq!(
        conv.messages[2].reasoning["reasoning_details"][0]["type"],
        "reasoning.encrypted"
    );
    // A subagent file (sidechain records only) keeps them.
    let side = rec(
        "user",
        true,
        serde_json::json!({"role": "user", "content": "side"}),
    );
    let conv = claude_code::parse(&side, None).unwrap();
    assert_eq!(conv.messages[0].text(), "side");
    assert_eq!(meta_of(&conv, "sidechain"), true);
    // Agent SDK stream-json: init record, snake_case session id, prompt prepended.
    let sdk = [
        serde_json::json!({"type": "system", "subtype": "init", "session_id": "x", "model": "claude-sonnet-4-5",
                           "tools": ["Bash"], "uuid": "i"}).to_string(),
        serde_json::json!({"type": "assistant", "session_id": "x", "uuid": "a", "parent_tool_use_id": null,
                           "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}})
        .to_string(),
    ]
    .join("\n");
    assert_eq!(
        parse_document(&sdk, None).unwrap().transcript,
        Some(Transcript::ClaudeCode)
    );
    let conv = claude_code::parse(&sdk, Some("the prompt")).unwrap();
    assert_eq!(roles(&conv), ["user", "assistant"]);
    assert_eq!(meta_of(&conv, "format"), "claude-agent-sdk-stream-json");
    assert_eq!(meta_of(&conv, "sdk_tools"), &serde_json::json!(["Bash"]));
    assert_eq!(meta_of(&conv, "session_id"), "x");
}

#[test]
fn codex_fixture_converts_custom_tools_web_search_and_reasoning() {
    let conv = load_detected(&fixture("codex-rollout.jsonl"), Transcript::Codex);
    assert_api_valid("codex", &conv);
    assert_eq!(
        roles(&conv),
        [
            "system",
            "system",
            "user",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert!(conv.messages[0].text().starts_with("You are Codex"));
    // The developer message becomes a system message.
    assert!(
        conv.messages[1]
            .text()
            .starts_with("<permissions instructions>")
    );
    // The event_msg copy of "show tools" is not a second user turn.
    assert_eq!(conv.messages[3].text(), "show tools");
    // Encrypted reasoning rides on the assistant message it preceded.
    let first_call = &conv.messages[4];
    assert_eq!(first_call.calls()[0].function.name, "exec_command");
    assert_eq!(
        first_call.reasoning["reasoning_details"][0]["type"],
        "reasoning.encrypted"
    );
    // web_search_call: a synthetic call and a note as its result.
    let search = &conv.messages[10];
    assert_eq!(call_ids(search), ["websearch_1"]);
    assert_eq!(search.calls()[0].function.name, "web_search");
    let action: Value = serde_json::from_str(&search.calls()[0].function.arguments).unwrap();
    assert_eq!(action["type"], "search");
    assert!(
        conv.messages[11]
            .text()
            .starts_with("[web search completed;")
    );
    // custom_tool_call: free-text input wrapped as {"input": …}, appended to the assistant
    // message it followed.
    let patch = &conv.messages[12];
    assert!(patch.text().starts_with("OpenCode"));
    assert_eq!(call_ids(patch), ["call_0gOiGGSkJEBvvlrXtBn0xzwL"]);
    assert_eq!(patch.calls()[0].function.name, "apply_patch");
    let args: Value = serde_json::from_str(&patch.calls()[0].function.arguments).unwrap();
    assert!(
        args["input"]
            .as_str()
            .unwrap()
            .starts_with("*** Begin Patch")
    );
    assert_eq!(args.as_object().unwrap().len(), 1);
    assert!(
        conv.messages[13]
            .text()
            .starts_with("{\"output\":\"Success.")
    );
    assert_eq!(
        meta_of(&conv, "session_id"),
        "019e1625-789d-76c0-80ab-3724b5ddb799"
    );
    assert_eq!(meta_of(&conv, "models"), &serde_json::json!(["gpt-5.5"]));
    assert_eq!(meta_of(&conv, "synthetic_tool_calls"), 1);
    assert_eq!(meta_of(&conv, "reasoning_items"), 4);
}

#[test]
fn codex_user_turn_only_in_event_msg_is_kept() {
    // Line 6 is the response_item copy of "show tools"; without it the event is the only
    // record of the prompt (as in trimmed Desktop logs).
    let lines = fixture_lines("codex-rollout.jsonl");
    let text: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 5)
        .map(|(_, l)| l.as_str())
        .collect();
    let doc = parse_document(&text.join("\n"), Some(FormatName::Codex)).unwrap();
    let conv = &doc.conversations[0];
    assert_eq!(conv.messages[3].text(), "show tools");
    assert_eq!(meta_of(conv, "user_turns_from_event_msg"), 1);
}

#[test]
fn gemini_fixture_puts_tool_results_after_their_calls() {
    let conv = load_detected(&fixture("gemini-cli-session.json"), Transcript::GeminiCli);
    assert_api_valid("gemini", &conv);
    assert_eq!(
        roles(&conv),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert!(conv.messages[1].text().starts_with("Hello!"));
    assert!(
        conv.messages[1].reasoning["reasoning_content"]
            .as_str()
            .unwrap()
            .starts_with("Assessing the Prompt's Intent: ")
    );
    let call = &conv.messages[3];
    assert_eq!(call.content, Some(baton_core::Content::Null));
    assert_eq!(
        call_ids(call),
        ["list_directory-1764625554423-6b5d2c6179cc4"]
    );
    let args: Value = serde_json::from_str(&call.calls()[0].function.arguments).unwrap();
    assert_eq!(
        args["dir_path"],
        "/Users/Jane_Smith/Documents/projects/epm-cdme/assistants/"
    );
    assert_eq!(
        conv.messages[4].tool_call_id.as_deref(),
        Some("list_directory-1764625554423-6b5d2c6179cc4")
    );
    assert!(conv.messages[4].text().starts_with("Directory listing for"));
    assert_eq!(
        meta_of(&conv, "session_id"),
        "5b959dae-8655-4cd1-b10f-720b8c336ea2"
    );
    assert_eq!(
        meta_of(&conv, "models"),
        &serde_json::json!(["gemini-3-pro-image-preview"])
    );
}

#[test]
fn imported_transcript_writes_as_an_openai_object_that_loads_back() {
    let doc = load_file(&fixture("claude-code-tool-heavy.jsonl"), None).unwrap();
    let text = doc.to_text();
    let back = parse_document(&text, None).unwrap();
    assert_eq!(back.transcript, None);
    assert_eq!(
        (back.dialect, back.layout),
        (Dialect::OpenAi, Layout::Object)
    );
    let (a, b) = (&back.conversations[0], &doc.conversations[0]);
    assert!(a.messages == b.messages, "messages changed on the way back");
    assert_eq!(a.meta(), b.meta());
    // Thinking kept as reasoning_details becomes a signed thinking block again in Anthropic form.
    let anthropic: Value =
        serde_json::from_str(&doc.converted_to(Dialect::Anthropic).to_text()).unwrap();
    let blocks = anthropic["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "thinking")
        .collect::<Vec<_>>();
    assert_eq!(blocks.len(), 1);
    assert!(blocks[0]["signature"].as_str().unwrap().starts_with("EsQC"));
}

// ---------------------------------------------------------------------------------------------
// malformed input

fn load_error(path: &Path, text: &str, forced: Option<FormatName>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(path);
    std::fs::write(&file, text).unwrap();
    let err: LoadError = load_file(&file, forced).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains(&file.display().to_string()), "{shown}");
    shown
}

#[test]
fn truncated_claude_code_line_is_reported_with_its_line_number() {
    let mut lines = fixture_lines("claude-code-tool-heavy.jsonl");
    let half = lines[11].len() / 2;
    lines[11].truncate(half);
    let shown = load_error(Path::new("s.jsonl"), &lines.join("\n"), None);
    assert!(shown.contains("s.jsonl:12:"), "{shown}");
    assert!(shown.contains("invalid JSON"), "{shown}");
}

#[test]
fn wrong_types_are_reported_with_line_and_field() {
    let mut lines = fixture_lines("claude-code-tool-heavy.jsonl");
    let mut v: Value = serde_json::from_str(&lines[4]).unwrap();
    v["message"] = Value::String("oops".into());
    lines[4] = v.to_string();
    let shown = load_error(Path::new("c.jsonl"), &lines.join("\n"), None);
    assert!(shown.contains("c.jsonl:5:"), "{shown}");
    assert!(
        shown.contains("`message`") && shown.contains("string"),
        "{shown}"
    );

    let mut lines = fixture_lines("claude-code-tool-heavy.jsonl");
    let mut v: Value = serde_json::from_str(&lines[4]).unwrap();
    v["message"]["content"][0]["id"] = Value::from(7);
    lines[4] = v.to_string();
    let shown = load_error(Path::new("c.jsonl"), &lines.join("\n"), None);
    assert!(
        shown.contains("c.jsonl:5:") && shown.contains("message.content[0].id"),
        "{shown}"
    );

    let mut lines = fixture_lines("codex-rollout.jsonl");
    let mut v: Value = serde_json::from_str(&lines[8]).unwrap();
    v["payload"]["call_id"] = Value::from(42);
    lines[8] = v.to_string();
    let shown = load_error(Path::new("r.jsonl"), &lines.join("\n"), None);
    assert!(
        shown.contains("r.jsonl:9:") && shown.contains("payload.call_id"),
        "{shown}"
    );

    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("gemini-cli-session.json")).unwrap())
            .unwrap();
    v["messages"][3]["toolCalls"][0]["id"] = Value::Null;
    let shown = load_error(Path::new("g.json"), &v.to_string(), None);
    assert!(shown.contains("messages[3].toolCalls[0].id"), "{shown}");
}

#[test]
fn forcing_a_transcript_format_on_another_file_fails_clearly() {
    let claude = std::fs::read_to_string(fixture("claude-code-tool-heavy.jsonl")).unwrap();
    let codex = std::fs::read_to_string(fixture("codex-rollout.jsonl")).unwrap();
    let shown = load_error(Path::new("a.jsonl"), &claude, Some(FormatName::Codex));
    assert!(shown.contains("no Codex rollout record"), "{shown}");
    let shown = load_error(Path::new("b.jsonl"), &codex, Some(FormatName::ClaudeCode));
    assert!(shown.contains("no Claude Code record"), "{shown}");
    let shown = load_error(Path::new("c.jsonl"), &codex, Some(FormatName::GeminiCli));
    assert!(
        shown.contains("gemini-cli") && shown.contains("JSON Lines"),
        "{shown}"
    );
    let openai =
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"yo\"}\n";
    let shown = load_error(Path::new("d.jsonl"), openai, Some(FormatName::ClaudeCode));
    assert!(
        shown.contains("d.jsonl:1:") && shown.contains("`type`"),
        "{shown}"
    );
}

#[test]
fn existing_formats_are_still_detected_beside_transcripts() {
    for (name, expect) in [
        ("claude-code-session.jsonl", "object"),
        ("tau-bench-airline.jsonl", "records"),
        ("tielec-ja.jsonl", "records"),
        ("glaive-toolcall-zh.json", "sharegpt records"),
    ] {
        let doc = load_file(&common::samples_dir().join(name), None).unwrap();
        assert_eq!(doc.transcript, None, "{name}");
        assert_eq!(doc.format_name(), expect, "{name}");
    }
    for name in ["claude-code", "codex", "gemini-cli"] {
        assert_eq!(FormatName::parse(name).unwrap().as_str(), name);
    }
}
