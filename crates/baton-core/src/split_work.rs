//! Independent per-message work of a long span, split over several threads.
//!
//! A compaction's heavy steps (cutting and redacting each message's view, deciding each old
//! result's stub) look at one message at a time. On a long span they are split into ranges
//! that several threads work through; on a short one the calling thread does it all, because
//! handing work to another thread costs more than a few hundred messages of work (issue #17,
//! measured on the shared inputs).
//!
//! The caller always works its share; the other threads are a small pool's workers kept
//! awake between a pass's splits, or fresh scoped threads for a split nested in another's
//! work (`split_work/helpers.rs` says why).

mod helpers;

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Spans with fewer items are worked on the calling thread.
pub(crate) const SPLIT_FROM_ITEMS: usize = 1_000;

/// At most this many threads share one span, so a service compacting many sessions at once
/// does not start a thread per core for each of them.
const MAX_THREADS: usize = 4;

/// `work` run over consecutive ranges that together cover `0..len`, on several threads when
/// `len` is long enough to repay them; the results in range order.
///
/// The threads take ranges from a shared counter until none is left, rather than one fixed
/// half each: a span's messages differ in weight (its first half of `synth_10k` took 8.0 ms
/// to view, its second 5.6 ms), and a thread starts 0.1–0.2 ms after it is asked to, time
/// in which the calling thread is already working through ranges.
pub(crate) fn in_ranges<R: Send>(len: usize, work: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let threads = threads_for(len);
    if threads <= 1 {
        return vec![work(0..len)];
    }
    let step = len.div_ceil(threads * RANGES_PER_THREAD);
    let ((), done) = ranges_on_threads(threads, step, len, work, || ((), len));
    done.into_iter().map(|(_, result)| result).collect()
}

/// `work(shard, shards)` for each of `shards` shards, where `shards` is 1 below
/// [`SPLIT_FROM_ITEMS`] items (`len`) and else [`SHARDS_PER_THREAD`] for each thread they
/// repay; the threads take the shards as they come free. The results in shard order.
///
/// For work whose items must be grouped by something other than their position: each shard
/// picks out the items that fall to it (equal calls to one shard, so each is classified
/// once, `tool_action::table`). More shards than threads, so a thread that starts late, or
/// shares its core with another process, takes fewer of them instead of being waited for.
pub(crate) fn in_shards<R: Send>(len: usize, work: impl Fn(usize, usize) -> R + Sync) -> Vec<R> {
    let threads = threads_for(len);
    if threads <= 1 {
        return vec![work(0, 1)];
    }
    let shards = threads * SHARDS_PER_THREAD;
    let ((), done) = ranges_on_threads(
        threads,
        1,
        shards,
        |r| work(r.start, shards),
        || ((), shards),
    );
    done.into_iter().map(|(_, result)| result).collect()
}

/// Shards per thread for [`in_shards`]: each shard's picking reads every item's key, so
/// few; enough that the threads end close together when one starts late.
const SHARDS_PER_THREAD: usize = 4;

/// `item(i)` for each `i` in `0..n`, where `n ≤ len` is only known once `decide` returns it:
/// on a long enough list ([`SPLIT_FROM_ITEMS`]) other threads start on the items from the
/// first one while the caller decides, then the caller joins them; items past `n` that were
/// started meanwhile are thrown away.
///
/// For a pass's span: its views can be built from its first message while pruning and the
/// tail walk decide where it ends (most of a long conversation is span, and the walk only
/// settles its last few messages).
pub(crate) fn items_ahead<T: Send, D>(
    len: usize,
    item: impl Fn(usize) -> T + Sync,
    decide: impl FnOnce() -> (D, usize),
) -> (D, Vec<T>) {
    let threads = threads_for(len);
    if threads <= 1 {
        let (decided, n) = decide();
        return (decided, (0..n.min(len)).map(item).collect());
    }
    let step = len
        .div_ceil(threads * RANGES_PER_THREAD)
        .min(AHEAD_RANGE_ITEMS);
    let work = |range: Range<usize>| range.map(&item).collect::<Vec<T>>();
    let ((decided, n), done) = ranges_on_threads(threads, step, len, work, || {
        let (decided, n) = decide();
        let n = n.min(len);
        ((decided, n), n)
    });
    let mut items: Vec<T> = done.into_iter().flat_map(|(_, items)| items).collect();
    items.truncate(n);
    (decided, items)
}

/// What a helper hands back: the ranges it worked and their results, or its panic.
type Returned<R> = std::thread::Result<Vec<(usize, R)>>;

