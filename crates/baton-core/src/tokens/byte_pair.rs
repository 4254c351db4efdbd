//! Byte-pair merging of one pre-tokenized piece, counting the tokens it becomes.
//!
//! The algorithm is tiktoken's (MIT licence; `vendor_tiktoken.rs` in tiktoken-rs), written
//! against our own rank table ([`super::o200k_ranks`]) and reduced to counting: repeatedly
//! merge the adjacent pair whose concatenation has the lowest rank, leftmost first, until no
//! adjacent pair is a token. Short pieces use tiktoken's quadratic scan over a fixed array (no
//! allocation; pieces are short and the array stays in cache); from [`LONG_PIECE`] bytes on,
//! its heap-based merge, so a 10 MB run of spaces costs n log n, not n². Both give tiktoken's
//! counts exactly (tests below and `tests/o200k_exact.rs`).

use super::o200k_ranks::Ranks;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use tiktoken_rs::Rank;

/// Pieces this long or longer take the heap-based merge, as in tiktoken.
pub(super) const LONG_PIECE: usize = 100;

/// Tokens `piece` (not empty) merges into.
pub(super) fn token_count(piece: &[u8], ranks: &Ranks) -> usize {
    match piece.len() {
        0 => 0,
        1 => 1,
        n if n < LONG_PIECE => short_merge_count(piece, ranks),
        _ => long_merge_count(piece, ranks),
    }
}

/// tiktoken's `_byte_pair_merge`: `parts[i]` is a part's start and the rank of it merged with
/// the next part (`Rank::MAX` if that is no token); the final entry marks the piece's end.
fn short_merge_count(piece: &[u8], ranks: &Ranks) -> usize {
    let rank_of = |bytes: &[u8]| ranks.rank(bytes).unwrap_or(Rank::MAX);
    let mut parts = [(0usize, Rank::MAX); LONG_PIECE + 1];
    let mut len = piece.len() + 1;
    for (i, part) in parts.iter_mut().enumerate().take(piece.len() - 1) {
        *part = (i, rank_of(&piece[i..i + 2]));
    }
    parts[piece.len() - 1] = (piece.len() - 1, Rank::MAX);
    parts[piece.len()] = (piece.len(), Rank::MAX);
    // The rank of part `i` merged with part `i + 1`, before part `i + 1` is itself merged
    // into part `i` (hence `i + 3`: the old `i + 1` is still in the array).
    let merged_rank = |parts: &[(usize, Rank)], len: usize, i: usize| {
        if i + 3 < len {
            rank_of(&piece[parts[i].0..parts[i + 3].0])
        } else {
            Rank::MAX
        }
    };
    loop {
        // The leftmost of the lowest-ranked merges, if any.
        let mut lowest = (Rank::MAX, 0);
        for (i, &(_, rank)) in parts[..len - 1].iter().enumerate() {
            if rank < lowest.0 {
                lowest = (rank, i);
            }
        }
        let (rank, i) = lowest;
        if rank == Rank::MAX {
            break;
        }
        if i > 0 {
            parts[i - 1].1 = merged_rank(&parts, len, i - 1);
        }
        parts[i].1 = merged_rank(&parts, len, i);
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
    }
    len - 1
}

/// A candidate merge: the part starting at `start` with the part after it.
#[derive(PartialEq, Eq)]
struct Merge {
    start: usize,
    rank: Rank,
}

impl Ord for Merge {
    /// Lowest rank first, then leftmost: `BinaryHeap` pops the greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.start.cmp(&self.start))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One part of a long piece, indexed by where it starts.
struct Part {
    /// Start of the part before (`usize::MAX` for the first).
    prev: usize,
    /// End of this part.
    end: usize,
    /// End of the part after it.
    next_end: usize,
    /// Rank of this part merged with the next; `Rank::MAX` if none or invalidated.
    next_rank: Rank,
}

/// tiktoken's `_byte_pair_merge_large`, counting the parts left.
fn long_merge_count(piece: &[u8], ranks: &Ranks) -> usize {
    let mut parts: Vec<Part> = (0..piece.len())
        .map(|i| Part {
            prev: i.checked_sub(1).unwrap_or(usize::MAX),
            end: i + 1,
            next_end: i + 2,
            next_rank: Rank::MAX,
        })
        .collect();
    let mut heap = BinaryHeap::with_capacity(piece.len());
    for i in 0..piece.len() - 1 {
        if let Some(rank) = ranks.rank(&piece[i..i + 2]) {
            heap.push(Merge { start: i, rank });
            parts[i].next_rank = rank;
        }
    }
    // Makes the part at `start` end its candidate merge at `next_end`, queuing it if a token.
    let requeue = |parts: &mut Vec<Part>, heap: &mut BinaryHeap<Merge>, start: usize, next_end| {
        parts[start].next_end = next_end;
        parts[start].next_rank = Rank::MAX;
        if let Some(rank) = piece.get(start..next_end).and_then(|pair| ranks.rank(pair)) {
            heap.push(Merge { start, rank });
            parts[start].next_rank = rank;
        }
    };
    let mut count = piece.len();
    while let Some(left) = heap.pop() {
        if left.rank != parts[left.start].next_rank {
            continue; // superseded by a later merge
        }
        let left_start = left.start;
        let right_start = parts[left_start].end;
        let right_end = parts[left_start].next_end;
        let right_next_end = parts[right_start].next_end;
        parts[left_start].end = right_end;
        requeue(&mut parts, &mut heap, left_start, right_next_end);
        if right_end < parts.len() {
            parts[right_end].prev = left_start;
        }
        if left_start > 0 {
            let prev_start = parts[left_start].prev;
            requeue(&mut parts, &mut heap, prev_start, right_end);
        }
        parts[right_start].next_rank = Rank::MAX;
        count -= 1;
    }
    count
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// tiktoken-rs's count of one piece, through its own merge.
    fn tiktoken_count(piece: &str) -> usize {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(piece)
            .len()
    }

    #[test]
    fn pieces_merge_into_tiktokens_count() {
        let ranks = Ranks::get();
        for piece in [
            "a",
            "ab",
            " the",
            " internationalization",
            "zqxjvzqxjv",
            "用户配置",
            "😀😀",
            "\u{a0}\u{a0}",
        ] {
            assert_eq!(
                token_count(piece.as_bytes(), ranks),
                tiktoken_count(piece),
                "{piece:?}"
            );
        }
    }

    #[test]
    fn long_pieces_merge_into_tiktokens_count_in_n_log_n() {
        let ranks = Ranks::get();
        for piece in [
            " ".repeat(100),
            " ".repeat(1_001),
            "\u{3000}".repeat(77),
            "abcdefghij".repeat(12),
            "用户".repeat(40),
        ] {
            assert!(piece.len() >= LONG_PIECE);
            // tiktoken's pattern keeps each of these whole (whitespace at the end of the
            // text, a run of small letters or of CJK), so its count is this piece's merge.
            assert_eq!(
                token_count(piece.as_bytes(), ranks),
                tiktoken_count(&piece),
                "{piece:?}"
            );
        }
        // A 10 MB run is counted (it would be 10^14 steps quadratically).
        assert!(token_count(" ".repeat(10_000_000).as_bytes(), ranks) > 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        #[test]
        fn both_merges_agree_with_each_other(bytes in proptest::collection::vec(
            proptest::sample::select(b"ab \xe7\x94\xa8".to_vec()), 2..LONG_PIECE
        )) {
            let ranks = Ranks::get();
            proptest::prop_assert_eq!(
                short_merge_count(&bytes, ranks),
                long_merge_count(&bytes, ranks)
            );
        }
    }
}
