//! The threads that work beside the caller in a split: a small pool kept for the process,
//! whose workers stay awake for a while after each split, so the next split of the same pass
//! finds them running.
//!
//! Why not a fresh scoped thread per split (stops 32–47): on the 2-vCPU VM the project is
//! measured on, starting one blocked the caller 25–60 µs in `clone` and the thread began
//! 45–90 µs after it was asked, a dozen times in a 10,000-message pass. Why not rayon's
//! parallel iterators (tried at stop 32): a thread outside the pool that calls them hands all
//! the work to the pool and sleeps, and a parked worker woke too late to take much. Here the
//! caller keeps working its share (`rayon::ThreadPool::in_place_scope`), and after a split
//! the workers spin (yielding their core to anything else runnable) for [`STAY_AWAKE_FOR`]
//! before they park: a split of 400 µs of work cost 35–50 µs more than half of it with fresh
//! threads, 21–31 µs with parked workers, 3 µs with workers kept awake (`/tmp` scratch
//! measurement, issue #17 stop 48).
//!
//! A split started inside another split's work, or on any rayon worker (the trajectory
//! pipeline's), gets scoped threads instead: the pool's workers may be the ones busy with the
//! outer split, which would then be waited for.

use std::cell::Cell;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a worker stays awake after a split, for the next one: longer than the serial
/// stretches between a pass's splits (up to ~0.5 ms on `synth_10k`).
const STAY_AWAKE_FOR: Duration = Duration::from_millis(1);

/// How long the caller spins for its helpers before it yields its core between looks.
const SPIN_FOR: Duration = Duration::from_micros(50);

/// How long the caller looks before it sleeps between looks.
const YIELD_FOR: Duration = Duration::from_millis(2);

/// The pool: one worker fewer than the threads a split uses (the caller is one of them).
/// `None` on one core, or if the threads could not be started.
static POOL: LazyLock<Option<rayon::ThreadPool>> = LazyLock::new(|| {
    let workers = super::cores().saturating_sub(1);
    if workers == 0 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("baton-split-{i}"))
        .build()
        .ok()
});

/// Helpers' jobs handed to the pool and not yet started: a worker staying awake stops as
/// soon as one is waiting.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Workers staying awake now (or asked to): the pool is asked again only when none is, so
/// the requests of concurrent callers do not queue up behind each other.
static AWAKE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread is the caller of a split now.
    static SPLITTING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `helper` on `helpers` other threads while this thread runs `caller`, and returns what
/// `caller` returned once every helper has returned too. `helper` must not panic (the split
/// catches its work's panics and hands them back); if it does, the panic is raised here.
pub(super) fn alongside<T>(
    helpers: usize,
    helper: &(dyn Fn() + Sync),
    caller: impl FnOnce() -> T,
) -> T {
    let returned = AtomicUsize::new(0);
    let run_helper = || {
        let _counted = Counted(&returned);
        helper();
    };
    let splitting = Splitting::enter();
    let pool = POOL
        .as_ref()
        .filter(|_| !splitting.nested && rayon::current_thread_index().is_none())
        .and_then(|pool| Reserved::workers(pool, helpers).map(|reserved| (pool, reserved)));
    match pool {
        Some((pool, reserved)) => {
            let out = pool.in_place_scope(|scope| {
                for _ in 0..helpers {
                    WAITING.fetch_add(1, Ordering::SeqCst);
                    scope.spawn(|_| {
                        WAITING.fetch_sub(1, Ordering::SeqCst);
                        run_helper();
                    });
                }
                let out = caller();
                wait_until_returned(&returned, helpers);
                out
            });
            drop(reserved);
            keep_awake(pool);
            out
        }
        None => std::thread::scope(|scope| {
            for _ in 0..helpers {
                scope.spawn(run_helper);
            }
            let out = caller();
            wait_until_returned(&returned, helpers);
            out
            // A helper that has returned is not joined: its thread ends on its own, and the
            // scope waits only for its closure (joining waited 30–40 µs for the thread's exit).
        }),
    }
}

