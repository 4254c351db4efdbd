//! A tiny xorshift generator for retry jitter and session-id suffixes. Not cryptographic; it
//! only has to differ between threads and processes, which seeding from the clock, the pid and
//! std's per-process random hasher keys achieves without a `rand` dependency.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(nanos);
    h.write_u32(std::process::id());
    h.write_u64(format!("{:?}", std::thread::current().id()).len() as u64);
    let s = h.finish() ^ nanos.rotate_left(17) ^ (u64::from(std::process::id()) << 32);
    if s == 0 { 0x9E37_79B9_7F4A_7C15 } else { s }
}

/// Next pseudo-random value (xorshift64).
pub(crate) fn next_u64() -> u64 {
    STATE.with(|cell| {
        let mut x = cell.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        cell.set(x);
        x
    })
}

/// A value in `lo..=hi`.
pub(crate) fn in_range(lo: u64, hi: u64) -> u64 {
    lo + next_u64() % (hi - lo + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_in_range_and_vary() {
        let vals: Vec<u64> = (0..200).map(|_| in_range(20, 150)).collect();
        assert!(vals.iter().all(|v| (20..=150).contains(v)));
        assert!(vals.iter().any(|v| *v != vals[0]));
    }
}
