//! Driver errors as store errors: the SQLSTATE and message, never the connection string.

use baton_store::StoreError;

/// Serialization failures and deadlocks: the transaction is retried.
pub fn is_retryable(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        *c == tokio_postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
            || *c == tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED
    })
}

pub fn pg(store: &str, e: tokio_postgres::Error) -> StoreError {
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    };
    StoreError::Backend {
        store: store.to_string(),
        detail,
    }
}

pub fn pool(store: &str, e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::Backend {
        store: store.to_string(),
        detail: format!("no connection: {e}"),
    }
}
