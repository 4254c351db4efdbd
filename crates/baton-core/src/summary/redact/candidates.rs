//! Which rules could match a text, from one literal scan: almost all text holds none of the
//! rules' literals and skips redaction at memory speed; the rest searches only the rules whose
//! literal it holds in the surroundings the rule needs (`near.rs`). This replaced a set of
//! every rule's regex, whose compilation alone was a sixth of a short `baton compress` and
//! whose match still had to be followed by a search with each of the 70 rules (issue #17).

use super::near::{Near, Shape};
use super::occurrences::Occurrences;
use super::rule::{Needs, Rule};
use super::rules::RULES;
use super::scan_prefixes::SCAN_PREFIXES;
use super::scan_table::scan_table;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::LazyLock;

/// A set of rules, by their index in [`RULES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Candidates(u128);

/// The most rules a [`Candidates`] can hold; `rules_fit_in_a_candidate_set` checks [`RULES`].
pub(super) const MAX_RULES: usize = u128::BITS as usize;

impl Candidates {
    /// Every rule: what a failed index build falls back to (slower, never less safe).
    fn all() -> Self {
        Candidates(u128::MAX)
    }

    pub(super) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(super) fn contains(self, rule: usize) -> bool {
        rule < MAX_RULES && self.0 & (1 << rule) != 0
    }

    /// The candidate rules, in the order they apply.
    pub(super) fn rules(self) -> impl Iterator<Item = &'static Rule> {
        RULES
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.contains(*i))
            .map(|(_, rule)| rule)
    }
}

/// The rules that may match `text`: those one of whose literals it holds where the rule's
/// surroundings check accepts it, plus the shape rules whose shape it has. A rule left out
/// cannot match (every match of it contains one of its literals, in such surroundings), so
/// applying only these is applying them all.
pub(super) fn candidates(text: &str) -> Candidates {
    scan(text, false).0
}

/// For JSON `text` (tool-call arguments): its [`candidates`], and whether an object key may
/// name a secret (`"api_key": …`, whose value the JSON pass redacts whatever it looks like): a
/// hint word inside a string that a `:` follows. A hint in a value (`"src/tokenizer.rs"`,
/// `"author"`) is not one: parsing the arguments of every call that mentions a path with
/// `key` or `token` in it was a tenth of a compaction (issue #17). Both from one scan.
pub(super) fn candidates_and_key_hint(text: &str) -> (Candidates, bool) {
    scan(text, true)
}

