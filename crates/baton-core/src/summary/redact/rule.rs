//! One recognizer: what it needs to be present, its pattern (compiled the first time a text
//! could match it), and the check that tells a secret from a lookalike.

use super::REDACTED;
use super::near::{Near, Shape};
use regex_automata::meta::Regex;
use regex_automata::util::captures::Captures;
use regex_automata::{Input, Span};
use std::borrow::Cow;
use std::sync::OnceLock;

/// Decides whether a match (its groups, and the text it would replace) is a secret.
pub(super) type Check = fn(&Found<'_>, &str) -> bool;

/// One match of a rule's pattern, as its check reads it: the text of a named group.
pub(super) struct Found<'t> {
    caps: &'t Captures,
    text: &'t str,
}

impl<'t> Found<'t> {
    /// The text the group `name` matched, if it took part in the match.
    pub(super) fn name(&self, name: &str) -> Option<&'t str> {
        let span = self.caps.get_group_by_name(name)?;
        self.text.get(span.range())
    }
}

/// What every match of a rule contains, so text without it can skip the rule unsearched.
#[derive(Clone, Copy, Debug)]
pub(super) enum Needs {
    /// One of these literals, matched ASCII case-insensitively (the rule's name words, its
    /// provider prefix). A literal must not contain `[` or `]`, so that writing
    /// [`REDACTED`] into a text can never complete one.
    Literal(&'static [&'static str]),
    /// One of these literals where the check accepts its surroundings (`password` then `=`);
    /// see `near.rs`.
    LiteralNear(&'static [&'static str], Near),
    /// A byte shape the check finds, for key formats with no fixed literal (Twilio, Discord).
    Shape(Shape),
}

impl Needs {
    /// The literals one of which every match contains; none for a shape.
    pub(super) fn literals(&self) -> &'static [&'static str] {
        match self {
            Needs::Literal(literals) | Needs::LiteralNear(literals, _) => literals,
            Needs::Shape(_) => &[],
        }
    }
}

/// A recognizer. The regex is compiled on first use: a process that never sees a text a
/// rule could match never pays for compiling it (compiling all of them was a third of a
/// short `baton compress`, issue #17).
pub(super) struct Rule {
    pub(super) needs: Needs,
    pub(super) pattern: String,
    regex: OnceLock<Option<Regex>>,
    is_secret: Check,
}

impl Rule {
    pub(super) fn new(needs: Needs, pattern: String, is_secret: Check) -> Self {
        Rule {
            needs,
            pattern,
            regex: OnceLock::new(),
            is_secret,
        }
    }

    /// The compiled pattern; `None` only for a pattern that does not compile, a bug that
    /// `every_rule_compiles` catches and that must not become a panic in a user's session.
    ///
    /// Compiled without the engine's own literal prefilter (what `regex::Regex` adds): the
    /// rule only runs on a text the literal scan and its surroundings check admitted, and
    /// extracting every case variant of a rule's words as prefilter literals was half of
    /// compiling one (the `NAME=value` rule's 351 → 161 µs, the spoken-password rule's
    /// 473 → 138 µs); the compile is paid in the process that first needs the rule (issue #17). Matches are
    /// the same: a prefilter only skips ahead to where a match may start.
    pub(super) fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                Regex::builder()
                    .configure(Regex::config().auto_prefilter(false))
                    .build(&self.pattern)
                    .ok()
            })
            .as_ref()
    }

    /// Replaces the secret part of every accepted match. The search resumes right after the
    /// secret (or, for a rejected match, at its value), never after the whole match: a closing
    /// quote may open the next pair, and `TOKEN_URL=https://h/?token=…` must still find the
    /// inner `token=…`. Resuming the same way whether or not a value was already redacted is
    /// what makes a second pass find nothing new.
    pub(super) fn apply<'t>(&self, text: Cow<'t, str>) -> Cow<'t, str> {
        let Some(regex) = self.regex() else {
            return text;
        };
        let mut caps = regex.create_captures();
        let mut out = String::new();
        let mut changed = false;
        let mut copied = 0;
        let mut pos = 0;
        loop {
            // Searched from `pos` with the text before it in view, as the word boundaries
            // need.
            regex.search_captures(&Input::new(text.as_ref()).range(pos..), &mut caps);
            let Some(whole) = caps.get_match().map(|m| m.span()) else {
                break;
            };
            let span = secret_span(&caps).unwrap_or(whole);
            let found = Found {
                caps: &caps,
                text: &text,
            };
            if (self.is_secret)(&found, &text[span.range()]) {
                out.push_str(&text[copied..span.start]);
                out.push_str(REDACTED);
                copied = span.end;
                changed = true;
                pos = span.end.max(next_char(&text, whole.start));
            } else if span.start > whole.start {
                pos = span.start;
            } else {
                pos = next_char(&text, whole.start);
            }
            if pos >= text.len() {
                break;
            }
        }
        if !changed {
            return text;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// The part of a match to replace: the `secret` group, else the inside of a quoted value,
/// else (when `None`) the whole match.
fn secret_span(caps: &Captures) -> Option<Span> {
    ["secret", "dq", "sq", "eq"]
        .into_iter()
        .find_map(|name| caps.get_group_by_name(name))
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(text.len(), |c| at + c.len_utf8())
}
