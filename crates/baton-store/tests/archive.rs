//! Reading history back by position.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::Message;
use baton_store::{NewSession, SearchQuery, SessionStore, SqliteStore, StoreError};

#[test]
fn ranges_positions_and_counts_agree_with_the_append_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let a = store.create_session(NewSession::new("cli")).unwrap();
    let b = store.create_session(NewSession::new("cli")).unwrap();
    // Interleave two sessions so positions are not row ids.
    for i in 0..10 {
        store
            .append_messages(&a, &[Message::user(format!("a{i} 配置文件"))])
            .unwrap();
        store
            .append_messages(&b, &[Message::user(format!("b{i}"))])
            .unwrap();
    }
    let all = store.messages(&a).unwrap();
    assert_eq!(store.message_count(&a).unwrap(), 10);
    assert_eq!(store.messages_range(&a, 3, 6).unwrap(), all[3..6].to_vec());
    assert_eq!(
        store.messages_range(&a, 8, 100).unwrap(),
        all[8..].to_vec(),
        "end clamped"
    );
    assert!(store.messages_range(&a, 5, 5).unwrap().is_empty());
    let hits = store
        .read(|c| {
            baton_store::search(
                c,
                &SearchQuery {
                    text: "a7".into(),
                    session_ids: vec![a.clone()],
                    limit: 5,
                    ..SearchQuery::default()
                },
            )
            .map_err(|e| StoreError::Corrupt {
                path: std::path::PathBuf::new(),
                detail: e.to_string(),
            })
        })
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        store.message_position(hits[0].message_id).unwrap(),
        (a.clone(), 7)
    );
    let missing = store.message_position(999_999).unwrap_err();
    assert!(matches!(missing, StoreError::NotFound { .. }), "{missing}");
    assert!(matches!(
        store.messages_range("nope", 0, 1).unwrap_err(),
        StoreError::NotFound { .. }
    ));
}
