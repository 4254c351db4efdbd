//! Cutting text down to a size limit without hiding that it was cut.
//!
//! Anything Baton shows a model in place of a longer text says exactly how much is missing: a
//! model that does not know a listing was shortened will reason as if it saw all of it. Sizes are
//! counted in `char`s (Unicode scalar values), the unit the budgets are expressed in, and every
//! cut falls on a char boundary.

use std::borrow::Cow;
use std::fmt;

/// The outcome of [`truncate_head_tail`]: the text to show plus exact counts of what was kept
/// and what was dropped.
///
/// `head_chars + omitted_chars + tail_chars` always equals the original length in chars.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated<'a> {
    /// The original when it fit; otherwise head, marker line, tail.
    pub text: Cow<'a, str>,
    /// Chars kept from the start of the original (they open `text`).
    pub head_chars: usize,
    /// Chars kept from the end of the original (they close `text`).
    pub tail_chars: usize,
    /// Chars of the original that do not appear in `text`.
    pub omitted_chars: usize,
    /// Line breaks inside the omitted span: how many fewer lines `text` has than the original,
    /// not counting the marker's own line.
    pub omitted_lines: usize,
}

impl Truncated<'_> {
    /// True when anything was cut.
    pub fn was_cut(&self) -> bool {
        self.omitted_chars > 0
    }
}

/// Shortens `text` to at most `max_chars` chars by keeping its head and its tail and replacing
/// the middle with a marker such as `[... 12,345 characters, 210 lines omitted ...]`.
///
/// Both ends are kept because tool output usually carries its meaning at both: the command and
/// first results at the top, the error or summary at the bottom. The cut snaps to line
/// boundaries when one is close, so the model sees whole lines around the marker.
///
/// The result never exceeds `max_chars`, marker included. When `max_chars` is too small to hold
/// the marker at all, the result is the first `max_chars` chars with no marker; the counts in
/// the returned [`Truncated`] still say what was dropped.
pub fn truncate_head_tail(text: &str, max_chars: usize) -> Truncated<'_> {
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return untouched(text, total_chars);
    }
    let reserve = marker_reserve(text, total_chars);
    if max_chars < reserve {
        return head_only(text, total_chars, max_chars);
    }
    let budget = max_chars - reserve;
    let tail_goal = budget / 2;
    let head_goal = budget - tail_goal;
    let head_end = snap_head_end(text, byte_offset_of_char(text, head_goal), head_goal);
    let tail_start = snap_tail_start(
        text,
        byte_offset_of_char(text, total_chars - tail_goal),
        tail_goal,
    );
    join_with_marker(text, head_end, tail_start, total_chars)
}

/// A head-only excerpt of a text, as shown in a persisted-output preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preview<'a> {
    /// A prefix of the original.
    pub text: &'a str,
    /// Chars of the original after `text`; 0 when the whole text fit.
    pub omitted_chars: usize,
}

impl Preview<'_> {
    /// True when the original continues past the preview.
    pub fn has_more(&self) -> bool {
        self.omitted_chars > 0
    }
}

/// The first at most `max_chars` chars of `text`, ending at a line break when the last one in
/// that window lies past its midpoint.
///
/// Ending on a whole line keeps the preview from stopping mid-word; the midpoint rule stops a
/// single early line break from throwing most of the window away (the reference design's rule).
pub fn preview(text: &str, max_chars: usize) -> Preview<'_> {
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return Preview {
            text,
            omitted_chars: 0,
        };
    }
    let window_end = byte_offset_of_char(text, max_chars);
    let cut = snap_head_end(text, window_end, max_chars);
    let shown = &text[..cut];
    Preview {
        text: shown,
        omitted_chars: total_chars - shown.chars().count(),
    }
}

/// `n` with a comma between groups of three digits (`1234567` → `1,234,567`, `-1234` →
/// `-1,234`), for counts shown to models and people. Every count Baton prints in text goes
/// through here, so tables, reports and notices group the same way. Takes any integer type.
pub fn group_digits(n: impl Into<Groupable>) -> String {
    grouped(n).to_string()
}

/// [`group_digits`] as a value to format in place (`format!("{}", grouped(n))`), without a
/// string of its own: views and stubs write counts into every cut text and every pruned
/// result, and the two strings `group_digits` builds per count were 158 of the 4,519
/// allocations of a compaction of real1 (`perf stat -e probe_libc:malloc`).
pub fn grouped(n: impl Into<Groupable>) -> Grouped {
    Grouped(n.into().0)
}

/// An integer that displays with its digits grouped (see [`group_digits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grouped(i128);

