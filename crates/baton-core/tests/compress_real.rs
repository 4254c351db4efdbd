//! Compaction of real long transcripts: three chained compactions keep every ledger fact, and
//! no secret reaches a summarizer or a summary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::{CompressionResult, CompressorConfig, Outcome};
use baton_core::formats::load_file;
use baton_core::message::{Message, ToolCall};
use baton_core::summary::extractive::summarize_extractively;
use baton_core::summary::ledger::TaskLedger;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use std::path::Path;
use std::sync::{Arc, Mutex};

fn compress(messages: &[Message], config: CompressorConfig) -> CompressionResult {
    common::compress_with(messages, config, true)
}

fn window(context_length: u64) -> CompressorConfig {
    CompressorConfig {
        context_length,
        ..CompressorConfig::default()
    }
}

/// Ledger facts (modified and read files, failing command) of the whole original transcript.
fn ledger_of(messages: &[Message]) -> TaskLedger {
    let mut ledger = TaskLedger::default();
    ledger.observe(messages);
    ledger
}

/// Replays `messages` as a session that is compacted three times: the transcript is cut into
/// three parts; each compaction runs on the previous compaction's output plus
/// the next part. Every file the agent read or modified, and the last failing command, must
/// still be named somewhere in the final conversation (summary or verbatim tail).
fn assert_chained_compactions_keep_ledger_facts(name: &str, messages: &[Message]) {
    let facts = ledger_of(messages);
    let cuts = user_cuts(messages);
    let mut current: Vec<Message> = Vec::new();
    let mut from = 0;
    for (round, to) in cuts.into_iter().chain([messages.len()]).enumerate() {
        current.extend_from_slice(&messages[from..to]);
        from = to;
        let result = compress(&current, window(32_000));
        // Pruning alone may be enough (and a summary that would not shrink the prompt is
        // refused), so any change counts; what must hold is that the facts survive.
        assert!(
            result.changed(),
            "{name} round {round}: {:?}",
            result.outcome
        );
        current = result.messages;
    }
    // Facts count as kept when they are in the summary or verbatim in the kept messages
    // (including tool-call arguments, where a read of a file in the tail names it).
    let text = searchable_text(&current);
    for path in facts.files_modified.iter().chain(&facts.files_read) {
        assert!(
            text.contains(path.as_str()),
            "{name}: file {path} lost after 3 compactions"
        );
    }
    if let Some(failure) = &facts.last_failure {
        // The ledger clips long commands with "…"; kept verbatim in the tail, the command is
        // there whole.
        let command = failure.command.trim_end_matches('…');
        assert!(text.contains(command), "{name}: failing command lost");
    }
}

/// Message texts plus every string inside tool-call arguments, decoded.
fn searchable_text(messages: &[Message]) -> String {
    fn leaves(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for m in messages {
        out.push_str(&m.text());
        out.push('\n');
        for c in m.calls() {
            match serde_json::from_str::<serde_json::Value>(&c.function.arguments) {
                Ok(v) => leaves(&v, &mut out),
                Err(_) => out.push_str(&c.function.arguments),
            }
        }
    }
    out
}

/// Two cut points near a third and two thirds of the transcript, each at a message that is not
/// a tool result (so no part starts in the middle of a tool exchange).
fn user_cuts(messages: &[Message]) -> Vec<usize> {
    let n = messages.len();
    [n / 3, 2 * n / 3]
        .into_iter()
        .map(|target| {
            (target..n)
                .find(|&i| messages[i].role != baton_core::Role::Tool)
                .unwrap_or(n)
        })
        .collect()
}

#[test]
fn shipped_session_keeps_ledger_facts_through_three_compactions() {
    let path = common::samples_dir().join("claude-code-session.jsonl");
    let doc = load_file(&path, None).unwrap();
    assert_chained_compactions_keep_ledger_facts(
        "claude-code-session",
        &doc.conversations[0].messages,
    );
}

#[test]
fn shared_long_transcripts_keep_ledger_facts_through_three_compactions() {
    let Some(dir) = common::shared_normalized() else {
        return;
    };
    for file in [
        "spotter-claude-code.jsonl",
        "codemie-code.jsonl",
        "openhands.jsonl",
        "swe-agent.jsonl",
    ] {
        let doc = load_file(&dir.join(file), None).unwrap();
        for (i, conv) in doc.conversations.iter().enumerate() {
            if conv.messages.len() >= 100 {
                assert_chained_compactions_keep_ledger_facts(
                    &format!("{file}#{i}"),
                    &conv.messages,
                );
            }
        }
    }
}

/// Records everything a summarizer is given, and answers with a summary that itself leaks a
/// secret (the compressor must redact summaries too, not only inputs).
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Summarizer for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        let mut seen = self.0.lock().unwrap();
        seen.push(input.prompt.to_string());
        for m in input.turns {
            seen.push(m.to_json());
        }
        seen.push(input.previous_summary.unwrap_or_default().to_string());
        Box::pin(std::future::ready(Ok(format!(
            "## Active Task\nUser asked: deploy\n## Critical Context\nkey was {}\n",
            SECRETS[0]
        ))))
    }
}