/// Helpers' jobs on the pool's workers now, counted from before they are handed over to
/// the end of their split: a split whose helpers would wait for a worker busy with another
/// caller's split (a service compacting several sessions at once) gets scoped threads
/// instead, since its caller would otherwise wait for that split to end.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// `helpers` of the pool's workers taken for one split, given back when it is dropped: once
/// the split's scope has ended (its jobs are done), or as the split unwinds.
struct Reserved {
    helpers: usize,
}

impl Reserved {
    /// `helpers` workers, if that many are free.
    fn workers(pool: &rayon::ThreadPool, helpers: usize) -> Option<Self> {
        let before = IN_FLIGHT.fetch_add(helpers, Ordering::SeqCst);
        if before + helpers > pool.current_num_threads() {
            IN_FLIGHT.fetch_sub(helpers, Ordering::SeqCst);
            return None;
        }
        Some(Reserved { helpers })
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.helpers, Ordering::SeqCst);
    }
}

/// Counts a helper as returned when it is dropped, whether the helper returned or panicked.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Marks this thread as a split's caller while it lives, and says whether it already was.
struct Splitting {
    nested: bool,
}

impl Splitting {
    fn enter() -> Self {
        Splitting {
            nested: SPLITTING.with(|s| s.replace(true)),
        }
    }
}

impl Drop for Splitting {
    fn drop(&mut self) {
        SPLITTING.with(|s| s.set(self.nested));
    }
}

