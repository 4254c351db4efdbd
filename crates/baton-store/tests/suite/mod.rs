//! The store's behaviour, written once against the [`SessionStore`] trait and run on every
//! backend: `tests/conformance.rs` here runs it on SQLite, `baton-pg/tests/conformance.rs`
//! on PostgreSQL (it includes this file by path). Each function gets a fresh, empty store.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod corpus;

/// Calls `$runner!` with the name of every case of the suite, so each backend's runner lists
/// them once, here.
macro_rules! every_case {
    ($runner:ident) => {
        $runner!(
            creating_twice_keeps_the_first_and_an_unknown_parent_is_refused,
            the_first_end_reason_wins,
            messages_round_trip_exactly_with_counters,
            usage_accumulates_and_an_unknown_cost_keeps_the_known_one,
            titles_are_cleaned_unique_and_numbered_along_a_lineage,
            continuations_form_a_chain_and_a_parent_is_continued_once,
            listing_shows_a_chain_once_as_its_tip_with_the_root_preview,
            resolving_takes_ids_titles_and_unique_prefixes,
            deleting_detaches_children_and_pruning_keeps_live_chains_whole,
            meta_values_are_set_and_replaced,
            search_answers_words_phrases_prefixes_booleans_cjk_and_filters,
            recall_at_5_is_perfect_on_the_mixed_language_corpus,
            positions_counts_children_and_answers_are_read_back,
            a_chain_is_titled_and_deleted_as_one_conversation,
            new_sessions_are_written_once_and_stored_ones_left_untouched,
            stats_count_sessions_tokens_costs_tools_and_days,
            session_search_recalls_other_conversations_but_not_the_current_one,
        );
    };
}
pub(crate) use every_case;

use baton_core::usage::CanonicalUsage;
use baton_core::{Content, ContentPart, Message, ToolCall};
use baton_store::continuation::ChildSettings;
use baton_store::{NewSession, SearchQuery, SessionFilter, SessionStore, StoreError, end_reason};
use serde_json::json;
use std::time::Duration;

fn session(store: &dyn SessionStore, id: &str, source: &str) -> String {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            ..NewSession::new(source)
        })
        .unwrap()
}

fn session_at(store: &dyn SessionStore, id: &str, started_at: f64) -> String {
    store
        .create_session(NewSession {
            id: Some(id.into()),
            started_at: Some(started_at),
            ..NewSession::new("cli")
        })
        .unwrap()
}

fn now() -> f64 {
    baton_store::session::now()
}

