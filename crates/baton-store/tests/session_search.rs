#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::summary::extractive::ExtractiveSummarizer;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use baton_core::{Message, ToolCall};
use baton_store::session_search::{AnchorKind, Needles, window};
use baton_store::{
    EntryDetail, NewSession, SearchMode, SearchQuery, SessionEntry, SessionSearchRequest,
    SessionSearchResult, SessionStore, SqliteStore, SummaryStatus, search, session_search,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const T0: f64 = 1_700_000_000.0;
const HOUR: f64 = 3_600.0;

// ---------------------------------------------------------------- fixtures

fn store() -> SqliteStore {
    SqliteStore::open_in_memory().unwrap()
}

/// A session started `hours` after T0 holding `messages`.
fn conv(store: &SqliteStore, id: &str, source: &str, hours: f64, messages: &[Message]) {
    conv_with_parent(store, id, source, None, hours, messages);
}

fn conv_with_parent(
    store: &SqliteStore,
    id: &str,
    source: &str,
    parent: Option<&str>,
    hours: f64,
    messages: &[Message],
) {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            parent_session_id: parent.map(String::from),
            ..NewSession::new(source)
        })
        .unwrap();
    store.append_messages(id, messages).unwrap();
    set_times(store, id, T0 + hours * HOUR, None, None);
}

fn set_times(
    store: &SqliteStore,
    id: &str,
    started: f64,
    ended: Option<f64>,
    reason: Option<&str>,
) {
    store
        .write(|tx| {
            tx.execute(
                "UPDATE sessions SET started_at = ?1, ended_at = ?2, end_reason = ?3 WHERE id = ?4",
                rusqlite::params![started, ended, reason, id],
            )?;
            Ok(())
        })
        .unwrap();
}

/// `parent` was compressed at `hours` and continued in `child`.
fn compress_into(store: &SqliteStore, parent: &str, child: &str, hours: f64, messages: &[Message]) {
    let started = store.get_session(parent).unwrap().unwrap().started_at;
    set_times(
        store,
        parent,
        started,
        Some(T0 + hours * HOUR),
        Some("compression"),
    );
    conv_with_parent(store, child, "cli", Some(parent), hours, messages);
}

fn filler(i: usize, chars: usize) -> String {
    let base = format!("Step {i}: reviewed the module layout and kept notes on naming. ");
    base.repeat(chars / base.len() + 1)[..chars].to_string()
}

/// A long session: `n` alternating user/assistant messages of ~`chars` each, with `special`
/// replacing the text of message `at`.
fn long_session(n: usize, chars: usize, specials: &[(usize, &str)]) -> Vec<Message> {
    (0..n)
        .map(|i| {
            let text = specials
                .iter()
                .find(|(at, _)| *at == i)
                .map_or_else(|| filler(i, chars), |(_, s)| s.to_string());
            if i % 2 == 0 {
                Message::user(text)
            } else {
                Message::assistant(text)
            }
        })
        .collect()
}

fn ids(result: &SessionSearchResult) -> Vec<&str> {
    result
        .results
        .iter()
        .map(|e| e.session_id.as_str())
        .collect()
}

fn detail(entry: &SessionEntry) -> (usize, Option<&str>, Option<&str>, &SummaryStatus) {
    match &entry.detail {
        EntryDetail::Match {
            match_count,
            summary,
            raw_window,
            summary_status,
        } => (
            *match_count,
            summary.as_deref(),
            raw_window.as_deref(),
            summary_status,
        ),
        EntryDetail::Recent { .. } => panic!("expected a match entry: {entry:?}"),
    }
}

fn transcript_of(prompt: &str) -> &str {
    let start = prompt.find("<transcript>\n").expect("no transcript") + "<transcript>\n".len();
    let end = prompt.rfind("\n</transcript>").expect("no transcript end");
    &prompt[start..end]
}

// ---------------------------------------------------------------- summarizers

/// Fails the test if it is ever called.
struct MustNotBeCalled;

