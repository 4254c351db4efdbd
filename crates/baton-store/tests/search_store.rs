//! Search over a database written by `SqliteStore`: the store's triggers feed both FTS tables,
//! so English, CJK (including 2-character terms) and identifiers glued to CJK are found.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::Message;
use baton_store::{NewSession, SearchQuery, SessionStore, SqliteStore, search};

fn hits(store: &SqliteStore, text: &str) -> Vec<String> {
    store
        .read(|conn| Ok(search(conn, &SearchQuery::new(text))?))
        .unwrap()
        .into_iter()
        .map(|h| h.snippet)
        .collect()
}

#[test]
fn messages_appended_through_the_store_are_searchable_in_every_script() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("state.db")).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(
            &id,
            &[
                Message::user("Please refactor the authentication middleware"),
                Message::assistant("修改了用户配置文件，然后运行测试。"),
                Message::user("設定ファイルを読み込んでください"),
                Message::assistant("사용자 설정을 저장했습니다"),
                Message::user("检查配置config_path文件是否存在"),
            ],
        )
        .unwrap();
    for (query, expect) in [
        ("authentication", "authentication"),
        ("用户", "用户"),
        ("配置文件", "配置文件"),
        ("設定ファイル", "設定ファイル"),
        ("사용자", "사용자"),
        ("config_path", "config_path"),
    ] {
        let found = hits(&store, query);
        assert!(
            found.iter().any(|s| s.contains(expect)),
            "{query}: {found:?}"
        );
    }
    // User syntax that would break a raw FTS5 query is sanitized, not an error.
    let found = hits(&store, "\"refactor (middleware");
    assert!(found.iter().any(|s| s.contains("refactor")), "{found:?}");
}
