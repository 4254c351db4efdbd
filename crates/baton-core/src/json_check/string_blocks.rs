//! Where a JSON string ends, found 64 bytes at a time: its quotes, backslashes and control
//! bytes as three bit masks (SSE2 compares), and the characters its escapes cover worked out
//! from the backslash mask with carries, the way simdjson does.
//!
//! Written code is most of a long call's arguments (an edit's old and new text, a written
//! file), and it has an escape on every line: the escape-by-escape search stopped at each one
//! (`memchr` for the next quote or backslash, then the escape read), 7–9% of a real session's
//! compaction (`perf record`, real1, issue #17). Here a block costs the same whatever it
//! holds, and only each escape's character is looked at on its own.

use super::{Unsure, escape_at};
use safe_arch::{
    cmp_eq_mask_i8_m128i, load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i,
    set_splat_i8_m128i,
};

/// Bytes read together: one bit of a `u64` mask each.
const BLOCK: usize = 64;

/// The closing quote of the JSON string whose text goes on at `from`, the text checked as
/// [`super::checked_string_end`] checks it: no raw control byte, every escape well formed, a
/// surrogate escape left to serde_json. Past the end of `src` the masks read as control
/// bytes ([`masks_at`]): a string that does not close before the end fails as it should.
pub(super) fn string_end(src: &[u8], from: usize) -> Result<usize, Unsure> {
    let mut at = from;
    // Whether the block's first byte is escaped by a backslash that ended the last block.
    let mut carried = false;
    while at < src.len() {
        let masks = masks_at(src, at);
        let escaped = escaped_bits(masks.backslashes, &mut carried);
        let closing = masks.quotes & !escaped;
        // The bits before the closing quote, or the whole block when it has none.
        let inside = if closing == 0 {
            u64::MAX
        } else {
            (closing & closing.wrapping_neg()) - 1
        };
        if masks.controls & inside != 0 {
            return Err(Unsure);
        }
        let mut escapes = escaped & inside;
        while escapes != 0 {
            let i = escapes.trailing_zeros() as usize;
            check_escape(src, at + i)?;
            escapes &= escapes - 1;
        }
        if closing != 0 {
            return Ok(at + closing.trailing_zeros() as usize);
        }
        at += BLOCK;
    }
    Err(Unsure)
}

/// The masks of the 64 bytes from `at`, with no bits past the end of `src` but control bits
/// (as if zero bytes followed: a string that has not closed by then fails as it should). The
/// last bytes of a text of at least a block are read as the block that ends with them, its
/// masks shifted down to start at `at`: a short string value (a path, a command) sits near
/// the end of its arguments, and filling a padded copy for it was most of its cost.
fn masks_at(src: &[u8], at: usize) -> Masks {
    if let Some(whole) = src
        .get(at..at + BLOCK)
        .and_then(|b| <&[u8; BLOCK]>::try_from(b).ok())
    {
        return Masks::of(whole);
    }
    let rest = src.get(at..).unwrap_or_default();
    let last = src
        .len()
        .checked_sub(BLOCK)
        .and_then(|from| <&[u8; BLOCK]>::try_from(&src[from..]).ok());
    match last {
        // The last block holds `rest` at its end.
        Some(last) => Masks::of(last).shifted_down(BLOCK - rest.len()),
        None => {
            let mut padded = [0u8; BLOCK];
            padded[..rest.len()].copy_from_slice(rest);
            Masks::of(&padded)
        }
    }
}

/// The character at `at` follows an escaping backslash: one of JSON's escapes, `\u` with four
/// hex digits that are not a surrogate (left to serde_json, as [`escape_at`] leaves it).
fn check_escape(src: &[u8], at: usize) -> Result<(), Unsure> {
    match src.get(at).ok_or(Unsure)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(()),
        b'u' => escape_at(src, at - 1).map(|_| ()),
        _ => Err(Unsure),
    }
}

/// A block's quotes, backslashes and control bytes (below 0x20), bit `i` for byte `i`.
struct Masks {
    quotes: u64,
    backslashes: u64,
    controls: u64,
}

impl Masks {
    fn of(block: &[u8; BLOCK]) -> Self {
        let quote = set_splat_i8_m128i(b'"' as i8);
        let backslash = set_splat_i8_m128i(b'\\' as i8);
        let highest_control = set_splat_i8_m128i(0x1F);
        let bits = |lanes| u64::from(move_mask_i8_m128i(lanes) as u16);
        let mut masks = Masks {
            quotes: 0,
            backslashes: 0,
            controls: 0,
        };
        for (k, lane) in block.chunks_exact(16).enumerate() {
            let Ok(lane) = <&[u8; 16]>::try_from(lane) else {
                continue;
            };
            let v = load_unaligned_m128i(lane);
            let shift = 16 * k;
            masks.quotes |= bits(cmp_eq_mask_i8_m128i(v, quote)) << shift;
            masks.backslashes |= bits(cmp_eq_mask_i8_m128i(v, backslash)) << shift;
            // A byte is a control byte when the unsigned minimum with 0x1F leaves it as it is.
            masks.controls |=
                bits(cmp_eq_mask_i8_m128i(min_u8_m128i(v, highest_control), v)) << shift;
        }
        masks
    }

