use super::{db, msg, msg_tool, session};
use crate::query::{self, is_cjk};
use crate::search::{SearchQuery, search};

fn ids(conn: &rusqlite::Connection, q: &SearchQuery) -> Vec<i64> {
    search(conn, q)
        .unwrap()
        .iter()
        .map(|h| h.message_id)
        .collect()
}

#[test]
fn sanitizer_output_is_accepted_by_fts5_and_finds_the_message() {
    let conn = db();
    session(&conn, "s1", "cli", 0.0);
    // (query, message that must be found)
    let table: &[(&str, &str)] = &[
        (
            "\"connection refused\"",
            "we saw connection refused on port 5432",
        ),
        ("deploy*", "deployment finished for staging"),
        ("user_id", "the user_id column is indexed"),
        ("foo.bar", "call foo.bar() before start"),
        ("a-b", "the a-b test variant won"),
        ("it's", "it's raining in the logs"),
        ("src/main.rs", "edit src/main.rs to add the flag"),
        ("alice@example.com", "mail alice@example.com about access"),
        ("apples, pears", "apples and pears are fruit"),
        ("why?", "why does the build fail"),
        ("x=1", "set x=1 in the env file"),
        ("#4242", "see issue #4242 for details"),
        ("key:value", "the key:value pair is parsed"),
        ("(unbalanced", "unbalanced parens in a query"),
        ("closing)) extra(", "closing extra braces"),
        ("\"half quote", "a half quote was typed"),
        ("NEAR", "the station is near the river"),
        ("near(x y)", "near x y tokens"),
        ("NOT", "do not panic"),
        ("AND", "salt and pepper"),
        ("OR", "now or never"),
        ("rust AND", "rust and cargo"),
        ("OR rust", "rust or go"),
        ("a AND OR b", "option a"),
        ("cats OR dogs", "dogs only here"),
        ("cats NOT birds", "cats without the other animal"),
        ("\"tail -f\" logs", "run tail -f on the logs"),
        (
            "C++ *glob* ^caret {brace} [x] +plus",
            "c glob caret brace x plus",
        ),
        ("ünïcödé", "ünïcödé text"),
        ("'single quotes'", "single quotes matter"),
        ("back\\slash", "back\\slash path"),
        ("percent% under_score", "100 percent% of under_score"),
    ];
    let mut expected = Vec::new();
    for (i, (_, content)) in table.iter().enumerate() {
        expected.push(msg(&conn, "s1", "user", content, i as f64));
    }
    for ((q, content), id) in table.iter().zip(expected) {
        let parsed = query::parse(q);
        let fts = parsed
            .to_fts5()
            .unwrap_or_else(|| panic!("{q:?} sanitized to nothing"));
        for table in ["messages_fts", "messages_fts_trigram"] {
            let sql = format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?");
            let r: Result<i64, _> = conn.query_row(&sql, [&fts], |r| r.get(0));
            assert!(r.is_ok(), "{table} rejected {fts:?} (from {q:?}): {r:?}");
        }
        let found = ids(&conn, &SearchQuery::new(*q));
        assert!(
            found.contains(&id),
            "{q:?} -> {fts:?} did not find {content:?}; got {found:?}"
        );
    }
}

#[test]
fn explicit_operators_are_honoured() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let both = msg(&conn, "s", "user", "cats and birds", 1.0);
    let cats = msg(&conn, "s", "user", "cats alone", 2.0);
    let dogs = msg(&conn, "s", "user", "dogs alone", 3.0);
    let mut r = ids(&conn, &SearchQuery::new("cats NOT birds"));
    assert_eq!(r, vec![cats]);
    r = ids(&conn, &SearchQuery::new("cats OR dogs"));
    r.sort();
    assert_eq!(r, vec![both, cats, dogs]);
    assert_eq!(ids(&conn, &SearchQuery::new("cats AND birds")), vec![both]);
    // lowercase "or" is a word: needs all three.
    assert!(ids(&conn, &SearchQuery::new("cats or dogs")).is_empty());
}

#[test]
fn query_with_nothing_searchable_returns_empty_ok() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    msg(&conn, "s", "user", "anything", 1.0);
    for q in ["", "   ", "\"\"", "()", "* - @ ?", "。、"] {
        assert!(
            search(&conn, &SearchQuery::new(q)).unwrap().is_empty(),
            "{q:?}"
        );
    }
}

#[test]
fn tool_name_and_tool_calls_are_searchable() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let id = msg_tool(
        &conn,
        "s",
        "assistant",
        "",
        Some("read_file"),
        Some(r#"[{"path":"/etc/nginx/nginx.conf","参数":"读取配置"}]"#),
        1.0,
    );
    for q in ["read_file", "nginx.conf", "读取配置", "配置"] {
        assert_eq!(ids(&conn, &SearchQuery::new(q)), vec![id], "{q}");
    }
}

