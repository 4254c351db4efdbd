//! The store conformance suite (`tests/suite`) on SQLite; `baton-pg` runs the same suite on
//! PostgreSQL.

mod suite;

use baton_store::SqliteStore;

macro_rules! on_sqlite {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let dir = tempfile::tempdir().unwrap();
                let store = SqliteStore::open(dir.path().join("state.db")).unwrap();
                suite::$name(&store);
            }
        )*
    };
}

on_sqlite!(
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
);
