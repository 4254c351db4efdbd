//! A cancellation flag the host raises (Ctrl-C, a closed client) and the runtime checks
//! between steps and while waiting on the model or a tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// Cheap to clone; every clone sees the same flag.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    raised: AtomicBool,
    notify: Notify,
}

impl Interrupt {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the running turn to stop at the next safe point.
    pub fn raise(&self) {
        self.inner.raised.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    pub fn is_raised(&self) -> bool {
        self.inner.raised.load(Ordering::SeqCst)
    }

    /// Lowers the flag before the next turn.
    pub fn clear(&self) {
        self.inner.raised.store(false, Ordering::SeqCst);
    }

    /// Resolves once the flag is raised (at once if it already is), so a model call or a
    /// tool can be raced against it with `tokio::select!`.
    pub async fn raised(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_raised() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn raised_wakes_a_waiter_and_clear_lowers_the_flag() {
        let interrupt = Interrupt::new();
        let waiter = {
            let interrupt = interrupt.clone();
            tokio::spawn(async move { interrupt.raised().await })
        };
        tokio::task::yield_now().await;
        interrupt.raise();
        assert!(waiter.await.is_ok());
        assert!(interrupt.is_raised());
        interrupt.clear();
        assert!(!interrupt.is_raised());
    }
}
