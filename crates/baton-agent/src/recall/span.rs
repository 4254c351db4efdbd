//! References to stored messages: `<session>/<start>-<end>` for a span (positions from 0,
//! both ends included) and `<session>/<n>` for one message. Short enough for a model to copy,
//! exact enough to read back without ambiguity.

use std::fmt;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanRef {
    pub session: String,
    /// Positions in the session, `first..=last`.
    pub first: usize,
    pub last: usize,
}

impl SpanRef {
    /// The reference to `range` (end exclusive, as the compressor reports it).
    pub fn of(session: &str, range: &Range<usize>) -> SpanRef {
        SpanRef {
            session: session.to_string(),
            first: range.start,
            last: range.end.saturating_sub(1).max(range.start),
        }
    }

    pub fn message(session: &str, position: usize) -> SpanRef {
        SpanRef {
            session: session.to_string(),
            first: position,
            last: position,
        }
    }

    pub fn len(&self) -> usize {
        self.last - self.first + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Parses a reference; the error says what a valid one looks like.
    pub fn parse(text: &str) -> Result<SpanRef, String> {
        let text = text.trim().trim_matches(['"', '\'', '`', '[', ']']);
        let expected = "expected `<session>/<first>-<last>` or `<session>/<n>`, as shown in a \
                        summary's note or a history_search result";
        let (session, positions) = text
            .rsplit_once('/')
            .ok_or_else(|| format!("`{text}` is not a history reference: {expected}"))?;
        if session.is_empty() || session.chars().any(char::is_whitespace) {
            return Err(format!("`{text}` has no valid session id: {expected}"));
        }
        let number = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{s}` in `{text}` is not a message position: {expected}"))
        };
        let (first, last) = match positions.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(positions)?;
                (n, n)
            }
        };
        if last < first {
            return Err(format!("`{text}` ends before it starts"));
        }
        Ok(SpanRef {
            session: session.to_string(),
            first,
            last,
        })
    }
}

impl fmt::Display for SpanRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}/{}", self.session, self.first)
        } else {
            write!(f, "{}/{}-{}", self.session, self.first, self.last)
        }
    }
}

/// The sentence appended to an installed summary: which messages it replaced and how to read
/// them back.
pub fn summary_span_note(session: &str, range: &Range<usize>) -> String {
    let span = SpanRef::of(session, range);
    format!(
        "[This summary replaced {} messages ({span}). The originals are kept: \
         history_expand(\"{span}\") returns them, history_search finds anything in them.]",
        span.len()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn references_round_trip_and_bad_ones_say_what_is_expected() {
        let span = SpanRef::of("20261124_201135_4b5a0a", &(12..58));
        assert_eq!(span.to_string(), "20261124_201135_4b5a0a/12-57");
        assert_eq!(SpanRef::parse(&span.to_string()).unwrap(), span);
        assert_eq!(
            SpanRef::parse("\"s1/7\"").unwrap(),
            SpanRef::message("s1", 7)
        );
        for bad in ["", "s1", "s1/x", "/3", "s1/9-2", "a b/1"] {
            let err = SpanRef::parse(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(summary_span_note("s1", &(0..10)).contains("history_expand(\"s1/0-9\")"));
    }
}
