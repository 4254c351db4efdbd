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

suite::every_case!(on_sqlite);
