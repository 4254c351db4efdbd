//! Independent per-message work of a long span, split over scoped threads.
//!
//! A compaction's heavy steps (cutting and redacting each message's view, deciding each old
//! result's stub) look at one message at a time. On a long span they are split into ranges,
//! one per thread; on a short one the calling thread does it all, because starting a thread
//! costs more than a few hundred messages of work (issue #17, measured on the shared inputs).
//!
//! Scoped threads rather than the rayon pool: on the 2-vCPU VM the project is measured on, a
//! parked pool worker often woke too late to take any of the work (a 10,000-message span's
//! views: 8–14 ms with the pool, 8.1–9.7 ms with fresh threads, 13.6 ms on one thread).

use std::ops::Range;

/// Spans with fewer items are worked on the calling thread.
pub(crate) const SPLIT_FROM_ITEMS: usize = 1_000;

/// At most this many threads share one span, so a service compacting many sessions at once
/// does not start a thread per core for each of them.
const MAX_THREADS: usize = 4;

/// `work` run over consecutive ranges that together cover `0..len`, one range per thread when
/// `len` is long enough to repay the threads; the results in range order.
pub(crate) fn in_ranges<R: Send>(len: usize, work: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let threads = threads_for(len);
    if threads <= 1 {
        return vec![work(0..len)];
    }
    let step = len.div_ceil(threads);
    let mut ranges = (0..len)
        .step_by(step)
        .map(|start| start..(start + step).min(len));
    let first = ranges.next().unwrap_or(0..0);
    std::thread::scope(|scope| {
        let work = &work;
        let others: Vec<_> = ranges.map(|r| scope.spawn(move || work(r))).collect();
        let mut results = Vec::with_capacity(threads);
        results.push(work(first));
        for other in others {
            match other.join() {
                Ok(result) => results.push(result),
                // A panic in the work is a bug; it is raised here as it would have been had
                // this thread done that range itself.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results
    })
}

/// How many threads share `len` items: one below [`SPLIT_FROM_ITEMS`], else one per core up to
/// [`MAX_THREADS`].
fn threads_for(len: usize) -> usize {
    if len < SPLIT_FROM_ITEMS {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_item_once_in_order() {
        for len in [
            0,
            1,
            SPLIT_FROM_ITEMS - 1,
            SPLIT_FROM_ITEMS,
            3 * SPLIT_FROM_ITEMS + 7,
        ] {
            let ranges = in_ranges(len, |r| r);
            let covered: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(covered, (0..len).collect::<Vec<_>>(), "len {len}");
            assert!(ranges.len() <= MAX_THREADS);
            if len < SPLIT_FROM_ITEMS {
                assert_eq!(ranges.len(), 1, "len {len}");
            }
        }
    }

    #[test]
    fn short_spans_stay_on_the_calling_thread_and_long_ones_are_capped() {
        assert_eq!(threads_for(SPLIT_FROM_ITEMS - 1), 1);
        assert!(threads_for(usize::MAX) <= MAX_THREADS);
        let here = std::thread::current().id();
        assert_eq!(
            in_ranges(SPLIT_FROM_ITEMS - 1, |_| std::thread::current().id()),
            [here]
        );
    }

    #[test]
    fn a_panic_in_another_range_reaches_the_caller() {
        if threads_for(2 * SPLIT_FROM_ITEMS) < 2 {
            eprintln!("one core: nothing runs on another thread");
            return;
        }
        let caught = std::panic::catch_unwind(|| {
            in_ranges(2 * SPLIT_FROM_ITEMS, |r| {
                assert!(r.start == 0, "range {r:?}")
            })
        });
        assert!(caught.is_err());
    }
}