#[test]
fn filters_by_role_source_session_and_date() {
    let conn = db();
    session(&conn, "a", "cli", 0.0);
    session(&conn, "b", "telegram", 0.0);
    let a_user = msg(&conn, "a", "user", "release notes 发布说明", 10.0);
    let a_asst = msg(&conn, "a", "assistant", "release notes 发布说明", 20.0);
    let b_user = msg(&conn, "b", "user", "release notes 发布说明", 30.0);
    for text in ["release", "发布说明", "发布", "release 发布"] {
        let q = |f: &dyn Fn(&mut SearchQuery)| {
            let mut q = SearchQuery::new(text);
            f(&mut q);
            let mut r = ids(&conn, &q);
            r.sort();
            r
        };
        assert_eq!(q(&|_| {}), vec![a_user, a_asst, b_user], "{text}");
        assert_eq!(q(&|q| q.roles = vec!["user".into()]), vec![a_user, b_user]);
        assert_eq!(q(&|q| q.sources = vec!["telegram".into()]), vec![b_user]);
        assert_eq!(
            q(&|q| q.session_ids = vec!["a".into()]),
            vec![a_user, a_asst]
        );
        assert_eq!(
            q(&|q| q.exclude_session_ids = vec!["a".into()]),
            vec![b_user]
        );
        assert_eq!(q(&|q| q.since = Some(15.0)), vec![a_asst, b_user]);
        assert_eq!(q(&|q| q.until = Some(20.0)), vec![a_user, a_asst]);
        assert_eq!(
            q(&|q| {
                q.since = Some(15.0);
                q.until = Some(25.0)
            }),
            vec![a_asst]
        );
    }
    // limit / offset page through the ranked list without overlap.
    let all = ids(&conn, &SearchQuery::new("release"));
    let mut q = SearchQuery::new("release");
    q.limit = 2;
    let p1 = ids(&conn, &q);
    q.offset = 2;
    let p2 = ids(&conn, &q);
    assert_eq!([p1, p2].concat(), all);
    // hit fields
    let h = &search(&conn, &SearchQuery::new("发布说明")).unwrap()[0];
    assert_eq!(
        (h.session_id.as_str(), h.source.as_str()),
        ("b", "telegram")
    );
    assert_eq!((h.role.as_str(), h.timestamp), ("user", 30.0));
}

#[test]
fn cjk_snippets_mark_the_match_without_splitting_characters() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let long = format!(
        "{}我们需要检查用户的权限配置，然后{}",
        "前面的内容很长很长。".repeat(10),
        "后面还有很多文字。".repeat(10)
    );
    msg(&conn, "s", "user", &long, 1.0);
    for (q, mark) in [
        ("用户", ">>>用户<<<"),
        ("权限配置", ">>>权限配置<<<"),
        ("户", ">>>户<<<"),
    ] {
        let hits = search(&conn, &SearchQuery::new(q)).unwrap();
        let s = &hits[0].snippet;
        assert!(s.contains(mark), "{q}: {s}");
        assert!(s.starts_with("...") && s.ends_with("..."), "{s}");
        // ~40 chars either side, no broken chars (String is valid UTF-8 by
        // construction; check the count of CJK letters is the window).
        let n = s.chars().filter(|c| is_cjk(*c)).count();
        assert!((70..=95).contains(&n), "{q}: {n} chars in {s}");
    }
    // unicode61 snippet for English
    msg(&conn, "s", "user", "alpha beta gamma kubernetes delta", 2.0);
    let h = &search(&conn, &SearchQuery::new("kubernetes")).unwrap()[0];
    assert!(h.snippet.contains(">>>kubernetes<<<"), "{}", h.snippet);
}

#[test]
fn one_character_query_returns_results_ranked_by_occurrences() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let once = msg(&conn, "s", "user", "我有一只猫和一条狗", 3.0);
    let thrice = msg(&conn, "s", "user", "猫猫猫", 1.0);
    let twice = msg(&conn, "s", "user", "猫喜欢睡觉，猫也喜欢鱼", 2.0);
    msg(&conn, "s", "user", "狗喜欢跑步", 4.0);
    let hits = search(&conn, &SearchQuery::new("猫")).unwrap();
    let r: Vec<i64> = hits.iter().map(|h| h.message_id).collect();
    assert_eq!(r, vec![thrice, twice, once]);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn glued_identifier_found_by_identifier_and_by_cjk_part() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let glued = msg(&conn, "s", "user", "请修改配置config_path文件里的值", 1.0);
    let inner = msg(&conn, "s", "user", "the reconfig_paths helper", 2.0);
    for q in ["config_path", "配置", "config_path文件", "配置config_path"] {
        let r = ids(&conn, &SearchQuery::new(q));
        assert_eq!(r, vec![glued], "{q}");
    }
    assert_eq!(ids(&conn, &SearchQuery::new("reconfig_paths")), vec![inner]);
    let h = &search(&conn, &SearchQuery::new("config_path")).unwrap()[0];
    assert!(h.snippet.contains(">>>config_path<<<"), "{}", h.snippet);
}