const SECRETS: [&str; 8] = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEf",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "hunter2-db-password",
    "xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
];

fn transcript_with_secrets() -> Vec<Message> {
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
        SECRETS[7]
    );
    let mut m = vec![
        Message::system("You deploy services."),
        Message::user(format!("Use my key {} to call the API", SECRETS[0])),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c1",
            "Bash",
            format!(
                r#"{{"command":"curl -H 'Authorization: Bearer {}' https://api.example.com"}}"#,
                SECRETS[1]
            ),
        )]),
        Message::tool(
            "c1",
            format!(
                "GITHUB_TOKEN={}\nAWS_ACCESS_KEY_ID={}\nexit code: 0",
                SECRETS[2], SECRETS[3]
            ),
        ),
        Message::assistant(format!("Got a JWT {} back", SECRETS[4])),
        Message::user(format!(
            "the db is postgres://admin:{}@db.internal:5432/app",
            SECRETS[5]
        )),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c2",
            "Read",
            r#"{"file_path":"/srv/.env"}"#,
        )]),
        Message::tool("c2", format!("SLACK_BOT_TOKEN={}\n{pem}", SECRETS[6])),
        // A tool nothing is known about (its arguments are shown), and a command whose token
        // straddles the 120 characters a summary line keeps of it: redacted before any cut.
        Message::assistant_tool_calls(vec![
            ToolCall::function(
                "c3",
                "deploy_service",
                format!(r#"{{"service":"api","api_key":"{}"}}"#, SECRETS[0]),
            ),
            ToolCall::function(
                "c4",
                "Bash",
                format!(
                    r#"{{"command":"cd /srv/deploy/services/api && ./scripts/release.sh --region eu-west-1 --env prod https://hooks.example.com/{} --verbose"}}"#,
                    SECRETS[2]
                ),
            ),
        ]),
        Message::tool("c3", "deployed"),
        Message::tool("c4", "released\nexit code: 0"),
        // Failed calls, whose outputs a summary quotes (the blockers, the actions, the
        // ledger's last failure): a command with an exit status and a tool without one.
        Message::assistant_tool_calls(vec![
            ToolCall::function("c5", "Bash", r#"{"command":"./scripts/push.sh"}"#),
            ToolCall::function("c6", "fetch_config", r#"{"name":"prod"}"#),
        ]),
        Message::tool(
            "c5",
            format!(
                "fatal: authentication failed for https://x-access-token:{}@github.com/acme/api.git\nexit code: 128",
                SECRETS[2]
            ),
        ),
        Message::tool("c6", format!("Error: the key {} was rejected", SECRETS[1])),
        Message::assistant("All configured.".to_string()),
    ];
    // Enough ordinary conversation after the secrets that a summary is smaller than the span.
    for i in 0..40 {
        m.push(Message::user(format!(
            "step {i}: {}",
            "please check the deployment logs again ".repeat(8)
        )));
        m.push(Message::assistant(format!(
            "did step {i}: {}",
            "the service restarted and the health check passed ".repeat(8)
        )));
    }
    m
}

#[test]
fn no_secret_reaches_the_summarizer_or_the_summary() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let config = CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        summarizer: Arc::new(Recorder(seen.clone())),
        ..CompressorConfig::default()
    };
    let result = compress(&transcript_with_secrets(), config);
    assert_eq!(result.outcome, Outcome::Compressed);
    let seen = seen.lock().unwrap().join("\n");
    assert!(!seen.is_empty(), "the summarizer was called");
    let summary = result.summary.clone().unwrap();
    for secret in SECRETS {
        assert!(!seen.contains(secret), "summarizer saw {secret}");
        assert!(!summary.contains(secret), "summary kept {secret}");
    }
    assert!(summary.contains("[REDACTED]"));
}