impl fmt::Display for Grouped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written from the right: the 39 digits of `i128::MIN`'s magnitude, 12 commas and a
        // sign fit.
        let mut buf = [0u8; 52];
        let mut at = buf.len();
        let mut rest = self.0.unsigned_abs();
        let mut written = 0;
        loop {
            if written > 0 && written % 3 == 0 {
                at -= 1;
                buf[at] = b',';
            }
            at -= 1;
            buf[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            written += 1;
            if rest == 0 {
                break;
            }
        }
        if self.0 < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        // Only ASCII digits, commas and a minus sign were written. `pad`, so a width or an
        // alignment applies as it did to the string.
        f.pad(std::str::from_utf8(&buf[at..]).map_err(|_| fmt::Error)?)
    }
}

/// An integer [`group_digits`] accepts: any of the primitive integer types.
#[derive(Debug, Clone, Copy)]
pub struct Groupable(i128);

macro_rules! groupable {
    ($($t:ty),*) => {$(
        impl From<$t> for Groupable {
            fn from(n: $t) -> Self {
                Groupable(i128::try_from(n).unwrap_or(i128::MAX))
            }
        }
    )*};
}
groupable!(
    u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, u128, i128
);

fn untouched(text: &str, total_chars: usize) -> Truncated<'_> {
    Truncated {
        text: Cow::Borrowed(text),
        head_chars: total_chars,
        tail_chars: 0,
        omitted_chars: 0,
        omitted_lines: 0,
    }
}

fn head_only(text: &str, total_chars: usize, max_chars: usize) -> Truncated<'_> {
    let end = byte_offset_of_char(text, max_chars);
    Truncated {
        text: Cow::Borrowed(&text[..end]),
        head_chars: max_chars,
        tail_chars: 0,
        omitted_chars: total_chars - max_chars,
        omitted_lines: count_line_breaks(&text[end..]),
    }
}

fn join_with_marker(
    text: &str,
    head_end: usize,
    tail_start: usize,
    total_chars: usize,
) -> Truncated<'static> {
    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let head_chars = head.chars().count();
    let tail_chars = tail.chars().count();
    let omitted_chars = total_chars - head_chars - tail_chars;
    let omitted_lines = count_line_breaks(&text[head_end..tail_start]);
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(head);
    if needs_break_before_marker(head) {
        out.push('\n');
    }
    out.push_str(&marker(omitted_chars, omitted_lines));
    out.push('\n');
    out.push_str(tail);
    Truncated {
        text: Cow::Owned(out),
        head_chars,
        tail_chars,
        omitted_chars,
        omitted_lines,
    }
}

/// The marker line, without the line breaks around it.
fn marker(chars: usize, lines: usize) -> String {
    format!(
        "[... {} {}, {} {} omitted ...]",
        grouped(chars),
        plural(chars, "character", "characters"),
        grouped(lines),
        plural(lines, "line", "lines"),
    )
}

/// Room to set aside for the marker and its two line breaks before the cut is known.
///
/// The counts in the final marker can only be smaller than the original's totals, so a marker
/// built from the totals is at least as long as the real one. Counts below 2 are raised to 2
/// because "1 line" is shorter than "0 lines".
fn marker_reserve(text: &str, total_chars: usize) -> usize {
    let worst_lines = count_line_breaks(text).max(2);
    marker(total_chars.max(2), worst_lines).chars().count() + 2
}

fn needs_break_before_marker(head: &str) -> bool {
    !head.is_empty() && !head.ends_with('\n')
}

/// Moves a head cut at `end` (a byte offset, `end_chars` chars in) back to just after the last
/// line break before it, when that break lies past the midpoint of the head.
fn snap_head_end(text: &str, end: usize, end_chars: usize) -> usize {
    let window = &text[..end];
    match window.rfind('\n') {
        Some(nl) if window[..nl].chars().count() > end_chars / 2 => nl + 1,
        _ => end,
    }
}

/// Moves a tail cut at `start` (a byte offset, `tail_chars` chars before the end) forward to the
/// start of the next line, when that line starts within the first half of the tail.
fn snap_tail_start(text: &str, start: usize, tail_chars: usize) -> usize {
    let window = &text[start..];
    match window.find('\n') {
        Some(nl) if window[..nl].chars().count() < tail_chars / 2 => start + nl + 1,
        _ => start,
    }
}

/// Byte offset of the char at index `char_index`, or the text's length when it has no more
/// chars than that.
fn byte_offset_of_char(text: &str, char_index: usize) -> usize {
    text.char_indices()
        .nth(char_index)
        .map_or(text.len(), |(at, _)| at)
}

