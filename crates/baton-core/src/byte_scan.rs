//! Byte-level reading for the hand-written recognizers (exit reports, match counts, what
//! surrounds a redaction literal): they read a few ASCII bytes around a literal hit instead of
//! compiling a regex for it.

/// The index of the first byte at or after `at` that `keep` rejects (`text.len()` if none).
pub(crate) fn skip_while(text: &[u8], mut at: usize, keep: impl Fn(u8) -> bool) -> usize {
    while at < text.len() && keep(text[at]) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_first_rejected_byte_or_the_end() {
        assert_eq!(skip_while(b"  x", 0, |b| b == b' '), 2);
        assert_eq!(skip_while(b"   ", 1, |b| b == b' '), 3);
        assert_eq!(skip_while(b"ab", 5, |_| true), 5);
    }
}
