//! Schema migrations on PostgreSQL: a database written before version 2 (search vectors
//! with positions, no `search_len`) is re-indexed when a newer build opens it, and a database
//! newer than the build is refused. (Version 2 also moves `search_len` next to `id`, so the
//! rows are moved to a new table: their ids, text and sessions must survive it.) A version 2
//! database takes messages indexed later once opened (version 3).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::Message;
use baton_pg::PgStore;
use baton_store::{NewSession, SearchQuery, SessionStore};

fn hits(store: &PgStore, text: &str) -> usize {
    store.search(&SearchQuery::new(text)).unwrap().len()
}

#[test]
fn a_version_1_database_is_reindexed_and_its_phrases_found() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    let store = PgStore::connect(&url).unwrap();
    let id = store.create_session(NewSession::new("cli")).unwrap();
    store
        .append_messages(
            &id,
            &[
                Message::user("please run cargo test --workspace again"),
                Message::assistant("把用户配置迁移到数据库"),
            ],
        )
        .unwrap();
    drop(store);
    // Back to version 1 as an older build left it: positional vectors, no search_len,
    // search columns required.
    pg::execute(
        &url,
        "UPDATE messages SET words = to_tsvector('simple', 'unrelated'), \
         cjk = ''::tsvector; DROP INDEX messages_unindexed; \
         ALTER TABLE messages ALTER COLUMN words SET NOT NULL, ALTER COLUMN cjk SET NOT NULL; \
         ALTER TABLE messages DROP COLUMN search_len; \
         DELETE FROM baton_schema WHERE version >= 2;",
    );
    let store = PgStore::connect(&url).unwrap();
    assert_eq!(hits(&store, "\"cargo test workspace\""), 1);
    assert_eq!(hits(&store, "配置迁移"), 1);
    assert_eq!(hits(&store, "unrelated"), 0);
    // The id sequence continues after the moved rows.
    store
        .append_messages(&id, &[Message::user("after the migration")])
        .unwrap();
    assert_eq!(store.messages(&id).unwrap().len(), 3);
    assert_eq!(hits(&store, "\"after the migration\""), 1);
}

#[test]
fn a_database_newer_than_the_build_is_refused_by_name() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    drop(PgStore::connect(&url).unwrap());
    pg::execute(
        &url,
        "INSERT INTO baton_schema (version, description) VALUES (99, 'from the future')",
    );
    let err = PgStore::connect(&url).err().expect("refused").to_string();
    assert!(err.contains("schema version 99"), "{err}");
}

#[test]
fn a_version_2_database_takes_messages_indexed_later() {
    let Some(url) = pg::fresh_schema() else {
        return;
    };
    drop(PgStore::connect(&url).unwrap());
    pg::execute(
        &url,
        "DROP INDEX messages_unindexed; \
         ALTER TABLE messages ALTER COLUMN words SET NOT NULL, ALTER COLUMN cjk SET NOT NULL; \
         DELETE FROM baton_schema WHERE version >= 3;",
    );
    let store = PgStore::connect(&url).unwrap();
    let messages = vec![Message::user("stored before its index")];
    store
        .write_new_sessions_deferred(&[pg::new_session("later", "import", &messages)])
        .unwrap();
    assert_eq!(store.index_backlog().unwrap(), 1);
    assert_eq!(hits(&store, "\"before its index\""), 1);
}
