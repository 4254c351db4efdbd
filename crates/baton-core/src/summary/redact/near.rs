//! What must surround a rule's literal for the rule to be able to match there.
//!
//! A literal alone admits too much: `pin` is in "mapping", `key` in "monkey", `sk_` in
//! "task_id", `://` in every URL. Each admitted rule's regex is compiled the first time it is
//! needed, and compiling them was a sixth of a short `baton compress` (issue #17), almost all
//! for text that could never match. These checks read the few bytes a rule's pattern fixes
//! around its literal (`password` then `=`, `curl` then ` -u` on the same line) and admit the
//! rule only where they are there.
//!
//! Every check only narrows what the literal scan admits, and only where the pattern cannot
//! match: `every_match_holds_one_of_its_rules_literals` checks each against strings generated
//! from the rule's own pattern. Bytes are compared as ASCII, like the literals (Unicode case
//! folding, `ſ` for `s` and `K` for `k`, is not followed, as before).

use crate::byte_scan::{is_word_byte as is_word, skip_while, word_at};
use std::sync::LazyLock;

/// Decides, from the whole text and the byte range of one literal occurrence, whether the
/// rule's pattern could match around it.
pub(super) type Near = fn(&[u8], usize, usize) -> bool;

/// Decides whether a text has the byte shape of a key format with no fixed literal.
pub(super) type Shape = fn(&[u8]) -> bool;

