//! For each item of a long list, the first item equal to it: keys taken and hashed on several
//! threads, grouped on one.
//!
//! A long session's equal items sit far apart (its requests, its questions asked again), so
//! a thread's range holds few of them. Each item's key and hash are taken in ranges on
//! several threads (`split_work::in_ranges`); the calling thread groups them by hash, an item
//! compared only with the first its hash found (a collision leaves the item its own first).

use crate::split_work::in_ranges;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::{BuildHasher, Hash};

/// For each of the `len` items, the first item whose key equals its own (itself when none
/// before has it); `None` for an item `key` gives none, which equals nothing.
pub(super) fn first_equal<K: Hash + Eq + Send>(
    len: usize,
    key: impl Fn(usize) -> Option<K> + Sync,
) -> Vec<Option<usize>> {
    let keyed: Vec<Option<(K, u64)>> = in_ranges(len, |range| {
        range
            .map(|k| {
                key(k).map(|key| {
                    let hash = FxBuildHasher.hash_one(&key);
                    (key, hash)
                })
            })
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    let mut first: FxHashMap<u64, usize> = FxHashMap::default();
    first.reserve(len);
    keyed
        .iter()
        .enumerate()
        .map(|(k, keyed_k)| {
            let (key, hash) = keyed_k.as_ref()?;
            let f = *first.entry(*hash).or_insert(k);
            // An item's first is itself: compared only when the hash found another.
            let same = f == k || keyed[f].as_ref().is_some_and(|(kf, _)| kf == key);
            Some(if same { f } else { k })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a list long enough to be keyed on several threads, each item's first is the first
    /// equal one, as a scan of the items before it finds; left-out items have none.
    #[test]
    fn each_item_gets_the_first_equal_one() {
        let n = 3 * crate::split_work::SPLIT_FROM_ITEMS + 11;
        let items: Vec<String> = (0..n).map(|i| format!("item {}", (i * 7) % 101)).collect();
        let leave_out = |k: usize| k % 13 == 5;
        let found = first_equal(n, |k| (!leave_out(k)).then(|| items[k].as_str()));
        for (k, f) in found.iter().enumerate() {
            let expected = (!leave_out(k))
                .then(|| (0..=k).find(|&j| !leave_out(j) && items[j] == items[k]))
                .flatten();
            assert_eq!(*f, expected, "item {k}");
        }
        assert!(
            found
                .iter()
                .enumerate()
                .any(|(k, f)| f.is_some_and(|f| f != k))
        );
    }
}
