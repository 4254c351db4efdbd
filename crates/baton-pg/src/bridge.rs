//! Running the async driver under a synchronous trait. The store owns a two-thread tokio
//! runtime; a call spawns its future there and blocks the calling thread on a channel for the
//! result. Blocking on a channel (not `block_on`) is what makes this safe inside another
//! runtime: the caller's runtime is never re-entered.

use baton_store::{Result, StoreError};
use std::future::Future;

pub struct Bridge {
    runtime: tokio::runtime::Runtime,
}

impl Bridge {
    pub fn new() -> Result<Bridge> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("baton-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend {
                store: "postgres".into(),
                detail: format!("cannot start the driver's runtime: {e}"),
            })?;
        Ok(Bridge { runtime })
    }

    /// Runs `future` on the store's runtime and waits for its result.
    pub fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().map_err(|_| StoreError::Backend {
            store: "postgres".into(),
            detail: "the driver stopped before answering".into(),
        })?
    }
}