fn count_line_breaks(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

fn plural<'w>(n: usize, one: &'w str, many: &'w str) -> &'w str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn first_chars(s: &str, n: usize) -> &str {
        &s[..byte_offset_of_char(s, n)]
    }

    fn last_chars(s: &str, n: usize) -> &str {
        let count = s.chars().count();
        &s[byte_offset_of_char(s, count - n)..]
    }

    #[test]
    fn short_text_is_returned_as_is() {
        let t = truncate_head_tail("hello", 10);
        assert!(matches!(t.text, Cow::Borrowed("hello")));
        assert!(!t.was_cut());
    }

    #[test]
    fn marker_states_exact_counts() {
        let text: String = (0..1000).map(|i| format!("line {i:04}\n")).collect();
        let t = truncate_head_tail(&text, 300);
        assert!(t.text.chars().count() <= 300);
        let expected = marker(t.omitted_chars, t.omitted_lines);
        assert!(t.text.contains(&expected), "{}", t.text);
        assert_eq!(t.head_chars + t.tail_chars + t.omitted_chars, text.len());
        // Cuts snap to whole lines on both sides.
        assert!(first_chars(&t.text, t.head_chars).ends_with('\n'));
        assert!(last_chars(&t.text, t.tail_chars).starts_with("line "));
    }

    #[test]
    fn marker_uses_grouped_digits_and_singulars() {
        assert_eq!(
            marker(12_345, 210),
            "[... 12,345 characters, 210 lines omitted ...]"
        );
        assert_eq!(marker(1, 1), "[... 1 character, 1 line omitted ...]");
    }

    #[test]
    fn tiny_limit_keeps_only_the_head() {
        let t = truncate_head_tail("abcdefghijklmnopqrstuvwxyz", 5);
        assert_eq!(t.text, "abcde");
        assert_eq!(t.omitted_chars, 21);
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "é".repeat(500) + &"日本".repeat(300);
        let t = truncate_head_tail(&text, 120);
        assert!(t.text.chars().count() <= 120);
        assert!(text.starts_with(first_chars(&t.text, t.head_chars)));
        assert!(text.ends_with(last_chars(&t.text, t.tail_chars)));
    }

    /// The digits of `n`'s magnitude, a comma before every group of three from the right,
    /// after its sign: what `group_digits` wrote before it formatted in place.
    fn grouped_by_string(n: i128) -> String {
        let digits = n.unsigned_abs().to_string();
        let mut out = String::new();
        if n < 0 {
            out.push('-');
        }
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(d);
        }
        out
    }

    proptest! {
        /// Told from the length or counted, the answer is the count's.
        #[test]
        fn more_chars_than_is_the_count_compared(
            // Runs of one width, where the length alone decides, then a mix.
            text in "(\u{1F600}{0,40}|確{0,40}|é{0,40}|a{0,40})(a|é|確|\u{1F600}){0,20}",
            max in 0usize..50,
        ) {
            prop_assert_eq!(has_more_chars_than(&text, max), text.chars().count() > max);
        }
    }

    proptest! {
        #[test]
        fn grouping_in_place_writes_what_the_string_did(n in any::<i128>(), small in any::<i32>()) {
            prop_assert_eq!(grouped(n).to_string(), grouped_by_string(n));
            prop_assert_eq!(group_digits(i64::from(small)), grouped_by_string(i128::from(small)));
        }
    }

    #[test]
    fn grouping_reaches_the_ends_of_the_range() {
        for n in [i128::MIN, i128::MAX, 0, -1, 1, 999, 1_000, -1_000] {
            assert_eq!(grouped(n).to_string(), grouped_by_string(n), "{n}");
        }
        assert_eq!(
            grouped(u128::MAX).to_string(),
            "170,141,183,460,469,231,731,687,303,715,884,105,727"
        );
        assert_eq!(format!("[{:>7}]", grouped(1234)), "[  1,234]");
    }

    #[test]
    fn group_digits_inserts_commas() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_000), "1,000");
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(group_digits(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(group_digits(-1_234_i64), "-1,234");
        assert_eq!(group_digits(-999_i32), "-999");
    }

    #[test]
    fn preview_cuts_at_a_late_line_break() {
        let text = format!("{}\n{}", "a".repeat(80), "b".repeat(100));
        let p = preview(&text, 100);
        assert_eq!(p.text, format!("{}\n", "a".repeat(80)));
        assert_eq!(p.omitted_chars, 100);
    }

    #[test]
    fn preview_ignores_an_early_line_break() {
        let text = format!("{}\n{}", "a".repeat(10), "b".repeat(200));
        let p = preview(&text, 100);
        assert_eq!(p.text.chars().count(), 100);
        assert!(p.has_more());
    }

    #[test]
    fn preview_of_short_text_is_whole() {
        let p = preview("short\ntext", 1_500);
        assert_eq!(p.text, "short\ntext");
        assert!(!p.has_more());
    }

    proptest! {
        #[test]
        fn truncation_invariants(text in "(?s)[a-z\n é日]{0,400}", max in 0usize..300) {
            let t = truncate_head_tail(&text, max);
            let total = text.chars().count();
            prop_assert!(t.text.chars().count() <= max);
            prop_assert_eq!(t.head_chars + t.tail_chars + t.omitted_chars, total);
            let head = first_chars(&t.text, t.head_chars);
            prop_assert!(text.starts_with(head));
            prop_assert_eq!(head, first_chars(&text, t.head_chars));
            let tail = last_chars(&t.text, t.tail_chars);
            prop_assert!(text.ends_with(tail));
            let breaks = count_line_breaks(&text);
            prop_assert_eq!(
                t.omitted_lines,
                breaks - count_line_breaks(head) - count_line_breaks(tail)
            );
            if t.was_cut() && t.text.chars().count() > t.head_chars {
                let m = marker(t.omitted_chars, t.omitted_lines);
                prop_assert!(t.text.contains(&m));
            }
        }

        #[test]
        fn preview_is_a_bounded_prefix(text in "(?s)[a-z\n é]{0,300}", max in 0usize..200) {
            let p = preview(&text, max);
            prop_assert!(text.starts_with(p.text));
            prop_assert!(p.text.chars().count() <= max);
            prop_assert_eq!(p.text.chars().count() + p.omitted_chars, text.chars().count());
        }
    }
}

