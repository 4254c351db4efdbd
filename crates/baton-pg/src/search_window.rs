//! How far back a term's candidates are looked for, window by window of message ids, and
//! how PostgreSQL narrows each window: a common term is answered from the newest rows
//! without visiting the heap pages of every match in history, a rare one without building a
//! bitmap of every id in a wide window.

/// Ids in the first window of newest messages a term is looked for in.
pub(crate) const FIRST_WINDOW: i64 = 20_000;

/// The size of the next id window, given the `covered` newest ids that held `found` matches
/// and `need` more wanted: enough for `need` at the density seen so far, with half again to
/// spare (×8 while nothing was found), so a term is rarely looked for more than twice and a
/// window never holds many more matches than are needed. The spare is cheap next to a third
/// look: a match in the window costs a heap visit (~3 µs), while every look reads the term's
/// whole GIN bitmap again (5 ms for the 23,500 matches of `"tool call"` in 1M messages; with
/// a quarter spare, that phrase took three looks).
pub(crate) fn next_window(covered: i64, found: i64, need: i64) -> i64 {
    if found <= 0 {
        return covered.saturating_mul(8).max(FIRST_WINDOW);
    }
    let ids = covered.saturating_mul(need.max(1)) / found;
    ids.saturating_add(ids / 2).max(FIRST_WINDOW)
}

/// Ids of a window per match in the rows below it at which reading the term's whole GIN
/// bitmap and filtering its rows by id beats intersecting it with the primary key's range:
/// the two costs measured on the 1M database with the heap in shared buffers. The range
/// bitmap costs ~0.08 µs an id (15 ms for the 182,764 ids of `README`'s second window), a
/// match's heap visit ~1.3 µs (6.7 ms for all 4,878 matches of `migration`).
const IDS_PER_MATCH_FOR_FILTER: i64 = 16;

/// Whether a window of `window` ids below `hi` is narrowed through the primary key (the
/// range intersected with the term's bitmap) rather than filtered on the rows the term's
/// bitmap names: yes, unless the matches seen so far (`found` in the newest `covered` ids)
/// say the term is rare enough that all its matches below `hi` cost less to visit than the
/// range costs to build. With nothing found yet the density is unknown, so the range.
pub(crate) fn window_by_range(window: i64, hi: i64, covered: i64, found: i64) -> bool {
    if found <= 0 || covered <= 0 {
        return true;
    }
    let expected_below = hi.saturating_mul(found) / covered;
    expected_below.saturating_mul(IDS_PER_MATCH_FOR_FILTER) >= window
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_after_nothing_found_grows_eightfold() {
        assert_eq!(next_window(20_000, 0, 1_000), 160_000);
        assert_eq!(next_window(0, 0, 1_000), FIRST_WINDOW);
    }

    #[test]
    fn a_window_holds_what_is_still_needed_at_the_density_seen_with_half_to_spare() {
        // 92 matches in 20,000 ids, 908 more wanted: 197,391 ids, +50%.
        assert_eq!(next_window(20_000, 92, 908), 296_086);
        // Never narrower than the first window.
        assert_eq!(next_window(20_000, 5_000, 1), FIRST_WINDOW);
    }

    #[test]
    fn a_rare_terms_wide_window_is_filtered_on_its_matches() {
        // `migration` on the 1M database: 92 in the newest 20,000 ids, so ~4,500 expected
        // below 980,000, against a 296,000-id window.
        assert!(!window_by_range(296_000, 980_000, 20_000, 92));
    }

    #[test]
    fn a_common_terms_window_is_narrowed_by_the_primary_key() {
        // 2,000 matches in the newest 20,000 ids: ~98,000 below, far more than the window.
        assert!(window_by_range(20_000, 980_000, 20_000, 2_000));
    }

    #[test]
    fn a_window_of_unknown_density_is_narrowed_by_the_primary_key() {
        assert!(window_by_range(FIRST_WINDOW, 1_000_000, 0, 0));
        assert!(window_by_range(160_000, 980_000, 20_000, 0));
    }
}
