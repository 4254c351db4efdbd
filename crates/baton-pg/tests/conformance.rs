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

suite::every_case!(on_postgres);