/// Characters in `text`, without decoding when it is ASCII (a vectorized check): tool results
/// are mostly ASCII and counting them is on every compaction's path.
pub fn char_count(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// Whether `text` has more than `max` characters, told from its length alone when that can
/// (a character takes one to four bytes): a long call's arguments are tested on every pass.
pub fn has_more_chars_than(text: &str, max: usize) -> bool {
    if text.len() <= max {
        false
    } else if text.len() / 4 > max {
        true
    } else {
        char_count(text) > max
    }
}

/// Where character `n` of `text` starts (`text.char_indices().nth(n)`), or `None` when it has
/// at most `n` characters. A text no longer than `n` bytes is answered from its length, an
/// ASCII start from a vectorized check, and any other text by counting the bytes that start
/// a character (all but UTF-8 continuation bytes) 64 at a time, not by decoding it: every
/// clipped question, stub value, cut argument and judged result's head asks this.
pub fn char_start(text: &str, n: usize) -> Option<usize> {
    if text.len() <= n {
        return None;
    }
    let bytes = text.as_bytes();
    if bytes[..n].is_ascii() {
        return Some(n);
    }
    const CHUNK: usize = 64;
    // Characters starting before byte `at`.
    let (mut before, mut at) = (0, 0);
    for chunk in bytes.chunks_exact(CHUNK) {
        let starts = chunk.iter().filter(|&&b| starts_a_char(b)).count();
        if before + starts > n {
            break;
        }
        before += starts;
        at += CHUNK;
    }
    bytes[at..]
        .iter()
        .enumerate()
        .filter(|&(_, &b)| starts_a_char(b))
        .nth(n - before)
        .map(|(i, _)| at + i)
}

/// Whether a byte of UTF-8 text starts a character: it is not a continuation byte
/// (`0b10xx_xxxx`).
fn starts_a_char(byte: u8) -> bool {
    (byte as i8) >= -0x40
}

/// Lines in `text`, as `str::lines` counts them (a final line without a newline counts; a
/// trailing newline does not start another), using a memchr scan.
pub fn line_count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod count_tests {
    use super::*;

    proptest::proptest! {
        /// `char_start` answers what decoding every character answers, on ASCII runs before,
        /// after and between multi-byte characters, on texts long enough to be counted a
        /// chunk at a time, and at every `n` around the text's length.
        #[test]
        fn char_start_is_where_the_nth_char_starts(
            text in proptest::prop_oneof![
                "[a-z ]{0,12}[é中😀]{0,3}[a-z]{0,12}[中]{0,2}",
                "[a-z é中😀]{0,150}",
            ],
            n in 0usize..200,
        ) {
            proptest::prop_assert_eq!(
                char_start(&text, n),
                text.char_indices().nth(n).map(|(i, _)| i)
            );
        }
    }

    #[test]
    fn counts_match_std_on_ascii_multibyte_and_edge_cases() {
        for t in [
            "",
            "a",
            "a\n",
            "a\nb",
            "\n\n",
            "a\r\nb\r\n",
            "修复\n错误",
            "x\n\ny",
        ] {
            assert_eq!(char_count(t), t.chars().count(), "{t:?}");
            assert_eq!(line_count(t), t.lines().count(), "{t:?}");
        }
    }
}