#[test]
fn extractive_summary_of_a_transcript_with_secrets_has_none() {
    let result = compress(
        &transcript_with_secrets(),
        CompressorConfig {
            context_length: 8_000,
            protect_last_n: 3,
            ..CompressorConfig::default()
        },
    );
    let summary = result.summary.unwrap();
    for secret in SECRETS {
        assert!(!summary.contains(secret), "summary kept {secret}");
    }
    // Nor any piece of one: a secret cut before it was redacted would leave its start.
    for piece in SECRETS.iter().flat_map(|s| s.as_bytes().windows(10)) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(!summary.contains(piece), "summary kept {piece}:\n{summary}");
    }
}

/// A failed call's output is quoted (a blocker, an action's outcome, the ledger's last
/// failure) redacted whole before any line of it is picked or clipped: a token straddling the
/// 200 characters a summary line keeps of an error, or the 500 of the ledger's excerpt, leaves
/// no piece of itself behind.
#[test]
fn a_failed_calls_output_is_quoted_with_no_piece_of_a_secret() {
    let token = SECRETS[2];
    let words = |n: usize| -> String {
        let text = "the remote rejected the push again; ".repeat(n / 36 + 1);
        text[..n].to_string()
    };
    let turns = [
        Message::user("push the release branch"),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c1",
            "Bash",
            r#"{"command":"git push origin release"}"#,
        )]),
        // The token starts 185 characters into the error's first line.
        Message::tool(
            "c1",
            format!("{} {token} is not valid\nexit code: 1", words(184)),
        ),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c2",
            "Bash",
            r#"{"command":"./scripts/push.sh --retry"}"#,
        )]),
        // ... and 482 characters into the ledger's excerpt of the first lines.
        Message::tool(
            "c2",
            format!(
                "{}\n{} {token} is not valid\nexit code: 1",
                words(300),
                words(180)
            ),
        ),
        Message::assistant("The push failed twice."),
    ];
    let refs: Vec<&Message> = turns.iter().collect();
    let ledger = {
        let mut ledger = TaskLedger::default();
        ledger.observe(&refs);
        ledger
    };
    let summary = summarize_extractively(&SummaryInput {
        turns: &refs,
        previous_summary: None,
        focus_topic: None,
        budget_tokens: 4_000,
        ledger: &ledger,
        first_request: None,
        prompt: "",
        actions: None,
        calls: None,
    });
    assert!(summary.contains("the remote rejected"), "{summary}");
    assert!(
        ledger.render().contains("the remote rejected"),
        "{}",
        ledger.render()
    );
    for piece in token.as_bytes().windows(10) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(!summary.contains(piece), "summary kept {piece}:\n{summary}");
        assert!(
            !ledger.render().contains(piece),
            "ledger kept {piece}:\n{}",
            ledger.render()
        );
    }
}

/// The active task and the goal are the user's words clipped to 1,400 characters, redacted
/// before the clip: a token straddling it leaves no piece in the summary.
#[test]
fn a_request_clipped_for_the_task_keeps_no_piece_of_a_secret() {
    let token = SECRETS[2];
    let request = |what: &str| {
        let pad = format!("{what} ").repeat(1_384 / (what.len() + 1) + 1);
        format!(
            "{} {token} and then go on with the rest of the plan",
            &pad[..1_384]
        )
    };
    let mut m = vec![
        Message::system("You deploy services."),
        Message::user(request("set up the pipeline")),
        Message::assistant("On it."),
    ];
    common::filler::push_routine_steps(&mut m, 40);
    m.push(Message::user(request("deploy the service")));
    let result = compress(
        &m,
        CompressorConfig {
            context_length: 8_000,
            protect_last_n: 3,
            ..CompressorConfig::default()
        },
    );
    let summary = result.summary.unwrap();
    assert!(summary.contains("deploy the service deploy"), "{summary}");
    for piece in token.as_bytes().windows(10) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(!summary.contains(piece), "summary kept {piece}:\n{summary}");
    }
}

/// A summarizer of its own that reads the turns without a prompt: the compressor hands it
/// views redacted whole (results and call arguments too), not the pass's own views, whose
/// results and arguments only the extractive summarizer's quoting redacts.
#[test]
fn a_promptless_summarizer_of_its_own_reads_turns_with_no_secret() {
    struct Promptless(Arc<Mutex<Vec<String>>>);
    impl Summarizer for Promptless {
        fn name(&self) -> String {
            "promptless".into()
        }
        fn needs_prompt(&self) -> bool {
            false
        }
        fn summarize<'a>(
            &'a self,
            input: SummaryInput<'a>,
        ) -> BoxFuture<'a, Result<String, SummaryError>> {
            let mut seen = self.0.lock().unwrap();
            seen.extend(input.turns.iter().map(|m| m.to_json()));
            seen.push(format!("calls given: {}", input.calls.is_some()));
            Box::pin(std::future::ready(Ok(
                "## Active Task\nUser asked: deploy\n".to_string(),
            )))
        }
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let config = CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        summarizer: Arc::new(Promptless(seen.clone())),
        ..CompressorConfig::default()
    };
    let result = compress(&transcript_with_secrets(), config);
    assert_eq!(result.outcome, Outcome::Compressed);
    let seen = seen.lock().unwrap().join("\n");
    assert!(
        seen.contains("fetch_config"),
        "the span was summarized: {seen}"
    );
    assert!(seen.contains("calls given: false"), "{seen}");
    for secret in SECRETS {
        assert!(!seen.contains(secret), "summarizer saw {secret}");
    }
}