impl Summarizer for MustNotBeCalled {
    fn name(&self) -> String {
        "must-not-be-called".into()
    }
    fn summarize<'a>(&'a self, _: SummaryInput<'a>) -> BoxFuture<'a, Result<String, SummaryError>> {
        panic!("recent mode called the summarizer")
    }
}

#[derive(Clone)]
enum Act {
    Reply(&'static str, Duration),
    Fail(&'static str),
    Empty,
}

/// Answers by a script over the prompt, and records what it saw and how many calls overlapped.
struct Scripted {
    script: Box<dyn Fn(&str) -> Act + Send + Sync>,
    calls: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    prompts: Mutex<Vec<String>>,
    turn_counts: Mutex<Vec<usize>>,
    focus: Mutex<Vec<Option<String>>>,
}

impl Scripted {
    fn new(script: impl Fn(&str) -> Act + Send + Sync + 'static) -> Self {
        Scripted {
            script: Box::new(script),
            calls: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            prompts: Mutex::new(Vec::new()),
            turn_counts: Mutex::new(Vec::new()),
            focus: Mutex::new(Vec::new()),
        }
    }

    fn replying(text: &'static str) -> Self {
        Scripted::new(move |_| Act::Reply(text, Duration::ZERO))
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Summarizer for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            self.prompts.lock().unwrap().push(input.prompt.to_string());
            self.turn_counts.lock().unwrap().push(input.turns.len());
            self.focus
                .lock()
                .unwrap()
                .push(input.focus_topic.map(String::from));
            let result = match (self.script)(input.prompt) {
                Act::Reply(text, delay) => {
                    tokio::time::sleep(delay).await;
                    Ok(text.to_string())
                }
                Act::Fail(message) => Err(SummaryError::Failed {
                    summarizer: self.name(),
                    message: message.into(),
                }),
                Act::Empty => Ok("  \n".into()),
            };
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            result
        })
    }
}

// ---------------------------------------------------------------- recent mode

/// old, a compressed chain x1 -> x2, the current chain c1 -> c2 with a subagent and a
/// branch, a tool-source session, and a newer unrelated session.
fn recent_fixture(store: &SqliteStore) {
    conv(
        store,
        "old",
        "cli",
        0.0,
        &[Message::user("Set up the   CI\npipeline")],
    );
    conv(
        store,
        "x1",
        "cli",
        1.0,
        &[Message::user("Migrate the database")],
    );
    compress_into(
        store,
        "x1",
        "x2",
        2.0,
        &[Message::user("continue migration")],
    );
    store.set_title("x2", "Migration #2").unwrap();
    conv(
        store,
        "c1",
        "cli",
        3.0,
        &[Message::user("current work begins")],
    );
    compress_into(
        store,
        "c1",
        "c2",
        4.0,
        &[Message::user("current work continues")],
    );
    conv_with_parent(
        store,
        "sub",
        "subagent",
        Some("c2"),
        4.5,
        &[Message::user("helper")],
    );
    conv(store, "toolrun", "tool", 5.0, &[Message::user("internal")]);
    conv(
        store,
        "new",
        "telegram",
        6.0,
        &[Message::user("Plan the launch")],
    );
}

#[tokio::test]
async fn recent_mode_lists_newest_first_without_any_summarizer_call() {
    let store = store();
    recent_fixture(&store);
    for query in ["", "   \n\t"] {
        let mut request = SessionSearchRequest::new(query);
        request.current_session_id = Some("c2".into());
        request.limit = 5;
        let result = session_search(&store, &MustNotBeCalled, &request)
            .await
            .unwrap();
        assert_eq!(result.mode, SearchMode::Recent);
        assert_eq!(ids(&result), ["new", "x2", "old"], "{query:?}");
        assert_eq!(result.count, 3);

        let x2 = &result.results[1];
        assert_eq!(x2.lineage_root_id.as_deref(), Some("x1"));
        assert_eq!(x2.title.as_deref(), Some("Migration #2"));
        assert_eq!(x2.message_count, 2, "counted across the chain");
        assert_eq!(x2.when, "2023-11-14 23:13 UTC", "the chain's start");
        assert_eq!(
            x2.detail,
            EntryDetail::Recent {
                preview: Some("Migrate the database".into())
            }
        );
        assert_eq!(
            result.results[2].detail,
            EntryDetail::Recent {
                preview: Some("Set up the CI pipeline".into())
            }
        );
        assert_eq!(result.results[0].source, "telegram");
    }
}