pub fn creating_twice_keeps_the_first_and_an_unknown_parent_is_refused(store: &dyn SessionStore) {
    let id = store
        .create_session(NewSession {
            id: Some("s1".into()),
            model: Some("first".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    assert_eq!(id, "s1");
    store
        .create_session(NewSession {
            id: Some("s1".into()),
            model: Some("second".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    assert_eq!(
        store.get_session("s1").unwrap().unwrap().model.as_deref(),
        Some("first")
    );
    let generated = store.create_session(NewSession::new("cli")).unwrap();
    assert!(store.get_session(&generated).unwrap().is_some());
    let orphan = store.create_session(NewSession {
        parent_session_id: Some("missing".into()),
        ..NewSession::new("cli")
    });
    assert!(
        matches!(orphan, Err(StoreError::NotFound { .. })),
        "{orphan:?}"
    );
    assert!(store.get_session("missing").unwrap().is_none());
}

pub fn the_first_end_reason_wins(store: &dyn SessionStore) {
    session(store, "s", "cli");
    assert!(store.end_session("s", "user_exit").unwrap());
    assert!(!store.end_session("s", "other").unwrap());
    let s = store.get_session("s").unwrap().unwrap();
    assert_eq!(s.end_reason.as_deref(), Some("user_exit"));
    assert!(s.ended_at.is_some());
    assert!(matches!(
        store.end_session("nope", "x"),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn messages_round_trip_exactly_with_counters(store: &dyn SessionStore) {
    session(store, "s", "cli");
    let mut call = Message::assistant_tool_calls(vec![ToolCall::function(
        "call_1",
        "terminal",
        r#"{"command":"ls -la","n":98765432109876543210}"#,
    )]);
    call.extra
        .insert("finish_reason".into(), json!("tool_calls"));
    let mut parts = Message::user("");
    parts.content = Some(Content::Parts(vec![
        ContentPart::text("look at this"),
        ContentPart::image_url("data:image/png;base64,AAAA"),
    ]));
    let messages = vec![
        Message::system("You are terse."),
        Message::user("列出文件 please — ünïcödé, \"quotes\", back\\slash, tab\t"),
        call,
        Message::tool("call_1", "total 0\n-rw-r--r-- a.txt"),
        parts,
        Message::assistant("done: 1.50000000000000000001"),
        Message::user("a NUL byte \0 pasted from a binary"),
        // One 6,000-byte token and a 1,000-character CJK run: stored and readable anywhere.
        Message::user(format!(
            "blob {} end {}",
            "QUJD".repeat(1_500),
            "数据".repeat(500)
        )),
    ];
    store.append_messages("s", &messages[..3]).unwrap();
    store.append_messages("s", &messages[3..]).unwrap();
    store.append_messages("s", &[]).unwrap();
    assert_eq!(store.messages("s").unwrap(), messages);
    let s = store.get_session("s").unwrap().unwrap();
    assert_eq!(s.message_count, 8);
    assert_eq!(s.tool_call_count, 1);
    assert_eq!(
        store.messages_range("s", 1, 3).unwrap(),
        messages[1..3].to_vec()
    );
    assert_eq!(
        store.messages_range("s", 4, 100).unwrap(),
        messages[4..].to_vec()
    );
    assert_eq!(store.search(&SearchQuery::new("pasted")).unwrap().len(), 1);
    assert_eq!(store.search(&SearchQuery::new("blob")).unwrap().len(), 1);
    assert_eq!(store.search(&SearchQuery::new("数据")).unwrap().len(), 1);
    assert!(store.messages_range("s", 3, 3).unwrap().is_empty());
    assert!(matches!(
        store.append_messages("missing", &messages[..1]),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.messages("missing"),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn usage_accumulates_and_an_unknown_cost_keeps_the_known_one(store: &dyn SessionStore) {
    session(store, "s", "cli");
    let usage = CanonicalUsage {
        input: 100,
        output: 20,
        cache_read: 50,
        cache_write: 10,
        reasoning: 5,
    };
    store.add_usage("s", &usage, Some(0.25)).unwrap();
    store.add_usage("s", &usage, None).unwrap();
    store.add_usage("s", &usage, Some(0.5)).unwrap();
    let s = store.get_session("s").unwrap().unwrap();
    assert_eq!(
        (
            s.input_tokens,
            s.output_tokens,
            s.cache_read_tokens,
            s.cache_write_tokens
        ),
        (300, 60, 150, 30)
    );
    assert_eq!((s.reasoning_tokens, s.api_call_count), (15, 3));
    assert!((s.estimated_cost_usd.unwrap() - 0.75).abs() < 1e-9);
    assert!(matches!(
        store.add_usage("missing", &usage, None),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn titles_are_cleaned_unique_and_numbered_along_a_lineage(store: &dyn SessionStore) {
    session(store, "a", "cli");
    session(store, "b", "cli");
    assert_eq!(
        store
            .set_title("a", "  Refactor\n auth  ")
            .unwrap()
            .as_deref(),
        Some("Refactor auth")
    );
    assert!(matches!(
        store.set_title("b", "Refactor auth"),
        Err(StoreError::TitleInUse { .. })
    ));
    assert_eq!(
        store.next_title_in_lineage("Refactor auth").unwrap(),
        "Refactor auth #2"
    );
    store.set_title("b", "Refactor auth #2").unwrap();
    assert_eq!(
        store.next_title_in_lineage("Refactor auth #2").unwrap(),
        "Refactor auth #3"
    );
    assert_eq!(store.set_title("b", "").unwrap(), None);
    assert!(store.get_session("b").unwrap().unwrap().title.is_none());
    assert!(matches!(
        store.set_title("b", &"x".repeat(500)),
        Err(StoreError::TitleTooLong { .. })
    ));
}

pub fn continuations_form_a_chain_and_a_parent_is_continued_once(store: &dyn SessionStore) {
    session(store, "root", "cli");
    store.set_title("root", "Deploy").unwrap();
    store
        .append_messages("root", &[Message::user("deploy the app")])
        .unwrap();
    let summary = vec![
        Message::user("deploy the app"),
        Message::assistant("summary"),
    ];
    let child = store
        .start_continuation_with(
            "root",
            &summary,
            &ChildSettings {
                system_prompt: Some("fresh prompt".into()),
                model: None,
            },
        )
        .unwrap();
    let again = store.start_continuation_with("root", &summary, &ChildSettings::default());
    assert!(
        matches!(again, Err(StoreError::AlreadyContinued { .. })),
        "{again:?}"
    );
    let grandchild = store
        .start_continuation_with(&child, &summary, &ChildSettings::default())
        .unwrap();
    let root = store.get_session("root").unwrap().unwrap();
    assert_eq!(root.end_reason.as_deref(), Some(end_reason::COMPRESSION));
    let c = store.get_session(&child).unwrap().unwrap();
    assert_eq!(c.parent_session_id.as_deref(), Some("root"));
    assert_eq!(c.system_prompt.as_deref(), Some("fresh prompt"));
    assert_eq!(c.title.as_deref(), Some("Deploy #2"));
    assert_eq!(c.message_count, 2);
    assert_eq!(store.messages(&child).unwrap(), summary);
    // The parent keeps everything it had.
    assert_eq!(store.messages("root").unwrap().len(), 1);
    assert_eq!(store.compression_tip("root").unwrap(), grandchild);
    assert_eq!(
        store.compression_chain(&child).unwrap(),
        vec!["root".to_string(), child.clone(), grandchild.clone()]
    );
    assert_eq!(store.compression_tip("unknown").unwrap(), "unknown");
    // Named by any title of the chain, or the base title, the conversation is its tip.
    assert_eq!(
        store.resolve_session("Deploy").unwrap().as_deref(),
        Some(grandchild.as_str())
    );
    assert_eq!(
        store.resolve_session("Deploy #2").unwrap().as_deref(),
        Some(grandchild.as_str())
    );
    assert!(matches!(
        store.start_continuation_with("missing", &summary, &ChildSettings::default()),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn listing_shows_a_chain_once_as_its_tip_with_the_root_preview(store: &dyn SessionStore) {
    session_at(store, "old", now() - 100.0);
    store
        .append_messages("old", &[Message::user("first question")])
        .unwrap();
    let child = store
        .start_continuation_with(
            "old",
            &[Message::user("summary")],
            &ChildSettings::default(),
        )
        .unwrap();
    store
        .create_session(NewSession {
            id: Some("tg".into()),
            started_at: Some(now() - 50.0),
            ..NewSession::new("telegram")
        })
        .unwrap();
    let listed = store.list_sessions(&SessionFilter::default()).unwrap();
    let ids: Vec<&str> = listed.iter().map(|l| l.session.id.as_str()).collect();
    assert_eq!(ids, vec!["tg", child.as_str()]);
    let chain = &listed[1];
    assert_eq!(chain.lineage_root_id.as_deref(), Some("old"));
    assert_eq!(chain.preview, "first question");
    assert!(chain.last_active >= chain.session.started_at);
    let only_tg = store
        .list_sessions(&SessionFilter {
            source: Some("telegram".into()),
            ..SessionFilter::default()
        })
        .unwrap();
    assert_eq!(only_tg.len(), 1);
    let all = store
        .list_sessions(&SessionFilter {
            include_children: true,
            ..SessionFilter::default()
        })
        .unwrap();
    assert_eq!(all.len(), 3);
}

pub fn resolving_takes_ids_titles_and_unique_prefixes(store: &dyn SessionStore) {
    session(store, "20260101_abcdef", "cli");
    session(store, "20260101_abcxyz", "cli");
    session(store, "20260202_zzzzzz", "cli");
    store.set_title("20260202_zzzzzz", "Release").unwrap();
    let r = |s: &str| store.resolve_session(s);
    assert_eq!(
        r("20260101_abcdef").unwrap().as_deref(),
        Some("20260101_abcdef")
    );
    assert_eq!(r("Release").unwrap().as_deref(), Some("20260202_zzzzzz"));
    assert_eq!(r("20260202").unwrap().as_deref(), Some("20260202_zzzzzz"));
    assert!(matches!(
        r("20260101_abc"),
        Err(StoreError::Ambiguous { .. })
    ));
    assert_eq!(r("nothing-like-it").unwrap(), None);
    assert_eq!(
        r("202").unwrap(),
        None,
        "prefixes under four characters are not guessed"
    );
}

pub fn deleting_detaches_children_and_pruning_keeps_live_chains_whole(store: &dyn SessionStore) {
    let old = now() - 10.0 * 86_400.0;
    session_at(store, "parent", old);
    store
        .append_messages("parent", &[Message::user("hi")])
        .unwrap();
    store
        .create_session(NewSession {
            id: Some("branch".into()),
            parent_session_id: Some("parent".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    assert!(store.delete_session("parent").unwrap());
    assert!(!store.delete_session("parent").unwrap());
    let branch = store.get_session("branch").unwrap().unwrap();
    assert_eq!(branch.parent_session_id, None);

    // An old, ended chain goes whole; an old chain whose tip is live stays whole.
    session_at(store, "done", old);
    let done_child = store
        .start_continuation_with("done", &[Message::user("s")], &ChildSettings::default())
        .unwrap();
    store.end_session(&done_child, "user_exit").unwrap();
    session_at(store, "live", old);
    let live_child = store
        .start_continuation_with("live", &[Message::user("s")], &ChildSettings::default())
        .unwrap();
    session_at(store, "recent", now());
    store.end_session("recent", "user_exit").unwrap();
    let pruned = store
        .prune_sessions(Duration::from_secs(86_400), None)
        .unwrap();
    // `done`'s chain: the root started long ago, but the child started now: not all old.
    assert!(pruned.is_empty(), "{pruned:?}");
    assert!(store.get_session("live").unwrap().is_some());
    assert!(store.get_session(&live_child).unwrap().is_some());
    session_at(store, "ancient", old);
    store.end_session("ancient", "user_exit").unwrap();
    let day = Duration::from_secs(86_400);
    assert_eq!(store.prune_candidates(day, None).unwrap(), ["ancient"]);
    assert!(
        store
            .prune_candidates(day, Some("other"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.prune_sessions(day, None).unwrap(), ["ancient"]);
    assert!(store.get_session("ancient").unwrap().is_none());
    assert!(store.get_session("recent").unwrap().is_some());
    assert!(store.get_session(&done_child).unwrap().is_some());
}

pub fn meta_values_are_set_and_replaced(store: &dyn SessionStore) {
    assert_eq!(store.get_meta("k").unwrap(), None);
    store.set_meta("k", "1").unwrap();
    store.set_meta("k", "2").unwrap();
    assert_eq!(store.get_meta("k").unwrap().as_deref(), Some("2"));
}

/// Ids of the hits of `text`, best first.
fn hits(store: &dyn SessionStore, q: SearchQuery) -> Vec<String> {
    store
        .search(&q)
        .unwrap()
        .into_iter()
        .map(|h| h.snippet)
        .collect()
}

pub fn search_answers_words_phrases_prefixes_booleans_cjk_and_filters(store: &dyn SessionStore) {
    session(store, "en", "cli");
    session(store, "zh", "telegram");
    store
        .append_messages(
            "en",
            &[
                Message::user("the deployment failed with connection refused"),
                Message::assistant("retry the deploy after the rollback"),
                Message::user("rename user_id in settings.yaml"),
            ],
        )
        .unwrap();
    store
        .append_messages(
            "zh",
            &[
                Message::user("我们使用数据库存储用户配置"),
                Message::assistant("配置config_path文件已更新"),
                Message::user("確認しました"),
            ],
        )
        .unwrap();
    let q = |t: &str| SearchQuery::new(t);
    let found = |t: &str| hits(store, q(t));
    assert_eq!(found("rollback").len(), 1);
    assert_eq!(found("\"connection refused\"").len(), 1);
    assert_eq!(
        found("\"refused connection\"").len(),
        0,
        "a phrase keeps its order"
    );
    assert_eq!(found("deploy*").len(), 2, "prefix: deployment and deploy");
    assert_eq!(found("deploy").len(), 1, "a word is not a prefix");
    assert_eq!(found("deploy* NOT rollback").len(), 1);
    assert_eq!(found("rollback OR settings.yaml").len(), 2);
    assert_eq!(found("user_id").len(), 1);
    assert_eq!(found("用户").len(), 1, "a two-character Chinese word");
    assert_eq!(found("库").len(), 1, "one character");
    assert_eq!(found("数据库存储").len(), 1);
    assert_eq!(found("確認").len(), 1);
    assert_eq!(
        found("config_path").len(),
        1,
        "an identifier glued to CJK text"
    );
    assert_eq!(found("用户 rollback").len(), 0, "AND across languages");
    let snippet = &found("rollback")[0];
    assert!(snippet.contains(">>>rollback<<<"), "{snippet}");
    let mut only_zh = q("用户 OR rollback");
    only_zh.session_ids = vec!["zh".into()];
    assert_eq!(hits(store, only_zh).len(), 1);
    let mut users = q("deploy*");
    users.roles = vec!["user".into()];
    assert_eq!(hits(store, users).len(), 1);
    let mut telegram = q("配置");
    telegram.sources = vec!["telegram".into()];
    assert_eq!(hits(store, telegram).len(), 2);
    assert!(found("   ").is_empty());
    assert!(matches!(
        store.search(&q(&"a ".repeat(600))),
        Err(StoreError::Search(
            baton_store::SearchError::QueryTooLong { .. }
        ))
    ));
}

/// Recall@5 per query class over the mixed-language corpus of the SQLite search tests,
/// stored through the trait: every class must reach 1.0.
pub fn recall_at_5_is_perfect_on_the_mixed_language_corpus(store: &dyn SessionStore) {
    let report = recall::recall_by_class(store);
    for (class, recall, queries) in &report {
        println!("{class:<18} {queries:>3} queries  recall@5 {recall:.3}");
    }
    for (class, recall, _) in report {
        assert!(recall >= 1.0 - 1e-9, "class {class}: recall@5 {recall:.3}");
    }
}

pub mod recall {
    //! Builds the corpus through the trait and measures recall@5 per query class.
    use super::corpus::{N, QUERIES, oracle};
    use baton_core::{Message, Role, ToolCall};
    use baton_store::{NewSession, SearchQuery, SessionStore};
    use std::collections::HashMap;

    /// The message a corpus entry stands for.
    fn message(
        role: &str,
        content: &str,
        tool: Option<&str>,
        calls: Option<&str>,
        k: usize,
    ) -> Message {
        match (role, tool, calls) {
            ("assistant", Some(name), Some(args)) => {
                let mut m = Message::assistant_tool_calls(vec![ToolCall::function(
                    format!("call_{k}"),
                    name,
                    args,
                )]);
                if !content.is_empty() {
                    m.content = Some(baton_core::Content::Text(content.into()));
                }
                m
            }
            ("tool", name, _) => {
                let mut m = Message::tool(format!("call_{k}"), content);
                m.name = name.map(str::to_string);
                m
            }
            (r, _, _) => Message::new(
                Role::parse(r).unwrap_or(Role::User),
                Some(baton_core::Content::Text(content.into())),
            ),
        }
    }

    /// `(class, recall@5, queries)` for every query class.
    pub fn recall_by_class(store: &dyn SessionStore) -> Vec<(String, f64, usize)> {
        let sessions = super::corpus::SESSIONS;
        for (i, (id, source)) in sessions.iter().enumerate() {
            store
                .create_session(NewSession {
                    id: Some((*id).into()),
                    started_at: Some(1_000_000.0 + i as f64 * 1000.0),
                    ..NewSession::new(*source)
                })
                .unwrap();
        }
        // (expected id, the stored text the oracle reads)
        let mut corpus: Vec<(i64, String)> = Vec::new();
        let mut add =
            |role: &str, content: &str, tool: Option<&str>, calls: Option<&str>, k: usize| {
                let m = message(role, content, tool, calls, k);
                let row = baton_store::codec::to_row(
                    &m,
                    &HashMap::new(),
                    baton_store::codec::RawJson::Always,
                );
                let hay = format!(
                    "{} {} {}",
                    row.content.unwrap_or_default(),
                    row.tool_name.unwrap_or_default(),
                    row.tool_calls.unwrap_or_default()
                );
                store
                    .append_messages(sessions[k % sessions.len()].0, &[m])
                    .unwrap();
                // A fresh store numbers messages from 1 in append order (checked below).
                corpus.push((corpus.len() as i64 + 1, hay));
            };
        for (k, (role, c, tn, tc)) in super::corpus::entries().into_iter().enumerate() {
            add(role, c, tn, tc, k);
        }
        let probe = store.search(&SearchQuery::new("kubernetes")).unwrap();
        let expected: Vec<i64> = corpus
            .iter()
            .filter(|(_, h)| oracle(h, &[N::W("kubernetes")], baton_store::query::is_cjk))
            .map(|(id, _)| *id)
            .collect();
        let got: Vec<i64> = probe.iter().map(|h| h.message_id).collect();
        assert!(
            expected.iter().all(|id| got.contains(id)),
            "the store does not number a fresh store's messages from 1: {got:?} vs {expected:?}"
        );

        let mut classes: Vec<(String, f64, usize)> = Vec::new();
        for (class, text, needles) in QUERIES {
            let relevant: Vec<i64> = corpus
                .iter()
                .filter(|(_, h)| oracle(h, needles, baton_store::query::is_cjk))
                .map(|(id, _)| *id)
                .collect();
            assert!(!relevant.is_empty(), "no relevant message for {text:?}");
            let mut q = SearchQuery::new(*text);
            q.limit = 5;
            let top: Vec<i64> = store
                .search(&q)
                .unwrap()
                .iter()
                .map(|h| h.message_id)
                .collect();
            let found = relevant.iter().filter(|id| top.contains(id)).count();
            let recall = found as f64 / relevant.len().min(5) as f64;
            if recall < 1.0 {
                println!(
                    "miss: {class}: {text:?} recall {recall:.2} relevant={relevant:?} top={top:?}"
                );
            }
            match classes.iter_mut().find(|c| c.0 == *class) {
                Some(c) => {
                    c.1 += recall;
                    c.2 += 1;
                }
                None => classes.push(((*class).to_string(), recall, 1)),
            }
        }
        classes
            .into_iter()
            .map(|(c, sum, n)| (c, sum / n as f64, n))
            .collect()
    }
}

/// What an agent's recall tools and answer path use: counts, positions of search hits,
/// children, ranges, and an answer stored with its usage.
pub fn positions_counts_children_and_answers_are_read_back(store: &dyn SessionStore) {
    let parent = session_at(store, "p", 1_000.0);
    store
        .append_messages(
            &parent,
            &[
                Message::user("zero"),
                Message::assistant("one"),
                Message::user("the needle is here"),
            ],
        )
        .unwrap();
    assert_eq!(store.message_count(&parent).unwrap(), 3);
    assert!(matches!(
        store.message_count("missing"),
        Err(StoreError::NotFound { .. })
    ));
    let hit = &store.search(&SearchQuery::new("needle")).unwrap()[0];
    assert_eq!(
        store.message_position(hit.message_id).unwrap(),
        (parent.clone(), 2)
    );
    assert!(store.message_position(-5).is_err());
    let texts: Vec<String> = store
        .messages_range(&parent, 1, 99)
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(texts, ["one", "the needle is here"]);

    let child = store
        .create_session(NewSession {
            id: Some("c".into()),
            parent_session_id: Some(parent.clone()),
            started_at: Some(2_000.0),
            ..NewSession::new("subagent")
        })
        .unwrap();
    session_at(store, "unrelated", 1_500.0);
    assert_eq!(store.child_sessions(&parent).unwrap(), vec![child.clone()]);
    assert!(store.child_sessions(&child).unwrap().is_empty());

    let usage = CanonicalUsage {
        input: 100,
        output: 7,
        ..CanonicalUsage::default()
    };
    store
        .append_answer(&child, &[Message::assistant("done")], &usage, Some(0.5))
        .unwrap();
    let stored = store.get_session(&child).unwrap().unwrap();
    assert_eq!(
        (
            stored.message_count,
            stored.input_tokens,
            stored.api_call_count
        ),
        (1, 100, 1)
    );
    assert_eq!(stored.estimated_cost_usd, Some(0.5));
    assert!(
        store
            .append_answer("missing", &[Message::assistant("x")], &usage, None)
            .is_err()
    );
    assert_eq!(store.message_count("missing").ok(), None);
}

/// `session_search` (the agent's recall of earlier conversations) through the trait: recent
/// listing and a query, the current conversation's whole lineage left out.
pub fn session_search_recalls_other_conversations_but_not_the_current_one(
    store: &dyn SessionStore,
) {
    use baton_core::summary::extractive::ExtractiveSummarizer;
    use baton_store::{EntryDetail, SessionSearchRequest, session_search};
    let earlier = session_at(store, "earlier", 1_000.0);
    store
        .append_messages(
            &earlier,
            &[
                Message::user("migrate the billing tables to postgres"),
                Message::assistant("the billing migration is done"),
            ],
        )
        .unwrap();
    store.end_session(&earlier, "user_exit").unwrap();
    let current = session_at(store, "current", 2_000.0);
    store
        .append_messages(&current, &[Message::user("billing again, now")])
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = |query: &str| {
        runtime
            .block_on(session_search(
                store,
                &ExtractiveSummarizer,
                &SessionSearchRequest {
                    query: query.into(),
                    current_session_id: Some(current.clone()),
                    ..SessionSearchRequest::default()
                },
            ))
            .unwrap()
    };
    let recent = run("");
    let ids: Vec<&str> = recent
        .results
        .iter()
        .map(|e| e.session_id.as_str())
        .collect();
    assert_eq!(ids, ["earlier"]);
    assert!(matches!(
        &recent.results[0].detail,
        EntryDetail::Recent { preview: Some(p) } if p.starts_with("migrate the billing")
    ));
    let found = run("billing");
    let ids: Vec<&str> = found
        .results
        .iter()
        .map(|e| e.session_id.as_str())
        .collect();
    assert_eq!(ids, ["earlier"], "the current session is left out");
    assert!(matches!(
        &found.results[0].detail,
        EntryDetail::Match { match_count, .. } if *match_count == 2
    ));
}

/// `sessions title` and `sessions delete --chain`: a chain is titled along its numbered
/// lineage, a lineage another session holds is refused, and the whole chain deletes at once.
pub fn a_chain_is_titled_and_deleted_as_one_conversation(store: &dyn SessionStore) {
    session_at(store, "root", 1_000.0);
    let child = store
        .start_continuation_with("root", &[Message::user("s")], &ChildSettings::default())
        .unwrap();
    session_at(store, "other", 1_500.0);
    store.set_title("other", "Billing").unwrap();
    assert_eq!(
        store.retitle_chain(&child, "Auth rewrite").unwrap(),
        [
            ("root".to_string(), Some("Auth rewrite".to_string())),
            (child.clone(), Some("Auth rewrite #2".to_string())),
        ]
    );
    // A numbered title on a chain takes its base.
    assert_eq!(
        store.retitle_chain("root", "Auth v2 #7").unwrap()[1]
            .1
            .as_deref(),
        Some("Auth v2 #2")
    );
    assert!(matches!(
        store.retitle_chain("root", "Billing"),
        Err(StoreError::TitleInUse { other_id, .. }) if other_id == "other"
    ));
    assert_eq!(
        store.get_session("root").unwrap().unwrap().title.as_deref(),
        Some("Auth v2"),
        "a refused title changes nothing"
    );
    let cleared = store.retitle_chain("root", "  ").unwrap();
    assert!(cleared.iter().all(|(_, t)| t.is_none()));
    assert!(matches!(
        store.retitle_chain("missing", "x"),
        Err(StoreError::NotFound { .. })
    ));

    assert_eq!(
        store.delete_chain(&child).unwrap(),
        ["root".to_string(), child.clone()]
    );
    assert!(store.get_session("root").unwrap().is_none());
    assert!(store.get_session("other").unwrap().is_some());
    assert!(store.delete_chain("root").unwrap().is_empty());
}

/// `sessions import`'s write: conversations not stored yet are written (messages, usage,
/// title, end), one already stored is left exactly as it was.
pub fn new_sessions_are_written_once_and_stored_ones_left_untouched(store: &dyn SessionStore) {
    use baton_store::SessionBatch;
    session_at(store, "kept", 1_000.0);
    store
        .append_messages("kept", &[Message::user("original")])
        .unwrap();
    let fresh = [
        Message::user("imported question"),
        Message::assistant("answer"),
    ];
    let again = [Message::user("must not be appended")];
    let batch = |id: &str, messages: &'static [Message]| SessionBatch {
        session: NewSession {
            id: Some(id.into()),
            started_at: Some(500.0),
            ..NewSession::new("import")
        },
        messages,
        end_reason: Some(end_reason::IMPORTED),
        ended_at: Some(600.0),
        usage: Some((
            CanonicalUsage {
                input: 9,
                ..CanonicalUsage::default()
            },
            2,
        )),
        title: Some("Imported".into()),
    };
    let fresh: &'static [Message] = Box::leak(Box::new(fresh));
    let again: &'static [Message] = Box::leak(Box::new(again));
    let written = store
        .write_new_sessions(&[batch("new", fresh), batch("kept", again)])
        .unwrap();
    assert_eq!(
        written,
        [("new".to_string(), true), ("kept".to_string(), false)]
    );
    let new = store.get_session("new").unwrap().unwrap();
    assert_eq!(
        (new.message_count, new.input_tokens, new.api_call_count),
        (2, 9, 2)
    );
    assert_eq!(new.title.as_deref(), Some("Imported"));
    assert_eq!(new.end_reason.as_deref(), Some(end_reason::IMPORTED));
    let kept = store.get_session("kept").unwrap().unwrap();
    assert_eq!((kept.message_count, kept.title), (1, None));
    assert_eq!(store.messages("kept").unwrap()[0].text(), "original");
}

/// `sessions stats`: the window, per-model (provider prefixes merged), per-source and per-day
/// figures, tool counts (the larger of results and calls), and pricing of sessions without a
/// stored cost.
pub fn stats_count_sessions_tokens_costs_tools_and_days(store: &dyn SessionStore) {
    use baton_core::pricing::PriceTable;
    use baton_store::StatsQuery;
    let day = 86_400.0;
    let now = 1_750_000_000.0; // 2025-06-15 15:06:40 UTC
    let mk = |id: &str, source: &str, model: &str, started: f64| {
        store
            .create_session(NewSession {
                id: Some(id.into()),
                model: Some(model.into()),
                started_at: Some(started),
                ..NewSession::new(source)
            })
            .unwrap()
    };
    mk("a", "cli", "openai/gpt-4o", now - 2.0 * day);
    mk("b", "cli", "gpt-4o", now - 1.0 * day);
    mk("c", "cron", "no-such-model", now - 0.5 * day);
    mk("old", "cli", "gpt-4o", now - 40.0 * day);
    let calls = Message::assistant_tool_calls(vec![
        ToolCall::function("t1", "terminal", "{}"),
        ToolCall::function("t2", "read_file", "{}"),
    ]);
    store
        .append_messages(
            "a",
            &[
                Message::user("q"),
                calls,
                Message::tool("t1", "ok"),
                Message::tool("t2", "ok"),
            ],
        )
        .unwrap();
    store
        .append_messages("b", &[Message::user("q"), Message::assistant("a")])
        .unwrap();
    let usage = |input, output| CanonicalUsage {
        input,
        output,
        ..CanonicalUsage::default()
    };
    store
        .add_usage("a", &usage(1_000, 100), Some(0.25))
        .unwrap();
    store.add_usage("b", &usage(2_000, 200), None).unwrap();
    store.add_usage("c", &usage(10, 1), None).unwrap();
    store.add_usage("old", &usage(5, 5), Some(9.0)).unwrap();

    let stats = store
        .stats(
            &StatsQuery {
                days: 30,
                source: None,
                now,
            },
            &PriceTable::builtin(),
        )
        .unwrap();
    let o = &stats.overview;
    assert_eq!((o.sessions, o.messages, o.tool_calls), (3, 6, 2));
    assert_eq!(
        (o.input_tokens, o.output_tokens, o.total_tokens),
        (3_010, 301, 3_311)
    );
    assert_eq!(
        (o.user_messages, o.assistant_messages, o.tool_messages),
        (2, 2, 2)
    );
    // `b` is priced from its tokens (gpt-4o has a price); `c`'s model has none.
    assert_eq!(o.sessions_unknown_cost, 1);
    let cost = o.cost_usd.unwrap();
    assert!(cost > 0.25 && cost < 1.0, "{cost}");
    let models: Vec<(&str, u64)> = stats
        .by_model
        .iter()
        .map(|m| (m.model.as_str(), m.sessions))
        .collect();
    assert_eq!(models, [("gpt-4o", 2), ("no-such-model", 1)]);
    let sources: Vec<(&str, u64)> = stats
        .by_source
        .iter()
        .map(|s| (s.source.as_str(), s.sessions))
        .collect();
    assert_eq!(sources, [("cli", 2), ("cron", 1)]);
    assert_eq!(stats.by_day.len(), 31, "one row per day of the window");
    let active: Vec<(&str, u64)> = stats
        .by_day
        .iter()
        .filter(|d| d.sessions > 0)
        .map(|d| (d.date.as_str(), d.sessions))
        .collect();
    assert_eq!(
        active,
        [("2025-06-13", 1), ("2025-06-14", 1), ("2025-06-15", 1)]
    );
    let tools: Vec<(&str, u64)> = stats
        .top_tools
        .iter()
        .map(|t| (t.tool.as_str(), t.count))
        .collect();
    assert_eq!(tools, [("read_file", 1), ("terminal", 1)]);
    assert!(stats.db_size_bytes > 0);

    let cron = store
        .stats(
            &StatsQuery {
                days: 30,
                source: Some("cron".into()),
                now,
            },
            &PriceTable::builtin(),
        )
        .unwrap();
    assert_eq!(cron.overview.sessions, 1);
    assert_eq!(cron.overview.cost_usd, None, "nothing it could price");
}
