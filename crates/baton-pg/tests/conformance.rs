//! The store conformance suite of `baton-store` (included by path) on PostgreSQL: every
//! behaviour the SQLite store is held to, on a fresh schema per test.
//!
//! Needs `BATON_PG_TEST_URL` (`eval "$(scripts/pg-test-server.sh)"` starts a throwaway
//! server and sets it). Without it the tests print how to enable them and pass, unless
//! `BATON_REQUIRE_PG` is set (CI sets it), when they fail.

#[path = "../../baton-store/tests/suite/mod.rs"]
mod suite;

mod pg;

macro_rules! on_postgres {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let Some(store) = pg::fresh_store() else { return };
                suite::$name(&store);
            }
        )*
    };
}

on_postgres!(
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