/// The ranges of `step` items that `threads` threads (the caller one of them) take from a
/// shared counter and give to `work`, with their starts, in order. The other threads start at
/// once; the caller first runs `decide`, whose bound (at most `len`) ends the ranges from
/// then on: a range is cut at whatever bound it read, never below the decided one, so the
/// ranges below it are whole and together cover it.
fn ranges_on_threads<R: Send, D>(
    threads: usize,
    step: usize,
    len: usize,
    work: impl Fn(Range<usize>) -> R + Sync,
    decide: impl FnOnce() -> (D, usize),
) -> (D, Vec<(usize, R)>) {
    let next = AtomicUsize::new(0);
    let limit = AtomicUsize::new(len);
    let take_ranges = || {
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(step, Ordering::Relaxed);
            let bound = limit.load(Ordering::Relaxed);
            if start >= bound {
                return done;
            }
            done.push((start, work(start..(start + step).min(bound))));
        }
    };
    // The helpers hand their ranges back through `returned` (`helpers::alongside` waits for
    // their work to return, not for their threads).
    let returned: Mutex<Vec<Returned<R>>> = Mutex::new(Vec::new());
    let helper = || {
        // A panic in the work is a bug; caught here to be raised on the caller as it would
        // have been had the caller done that range itself.
        let theirs = std::panic::catch_unwind(AssertUnwindSafe(&take_ranges));
        lock(&returned).push(theirs);
    };
    let (decided, mut done) = helpers::alongside(threads - 1, &helper, || {
        let (decided, bound) = decide();
        limit.store(bound.min(len), Ordering::Relaxed);
        (decided, take_ranges())
    });
    for theirs in std::mem::take(&mut *lock(&returned)) {
        match theirs {
            Ok(theirs) => done.extend(theirs),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    done.sort_unstable_by_key(|(start, _)| *start);
    (decided, done)
}

/// The helpers' returned ranges; a panic while holding the lock is impossible (it only
/// pushes and takes), so a poisoned lock still holds whole values.
fn lock<T>(returned: &Mutex<T>) -> MutexGuard<'_, T> {
    returned
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The longest range [`items_ahead`] hands out: the threads must go on taking ranges after the
/// caller decides, and a range past `n` is wasted.
const AHEAD_RANGE_ITEMS: usize = 256;

/// Ranges per thread: enough that the threads finish close together whatever the messages
/// weigh, few enough that taking one is noise next to its work.
const RANGES_PER_THREAD: usize = 8;

/// How many threads share `len` items: one below [`SPLIT_FROM_ITEMS`], else one per core up to
/// [`MAX_THREADS`].
fn threads_for(len: usize) -> usize {
    if len < SPLIT_FROM_ITEMS {
        return 1;
    }
    cores()
}

/// The cores this process may use, up to [`MAX_THREADS`].
fn cores() -> usize {
    *CORES
}

/// The cores this process may use, up to [`MAX_THREADS`], asked once: on Linux the answer
/// comes from reading the cgroup's CPU quota files, which was 0.4% of compacting a
/// 10,000-message span when asked at every split (`perf record`, issue #17).
static CORES: LazyLock<usize> = LazyLock::new(|| {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
});

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

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
            assert!(ranges.len() <= MAX_THREADS * RANGES_PER_THREAD);
            if len < SPLIT_FROM_ITEMS {
                assert_eq!(ranges.len(), 1, "len {len}");
            }
        }
    }

    #[test]
    fn every_shard_is_worked_once_and_they_come_back_in_order() {
        for len in [
            0,
            SPLIT_FROM_ITEMS - 1,
            SPLIT_FROM_ITEMS,
            5 * SPLIT_FROM_ITEMS,
        ] {
            let shards = in_shards(len, |shard, of| (shard, of));
            let of = match threads_for(len) {
                1 => 1,
                threads => threads * SHARDS_PER_THREAD,
            };
            assert_eq!(
                shards,
                (0..of).map(|s| (s, of)).collect::<Vec<_>>(),
                "len {len}"
            );
        }
    }

    /// Whatever `n` the decision gives, and however long it takes, each item below it comes
    /// back once, in order, and nothing past it does.
    #[test]
    fn items_ahead_gives_the_items_below_the_decided_count_in_order() {
        for (len, n, wait_ms) in [
            (10, 7, 0),
            (SPLIT_FROM_ITEMS - 1, SPLIT_FROM_ITEMS - 1, 0),
            (3 * SPLIT_FROM_ITEMS + 7, 0, 0),
            (3 * SPLIT_FROM_ITEMS + 7, 5, 2),
            (3 * SPLIT_FROM_ITEMS + 7, 2 * SPLIT_FROM_ITEMS + 3, 0),
            (3 * SPLIT_FROM_ITEMS + 7, 2 * SPLIT_FROM_ITEMS + 3, 5),
            (3 * SPLIT_FROM_ITEMS + 7, 3 * SPLIT_FROM_ITEMS + 7, 5),
            (3 * SPLIT_FROM_ITEMS + 7, 10 * SPLIT_FROM_ITEMS, 1),
        ] {
            let calls = AtomicUsize::new(0);
            let (decided, items) = items_ahead(
                len,
                |i| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    i * 2
                },
                || {
                    std::thread::sleep(std::time::Duration::from_millis(wait_ms));
                    ("decided", n)
                },
            );
            assert_eq!(decided, "decided");
            let want: Vec<usize> = (0..n.min(len)).map(|i| i * 2).collect();
            assert_eq!(items, want, "len {len}, n {n}");
            assert!(calls.load(Ordering::Relaxed) <= len, "len {len}, n {n}");
        }
    }

    /// On a long list the items are started before the decision returns.
    #[test]
    fn items_ahead_starts_before_the_decision_on_a_long_list() {
        if threads_for(SPLIT_FROM_ITEMS) < 2 {
            println!("one core: items_ahead runs everything after the decision here");
            return;
        }
        let started = AtomicUsize::new(0);
        let (seen, items) = items_ahead(
            4 * SPLIT_FROM_ITEMS,
            |i| {
                started.fetch_add(1, Ordering::Relaxed);
                i
            },
            || {
                // Until another thread has started, or a generous while.
                for _ in 0..2_000 {
                    if started.load(Ordering::Relaxed) > 0 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                (started.load(Ordering::Relaxed), 2 * SPLIT_FROM_ITEMS)
            },
        );
        assert!(seen > 0, "no item was started while deciding");
        assert_eq!(items.len(), 2 * SPLIT_FROM_ITEMS);
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

    /// True (with a note) where a long span still gets one thread: nothing runs elsewhere.
    fn one_core() -> bool {
        let one = threads_for(2 * SPLIT_FROM_ITEMS) < 2;
        if one {
            eprintln!("one core: nothing runs on another thread");
        }
        one
    }

    /// Work for a test range: the calling thread waits (up to 10 s) until another thread has
    /// taken a range, so both surely take one however the threads are scheduled.
    fn after_another_thread(caller: std::thread::ThreadId, other_ran: &AtomicBool) {
        if std::thread::current().id() != caller {
            other_ran.store(true, Ordering::SeqCst);
            return;
        }
        let waited = std::time::Instant::now();
        while !other_ran.load(Ordering::SeqCst) && waited.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_panic_on_another_thread_reaches_the_caller() {
        if one_core() {
            return;
        }
        let (caller, other_ran) = (std::thread::current().id(), AtomicBool::new(false));
        let caught = std::panic::catch_unwind(|| {
            in_ranges(2 * SPLIT_FROM_ITEMS, |r| {
                after_another_thread(caller, &other_ran);
                assert!(std::thread::current().id() == caller, "range {r:?}");
            })
        });
        assert!(other_ran.load(Ordering::SeqCst));
        // The helper's own panic, not a generic one about a scoped thread.
        let payload = caught.expect_err("the helper's range panicked");
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        assert!(message.contains("range"), "{message:?}");
    }

    /// A helper still working long after the caller is done (past the spinning and the
    /// yielding) is waited for, and its ranges come back with the caller's.
    #[test]
    fn a_helper_slower_than_the_wait_spins_still_hands_back_its_ranges() {
        if one_core() {
            return;
        }
        let (caller, other_ran) = (std::thread::current().id(), AtomicBool::new(false));
        let len = 2 * SPLIT_FROM_ITEMS;
        let ranges = in_ranges(len, |r| {
            if std::thread::current().id() != caller && !other_ran.swap(true, Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r
        });
        let covered: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
        assert_eq!(covered, (0..len).collect::<Vec<_>>());
    }

    /// The threads take shards as they come free: while a helper is held up in its first
    /// shard, the caller takes all the others (with one fixed shard per thread it would have
    /// waited, holding half).
    #[test]
    fn a_held_up_helper_leaves_its_shards_to_the_caller() {
        if one_core() {
            return;
        }
        let caller = std::thread::current().id();
        let helper_started = AtomicBool::new(false);
        let worked_by = in_shards(2 * SPLIT_FROM_ITEMS, |_, _| {
            let here = std::thread::current().id();
            if here != caller {
                helper_started.store(true, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            here
        });
        let by_caller = worked_by.iter().filter(|&&t| t == caller).count();
        let held_up = usize::from(helper_started.load(Ordering::SeqCst));
        assert!(worked_by.len() > 2, "{} shards", worked_by.len());
        assert!(
            by_caller >= worked_by.len() - held_up * (threads_for(2 * SPLIT_FROM_ITEMS) - 1),
            "the caller took {by_caller} of {} shards",
            worked_by.len()
        );
    }

    #[test]
    fn every_thread_takes_ranges() {
        if one_core() {
            return;
        }
        // Each side waits on its first range until the other has taken one: waiting on the
        // caller's side only let the other thread take every range while the caller had not
        // yet reached its first (seen once under CI load).
        let caller = std::thread::current().id();
        let (caller_ran, other_ran) = (AtomicBool::new(false), AtomicBool::new(false));
        let threads = in_ranges(2 * SPLIT_FROM_ITEMS, |_| {
            let (mine, theirs) = if std::thread::current().id() == caller {
                (&caller_ran, &other_ran)
            } else {
                (&other_ran, &caller_ran)
            };
            mine.store(true, Ordering::SeqCst);
            let waited = std::time::Instant::now();
            while !theirs.load(Ordering::SeqCst) && waited.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            std::thread::current().id()
        });
        let distinct: std::collections::HashSet<_> = threads.iter().collect();
        assert!(distinct.len() >= 2, "{threads:?}");
    }
}