#[tokio::test]
async fn recent_mode_excludes_the_current_lineage_from_any_member() {
    let store = store();
    recent_fixture(&store);
    for current in ["c1", "c2", "sub"] {
        let mut request = SessionSearchRequest::new("");
        request.current_session_id = Some(current.into());
        request.limit = 5;
        let result = session_search(&store, &MustNotBeCalled, &request)
            .await
            .unwrap();
        assert_eq!(ids(&result), ["new", "x2", "old"], "current {current}");
    }
    // Without a current session the current chain is listed once, as its tip.
    let mut request = SessionSearchRequest::new("");
    request.limit = 5;
    let all = session_search(&store, &MustNotBeCalled, &request)
        .await
        .unwrap();
    assert_eq!(ids(&all), ["new", "c2", "x2", "old"]);
}

#[tokio::test]
async fn recent_mode_clamps_the_limit() {
    let store = store();
    for i in 0..8 {
        conv(
            &store,
            &format!("s{i}"),
            "cli",
            i as f64,
            &[Message::user("hi")],
        );
    }
    for (asked, got) in [(0, 1), (3, 3), (50, 5)] {
        let mut request = SessionSearchRequest::new("");
        request.limit = asked;
        let result = session_search(&store, &MustNotBeCalled, &request)
            .await
            .unwrap();
        assert_eq!(result.count, got, "limit {asked}");
    }
}

// ---------------------------------------------------------------- search mode

#[tokio::test]
async fn query_groups_a_compression_chain_once_and_skips_the_current_chain() {
    let store = store();
    conv(
        &store,
        "a1",
        "cli",
        0.0,
        &[
            Message::user("The nginx config needs a bigger proxy buffer"),
            Message::assistant("I raised proxy_buffer_size in nginx.conf"),
        ],
    );
    compress_into(
        &store,
        "a1",
        "a2",
        1.0,
        &[Message::user("nginx still returns 502")],
    );
    conv(
        &store,
        "b",
        "cli",
        2.0,
        &[Message::user("Does nginx support HTTP/3?")],
    );
    conv(
        &store,
        "p",
        "cli",
        3.0,
        &[Message::user("nginx in the current work")],
    );
    compress_into(&store, "p", "cur", 4.0, &[Message::user("more nginx now")]);
    conv_with_parent(
        &store,
        "helper",
        "subagent",
        Some("cur"),
        4.5,
        &[Message::user("subagent looking at nginx")],
    );

    let summarizer = Scripted::replying("It was about nginx.");
    let mut request = SessionSearchRequest::new("nginx");
    request.current_session_id = Some("cur".into());
    request.limit = 5;
    let result = session_search(&store, &summarizer, &request).await.unwrap();

    assert_eq!(result.mode, SearchMode::Search);
    let mut found = ids(&result);
    found.sort();
    assert_eq!(
        found,
        ["a2", "b"],
        "one entry per chain, current lineage left out"
    );
    let a = result
        .results
        .iter()
        .find(|e| e.session_id == "a2")
        .unwrap();
    assert_eq!(a.lineage_root_id.as_deref(), Some("a1"));
    let (match_count, summary, raw, status) = detail(a);
    assert_eq!(match_count, 3);
    assert_eq!(summary, Some("It was about nginx."));
    assert_eq!(raw, None);
    assert_eq!(*status, SummaryStatus::Ok);
    assert_eq!(summarizer.calls(), 2);

    // The chain was read whole: the summarizer saw both a1's and a2's messages.
    let prompts = summarizer.prompts.lock().unwrap().clone();
    let a_prompt = prompts.iter().find(|p| p.contains("Session a2")).unwrap();
    let transcript = transcript_of(a_prompt);
    assert!(transcript.contains("[USER]: The nginx config needs a bigger proxy buffer"));
    assert!(transcript.contains("[ASSISTANT]: I raised proxy_buffer_size in nginx.conf"));
    assert!(transcript.contains("[USER]: nginx still returns 502"));
    assert!(!prompts.iter().any(|p| p.contains("current work")));
    assert!(
        summarizer
            .focus
            .lock()
            .unwrap()
            .iter()
            .all(|f| f.as_deref() == Some("nginx"))
    );
}