/// A byte of a variable, key or flag name (the rules' `NAME`).
fn is_name(b: u8) -> bool {
    is_word(b) || b == b'.' || b == b'-'
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn byte_at(text: &[u8], at: usize) -> Option<u8> {
    text.get(at).copied()
}

/// The literal starts a word: the rule's `(?-u:\b)` before its prefix.
pub(super) fn word_start(text: &[u8], start: usize, _: usize) -> bool {
    start == 0 || !is_word(text[start - 1])
}

/// A provider prefix starting a word and followed by a key's body: every provider pattern
/// takes at least 8 key characters right after its prefix (`sk-` and 20, `secret_` and 43),
/// so `secret_key`, `sk-learn` or `task_id` admit nothing. Counted over every character any
/// key body uses (`sntrys_` keys hold `+/=`).
pub(super) fn word_start_then_key(text: &[u8], start: usize, end: usize) -> bool {
    let is_key = |b: u8| is_word(b) || matches!(b, b'-' | b'.' | b'=' | b'+' | b'/' | b'~' | b'$');
    word_start(text, start, end)
        && text.len() >= end + 8
        && text[end..end + 8].iter().all(|&b| is_key(b))
}

/// Notion keys: `secret_` and 43 letters or digits, or `ntn_` and 11 digits. `secret_` alone
/// starts many names (`secret_key_base`), so the generic prefix check admits too much here.
pub(super) fn notion(text: &[u8], start: usize, end: usize) -> bool {
    let (body, len): (fn(&u8) -> bool, usize) = if text[start..end].eq_ignore_ascii_case(b"ntn_") {
        (u8::is_ascii_digit, 11)
    } else {
        (u8::is_ascii_alphanumeric, 43)
    };
    word_start(text, start, end) && text.len() >= end + len && text[end..end + len].iter().all(body)
}

/// The word, optional blanks, then `=` (`password = …`, `AccountKey=…`).
pub(super) fn then_equals(text: &[u8], start: usize, end: usize) -> bool {
    word_start(text, start, end) && byte_at(text, skip_while(text, end, is_blank)) == Some(b'=')
}

/// `authorization`, an optional quote, blanks, then `:` or `=`.
pub(super) fn then_colon_or_equals(text: &[u8], start: usize, end: usize) -> bool {
    let mut at = end;
    if matches!(byte_at(text, at), Some(b'"' | b'\'')) {
        at += 1;
    }
    word_start(text, start, end)
        && matches!(
            byte_at(text, skip_while(text, at, is_blank)),
            Some(b':' | b'=')
        )
}

/// `password`, blanks, `:`, then at least one blank.
pub(super) fn then_colon_blank(text: &[u8], start: usize, end: usize) -> bool {
    let colon = skip_while(text, end, is_blank);
    word_start(text, start, end)
        && byte_at(text, colon) == Some(b':')
        && byte_at(text, colon + 1).is_some_and(is_blank)
}

/// "my password is …": blanks before the word, then blanks and `is`, `was` or `will be`.
pub(super) fn in_password_sentence(text: &[u8], start: usize, end: usize) -> bool {
    let verb = skip_while(text, end, is_blank);
    let starts = |word: &[u8]| word_at(text, verb, word).is_some();
    start > 0
        && is_blank(text[start - 1])
        && verb > end
        && (starts(b"is") || starts(b"was") || starts(b"will"))
}

/// A command (`curl`, `mysql`) followed on its segment of the line by a blank and `flag`.
fn flag_later(text: &[u8], start: usize, end: usize, flags: &[&[u8]]) -> bool {
    if !word_start(text, start, end) {
        return false;
    }
    let segment_end = skip_while(text, end, |b| !matches!(b, b'\n' | b'|' | b';' | b'&'));
    let segment = &text[end..segment_end];
    segment
        .windows(2)
        .enumerate()
        .any(|(i, w)| is_blank(w[0]) && flags.iter().any(|f| segment[i + 1..].starts_with(f)))
}

/// `curl … -u user:pass` / `--user`.
pub(super) fn curl_user(text: &[u8], start: usize, end: usize) -> bool {
    flag_later(text, start, end, &[b"-u", b"--user"])
}

/// `mysql … -pSECRET`.
pub(super) fn mysql_password(text: &[u8], start: usize, end: usize) -> bool {
    flag_later(text, start, end, &[b"-p"])
}

/// `sshpass` then blanks.
pub(super) fn then_blank(text: &[u8], start: usize, end: usize) -> bool {
    word_start(text, start, end) && byte_at(text, end).is_some_and(is_blank)
}

/// `scheme://user:password@`: after `://`, a user part, `:`, and an `@` before the URL's
/// path, query or end.
pub(super) fn url_with_password(text: &[u8], start: usize, end: usize) -> bool {
    let scheme_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-');
    let user_char = |b: u8| !b.is_ascii_whitespace() && !b"\x0b:/?#@\"'<>[]".contains(&b);
    let secret_char = |b: u8| !b.is_ascii_whitespace() && !b"\x0b/?#\"'<>".contains(&b);
    if start == 0 || !scheme_char(text[start - 1]) {
        return false;
    }
    let colon = skip_while(text, end, user_char);
    if byte_at(text, colon) != Some(b':') {
        return false;
    }
    let secret_end = skip_while(text, colon + 1, secret_char);
    text[colon + 1..secret_end]
        .iter()
        .skip(1)
        .any(|&b| b == b'@')
}

/// `https://<32 hex>@…sentry`.
pub(super) fn sentry_dsn(text: &[u8], _: usize, end: usize) -> bool {
    let hex_end = skip_while(text, end, |b| {
        b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
    });
    hex_end - end >= 32 && byte_at(text, end + 32) == Some(b'@')
}

/// Mailchimp `<32 hex>-us<digits>`.
pub(super) fn mailchimp(text: &[u8], start: usize, end: usize) -> bool {
    let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    start >= 32
        && text[start - 32..start].iter().all(lower_hex)
        && byte_at(text, end).is_some_and(|b| b.is_ascii_digit())
}

/// The `NAME` run around a secret-name literal, as `(start, end)` byte offsets.
fn name_run(text: &[u8], start: usize, end: usize) -> (usize, usize) {
    let mut from = start;
    while from > 0 && is_name(text[from - 1]) {
        from -= 1;
    }
    (from, skip_while(text, end, is_name))
}

/// `"api_key": "…"`: the whole name quoted (optionally `\"`-escaped), then `:` or `=`, then
/// a quoted value. The value's quote matters: `%{\"token\" => token}` (Elixir) and
/// `"max_tokens": 4096` have the rest, and admitting them compiled the rule's regex for
/// nothing (~0.2 ms warm, ~0.4 ms in a fresh `baton compress` process; issue #17).
pub(super) fn quoted_key(text: &[u8], start: usize, end: usize) -> bool {
    let (from, mut at) = name_run(text, start, end);
    if byte_at(text, at) == Some(b'\\') {
        at += 1;
    }
    let is_quote = |b: Option<u8>| matches!(b, Some(b'"' | b'\''));
    let opens_value = |b: Option<u8>| matches!(b, Some(b'"' | b'\'' | b'\\'));
    let after_sign = skip_while(text, at + 1, is_blank);
    from > 0
        && is_quote(byte_at(text, from - 1))
        && is_quote(byte_at(text, at))
        && matches!(byte_at(text, after_sign), Some(b':' | b'='))
        && opens_value(byte_at(text, skip_while(text, after_sign + 1, is_blank)))
}

/// `API_KEY=…`.
pub(super) fn key_equals(text: &[u8], start: usize, end: usize) -> bool {
    let (_, at) = name_run(text, start, end);
    byte_at(text, skip_while(text, at, is_blank)) == Some(b'=')
}

/// `--api-key value`.
pub(super) fn key_flag(text: &[u8], start: usize, end: usize) -> bool {
    let (from, to) = name_run(text, start, end);
    text[from..start].windows(2).any(|w| w == b"--") && byte_at(text, to).is_some_and(is_blank)
}

/// `api_key: value` alone on its line (YAML, HTTP headers): before the key only blanks, an
/// optional `- ` and an optional quote since the line's start; after it an optional quote,
/// blanks, `:` and a blank; and an unquoted value must be one run of non-blanks up to the line's
/// end. `max_tokens: 4096` in a sentence, or with a comment after it, admits nothing.
pub(super) fn key_colon(text: &[u8], start: usize, end: usize) -> bool {
    let (from, mut at) = name_run(text, start, end);
    if matches!(byte_at(text, at), Some(b'"' | b'\'')) {
        at += 1;
    }
    let colon = skip_while(text, at, is_blank);
    if byte_at(text, colon) != Some(b':') || !byte_at(text, colon + 1).is_some_and(is_blank) {
        return false;
    }
    starts_its_line(text, from) && value_ends_its_line(text, skip_while(text, colon + 1, is_blank))
}

/// Only `[ \t]*(?:-[ \t]+)?["']?` between the line's start and `at`.
fn starts_its_line(text: &[u8], mut at: usize) -> bool {
    if at > 0 && matches!(text[at - 1], b'"' | b'\'') {
        at -= 1;
    }
    let blanks_end = at;
    while at > 0 && is_blank(text[at - 1]) {
        at -= 1;
    }
    if at < blanks_end && at > 0 && text[at - 1] == b'-' {
        at -= 1;
        while at > 0 && is_blank(text[at - 1]) {
            at -= 1;
        }
    }
    at == 0 || text[at - 1] == b'\n'
}

/// A quoted value (checked by the pattern), or `[^\s"'#]\S*[ \t]*\r?$`. Bytes of non-ASCII
/// characters count as non-blanks, so a Unicode space inside a value admits (the pattern
/// then decides).
fn value_ends_its_line(text: &[u8], at: usize) -> bool {
    let is_space = |b: u8| b.is_ascii_whitespace() || b == 0x0b;
    match byte_at(text, at) {
        None => false,
        Some(b'"' | b'\'' | b'\\') => true,
        Some(b'#') => false,
        Some(b) if is_space(b) => false,
        Some(_) => {
            let end = skip_while(text, at, |b| !is_space(b));
            let end = skip_while(text, end, is_blank);
            let end = if byte_at(text, end) == Some(b'\r') {
                end + 1
            } else {
                end
            };
            matches!(byte_at(text, end), None | Some(b'\n'))
        }
    }
}

/// Twilio API keys: `SK` and 32 hex digits, starting a word.
pub(super) fn twilio_shape(text: &[u8]) -> bool {
    // Built once: most texts are short, and building a searcher per text cost more than the
    // search (`perf record`, issue #17).
    static SK: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"SK"));
    // A text too short to hold one skips the search's setup (most texts a pass redacts are a
    // call's path or command).
    if text.len() < 34 {
        return false;
    }
    SK.find_iter(text).any(|at| {
        word_start(text, at, at + 2)
            && text.len() >= at + 34
            && text[at + 2..at + 34].iter().all(u8::is_ascii_hexdigit)
    })
}