fn scan(text: &str, want_key_hint: bool) -> (Candidates, bool) {
    let Some(index) = INDEX.as_ref() else {
        return (Candidates::all(), true);
    };
    let bytes = text.as_bytes();
    let (mut found, mut key_hint) = (0u128, false);
    let _ = index.prefixes.each(bytes, |prefix| {
        let start = prefix.start;
        for &at in &index.by_prefix[prefix.literal] {
            let end = start + index.literals[at].len();
            // The prefix is the whole literal, or the literal goes on as written here.
            if end > prefix.end
                && !bytes
                    .get(start..end)
                    .is_some_and(|b| b.eq_ignore_ascii_case(index.literals[at].as_bytes()))
            {
                continue;
            }
            let literal = &index.by_literal[at];
            found |= literal.anywhere;
            for &(rule, near) in &literal.near {
                if found & (1 << rule) == 0 && near(bytes, start, end) {
                    found |= 1 << rule;
                }
            }
            if want_key_hint && !key_hint && literal.key_hint {
                key_hint = string_ends_as_key(&bytes[end..]);
            }
            if found == index.literal_rules && (key_hint || !want_key_hint) {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    for &(rule, shape) in &index.shapes {
        if shape(bytes) {
            found |= 1 << rule;
        }
    }
    (Candidates(found), key_hint)
}

/// Words a secret-naming JSON key contains.
const KEY_HINTS: [&str; 7] = [
    "secret",
    "token",
    "passw",
    "passphrase",
    "credential",
    "key",
    "auth",
];

/// Whether the JSON string `rest` continues (from inside it) is an object key: its closing
/// quote is followed by `:`. An escaped quote first counts as a key, to stay on the safe side.
fn string_ends_as_key(rest: &[u8]) -> bool {
    let Some(q) = memchr::memchr(b'"', rest) else {
        return false;
    };
    if q > 0 && rest[q - 1] == b'\\' {
        return true;
    }
    rest[q + 1..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':')
}

/// The rules one literal admits.
#[derive(Default)]
struct LiteralRules {
    /// Rules admitted wherever the literal is.
    anywhere: u128,
    /// Rules admitted where their check accepts the literal's surroundings.
    near: Vec<(usize, Near)>,
    /// One of the [`KEY_HINTS`].
    key_hint: bool,
}

/// Every distinct literal of every rule, and which rules each one admits.
///
/// The automaton holds the literals' first [`PREFIX_BYTES`] bytes, and the rest of a literal is
/// compared where its prefix is found. Every occurrence of a literal starts with an occurrence
/// of its prefix, so the scan finds exactly the literals a whole-literal automaton finds. The
/// point is the automaton's size: the 95 whole literals made a 236 KB DFA, 80 three-byte
/// prefixes an 88 KB one (as `aho-corasick` builds it; short `baton compress --force`
/// processes got 2–3% faster, and long scans no slower). The prefixes' automaton is now built
/// by the build script into static tables (`scan_table.rs`), so a process builds nothing
/// (issue #17).
struct LiteralIndex {
    /// One pattern per distinct (lowercase) literal prefix.
    prefixes: Occurrences,
    /// For each prefix pattern, the literals (indexes of `literals`) that start with it.
    by_prefix: Vec<Vec<usize>>,
    literals: Vec<&'static str>,
    by_literal: Vec<LiteralRules>,
    /// The rules with literals (what finding all of them amounts to).
    literal_rules: u128,
    shapes: Vec<(usize, Shape)>,
}

/// Bytes of each literal the scan's automaton holds (see [`LiteralIndex`]). Four, not three:
/// three-byte prefixes such as `age`, `lin`, `cre` and `cur` (of `AGE-SECRET-KEY-`, `lin_api_`,
/// `credential`, `curl`) sit inside common words (`message`, `line`, `create`, `current`), and
/// each hit is looked up and compared; four bytes cut the hits on real1…5 from 2,420–5,549 to
/// 665–1,078, for an automaton of 8,732 transitions instead of 5,868 (17 KB of tables).
const PREFIX_BYTES: usize = 4;

/// The part of `literal` the scan's automaton holds.
fn literal_prefix(literal: &'static str) -> &'static str {
    &literal[..literal.floor_char_boundary(PREFIX_BYTES)]
}

/// Distinct literals in the order first seen, with what each admits.
#[derive(Default)]
struct LiteralTable {
    position: HashMap<&'static str, usize>,
    literals: Vec<&'static str>,
    by_literal: Vec<LiteralRules>,
}

impl LiteralTable {
    /// The entry of `literal`, added the first time it is seen (rules share literals, and
    /// the key hints are mostly rule literals too).
    fn entry(&mut self, literal: &'static str) -> &mut LiteralRules {
        let at = *self.position.entry(literal).or_insert_with(|| {
            self.literals.push(literal);
            self.by_literal.push(LiteralRules::default());
            self.literals.len() - 1
        });
        &mut self.by_literal[at]
    }
}

static INDEX: LazyLock<Option<LiteralIndex>> = LazyLock::new(|| {
    let mut table = LiteralTable::default();
    let mut literal_rules = 0u128;
    let mut shapes = Vec::new();
    for (i, rule) in RULES.iter().enumerate().take(MAX_RULES) {
        let near = match rule.needs {
            Needs::Shape(shape) => {
                shapes.push((i, shape));
                continue;
            }
            Needs::Literal(_) => None,
            Needs::LiteralNear(_, near) => Some(near),
        };
        literal_rules |= 1 << i;
        for &literal in rule.needs.literals() {
            let entry = table.entry(literal);
            match near {
                None => entry.anywhere |= 1 << i,
                Some(near) => entry.near.push((i, near)),
            }
        }
    }
    for hint in KEY_HINTS {
        table.entry(hint).key_hint = true;
    }
    // The prefixes the build script made the automaton of, in its pattern order; a literal
    // whose prefix is missing there (a rule changed, `scan_prefixes_are_those_of_the_rules`
    // fails) gets it appended, and the automaton is then built here instead.
    let mut prefix_list: Vec<&'static str> = SCAN_PREFIXES.to_vec();
    let mut by_prefix: Vec<Vec<usize>> = vec![Vec::new(); prefix_list.len()];
    for (at, literal) in table.literals.iter().enumerate() {
        let prefix = literal_prefix(literal);
        match prefix_list.iter().position(|p| *p == prefix) {
            Some(p) => by_prefix[p].push(at),
            None => {
                prefix_list.push(prefix);
                by_prefix.push(vec![at]);
            }
        }
    }
    let prefixes = if prefix_list.len() == SCAN_PREFIXES.len() {
        Occurrences::from_table(scan_table())?
    } else {
        Occurrences::new(&prefix_list)?
    };
    Some(LiteralIndex {
        prefixes,
        by_prefix,
        literals: table.literals,
        by_literal: table.by_literal,
        literal_rules,
        shapes,
    })
});

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::{REDACTED, redact};
    use super::*;
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use regex_syntax::hir::{Hir, HirKind};

    /// The scan's automaton holds only the literals' first bytes: a literal counts only where
    /// it is there whole (in any case), also at the very end of the text.
    #[test]
    fn a_literal_counts_only_where_it_follows_its_prefix_whole() {
        let github = RULES
            .iter()
            .position(|r| r.pattern.contains("github_pat_"))
            .unwrap();
        let key = "ABCDEFGHIJ1234567890abcdefghij0123";
        assert!(candidates(&format!("token github_pat_{key}")).contains(github));
        assert!(candidates(&format!("token GITHUB_PAT_{key}")).contains(github));
        assert!(!candidates(&format!("token github_pa {key}")).contains(github));
        assert!(!candidates(&format!("token gith_pat_{key}")).contains(github));
        assert!(!candidates("the end: github_pa").contains(github));
    }

    /// The build script makes the scan's automaton of `SCAN_PREFIXES`; they must be the
    /// prefixes of the rules' literals and key hints, each once.
    #[test]
    fn scan_prefixes_are_those_of_the_rules() {
        let mut derived: Vec<&str> = Vec::new();
        let literals = RULES
            .iter()
            .flat_map(|rule| rule.needs.literals().iter().copied())
            .chain(KEY_HINTS);
        for literal in literals {
            let prefix = literal_prefix(literal);
            if !derived.contains(&prefix) {
                derived.push(prefix);
            }
        }
        let mut listed = SCAN_PREFIXES.to_vec();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed.len(), SCAN_PREFIXES.len(), "a prefix listed twice");
        let mut sorted = derived.clone();
        sorted.sort_unstable();
        assert_eq!(
            listed, sorted,
            "scan_prefixes.rs must list the rules' literal prefixes; paste:\n{derived:?}"
        );
    }

    /// What the scan runs on is the build script's automaton, not one built at start-up.
    #[test]
    fn the_scan_uses_the_built_in_tables() {
        let index = INDEX.as_ref().unwrap();
        assert_eq!(index.by_prefix.len(), SCAN_PREFIXES.len());
        let token = SCAN_PREFIXES
            .iter()
            .position(|p| *p == literal_prefix("token"))
            .unwrap();
        let mut seen = Vec::new();
        let _ = index.prefixes.each(b"a TOKEN here", |o| {
            seen.push(o.literal);
            ControlFlow::Continue(())
        });
        assert_eq!(seen, vec![token]);
        assert!(
            index.by_prefix[token]
                .iter()
                .any(|&at| index.literals[at] == "token")
        );
    }

    #[test]
    fn rules_fit_in_a_candidate_set() {
        assert!(RULES.len() <= MAX_RULES, "{} rules", RULES.len());
    }

    /// Redaction writes [`REDACTED`] and nothing else: if that could complete a literal, a
    /// rule skipped before a replacement could match after it.
    #[test]
    fn writing_the_marker_never_completes_a_literal() {
        assert!(candidates(REDACTED).is_empty());
        for rule in RULES.iter() {
            {
                for literal in rule.needs.literals() {
                    assert!(!literal.contains(['[', ']']), "{literal}");
                    assert_eq!(*literal, literal.to_ascii_lowercase(), "{literal}");
                }
            }
        }
    }

    #[test]
    fn text_without_any_literal_has_no_candidates() {
        for clean in [
            "cargo test: 12 passed in 0.4s",
            "fn main() { println!(\"hello\"); }",
            "日本語のテキストと中文文本",
        ] {
            assert!(candidates(clean).is_empty(), "{clean}");
        }
        let both = candidates("export GITHUB_TOKEN=x; see https://example.com");
        let named = RULES
            .iter()
            .position(|r| r.pattern.contains("(?P<key>") && r.pattern.contains(")[ \\t]*="))
            .unwrap();
        assert!(both.contains(named));
    }

    /// The surroundings checks are what keep ordinary text from compiling rules: a literal
    /// in a word, a URL without a password, a command without its password flag, a secret
    /// word that is not assigned admit nothing.
    #[test]
    fn lookalikes_of_secrets_admit_no_rule() {
        for text in [
            "the task_id is 4 and the desk_lamp is on",
            "mapping the spinning pins; the pin stays",
            "see https://docs.rs/regex/latest and http://localhost:8080/x",
            "curl -s https://example.com | jq .; mysql --version",
            "the monkey pressed a key on the keyboard",
            "rotate the token before the password expires",
            "Authorization is handled by the gateway",
            "client_secret_name was renamed; a.config.js loads",
            "SKIP this step",
            "set max_tokens: 4096 in the request",
            "max_tokens: 4096 # the default",
            "the secret_key and sk-learn and eyJhbGci",
            "secret_key_base: x; ntn_1234 secret_abcdefghijklmnopqrstuvwxyz_0123456789",
        ] {
            let found = candidates(text);
            assert!(
                found.is_empty(),
                "{text}: {:?}",
                found.rules().map(|r| &r.pattern).collect::<Vec<_>>()
            );
        }
        for (text, literal) in [
            ("export API_TOKEN=abc", "token"),
            ("curl -u admin:hunter2 https://h", "curl"),
            ("db: postgres://app:s3cret@db:5432/app", "://"),
            ("my pin is 4711", "pin"),
            ("Authorization: Bearer abc", "authorization"),
            ("--api-key abc", "key"),
            (
                "config:\n  - \"api_token\": s3cr3t-value\r\nnext: 1",
                "token",
            ),
            ("headers:\n\tAuth-Token: 'abc def'", "token"),
            (
                "secret_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
                "secret_",
            ),
            ("ntn_12345678901abcdefghijklmnopqrstuvwxyz012345678", "ntn_"),
        ] {
            let found = candidates(text);
            assert!(
                RULES
                    .iter()
                    .enumerate()
                    .any(|(i, r)| found.contains(i) && r.needs.literals().contains(&literal)),
                "{text}"
            );
        }
    }

    /// `h` with every assertion (`\b`, `^`, `$`) removed: proptest cannot generate from
    /// assertions, and removing them only widens what is generated.
    fn without_assertions(h: &Hir) -> Hir {
        match h.kind() {
            HirKind::Look(_) => Hir::empty(),
            HirKind::Concat(subs) => Hir::concat(subs.iter().map(without_assertions).collect()),
            HirKind::Alternation(subs) => {
                Hir::alternation(subs.iter().map(without_assertions).collect())
            }
            HirKind::Repetition(r) => {
                let mut r = r.clone();
                r.sub = Box::new(without_assertions(&r.sub));
                Hir::repetition(r)
            }
            HirKind::Capture(c) => {
                let mut c = c.clone();
                c.sub = Box::new(without_assertions(&c.sub));
                Hir::capture(c)
            }
            _ => h.clone(),
        }
    }

    /// The claim every skipped search rests on: whenever a rule matches a text, the text is a
    /// candidate for it. Checked on strings generated from each rule's own pattern (so they
    /// exercise every alternative and case variant), 300 per rule. Unicode case folding
    /// (`ſ` for `s`, `K` for `k`) is the one way around a literal and is mapped back to ASCII
    /// here: literals match ASCII case-insensitively, as the prefilter they replaced did.
    #[test]
    fn every_match_holds_one_of_its_rules_literals() {
        let config = Config::default();
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        for (i, rule) in RULES.iter().enumerate() {
            let hir = regex_syntax::parse(&rule.pattern).unwrap();
            let strategy = proptest::string::string_regex_parsed(&without_assertions(&hir))
                .unwrap_or_else(|e| panic!("rule {i}: {e}"));
            let regex = rule.regex().unwrap();
            let mut matched = 0;
            for _ in 0..300 {
                let text = strategy.new_tree(&mut runner).unwrap().current();
                let text = format!(" {text} ");
                let text = text.replace('\u{17f}', "s").replace('\u{212a}', "K");
                if !regex.is_match(&text) {
                    continue;
                }
                matched += 1;
                assert!(
                    candidates(&text).contains(i),
                    "rule {i} ({}) matches {text:?} without one of its literals",
                    rule.pattern
                );
            }
            assert!(matched > 0, "rule {i}: no generated text matched");
        }
    }

    /// Secrets whose rule had no literal in the single prefilter list this index replaced
    /// (`sshpass`, `NRJS-`, `ABIA`, `passphrase`, `pin`), so they were redacted only when the
    /// text happened to hold another rule's literal.
    #[test]
    fn secrets_the_old_literal_list_missed_are_redacted() {
        let text = "sshpass -p hunter2x ssh host; NRJS-abcdefghijklmnopqrstuvwxyz0123 \
                    ABIAIOSFODNN7EXAMPLE; PASSPHRASE=c0rrect-h0rse; my pin is 4711x";
        let out = redact(text);
        for secret in [
            "hunter2x",
            "abcdefghijklmnopqrstuvwxyz0123",
            "IOSFODNN7EXAMPLE",
            "c0rrect-h0rse",
            "4711x",
        ] {
            assert!(!out.contains(secret), "{secret} survived: {out}");
        }
    }
}