#[test]
fn failing_summarizer_falls_back_to_the_extractive_summary() {
    struct Broken;
    impl Summarizer for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn summarize<'a>(
            &'a self,
            _: SummaryInput<'a>,
        ) -> BoxFuture<'a, Result<String, SummaryError>> {
            Box::pin(std::future::ready(Err(SummaryError::Failed {
                summarizer: "broken".into(),
                message: "model not found".into(),
            })))
        }
    }
    let config = CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        summarizer: Arc::new(Broken),
        ..CompressorConfig::default()
    };
    let result = compress(&transcript_with_secrets(), config);
    assert_eq!(result.outcome, Outcome::Compressed);
    assert!(result.fallback_used);
    assert!(
        result
            .summarizer
            .as_deref()
            .is_some_and(|s| s.starts_with("extractive"))
    );
    assert!(
        result
            .escalations
            .iter()
            .any(|e| e.contains("model not found"))
    );
    assert!(result.summary.unwrap().contains("## Active Task"));
}

#[test]
fn an_unavailable_summarizer_leaves_the_conversation_unchanged_and_says_why() {
    struct NoKey;
    impl Summarizer for NoKey {
        fn name(&self) -> String {
            "llm".into()
        }
        fn summarize<'a>(
            &'a self,
            _: SummaryInput<'a>,
        ) -> BoxFuture<'a, Result<String, SummaryError>> {
            Box::pin(std::future::ready(Err(SummaryError::Unavailable {
                summarizer: "llm".into(),
                reason: "auth".into(),
                message: "401 invalid api key".into(),
            })))
        }
    }
    let messages = transcript_with_secrets();
    let config = CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        summarizer: Arc::new(NoKey),
        ..CompressorConfig::default()
    };
    let result = compress(&messages, config);
    let Outcome::Unavailable { reason } = &result.outcome else {
        panic!("expected Unavailable, got {:?}", result.outcome);
    };
    assert!(
        reason.contains("auth") && reason.contains("401"),
        "{reason}"
    );
    assert_eq!(result.messages, messages, "not even pruned");
    assert_eq!(result.summary, None);
    assert_eq!(result.tokens_after, result.tokens_before);
    assert!(!result.fallback_used);
}

#[test]
fn oversized_summary_escalates_instead_of_being_installed() {
    struct Verbose;
    impl Summarizer for Verbose {
        fn name(&self) -> String {
            "verbose".into()
        }
        fn summarize<'a>(
            &'a self,
            _: SummaryInput<'a>,
        ) -> BoxFuture<'a, Result<String, SummaryError>> {
            Box::pin(std::future::ready(Ok("word ".repeat(200_000))))
        }
    }
    let config = CompressorConfig {
        context_length: 8_000,
        protect_last_n: 3,
        summarizer: Arc::new(Verbose),
        ..CompressorConfig::default()
    };
    let result = compress(&transcript_with_secrets(), config);
    assert_eq!(result.outcome, Outcome::Compressed);
    assert!(result.fallback_used);
    assert!(result.escalations.len() >= 2, "{:?}", result.escalations);
    assert!(result.summary.unwrap().len() < 100_000);
}

#[test]
fn compacting_real_sample_frees_tokens_and_keeps_the_latest_request() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/samples/claude-code-session.jsonl");
    let doc = load_file(&path, None).unwrap();
    let messages = &doc.conversations[0].messages;
    let result = compress(messages, window(64_000));
    assert_eq!(result.outcome, Outcome::Compressed);
    assert!(
        result.tokens_after * 2 < result.tokens_before,
        "{} -> {}",
        result.tokens_before,
        result.tokens_after
    );
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.role == baton_core::Role::User)
        .unwrap()
        .text();
    assert!(result.messages.iter().any(|m| m.text() == last_user));
}