#[tokio::test]
async fn query_limit_is_clamped_and_results_follow_the_search_rank() {
    let store = store();
    for i in 0..8 {
        let mentions = "deploy ".repeat(i + 1);
        conv(
            &store,
            &format!("s{i}"),
            "cli",
            i as f64,
            &[Message::user(format!("{mentions} the service"))],
        );
    }
    let hits = store
        .read(|c| {
            let mut q = SearchQuery::new("deploy");
            q.limit = 50;
            Ok(search(c, &q)?)
        })
        .unwrap();
    let ranked: Vec<&str> = hits.iter().map(|h| h.session_id.as_str()).collect();

    for (asked, got) in [(0, 1), (3, 3), (5, 5), (99, 5)] {
        let summarizer = Scripted::replying("ok");
        let mut request = SessionSearchRequest::new("deploy");
        request.limit = asked;
        let result = session_search(&store, &summarizer, &request).await.unwrap();
        assert_eq!(result.count, got, "limit {asked}");
        assert_eq!(ids(&result), ranked[..got], "limit {asked}");
        assert_eq!(summarizer.calls(), got);
    }
}

#[tokio::test]
async fn role_filter_limits_which_messages_can_match() {
    let store = store();
    conv(
        &store,
        "u",
        "cli",
        0.0,
        &[Message::user("kubernetes question")],
    );
    let call = ToolCall::function("c1", "terminal", r#"{"command":"kubectl get pods"}"#);
    conv(
        &store,
        "t",
        "cli",
        1.0,
        &[
            Message::user("list pods"),
            Message::assistant_tool_calls(vec![call]),
            Message::tool("c1", "kubernetes pods: web-1 Running"),
        ],
    );
    let mut request = SessionSearchRequest::new("kubernetes");
    request.roles = vec!["user".into()];
    let result = session_search(&store, &Scripted::replying("x"), &request)
        .await
        .unwrap();
    assert_eq!(ids(&result), ["u"]);
    request.roles.clear();
    let result = session_search(&store, &Scripted::replying("x"), &request)
        .await
        .unwrap();
    assert_eq!(result.count, 2);
}

#[tokio::test]
async fn no_match_says_so_without_calling_the_summarizer() {
    let store = store();
    conv(&store, "a", "cli", 0.0, &[Message::user("hello there")]);
    let result = session_search(
        &store,
        &MustNotBeCalled,
        &SessionSearchRequest::new("zeppelin"),
    )
    .await
    .unwrap();
    assert_eq!(result.count, 0);
    assert!(result.results.is_empty());
    assert!(result.message.unwrap().contains("zeppelin"));
}

// ---------------------------------------------------------------- windows

#[tokio::test]
async fn window_holds_a_phrase_match_deep_in_a_300_message_session() {
    let store = store();
    let special = "Then we found that the flux capacitor overheated under load.";
    let messages = long_session(300, 600, &[(237, special)]);
    conv(&store, "long", "cli", 0.0, &messages);

    let summarizer = Scripted::replying("recap");
    let request = SessionSearchRequest::new("flux capacitor overheated");
    let result = session_search(&store, &summarizer, &request).await.unwrap();
    assert_eq!(ids(&result), ["long"]);

    let prompts = summarizer.prompts.lock().unwrap().clone();
    let transcript = transcript_of(&prompts[0]);
    assert!(transcript.contains(special));
    assert!(transcript.chars().count() <= request.window_chars);
    assert!(
        transcript.chars().count() > request.window_chars - 1_000,
        "budget used"
    );
    assert!(transcript.starts_with(window::EARLIER_MARKER));
    assert!(
        !transcript.contains("Step 0:"),
        "window did not move to the match"
    );
    let turns = summarizer.turn_counts.lock().unwrap()[0];
    assert!((100..300).contains(&turns), "{turns} turns");

    // A smaller budget still centres on the match.
    let summarizer = Scripted::replying("recap");
    let mut request = SessionSearchRequest::new("flux capacitor overheated");
    request.window_chars = 3_000;
    session_search(&store, &summarizer, &request).await.unwrap();
    let prompts = summarizer.prompts.lock().unwrap().clone();
    let transcript = transcript_of(&prompts[0]);
    assert!(transcript.contains(special));
    assert!(transcript.chars().count() <= 3_000);
    assert!(summarizer.turn_counts.lock().unwrap()[0] <= 7);
}

#[tokio::test]
async fn window_prefers_terms_together_over_a_lone_term() {
    let store = store();
    let messages = long_session(
        300,
        600,
        &[
            (4, "nginx was mentioned here only in passing."),
            (251, "The nginx upstream hit a read timeout after 60 s."),
        ],
    );
    conv(&store, "s", "cli", 0.0, &messages);
    let summarizer = Scripted::replying("recap");
    let mut request = SessionSearchRequest::new("nginx timeout");
    request.window_chars = 4_000;
    session_search(&store, &summarizer, &request).await.unwrap();
    let prompts = summarizer.prompts.lock().unwrap().clone();
    let transcript = transcript_of(&prompts[0]);
    assert!(transcript.contains("nginx upstream hit a read timeout"));
    assert!(!transcript.contains("only in passing"));
    assert_eq!(
        window::find_anchor(
            &messages
                .iter()
                .map(Message::text)
                .collect::<Vec<_>>()
                .join("\n\n"),
            &Needles::from_query("nginx timeout"),
            4_000
        )
        .kind,
        AnchorKind::Proximity
    );
}

#[tokio::test]
async fn cjk_queries_window_on_char_boundaries() {
    let store = store();
    let zh_filler = "今天我们继续整理代码结构并记录命名约定。".repeat(30);
    let mut messages: Vec<Message> = (0..120)
        .map(|i| Message::user(format!("{i}: {zh_filler}")))
        .collect();
    messages[70] = Message::assistant("我们把用户配置文件移到了 ~/.baton/config.toml");
    messages[95] = Message::user("設定ファイルを更新しましたか？");
    conv(&store, "zh", "cli", 0.0, &messages);

    for (query, expect) in [
        ("配置", "我们把用户配置文件移到了"),
        ("用户", "我们把用户配置文件移到了"),
        ("用户配置", "我们把用户配置文件移到了"),
        ("配置 用户", "我们把用户配置文件移到了"),
        ("設定ファイル", "設定ファイルを更新しましたか"),
    ] {
        for window_chars in [500, 1_333, 10_000] {
            let summarizer = Scripted::new(|_| Act::Fail("offline"));
            let mut request = SessionSearchRequest::new(query);
            request.window_chars = window_chars;
            let result = session_search(&store, &summarizer, &request).await.unwrap();
            assert_eq!(ids(&result), ["zh"], "{query}");
            let prompts = summarizer.prompts.lock().unwrap().clone();
            let transcript = transcript_of(&prompts[0]);
            assert!(transcript.contains(expect), "{query} @ {window_chars}");
            assert!(transcript.chars().count() <= window_chars);
            let (_, _, raw, _) = detail(&result.results[0]);
            assert!(raw.unwrap().contains(expect), "{query} raw");
        }
    }
}

// ---------------------------------------------------------------- summarizer outcomes

fn two_sessions(store: &SqliteStore) {
    let deep = long_session(
        200,
        600,
        &[(150, "The redis eviction policy was set to allkeys-lru.")],
    );
    conv(store, "r1", "cli", 0.0, &deep);
    conv(
        store,
        "r2",
        "cli",
        1.0,
        &[Message::user("redis eviction again, slowly")],
    );
}

#[tokio::test]
async fn summarizer_failure_and_empty_output_return_the_raw_window() {
    let store = store();
    two_sessions(&store);
    let summarizer = Scripted::new(|prompt| {
        if prompt.contains("Session r1") {
            Act::Fail("quota exhausted")
        } else {
            Act::Empty
        }
    });
    let result = session_search(
        &store,
        &summarizer,
        &SessionSearchRequest::new("redis eviction"),
    )
    .await
    .unwrap();
    assert_eq!(result.count, 2);
    assert!(!result.time_budget_exceeded);
    let r1 = result
        .results
        .iter()
        .find(|e| e.session_id == "r1")
        .unwrap();
    let (_, summary, raw, status) = detail(r1);
    assert_eq!(summary, None);
    assert!(matches!(status, SummaryStatus::Failed(m) if m.contains("quota exhausted")));
    let raw = raw.unwrap();
    assert!(raw.contains("allkeys-lru"), "raw window shows the match");
    assert!(raw.chars().count() <= baton_store::session_search::RAW_WINDOW_CHARS);

    let r2 = result
        .results
        .iter()
        .find(|e| e.session_id == "r2")
        .unwrap();
    let (_, summary, raw, status) = detail(r2);
    assert_eq!(summary, None);
    assert_eq!(*status, SummaryStatus::Empty);
    assert!(raw.unwrap().contains("redis eviction again"));

    let json = serde_json::to_value(&result).unwrap();
    let statuses: Vec<&str> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["summary_status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"empty"));
    assert!(
        statuses
            .iter()
            .any(|s| s.starts_with("failed: ") && s.contains("quota"))
    );
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_turns_slow_summaries_into_raw_windows() {
    let store = store();
    two_sessions(&store);
    let summarizer = Scripted::new(|prompt| {
        if prompt.contains("Session r2") {
            Act::Reply("never arrives", Duration::from_secs(3_600))
        } else {
            Act::Reply("r1 recap", Duration::from_secs(5))
        }
    });
    let mut request = SessionSearchRequest::new("redis eviction");
    request.time_budget = Duration::from_secs(30);
    let started = tokio::time::Instant::now();
    let result = session_search(&store, &summarizer, &request).await.unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );

    assert!(result.time_budget_exceeded);
    let r1 = result
        .results
        .iter()
        .find(|e| e.session_id == "r1")
        .unwrap();
    assert_eq!(detail(r1).1, Some("r1 recap"));
    assert_eq!(*detail(r1).3, SummaryStatus::Ok);
    let r2 = result
        .results
        .iter()
        .find(|e| e.session_id == "r2")
        .unwrap();
    let (_, summary, raw, status) = detail(r2);
    assert_eq!(summary, None);
    assert_eq!(*status, SummaryStatus::Timeout);
    assert!(raw.unwrap().contains("redis eviction again"));
    let json = serde_json::to_value(&result).unwrap();
    assert!(
        json["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["summary_status"] == "timeout")
    );
}

#[tokio::test(start_paused = true)]
async fn calls_still_waiting_for_a_slot_at_the_deadline_never_start() {
    let store = store();
    for i in 0..3 {
        conv(
            &store,
            &format!("q{i}"),
            "cli",
            i as f64,
            &[Message::user("quarkus build")],
        );
    }
    let summarizer = Scripted::new(|_| Act::Reply("done", Duration::from_secs(60)));
    let mut request = SessionSearchRequest::new("quarkus");
    request.max_concurrency = 1;
    request.time_budget = Duration::from_secs(90);
    let result = session_search(&store, &summarizer, &request).await.unwrap();
    let statuses: Vec<SummaryStatus> = result.results.iter().map(|e| detail(e).3.clone()).collect();
    assert_eq!(
        statuses,
        [
            SummaryStatus::Ok,
            SummaryStatus::Timeout,
            SummaryStatus::Timeout
        ]
    );
    assert_eq!(summarizer.calls(), 2, "the third call was never started");
}

#[tokio::test(start_paused = true)]
async fn concurrency_never_exceeds_the_limit() {
    let store = store();
    for i in 0..6 {
        conv(
            &store,
            &format!("g{i}"),
            "cli",
            i as f64,
            &[Message::user("gradle cache")],
        );
    }
    for (asked, expected) in [(1, 1), (2, 2), (3, 3), (0, 1), (99, 5)] {
        let summarizer = Scripted::new(|_| Act::Reply("done", Duration::from_millis(100)));
        let mut request = SessionSearchRequest::new("gradle");
        request.limit = 5;
        request.max_concurrency = asked;
        let result = session_search(&store, &summarizer, &request).await.unwrap();
        assert_eq!(result.count, 5);
        assert!(
            result
                .results
                .iter()
                .all(|e| *detail(e).3 == SummaryStatus::Ok)
        );
        assert_eq!(
            summarizer.max_in_flight.load(Ordering::SeqCst),
            expected,
            "max_concurrency {asked}"
        );
    }
}

#[tokio::test]
async fn the_extractive_summarizer_recaps_the_window() {
    let store = store();
    let call = ToolCall::function("c1", "terminal", r#"{"command":"cargo build --release"}"#);
    conv(
        &store,
        "e",
        "cli",
        0.0,
        &[
            Message::user("Please make the release build of baton work"),
            Message::assistant_tool_calls(vec![call]),
            Message::tool("c1", "error: linker `cc` not found"),
            Message::assistant("The release build needs a C linker; install build-essential."),
        ],
    );
    let result = session_search(
        &store,
        &ExtractiveSummarizer,
        &SessionSearchRequest::new("release build"),
    )
    .await
    .unwrap();
    let (match_count, summary, raw, status) = detail(&result.results[0]);
    assert!(match_count >= 1);
    assert_eq!(*status, SummaryStatus::Ok);
    assert_eq!(raw, None);
    let summary = summary.unwrap();
    assert!(summary.contains("release build"), "{summary}");
    assert!(summary.contains("cargo build --release"), "{summary}");
}

#[tokio::test]
async fn results_serialize_to_the_tool_shape() {
    let store = store();
    conv(
        &store,
        "a",
        "cli",
        0.0,
        &[Message::user("terraform plan failed")],
    );
    let result = session_search(
        &store,
        &Scripted::replying("recap"),
        &SessionSearchRequest::new("terraform"),
    )
    .await
    .unwrap();
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["mode"], "search");
    assert_eq!(json["query"], "terraform");
    assert_eq!(json["count"], 1);
    let entry = &json["results"][0];
    for key in [
        "session_id",
        "title",
        "source",
        "when",
        "started_at",
        "message_count",
        "match_count",
        "summary",
        "summary_status",
    ] {
        assert!(entry.get(key).is_some(), "missing {key} in {entry}");
    }
    assert!(entry.get("raw_window").is_none());
    assert!(entry.get("preview").is_none());

    let recent = session_search(&store, &MustNotBeCalled, &SessionSearchRequest::new(""))
        .await
        .unwrap();
    let json = serde_json::to_value(&recent).unwrap();
    assert_eq!(json["mode"], "recent");
    assert_eq!(json["results"][0]["preview"], "terraform plan failed");
    assert!(json["results"][0].get("summary_status").is_none());
}
