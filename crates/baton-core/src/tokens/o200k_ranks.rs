//! o200k_base's merge ranks: every token's bytes and rank, embedded in the binary.
//!
//! Why a table of our own: the ranks are needed before the first count, and getting them out
//! of tiktoken-rs meant building a whole `CoreBPE` (parsing 200,000 base64 lines, compiling
//! its pattern, sorting its tokens) and decoding every rank back from it, about 0.3 s of CPU
//! on the first count of every process (`perf record` of `baton trajectories compress`, where
//! it also held up both counting threads). `o200k_base.ranks` is tiktoken-rs's own table in a
//! form that loads in milliseconds: for rank 0, 1, 2, … one length byte, then that token's
//! bytes. The test below checks it against tiktoken-rs rank by rank and regenerates it with
//! `BATON_WRITE_O200K_RANKS=1`.
//!
//! Lookups are the hot path of counting (every piece, every pair of the merge), so a token of
//! up to 15 bytes (97% of them, and nearly every lookup) is keyed by its bytes packed into a
//! `u128`: one probe and no pointer to chase. Longer tokens are keyed by a slice of the
//! embedded table, which needs no allocation.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;
use tiktoken_rs::Rank;

/// For each rank from 0: the token's length in bytes (1..=128), then its bytes.
static TABLE: &[u8] = include_bytes!("o200k_base.ranks");

/// Longest token keyed by a `u64` (the 8th byte holds the length).
const TINY: usize = 7;

/// Longest token keyed by a `u128` (the 16th byte holds the length).
const SHORT: usize = 15;

/// o200k_base's ordinary tokens (special tokens are not merged into: they never occur in a
/// piece the pre-tokenizer yields), in three maps by length so that the one nearly every
/// lookup reads (tokens of up to 7 bytes: two thirds of them, and most words with their
/// leading space) has 16-byte entries: half the cache footprint of `u128` keys.
pub(super) struct Ranks {
    tiny: FxHashMap<u64, Rank>,
    short: FxHashMap<u128, Rank>,
    long: FxHashMap<&'static [u8], Rank>,
}

impl Ranks {
    /// The process-wide table, loaded on first use.
    pub(super) fn get() -> &'static Ranks {
        static RANKS: OnceLock<Ranks> = OnceLock::new();
        RANKS.get_or_init(|| Ranks::load(TABLE))
    }

    fn load(table: &'static [u8]) -> Ranks {
        // Each map is sized for its tokens before the first insert (one pass over the length
        // bytes). Grown from empty, the maps rehashed every entry at each doubling: that was
        // 58% of `baton tokens` on a one-message file (`perf record`); that run went from
        // 19.2 to 13.6 ms (non-LTO builds, alternating; issue #17 item 5).
        let (mut tiny, mut short, mut long) = (0, 0, 0);
        for token in tokens(table) {
            match token.len() {
                0..=TINY => tiny += 1,
                n if n <= SHORT => short += 1,
                _ => long += 1,
            }
        }
        let mut ranks = Ranks {
            tiny: FxHashMap::with_capacity_and_hasher(tiny, Default::default()),
            short: FxHashMap::with_capacity_and_hasher(short, Default::default()),
            long: FxHashMap::with_capacity_and_hasher(long, Default::default()),
        };
        for (rank, token) in (0..).zip(tokens(table)) {
            match token.len() {
                0..=TINY => ranks.tiny.insert(tiny_key(token), rank),
                n if n <= SHORT => ranks.short.insert(short_key(token), rank),
                _ => ranks.long.insert(token, rank),
            };
        }
        ranks
    }

    /// The rank of the token spelled `bytes`, if it is one.
    #[inline]
    pub(super) fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        match bytes.len() {
            0..=TINY => self.tiny.get(&tiny_key(bytes)),
            n if n <= SHORT => self.short.get(&short_key(bytes)),
            _ => self.long.get(bytes),
        }
        .copied()
    }
}