/// Returns once `returned` counts `helpers`. The caller has no work left meanwhile and the
/// helpers usually return within microseconds of it (the ranges are balanced), so it spins
/// first: a caller asleep woke 30–40 µs after the helper was done. Past [`SPIN_FOR`] it
/// yields its core between looks, in case a helper waits for one; past [`YIELD_FOR`] it
/// sleeps between looks.
fn wait_until_returned(returned: &AtomicUsize, helpers: usize) {
    let started = Instant::now();
    let mut waited = Duration::ZERO;
    let mut looks = 0_u32;
    while returned.load(Ordering::Acquire) < helpers {
        looks = looks.wrapping_add(1);
        // The clock is read every 64 looks: reading it costs more than a look.
        if looks.is_multiple_of(64) {
            waited = started.elapsed();
        }
        if waited < SPIN_FOR {
            std::hint::spin_loop();
        } else if waited < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// Asks every worker of `pool` to stay awake for [`STAY_AWAKE_FOR`] (unless some already
/// are), stopping as soon as a helper's job waits.
fn keep_awake(pool: &rayon::ThreadPool) {
    let workers = pool.current_num_threads();
    if AWAKE
        .compare_exchange(0, workers, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    pool.spawn_broadcast(|_| {
        stay_awake(&WAITING, STAY_AWAKE_FOR);
        AWAKE.fetch_sub(1, Ordering::SeqCst);
    });
}

/// Looks for a job counted in `waiting` until one is or `awake_for` has passed, yielding the
/// core at every look so that anything else runnable on it runs.
fn stay_awake(waiting: &AtomicUsize, awake_for: Duration) {
    let since = Instant::now();
    let mut looks = 0_u32;
    while waiting.load(Ordering::SeqCst) == 0 {
        looks = looks.wrapping_add(1);
        if looks.is_multiple_of(64) && since.elapsed() >= awake_for {
            return;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::{SPLIT_FROM_ITEMS, in_ranges};
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// On more than one core a split's helpers are the pool's workers, not fresh threads.
    #[test]
    fn a_split_is_helped_by_the_pools_workers() {
        let Some(pool) = POOL.as_ref() else {
            println!("one core: no pool, nothing runs on another thread");
            return;
        };
        let on_worker = AtomicBool::new(false);
        let since = Instant::now();
        // Tried again while the pool is busy with another test's split (this split then gets
        // fresh threads); in each try the ranges wait a while for a worker to take one.
        while !on_worker.load(Ordering::SeqCst) && since.elapsed().as_secs() < 20 {
            let tried = Instant::now();
            in_ranges(2 * SPLIT_FROM_ITEMS, |_| {
                if rayon::current_thread_index().is_some() {
                    on_worker.store(true, Ordering::SeqCst);
                    assert!(
                        std::thread::current()
                            .name()
                            .is_some_and(|n| n.starts_with("baton-split-"))
                    );
                }
                while !on_worker.load(Ordering::SeqCst) && tried.elapsed().as_millis() < 50 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
        }
        assert!(on_worker.load(Ordering::SeqCst));
        assert!(pool.current_num_threads() >= 1);
    }

    /// A split inside a split's work (on the caller and on a helper) is worked whole: it gets
    /// threads of its own rather than waiting for the pool's workers, which may be the ones
    /// busy with the outer split.
    #[test]
    fn a_split_inside_a_split_covers_its_items() {
        let len = 2 * SPLIT_FROM_ITEMS + 3;
        let outer = in_ranges(len, |range| {
            let inner = in_ranges(len, |r| r);
            let covered: Vec<usize> = inner.into_iter().flatten().collect();
            assert_eq!(covered, (0..len).collect::<Vec<_>>());
            range
        });
        let covered: Vec<usize> = outer.into_iter().flatten().collect();
        assert_eq!(covered, (0..len).collect::<Vec<_>>());
    }

    /// A worker kept awake gives its core back by itself once its while has passed, and at
    /// once when a job waits.
    #[test]
    fn staying_awake_ends_by_itself_and_when_a_job_waits() {
        let none_waiting = AtomicUsize::new(0);
        let since = Instant::now();
        stay_awake(&none_waiting, Duration::from_millis(20));
        let stayed = since.elapsed();
        assert!(
            stayed >= Duration::from_millis(20) && stayed < Duration::from_secs(5),
            "{stayed:?}"
        );

        let one_waiting = AtomicUsize::new(1);
        let since = Instant::now();
        stay_awake(&one_waiting, Duration::from_secs(30));
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "{:?}",
            since.elapsed()
        );
    }

    /// While another caller's split holds the pool's workers, a split does not wait for
    /// them: its helpers are fresh threads, and it ends long before the other split does.
    #[test]
    fn a_split_does_not_wait_for_workers_busy_with_another_callers_split() {
        if POOL.is_none() {
            println!("one core: no pool to be busy");
            return;
        }
        let holding = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // Again while another test's split holds the pool (this one then gets a
                // fresh thread, which holds nothing).
                let since = Instant::now();
                while !holding.load(Ordering::SeqCst) && since.elapsed().as_secs() < 10 {
                    alongside(
                        1,
                        &|| {
                            if rayon::current_thread_index().is_some() {
                                holding.store(true, Ordering::SeqCst);
                                std::thread::sleep(Duration::from_millis(600));
                            }
                        },
                        || (),
                    );
                }
            });
            let since = Instant::now();
            while !holding.load(Ordering::SeqCst) && since.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let since = Instant::now();
            let covered: Vec<usize> = in_ranges(2 * SPLIT_FROM_ITEMS, |r| r)
                .into_iter()
                .flatten()
                .collect();
            let took = since.elapsed();
            assert_eq!(covered.len(), 2 * SPLIT_FROM_ITEMS);
            if holding.load(Ordering::SeqCst) {
                assert!(took < Duration::from_millis(300), "{took:?}");
            }
        });
    }

    /// A helper that panics is still counted as returned, so the caller does not wait forever;
    /// its panic reaches the caller.
    #[test]
    fn a_panicking_helper_is_counted_and_its_panic_raised() {
        if POOL.is_none() {
            println!("one core: no helper to panic");
            return;
        }
        let caught =
            std::panic::catch_unwind(|| alongside(1, &|| panic!("helper bug"), || "caller done"));
        assert!(caught.is_err());
    }
}