/// Discord bot tokens: 24–26 token characters, `.`, 6 of them, `.`, then at least 27.
pub(super) fn discord_shape(text: &[u8]) -> bool {
    let token = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let is_token_at = |i: usize| {
        let second = i + DOT_GAP;
        text[i + 1..second].iter().all(|&b| token(b))
            && skip_while(text, second + 1, token) - (second + 1) >= 27
            && text[..i].iter().rev().take_while(|&&b| token(b)).count() >= 24
    };
    // The first dot has 24 token characters before it and 7 + 27 bytes from it on.
    let Some(last) = text.len().checked_sub(DOT_GAP + 1 + 27) else {
        return false;
    };
    any_dot_pair(text, 24, last, is_token_at)
}

/// How far a Discord token's second dot is from its first.
const DOT_GAP: usize = 7;

/// Bytes tested together for a dot pair: compared as whole blocks, the test compiles to
/// vector instructions. Searching the dots one by one with `memchr` stopped at every dot of a
/// path or a method call (a tenth of redacting real1's views, `perf record`, issue #17).
const DOT_BLOCK: usize = 32;

/// Whether `accept` takes some `i` in `first..=last` with a dot at `i` and at `i + DOT_GAP`,
/// tried in order.
fn any_dot_pair(text: &[u8], first: usize, last: usize, accept: impl Fn(usize) -> bool) -> bool {
    let pair_at = |i: usize| text[i] == b'.' && text[i + DOT_GAP] == b'.';
    let mut from = first;
    while from + DOT_BLOCK <= last + 1 {
        let here = &text[from..from + DOT_BLOCK];
        let ahead = &text[from + DOT_GAP..from + DOT_GAP + DOT_BLOCK];
        if has_dot_pair(here, ahead) && (from..from + DOT_BLOCK).any(|i| pair_at(i) && accept(i)) {
            return true;
        }
        from += DOT_BLOCK;
    }
    (from..=last).any(|i| pair_at(i) && accept(i))
}