/// The tokens of `table` in rank order. A truncated last entry ends the list (the embedded
/// table has none: the test reads every rank back).
fn tokens(table: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let len = usize::from(*table.get(at)?);
        let token = table.get(at + 1..at + 1 + len)?;
        at += 1 + len;
        Some(token)
    })
}

/// `bytes` (at most [`TINY`] of them) and their length in one integer: distinct for
/// distinct byte strings, zero bytes included. Built from overlapping loads rather than a
/// copy into a buffer, whose variable-length store the load of the key would stall on.
#[inline]
fn tiny_key(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let packed = match n {
        0 => 0,
        1..=3 => {
            // First, middle and last byte: together every byte of a 1–3 byte string.
            u64::from(bytes[0])
                | u64::from(bytes[n / 2]) << (8 * (n / 2))
                | u64::from(bytes[n - 1]) << (8 * (n - 1))
        }
        _ => u64::from(le_u32(&bytes[..4])) | u64::from(le_u32(&bytes[n - 4..])) << (8 * (n - 4)),
    };
    packed | (n as u64) << 56
}

/// As [`tiny_key`], for 8 to [`SHORT`] bytes.
#[inline]
fn short_key(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    let packed =
        u128::from(le_u64(&bytes[..8])) | u128::from(le_u64(&bytes[n - 8..])) << (8 * (n - 8));
    packed | (n as u128) << 120
}

/// The first 4 bytes of `bytes` as a little-endian integer.
#[inline]
fn le_u32(bytes: &[u8]) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(b)
}

/// The first 8 bytes of `bytes` as a little-endian integer.
#[inline]
fn le_u64(bytes: &[u8]) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// tiktoken-rs's o200k_base tokens by rank, in the embedded table's layout.
    fn tiktoken_table() -> Vec<u8> {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let mut out = Vec::new();
        let mut rank: Rank = 0;
        while let Ok(bytes) = bpe.decode_bytes(&[rank]) {
            // Special tokens start after the ordinary ones, past a gap.
            if bytes.starts_with(b"<|") && bytes.ends_with(b"|>") && rank >= 199_990 {
                break;
            }
            out.push(u8::try_from(bytes.len()).unwrap());
            out.extend_from_slice(&bytes);
            rank += 1;
        }
        out
    }

    #[test]
    fn the_embedded_table_is_tiktoken_rs_o200k_base() {
        let expected = tiktoken_table();
        if std::env::var_os("BATON_WRITE_O200K_RANKS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tokens/o200k_base.ranks");
            std::fs::write(path, &expected).unwrap();
        }
        assert_eq!(tokens(&expected).count(), 199_998);
        assert!(TABLE == expected.as_slice(), "o200k_base.ranks differs");
    }

    #[test]
    fn every_token_is_found_at_its_rank_and_non_tokens_are_not() {
        let ranks = Ranks::get();
        for (rank, token) in (0..).zip(tokens(TABLE)) {
            assert_eq!(ranks.rank(token), Some(rank), "{token:?}");
        }
        assert_eq!(ranks.rank(b""), None);
        assert_eq!(ranks.rank(b"zqxjv"), None);
        assert_eq!(ranks.rank(b"\xff\xfe\xfd"), None);
        assert_eq!(ranks.rank(b"zqxjzqxjzqxjzqxjzqxj"), None);
        // Zero bytes are bytes: packing tells `\0` from `\0\0` by length.
        assert_eq!(ranks.rank(b"\0"), Some(188));
        assert_eq!(ranks.rank(b"\0\0"), Some(156_344));
        assert_eq!(ranks.rank(b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"), None);
    }

    proptest::proptest! {
        #[test]
        fn keys_are_distinct_for_distinct_byte_strings(
            a in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0xff]), 0..=SHORT),
            b in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0xff]), 0..=SHORT),
        ) {
            let key = |s: &[u8]| if s.len() <= TINY { u128::from(tiny_key(s)) } else { short_key(s) };
            let same_map = (a.len() <= TINY) == (b.len() <= TINY);
            if same_map {
                proptest::prop_assert_eq!(key(&a) == key(&b), a == b);
            }
        }
    }
}