    /// The masks of the bytes from `by` on, with no bits past the block's end: the control
    /// bit a zero byte there would have is set, as for a padded copy.
    fn shifted_down(&self, by: usize) -> Self {
        let past_end = !(u64::MAX >> by);
        Masks {
            quotes: self.quotes >> by,
            backslashes: self.backslashes >> by,
            controls: (self.controls >> by) | past_end,
        }
    }
}

/// The bytes escaped by a backslash, given the block's backslashes: in a run of backslashes
/// each pair is one escaped backslash, and an odd run escapes the byte after it. `carried`
/// says the block's first byte is escaped by the last block's final backslash, and is set for
/// the next block. (simdjson's `find_escaped_branchless`: runs starting on an odd bit are told
/// from those starting on an even bit by adding their starts to the mask, whose carries run
/// to each run's end.)
fn escaped_bits(backslashes: u64, carried: &mut bool) -> u64 {
    const EVEN_BITS: u64 = 0x5555_5555_5555_5555;
    let first_escaped = u64::from(*carried);
    // An escaped backslash starts nothing.
    let backslashes = backslashes & !first_escaped;
    let follows_escape = (backslashes << 1) | first_escaped;
    let odd_starts = backslashes & !EVEN_BITS & !follows_escape;
    let (even_started, overflow) = odd_starts.overflowing_add(backslashes);
    *carried = overflow;
    (EVEN_BITS ^ (even_started << 1)) & follows_escape
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::json_check::escape_by_escape_end;
    use proptest::prelude::*;

    /// Pieces of JSON string text, mostly plain and well-formed escapes, so a string often
    /// runs past a block or two before it closes, with runs of backslashes and escaped quotes
    /// falling at every position of a block; now and then a closing quote, a malformed escape,
    /// a surrogate escape or a raw control byte.
    fn string_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            20 => Just(&b"abc"[..]),
            6 => Just(&b"\\\\"[..]),
            6 => Just(&b"\\n"[..]),
            4 => Just(&b"\\\""[..]),
            2 => Just(&b"\\u00e9"[..]),
            2 => Just("é".as_bytes()),
            1 => Just(&b"\""[..]),
            1 => Just(&b"\\ud83d"[..]),
            1 => Just(&b"\\x"[..]),
            1 => Just(&b"\n"[..]),
        ];
        prop::collection::vec(piece, 0..120).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The block scan answers as the escape-by-escape scan does, from every start.
        #[test]
        fn answers_as_the_escape_by_escape_scan(src in string_bytes(), from in 0usize..200) {
            let from = from.min(src.len());
            prop_assert_eq!(string_end(&src, from), escape_by_escape_end(&src, from));
        }
    }

    #[test]
    fn runs_of_backslashes_across_a_block_edge_escape_the_right_byte() {
        for run in 1..=4 {
            for start in 55..66 {
                let mut src = vec![b'a'; start];
                src.extend(std::iter::repeat_n(b'\\', run));
                src.extend_from_slice(b"\"tail\"");
                let want = if run % 2 == 1 {
                    start + run + 5
                } else {
                    start + run
                };
                assert_eq!(string_end(&src, 0), Ok(want), "run {run} from {start}");
                assert_eq!(escape_by_escape_end(&src, 0), Ok(want));
            }
        }
    }

    #[test]
    fn a_unicode_escape_is_checked_and_a_surrogate_left_to_serde() {
        assert_eq!(string_end(br#"\u00e9x""#, 0), Ok(7));
        assert_eq!(string_end(br#"\u00g9x""#, 0), Err(Unsure));
        assert_eq!(string_end(br#"\ud83dx""#, 0), Err(Unsure));
        assert_eq!(string_end(br#"\\u00g9""#, 0), Ok(7));
    }

    #[test]
    fn an_unclosed_string_or_a_raw_control_byte_is_unsure() {
        assert_eq!(string_end(b"abc", 0), Err(Unsure));
        assert_eq!(string_end(b"abc\\", 0), Err(Unsure));
        assert_eq!(string_end(b"ab\tc\"", 0), Err(Unsure));
        let long = [vec![b'a'; 200], vec![b'\n'], vec![b'"']].concat();
        assert_eq!(string_end(&long, 0), Err(Unsure));
        // A control byte after the closing quote is none of the string's business.
        assert_eq!(string_end(b"ab\"\n", 0), Ok(2));
    }
}