/// Whether some position holds a dot in both blocks (of [`DOT_BLOCK`] bytes); no early exit,
/// so it compiles to vector compares.
fn has_dot_pair(here: &[u8], ahead: &[u8]) -> bool {
    let mut found = 0u8;
    for (&x, &y) in here[..DOT_BLOCK].iter().zip(&ahead[..DOT_BLOCK]) {
        found |= u8::from(x == b'.') & u8::from(y == b'.');
    }
    found != 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_discord_token_and_a_twilio_key_have_their_shapes() {
        let discord = format!(
            "bot {}.{}.{} ok",
            "a".repeat(24),
            "b".repeat(6),
            "c".repeat(27)
        );
        assert!(discord_shape(discord.as_bytes()));
        assert!(!discord_shape(
            b"see docs.rs and crates.io and a.b.c.d.e.f.g.h"
        ));
        let twilio = format!("key SK{} end", "0a".repeat(16));
        assert!(twilio_shape(twilio.as_bytes()));
        assert!(!twilio_shape(b"TASK0123456789abcdef0123456789abcdef"));
    }

    /// The shape by its definition: every dot tried in turn, as the block search must find.
    fn discord_shape_dot_by_dot(text: &[u8]) -> bool {
        let token = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        memchr::memchr_iter(b'.', text).any(|i| {
            let second = i + 7;
            byte_at(text, second) == Some(b'.')
                && text[i + 1..second].iter().all(|&b| token(b))
                && skip_while(text, second + 1, token) - (second + 1) >= 27
                && text[..i].iter().rev().take_while(|&&b| token(b)).count() >= 24
        })
    }

    proptest::proptest! {
        /// Texts of dots and token runs of every length around the shape's bounds, at every
        /// offset from a block's start, and with other bytes breaking the runs.
        #[test]
        fn the_block_search_finds_the_shape_where_a_dot_by_dot_search_does(
            pieces in proptest::collection::vec(
                (
                    proptest::sample::select(vec![".", " ", "/", "é"]),
                    proptest::sample::select(vec![0usize, 1, 5, 6, 7, 23, 24, 26, 27, 28, 33]),
                ),
                0..8,
            ),
        ) {
            let text: String = pieces
                .iter()
                .map(|(sep, run)| format!("{sep}{}", "a".repeat(*run)))
                .collect();
            proptest::prop_assert_eq!(
                discord_shape(text.as_bytes()),
                discord_shape_dot_by_dot(text.as_bytes()),
                "{:?}", text
            );
        }
    }

    #[test]
    fn a_discord_token_is_found_at_any_offset_and_at_the_texts_ends() {
        let token = format!("{}.{}.{}", "a".repeat(24), "b".repeat(6), "c".repeat(27));
        for lead in 0..70 {
            let text = format!("{}{token}", " ".repeat(lead));
            assert!(discord_shape(text.as_bytes()), "lead {lead}");
            let cut = &text[..text.len() - 1];
            assert!(!discord_shape(cut.as_bytes()), "lead {lead}, one short");
        }
    }

    /// The literal's place in each text, then the check.
    fn quoted_key_at(text: &str, literal: &str) -> bool {
        let start = text.find(literal).unwrap();
        quoted_key(text.as_bytes(), start, start + literal.len())
    }

    #[test]
    fn a_quoted_key_needs_its_name_and_its_value_quoted() {
        assert!(quoted_key_at(r#"{"api_key": "abc"}"#, "key"));
        assert!(quoted_key_at(r#"{'token' = 'abc'}"#, "token"));
        assert!(quoted_key_at(r#"{\"secret\":\"abc\"}"#, "secret"));
        // Code and settings with a secret-named key but no quoted value.
        assert!(!quoted_key_at(r#"%{\"token\" => token}"#, "token"));
        assert!(!quoted_key_at(r#""max_tokens": 4096"#, "token"));
        // A name that is not the whole quoted string.
        assert!(!quoted_key_at(r#""my token": "abc""#, "token"));
        assert!(!quoted_key_at(r#"token": "abc""#, "token"));
    }
}