#[test]
fn mixed_query_intersects_english_and_cjk() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let both = msg(&conn, "s", "user", "redis 缓存失效了", 1.0);
    msg(&conn, "s", "user", "redis is fine", 2.0);
    msg(&conn, "s", "user", "缓存失效了", 3.0);
    assert_eq!(ids(&conn, &SearchQuery::new("redis 缓存")), vec![both]);
    assert_eq!(ids(&conn, &SearchQuery::new("redis 缓存失效")), vec![both]);
}

#[test]
fn tool_call_snippets_show_the_call_name_and_argument_text_not_raw_json() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let calls = r#"[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"src/parser.rs\", \"offset\": 40}"}}]"#;
    msg_tool(&conn, "s", "assistant", "", None, Some(calls), 1.0);
    for (q, want) in [
        ("parser", "read_file(path: src/>>>parser<<<.rs, offset: 40)"),
        (
            "read_file",
            ">>>read_file<<<(path: src/parser.rs, offset: 40)",
        ),
    ] {
        let h = &search(&conn, &SearchQuery::new(q)).unwrap()[0];
        assert_eq!(h.snippet, want, "{q}");
        assert!(!h.snippet.contains('\\') && !h.snippet.contains("\"function\""));
    }
}

#[test]
fn two_words_find_every_message_holding_both_past_the_common_words_cap() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let both = msg(&conn, "s", "tool", "cargo test passed", 1.0);
    // Newer than it: more messages holding the common word than a term's candidate cap.
    let tx = conn.unchecked_transaction().unwrap();
    let newer = crate::search::TERM_CANDIDATE_CAP + 100;
    for i in 0..newer {
        msg(
            &tx,
            "s",
            "tool",
            &format!("test {i} failed"),
            2.0 + i as f64,
        );
    }
    tx.commit().unwrap();
    assert_eq!(ids(&conn, &SearchQuery::new("cargo test")), vec![both]);
    assert_eq!(ids(&conn, &SearchQuery::new("test cargo")), vec![both]);
    assert_eq!(
        ids(&conn, &SearchQuery::new("cargo NOT test")),
        Vec::<i64>::new()
    );
}

/// One word a token, the other glued to CJK text: the joint fetch over the word index cannot
/// see the message, the glued word's supplement can, and the token word is looked up for it.
#[test]
fn a_word_glued_to_cjk_and_a_separate_word_are_found_together() {
    for with_cjk_index in [false, true] {
        let conn = db();
        session(&conn, "s", "cli", 0.0);
        let mixed = msg(
            &conn,
            "s",
            "user",
            "请运行cargo命令, then check the test log",
            1.0,
        );
        let tokens = msg(&conn, "s", "user", "cargo test is green", 2.0);
        msg(&conn, "s", "user", "运行cargo命令 only", 3.0);
        msg(&conn, "s", "user", "the test only", 4.0);
        if with_cjk_index {
            super::with_cjk_index(&conn);
        }
        let mut found = ids(&conn, &SearchQuery::new("cargo test"));
        found.sort_unstable();
        assert_eq!(found, vec![mixed, tokens], "CJK index: {with_cjk_index}");
        let hits = search(&conn, &SearchQuery::new("cargo test")).unwrap();
        assert_eq!(
            hits[0].message_id, tokens,
            "both words as tokens rank first"
        );
    }
}

/// The page's FTS5 snippets are made in one statement: each hit must still get its own
/// message's snippet, and a message with tool calls the window snippet.
#[test]
fn every_hit_on_a_page_gets_its_own_messages_snippet() {
    let conn = db();
    session(&conn, "s", "cli", 0.0);
    let mut expected = Vec::new();
    for (i, word) in ["alpha", "bravo", "charlie", "delta", "echo"]
        .iter()
        .enumerate()
    {
        let id = msg(
            &conn,
            "s",
            "user",
            &format!("{word} said the deploy failed"),
            i as f64,
        );
        expected.push((id, *word));
    }
    let with_calls = msg_tool(
        &conn,
        "s",
        "assistant",
        "retrying the deploy",
        None,
        Some(r#"[{"id":"c","function":{"name":"sh","arguments":"{}"}}]"#),
        9.0,
    );
    let hits = search(&conn, &SearchQuery::new("deploy")).unwrap();
    assert_eq!(hits.len(), 6);
    for hit in &hits {
        assert!(hit.snippet.contains(">>>deploy<<<"), "{}", hit.snippet);
        if hit.message_id == with_calls {
            assert!(hit.snippet.contains("retrying"), "{}", hit.snippet);
            continue;
        }
        let (_, word) = expected
            .iter()
            .find(|(id, _)| *id == hit.message_id)
            .unwrap();
        assert!(hit.snippet.starts_with(word), "{}: {}", word, hit.snippet);
    }
}
