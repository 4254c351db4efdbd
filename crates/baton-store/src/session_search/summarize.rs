//! Summarizing the found sessions a few at a time, under one deadline.
//!
//! The summarizer borrows its inputs and the caller's `&dyn Summarizer`, so the calls cannot be
//! spawned as tasks; they are polled together in place instead, with a semaphore holding the
//! number in flight to the limit (a provider's rate limit, or a local model's memory). All
//! calls share one deadline rather than each getting its own timeout: the agent's turn waits on
//! the whole recall, so what matters is when the last summary is in. A call still waiting for
//! a slot at the deadline is never started.

use super::{SUMMARY_BUDGET_TOKENS, SummaryStatus};
use baton_core::Message;
use baton_core::summary::ledger::TaskLedger;
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout_at};

/// One session to summarize.
pub struct Job<'a> {
    /// The messages the window shows.
    pub turns: &'a [&'a Message],
    /// Empty for summarizers that do not read it.
    pub prompt: &'a str,
}

/// The summary of each job, in job order, or why there is none.
pub async fn summarize_all(
    summarizer: &dyn Summarizer,
    jobs: &[Job<'_>],
    query: &str,
    max_concurrency: usize,
    budget: Duration,
) -> Vec<Result<String, SummaryStatus>> {
    let deadline = Instant::now() + budget;
    let slots = Semaphore::new(max_concurrency.max(1));
    let ledger = TaskLedger::default();
    let calls: Vec<BoxFuture<'_, Result<String, SummaryStatus>>> = jobs
        .iter()
        .map(|job| {
            let input = SummaryInput {
                turns: job.turns,
                previous_summary: None,
                focus_topic: Some(query),
                budget_tokens: SUMMARY_BUDGET_TOKENS,
                ledger: &ledger,
                prompt: job.prompt,
                first_request: None,
                actions: None,
                calls: None,
            };
            let call: BoxFuture<'_, _> = Box::pin(one_call(summarizer, input, &slots, deadline));
            call
        })
        .collect();
    join_in_order(calls).await
}

async fn one_call(
    summarizer: &dyn Summarizer,
    input: SummaryInput<'_>,
    slots: &Semaphore,
    deadline: Instant,
) -> Result<String, SummaryStatus> {
    let _permit = match timeout_at(deadline, slots.acquire()).await {
        Ok(Ok(permit)) => permit,
        Ok(Err(closed)) => return Err(SummaryStatus::Failed(closed.to_string())),
        Err(_) => return Err(SummaryStatus::Timeout),
    };
    if Instant::now() >= deadline {
        return Err(SummaryStatus::Timeout);
    }
    match timeout_at(deadline, summarizer.summarize(input)).await {
        Err(_) => Err(SummaryStatus::Timeout),
        Ok(Ok(text)) if text.trim().is_empty() => Err(SummaryStatus::Empty),
        Ok(Ok(text)) => Ok(text.trim().to_string()),
        Ok(Err(SummaryError::Empty { .. })) => Err(SummaryStatus::Empty),
        // The summarizer's own timeout is its failure, not the search running out of time.
        Ok(Err(e)) => Err(SummaryStatus::Failed(e.to_string())),
    }
}

/// Drives every future to completion concurrently on the current task and returns their
/// outputs in input order, whatever order they finish in.
async fn join_in_order<T>(futures: Vec<BoxFuture<'_, T>>) -> Vec<T> {
    let mut pending: Vec<Option<Pin<Box<dyn Future<Output = T> + Send + '_>>>> =
        futures.into_iter().map(Some).collect();
    let mut done: Vec<Option<T>> = pending.iter().map(|_| None).collect();
    poll_fn(|cx| {
        for (slot, out) in pending.iter_mut().zip(done.iter_mut()) {
            if let Some(future) = slot
                && let Poll::Ready(value) = future.as_mut().poll(cx)
            {
                *out = Some(value);
                *slot = None;
            }
        }
        if pending.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    done.into_iter().flatten().collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn join_keeps_input_order_when_later_futures_finish_first() {
        let futures: Vec<BoxFuture<'_, u64>> = [30u64, 10, 20]
            .into_iter()
            .map(|ms| {
                let f: BoxFuture<'_, u64> = Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    ms
                });
                f
            })
            .collect();
        assert_eq!(join_in_order(futures).await, [30, 10, 20]);
    }
}
