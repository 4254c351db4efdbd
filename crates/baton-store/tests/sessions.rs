#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::usage::CanonicalUsage;
use baton_store::{NewSession, SessionStore, SqliteStore, StoreError};
use common::session;

#[test]
fn generated_ids_follow_the_reference_format_and_duplicates_keep_the_first() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = store.create_session(NewSession::new("tui")).unwrap();
    assert_eq!(id.len(), "20260515_143000_a1b2c3".len());
    let again = store
        .create_session(NewSession {
            id: Some(id.clone()),
            model: Some("other".into()),
            ..NewSession::new("cli")
        })
        .unwrap();
    assert_eq!(again, id);
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(s.source, "tui");
    assert_eq!(s.model, None);
}

#[test]
fn first_end_reason_wins() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = session(&store, "s");
    assert!(store.end_session(&id, "compression").unwrap());
    assert!(!store.end_session(&id, "cli_close").unwrap());
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(s.end_reason.as_deref(), Some("compression"));
    assert!(matches!(
        store.end_session("missing", "x"),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn usage_counters_accumulate_all_buckets_and_api_calls() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = session(&store, "s");
    let u = CanonicalUsage {
        input: 100,
        output: 20,
        cache_read: 300,
        cache_write: 40,
        reasoning: 5,
    };
    store.add_usage(&id, &u, None).unwrap();
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(s.estimated_cost_usd, None);
    store.add_usage(&id, &u, Some(0.25)).unwrap();
    store.add_usage(&id, &u, Some(0.5)).unwrap();
    let s = store.get_session(&id).unwrap().unwrap();
    assert_eq!(
        (
            s.input_tokens,
            s.output_tokens,
            s.cache_read_tokens,
            s.cache_write_tokens,
            s.reasoning_tokens
        ),
        (300, 60, 900, 120, 15)
    );
    assert_eq!(s.api_call_count, 3);
    assert_eq!(s.estimated_cost_usd, Some(0.75));
    assert!(matches!(
        store.add_usage("missing", &u, None),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn titles_are_cleaned_unique_and_numbered() {
    let store = SqliteStore::open_in_memory().unwrap();
    let a = session(&store, "a");
    let b = session(&store, "b");
    let c = session(&store, "c");
    assert_eq!(
        store
            .set_title(&a, "  Refactor\u{200b}   auth\n")
            .unwrap()
            .as_deref(),
        Some("Refactor auth")
    );
    let err = store.set_title(&b, "Refactor auth").unwrap_err();
    assert!(matches!(&err, StoreError::TitleInUse { other_id, .. } if other_id == "a"));
    assert!(err.to_string().contains("a"), "{err}");
    // Setting the same title on the same session is fine.
    store.set_title(&a, "Refactor auth").unwrap();

    assert_eq!(
        store.next_title_in_lineage("Refactor auth").unwrap(),
        "Refactor auth #2"
    );
    store.set_title(&b, "Refactor auth #2").unwrap();
    assert_eq!(
        store.next_title_in_lineage("Refactor auth #2").unwrap(),
        "Refactor auth #3"
    );
    assert_eq!(
        store.next_title_in_lineage("Brand new").unwrap(),
        "Brand new"
    );
    // LIKE wildcards in a base title are literal.
    store.set_title(&c, "100%_done").unwrap();
    assert_eq!(
        store.next_title_in_lineage("100x_done").unwrap(),
        "100x_done"
    );

    // Clearing.
    assert_eq!(store.set_title(&a, " \t ").unwrap(), None);
    assert_eq!(store.get_session(&a).unwrap().unwrap().title, None);
    assert!(matches!(
        store.set_title(&a, &"x".repeat(101)),
        Err(StoreError::TitleTooLong { .. })
    ));
    assert!(matches!(
        store.set_title("zz", "t"),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn meta_values_are_upserted() {
    let store = SqliteStore::open_in_memory().unwrap();
    assert_eq!(store.get_meta("k").unwrap(), None);
    store.set_meta("k", "1").unwrap();
    store.set_meta("k", "2").unwrap();
    assert_eq!(store.get_meta("k").unwrap().as_deref(), Some("2"));
}

#[test]
fn list_filters_by_source_with_limit_and_offset() {
    let store = SqliteStore::open_in_memory().unwrap();
    for i in 0..5 {
        store
            .create_session(NewSession {
                id: Some(format!("s{i}")),
                ..NewSession::new(if i % 2 == 0 { "cli" } else { "tui" })
            })
            .unwrap();
    }
    let cli = store
        .list_sessions(&baton_store::SessionFilter {
            source: Some("cli".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(cli.len(), 3);
    let page = store
        .list_sessions(&baton_store::SessionFilter {
            limit: 2,
            offset: 1,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(page.len(), 2);
}
