//! Deterministic secret redaction: what keeps credentials out of summaries.
//!
//! A summary is sent to a summarizer (a local process or a remote model) and then lives on in
//! every later context window, so a key pasted once would otherwise be repeated for the rest of
//! the session. Redaction runs on everything a summarizer sees. It is rule-based and
//! deterministic: the same input always gives the same output, and redacting twice changes
//! nothing, so it can run at every boundary without drift.
//!
//! Rules lean towards redacting when a value is *named* as a secret (`DB_PASSWORD=…`) and
//! towards keeping text when only its *shape* is suggestive: agent transcripts are full of
//! token counts, hashes, UUIDs and code that reads credentials from the environment, and
//! redacting those would cost the summary its facts without protecting anything.

use crate::message::{Content, Message};
use regex::{Captures, Match, Regex};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::LazyLock;

/// What a secret is replaced with. Markers match the reference design's, so summaries from
/// either system read the same.
pub const REDACTED: &str = "[REDACTED]";

/// The text with every recognised secret replaced by [`REDACTED`]; borrowed when nothing was
/// found.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !might_contain_secret(text) {
        return Cow::Borrowed(text);
    }
    let mut out = redact_once(Cow::Borrowed(text));
    // One redaction can complete a pattern an earlier rule saw only in part
    // (`Password=?token=x;` reads as a connection string once the query value is gone), so
    // passes repeat until one changes nothing: that is what makes `redact` idempotent. Each
    // pass that changes anything removes unredacted text, so this ends quickly.
    for _ in 0..MAX_EXTRA_PASSES {
        let Cow::Owned(current) = &out else { break };
        let next = match redact_once(Cow::Borrowed(current.as_str())) {
            Cow::Borrowed(_) => break,
            Cow::Owned(next) => next,
        };
        out = Cow::Owned(next);
    }
    out
}

/// One scan for all rules at once: almost all text has no secret, and running each rule's
/// search separately cost most of a compaction pass on long sessions. A set match only says a
/// rule *may* apply (its confirmation check comes later), so it is a safe prefilter.
fn might_contain_secret(text: &str) -> bool {
    // The set's lazy DFA needs far more than the default 2 MiB cache for 70 rules: with the
    // default it was cleared and rebuilt over and over on long tool outputs (state
    // construction was most of a compaction pass on real transcripts, issue #17).
    static SET: LazyLock<Option<regex::RegexSet>> = LazyLock::new(|| {
        regex::RegexSetBuilder::new(RULES.iter().map(|r| r.regex.as_str()))
            .dfa_size_limit(SET_DFA_CACHE)
            .build()
            .ok()
    });
    static SHAPES: LazyLock<Option<regex::RegexSet>> =
        LazyLock::new(|| regex::RegexSet::new(SHAPE_KEYS).ok());
    let triggered = has_trigger(text)
        && match SET.as_ref() {
            Some(set) => set.is_match(text),
            None => true,
        };
    triggered || (shape_possible(text) && SHAPES.as_ref().is_none_or(|set| set.is_match(text)))
}

/// Whether `text` holds what every [`SHAPE_KEYS`] match needs: the literal `SK`, or a `.`,
/// six token characters and another `.` (the middle of a Discord-style token). Checked with
/// byte scans, because the shapes have no literal prefix of their own: their set's DFA ran
/// over every byte of every message (the largest part of redaction on real transcripts).
fn shape_possible(text: &str) -> bool {
    let bytes = text.as_bytes();
    if memchr::memmem::find(bytes, b"SK").is_some() {
        return true;
    }
    let token = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    memchr::memchr_iter(b'.', bytes)
        .any(|i| bytes.get(i + 7) == Some(&b'.') && bytes[i + 1..i + 7].iter().all(token))
}

/// Lazy-DFA cache of the rule set, per thread that searches with it.
const SET_DFA_CACHE: usize = 16 << 20;

/// Literals at least one of which every rule's match contains (case-insensitively): provider
/// key prefixes, JWT and PEM openings, URL credentials, and the secret-like names. A literal
/// scan runs at memory speed; most text has none of them and skips the rule set entirely.
/// When a rule is added, its literal must be added here (the planted-secret tests go through
/// this prefilter, so a missing literal fails them).
const TRIGGERS: [&str; 71] = [
    "sk-",
    "sk_",
    "rk_",
    "whsec_",
    "aiza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "glrt-",
    "glptt-",
    "gldt-",
    "glcbt-",
    "glft-",
    "gloas-",
    "glsoat-",
    "glagent-",
    "gr1348941",
    "npm_",
    "xox",
    "xapp-",
    "hf_",
    "gsk_",
    "akia",
    "asia",
    "eyj",
    "begin",
    "://",
    "authorization",
    "bearer",
    "passw",
    "pwd",
    "secret",
    "token",
    "credential",
    "key",
    "hooks.slack.com",
    "/api/webhooks/",
    ":aa",
    "sg.",
    "-us",
    "pypi-",
    "rubygems_",
    "dckr_pat_",
    "hvs.",
    "hvb.",
    ".atlasv1.",
    "hrku-",
    "_v1_",
    "shp",
    "r8_",
    "gocspx-",
    "nrak-",
    "sntry",
    "atatt3",
    "lin_api_",
    "ntn_",
    "sq0",
    "$production$",
    ":apa91b",
    "dapi",
    "pmak-",
    "pul-",
    "dp.pt.",
    "q~",
    "pplx-",
    "mysql",
    "mariadb",
];

fn has_trigger(text: &str) -> bool {
    static AC: LazyLock<Option<aho_corasick::AhoCorasick>> = LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(TRIGGERS)
            .ok()
    });
    AC.as_ref().is_none_or(|ac| ac.is_match(text))
}

/// Whether JSON `text` may have an object key with a secret-like name (`"api_key": …`, whose
/// value the JSON pass redacts whatever it looks like): a hint word inside a string that a `:`
/// follows. A hint in a value (`"src/tokenizer.rs"`, `"author"`) is not one: parsing the
/// arguments of every call that mentions a path with `key` or `token` in it was a tenth of a
/// compaction (issue #17). Only ever widens what gets the full treatment.
fn names_a_secret(text: &str) -> bool {
    const HINTS: [&str; 7] = [
        "secret",
        "token",
        "passw",
        "passphrase",
        "credential",
        "key",
        "auth",
    ];
    // One case-insensitive scan for every hint (overlapping: `passw` and `passphrase`).
    static AC: LazyLock<Option<aho_corasick::AhoCorasick>> = LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(HINTS)
            .ok()
    });
    let bytes = text.as_bytes();
    match AC.as_ref() {
        Some(ac) => ac
            .find_overlapping_iter(text)
            .any(|m| string_ends_as_key(&bytes[m.end()..])),
        None => true,
    }
}

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

/// A bound on repeat passes, far above what real text needs, so pathological input cannot loop.
const MAX_EXTRA_PASSES: usize = 8;

fn redact_once(text: Cow<'_, str>) -> Cow<'_, str> {
    RULES.iter().fold(text, |acc, rule| rule.apply(acc))
}

/// True when [`redact`] would change `text`.
pub fn contains_secret(text: &str) -> bool {
    matches!(redact(text), Cow::Owned(_))
}

/// A copy of `m` with secrets redacted from its text content, its tool-call arguments and its
/// reasoning text. Ids, names and unknown fields are kept: they are structure, not prose.
pub fn redact_message(m: &Message) -> Message {
    redact_owned_message(m.clone())
}

/// [`redact_message`] for a message the caller already owns (no copy).
pub fn redact_owned_message(mut out: Message) -> Message {
    if let Some(content) = &mut out.content {
        redact_content(content);
    }
    for call in out.tool_calls.iter_mut().flatten() {
        if let Some(redacted) = redacted_arguments(&call.function.arguments) {
            call.function.arguments = redacted;
        }
    }
    redact_reasoning(&mut out.reasoning);
    out
}

/// A view of a message with its secrets redacted: still borrowed when the message holds none
/// (almost every message), so a pass over a long span copies only what it must change.
pub fn redact_view(view: Cow<'_, Message>) -> Cow<'_, Message> {
    match view {
        Cow::Owned(m) => Cow::Owned(redact_owned_message(m)),
        Cow::Borrowed(m) if holds_secret(m) => Cow::Owned(redact_message(m)),
        borrowed => borrowed,
    }
}

/// Whether [`redact_owned_message`] would change `m`.
fn holds_secret(m: &Message) -> bool {
    let changes = |s: &str| matches!(redact(s), Cow::Owned(_));
    let content = match &m.content {
        Some(Content::Text(s)) => changes(s),
        Some(Content::Parts(parts)) => parts.iter().filter_map(|p| p.text_value()).any(changes),
        _ => false,
    };
    content
        || m.calls()
            .iter()
            .any(|c| redacted_arguments(&c.function.arguments).is_some())
        || (!m.reasoning.is_empty() && {
            let mut reasoning = m.reasoning.clone();
            redact_reasoning(&mut reasoning);
            reasoning != m.reasoning
        })
}

fn redact_content(content: &mut Content) {
    match content {
        Content::Null => {}
        Content::Text(s) => {
            redact_in_place(s);
        }
        Content::Parts(parts) => {
            for part in parts {
                if let Some(Value::String(s)) = part.fields_mut().get_mut("text") {
                    redact_in_place(s);
                }
            }
        }
    }
}

/// Tool-call arguments stay parseable: when they are JSON, only string values inside are
/// rewritten (a value under a secret-named key as a whole), and the JSON is re-serialised only
/// if something changed. Arguments that are not JSON are redacted as text.
/// `None` when nothing in `arguments` is a secret.
fn redacted_arguments(arguments: &str) -> Option<String> {
    if !might_contain_secret(arguments) && !names_a_secret(arguments) {
        return None;
    }
    let Ok(mut value) = serde_json::from_str::<Value>(arguments) else {
        return match redact(arguments) {
            Cow::Owned(r) => Some(r),
            Cow::Borrowed(_) => None,
        };
    };
    if !redact_json(&mut value, None) {
        return None;
    }
    Some(serde_json::to_string(&value).unwrap_or_else(|_| redact(arguments).into_owned()))
}

/// Redacts the strings of `value`; `key` is the object key it sits under, if any. Returns
/// whether anything changed.
fn redact_json(value: &mut Value, key: Option<&str>) -> bool {
    match value {
        Value::String(s) => {
            if key.is_some_and(is_sensitive_name) && is_secret_literal(s) {
                *s = REDACTED.to_string();
                true
            } else {
                redact_in_place(s)
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| redact_json(v, key) | changed),
        Value::Object(map) => map
            .iter_mut()
            .fold(false, |changed, (k, v)| redact_json(v, Some(k)) | changed),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Only human-readable reasoning is touched: signatures and encrypted blobs are opaque, carry
/// no credentials, and must stay byte-exact for providers that verify them.
fn redact_reasoning(reasoning: &mut Map<String, Value>) {
    for (key, value) in reasoning.iter_mut() {
        match value {
            Value::String(s) => {
                redact_in_place(s);
            }
            Value::Array(details) if key == "reasoning_details" => {
                details.iter_mut().for_each(redact_reasoning_detail);
            }
            _ => {}
        }
    }
}

fn redact_reasoning_detail(detail: &mut Value) {
    let Value::Object(obj) = detail else { return };
    for field in ["text", "summary"] {
        match obj.get_mut(field) {
            Some(Value::String(s)) => {
                redact_in_place(s);
            }
            Some(Value::Array(items)) => {
                for item in items {
                    if let Some(Value::String(s)) = item.get_mut("text") {
                        redact_in_place(s);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Redacts `s` in place; returns whether it changed.
fn redact_in_place(s: &mut String) -> bool {
    match redact(s) {
        Cow::Borrowed(_) => false,
        Cow::Owned(new) => {
            *s = new;
            true
        }
    }
}

/// One recognizer: a pattern, and a check on what it matched (regexes alone cannot tell
/// `max_tokens=4096` from `GITHUB_TOKEN=…`).
struct Rule {
    regex: Regex,
    is_secret: Check,
}

/// Decides whether a match (its captures, and the text it would replace) is a secret.
type Check = fn(&Captures<'_>, &str) -> bool;
/// A rule before compilation.
type Spec = (String, Check);

impl Rule {
    /// Replaces the secret part of every accepted match. The search resumes right after the
    /// secret (or, for a rejected match, at its value), never after the whole match: a closing
    /// quote may open the next pair, and `TOKEN_URL=https://h/?token=…` must still find the
    /// inner `token=…`. Resuming the same way whether or not a value was already redacted is
    /// what makes a second pass find nothing new.
    fn apply<'t>(&self, text: Cow<'t, str>) -> Cow<'t, str> {
        let mut out = String::new();
        let mut changed = false;
        let mut copied = 0;
        let mut pos = 0;
        while let Some(caps) = self.regex.captures_at(&text, pos) {
            let Some(whole) = caps.get(0) else { break };
            let span = secret_span(&caps).unwrap_or(whole);
            if (self.is_secret)(&caps, span.as_str()) {
                out.push_str(&text[copied..span.start()]);
                out.push_str(REDACTED);
                copied = span.end();
                changed = true;
                pos = span.end().max(next_char(&text, whole.start()));
            } else if span.start() > whole.start() {
                pos = span.start();
            } else {
                pos = next_char(&text, whole.start());
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
fn secret_span<'t>(caps: &Captures<'t>) -> Option<Match<'t>> {
    caps.name("secret")
        .or_else(|| caps.name("dq"))
        .or_else(|| caps.name("sq"))
        .or_else(|| caps.name("eq"))
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(text.len(), |c| at + c.len_utf8())
}

/// Names a secret may have (matched case-insensitively, then confirmed by
/// [`is_sensitive_name`]).
const SENSITIVE: &str = r"(?:secret|token|passw(?:or)?d|pwd|passphrase|credential|(?:api|private|access|auth)[_.\-]?key)";
/// Characters of a variable, key or flag name.
const NAME: &str = r"[A-Za-z0-9_.\-]";
/// A quoted value, captured without its quotes; `\"…\"` is a quoted value inside a string
/// that was itself JSON-encoded (a tool output quoting a config file, say).
const QUOTED: &str =
    r#"\\"(?P<eq>[^"\\\r\n]*)\\"|"(?P<dq>(?:[^"\\\r\n]|\\.)*)"|'(?P<sq>(?:[^'\\\r\n]|\\.)*)'"#;

/// Provider key formats. Each is distinctive enough by its prefix; [`looks_random`] then
/// rejects lookalikes such as `sk-this-is-a-css-class-name`.
const PROVIDER_KEYS: [&str; 43] = [
    // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-v1-).
    r"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}",
    // Stripe secret and restricted keys, and webhook signing secrets.
    r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"(?-u:\b)whsec_[A-Za-z0-9]{24,}",
    // Google API keys.
    r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
    // GitHub personal, OAuth, user, server and refresh tokens; fine-grained PATs.
    r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}",
    r"(?-u:\b)github_pat_[A-Za-z0-9_]{30,}",
    // GitLab and npm tokens.
    r"(?-u:\b)gl(?:pat|rt|ptt|dt|cbt|ft|oas|soat|agent)-[A-Za-z0-9_\-]{20,}",
    r"(?-u:\b)GR1348941[A-Za-z0-9_\-]{20,}",
    r"(?-u:\b)npm_[A-Za-z0-9]{36,}",
    // Slack bot, app, user, refresh and legacy tokens.
    r"(?-u:\b)xox[baprs]-[A-Za-z0-9\-]{10,}",
    // Hugging Face and Groq.
    r"(?-u:\b)hf_[A-Za-z0-9]{30,}",
    r"(?-u:\b)gsk_[A-Za-z0-9]{40,}",
    // AWS access key ids (long-term and temporary).
    r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
    // Slack app-level tokens.
    r"(?-u:\b)xapp-[0-9]-[A-Za-z0-9\-]{20,}",
    // Telegram bot tokens.
    r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}",
    // age encryption identities.
    r"(?-u:\b)AGE-SECRET-KEY-1[0-9A-Z]{58}",
    // SendGrid, Mailgun, Mailchimp.
    r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)",
    r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
    // PyPI, RubyGems, Docker Hub.
    r"(?-u:\b)pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}",
    r"(?-u:\b)rubygems_[0-9a-f]{48}",
    r"(?-u:\b)dckr_pat_[A-Za-z0-9_\-]{27,}",
    // HashiCorp Vault and Terraform Cloud.
    r"(?-u:\b)hv[sb]\.[A-Za-z0-9_\-]{24,}",
    r"(?-u:\b)[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}",
    // Heroku, DigitalOcean, Shopify.
    r"(?-u:\b)HRKU-[A-Za-z0-9_\-]{30,}",
    r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}",
    r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    // Replicate, Perplexity, Google OAuth client secrets.
    r"(?-u:\b)r8_[A-Za-z0-9]{37}",
    r"(?-u:\b)pplx-[A-Za-z0-9]{40,}",
    r"(?-u:\b)GOCSPX-[A-Za-z0-9_\-]{28}",
    // New Relic, Sentry auth tokens, Atlassian, Linear, Notion.
    r"(?-u:\b)NR(?:AK|II|JS)-[A-Za-z0-9]{27,}",
    r"(?-u:\b)sntry[su]_[A-Za-z0-9_=+/]{30,}",
    r"(?-u:\b)ATATT3[A-Za-z0-9_\-=]{50,}",
    r"(?-u:\b)lin_api_[A-Za-z0-9]{40}",
    r"(?-u:\b)(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})",
    // Square, PayPal/Braintree, Firebase Cloud Messaging.
    r"(?-u:\b)sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",
    r"(?-u:\b)access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}",
    r"(?-u:\b)AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}",
    // Databricks, Postman, Pulumi, Doppler, Azure AD client secrets.
    r"(?-u:\b)dapi[a-f0-9]{32}(?-u:\b)",
    r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    r"(?-u:\b)pul-[a-f0-9]{40}",
    r"(?-u:\b)dp\.pt\.[A-Za-z0-9]{43}",
    r"(?-u:\b)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
];

/// Key formats with no fixed literal to prefilter on; a small set of their own is scanned for
/// every text (Twilio API keys, Discord bot tokens).
const SHAPE_KEYS: [&str; 2] = [
    r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)",
    r"(?-u:\b)[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?-u:\b)",
];

/// Every rule, in the order applied: whole blocks first, so later rules never see half a key.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut specs: Vec<Spec> = vec![(pem_pattern(), always)];
    specs.push((
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}".into(),
        always,
    ));
    specs.extend(
        PROVIDER_KEYS
            .iter()
            .map(|p| (p.to_string(), provider_key as _)),
    );
    specs.extend(
        SHAPE_KEYS
            .iter()
            .map(|p| (p.to_string(), provider_key as _)),
    );
    specs.extend(command_line_patterns());
    specs.extend(credential_patterns());
    // A pattern that fails to compile is a bug caught by `every_rule_compiles`; skipping it
    // here keeps a typo from turning into a panic inside a user's session.
    specs
        .into_iter()
        .filter_map(|(pattern, is_secret)| {
            Regex::new(&pattern)
                .ok()
                .map(|regex| Rule { regex, is_secret })
        })
        .collect()
});

/// PEM private keys: the whole block; when the END line is missing (a cut-off tool output),
/// the BEGIN line and the base64 and header lines after it.
fn pem_pattern() -> String {
    let begin = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----";
    let end = r"-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----";
    let body_line = r"(?:\r?\n|\\n)(?:[A-Za-z0-9+/=]{16,}|[A-Za-z\-]+: [^\r\n\\]*)?";
    format!(r"(?s){begin}(?:.*?{end}|(?:{body_line})*)")
}

/// Passwords as people type them: on command lines (`mysql -pSECRET`, `sshpass -p SECRET`,
/// `curl -u user:pass`), in service connection strings (`AccountKey=…`), in chat webhook URLs,
/// and in prose ("my password is …", "password: …").
fn command_line_patterns() -> Vec<Spec> {
    let bare = r#"(?P<secret>[^\s"'`\-][^\s"'`]*)"#;
    vec![
        (
            format!(
                r"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb|mariadb-dump)(?-u:\b)[^\n|;&]*?[ \t]-p(?:{QUOTED}|{bare})"
            ),
            |_, s| is_secret_literal(s),
        ),
        (
            format!(r"(?-u:\b)sshpass[ \t]+(?:-[A-Za-oq-z]+[ \t]+)*-p[ \t]*(?:{QUOTED}|{bare})"),
            |_, s| is_secret_literal(s),
        ),
        (
            r#"(?-u:\b)curl(?-u:\b)[^\n|;&]*?[ \t](?:-u|--user)[ \t=]*["']?[^\s:"']+:(?P<secret>[^\s"'@]+)"#
                .into(),
            |_, s| is_secret_literal(s),
        ),
        (
            r"(?i)(?-u:\b)(?:Account|SharedAccess)Key[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})".into(),
            always,
        ),
        (
            r"(?-u:\b)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_\-]{20,})".into(),
            always,
        ),
        (
            r"(?-u:\b)discord(?:app)?\.com/api/webhooks/[0-9]+/(?P<secret>[A-Za-z0-9_\-]{30,})".into(),
            always,
        ),
        (
            r"(?-u:\b)https?://(?P<secret>[0-9a-f]{32})@[A-Za-z0-9.\-]*sentry".into(),
            always,
        ),
        (
            r#"(?i)(?-u:\b)(?:my|the|our|your|his|her|their|admin|root|db|database|wifi|sudo|user|account|login)[ \t]+(?:password|passwd|passphrase|passcode|pin)[ \t]+(?:is|was|will be)[ \t]*:?[ \t]+["'`]?(?P<secret>[^\s"'`]*[^\s"'`.,;:!?)])"#.into(),
            |_, s| is_secret_literal(s) && !is_listed(PROSE_WORDS, &s.to_ascii_lowercase()),
        ),
        (
            r#"(?i)(?-u:\b)(?:password|passwd|passphrase)[ \t]*:[ \t]+["'`]?(?P<secret>[^\s"'`]*[^\s"'`.,;:!?)])"#.into(),
            |_, s| {
                is_secret_literal(s)
                    && s.chars().any(|c| !c.is_ascii_alphabetic())
                    && !looks_like_code(s)
                    && !is_listed(PROSE_WORDS, &s.to_ascii_lowercase())
            },
        ),
    ]
}

/// Words that follow "my password is" in prose without being the password.
const PROSE_WORDS: &str = "a an the not required wrong incorrect correct invalid too being still \
    now set stored saved hashed empty missing in on for also same different long short weak \
    strong expired changed this that it just very case what something secret used none null \
    unknown hidden redacted blank needed optional ignored";

/// Credentials recognised by their surroundings rather than their shape.
fn credential_patterns() -> Vec<Spec> {
    let token = r"[A-Za-z0-9\-._~+/]+=*";
    let key = format!("{NAME}*{SENSITIVE}{NAME}*");
    vec![
        // scheme://user:PASSWORD@host — the password may itself contain `@`.
        (
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s/?#"'<>]+)@"#
                .into(),
            |_, s| is_secret_literal(s),
        ),
        (
            format!(
                r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?(?:(?P<scheme>bearer|basic|token|bot)[ \t]+)?(?P<secret>{token})"#
            ),
            authorization_value,
        ),
        (
            format!(r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>{token})"),
            |_, s| looks_like_token(s),
        ),
        // ADO / ODBC connection strings: `Password=two words;` runs to the semicolon.
        (
            r#"(?i)(?-u:\b)(?:password|pwd)[ \t]*=[ \t]*(?P<secret>[^;\r\n"'=]+);"#.into(),
            |_, s| is_secret_literal(s.trim()),
        ),
        // "api_key": "…" and 'password': '…' (JSON, Python, JS object literals).
        (
            format!(r#"(?i)\\?["'](?P<key>{key})\\?["'][ \t]*[:=][ \t]*(?:{QUOTED})"#),
            named_value,
        ),
        // NAME=value (.env, shell, INI, URL query strings, --flag=value).
        (
            format!(
                r#"(?i)(?P<key>{key})[ \t]*=[ \t]*(?:{QUOTED}|(?P<secret>[^\s"'`;,&)}}\]=>\\][^\s"'`;,&)}}\]]*))"#
            ),
            named_value,
        ),
        // --password value
        (
            format!(r#"(?i)--(?P<key>{key})[ \t]+(?P<secret>[^\s"'\-][^\s"']*)"#),
            named_value,
        ),
        // YAML and HTTP headers: `password: value` alone on its line.
        (
            format!(
                r#"(?im)^[ \t]*(?:-[ \t]+)?["']?(?P<key>{key})["']?[ \t]*:[ \t]+(?:{QUOTED}|(?P<secret>[^\s"'\#]\S*))[ \t]*\r?$"#
            ),
            named_value,
        ),
    ]
}

fn always(_: &Captures<'_>, _: &str) -> bool {
    true
}

fn provider_key(_: &Captures<'_>, s: &str) -> bool {
    looks_random(s)
}

/// With an explicit scheme anything token-like is a credential; without one (`Authorization:
/// required`) the value has to look generated.
fn authorization_value(caps: &Captures<'_>, s: &str) -> bool {
    if caps.name("scheme").is_some() {
        s.len() >= 6 && is_secret_literal(s)
    } else {
        looks_like_token(s)
    }
}

/// A value under a secret-named key. Quoted values are literals and always count; bare ones
/// are skipped when they are code (`api_key=os.environ[…]`, `token=get_token()`).
fn named_value(caps: &Captures<'_>, s: &str) -> bool {
    let Some(key) = caps.name("key") else {
        return false;
    };
    if !is_sensitive_name(key.as_str()) {
        return false;
    }
    if caps.name("secret").is_some() {
        is_secret_literal(s) && !looks_like_code(s) && !s.eq_ignore_ascii_case(key.as_str())
    } else {
        is_secret_literal(s)
    }
}

/// Words that make a name a secret's name when a word ends with them (`clientsecret`,
/// `GITHUB_TOKEN`); `tokens` and `tokenizer` do not end with `token`.
const SECRET_WORD_ENDINGS: &str = "secret token password passwd passphrase credential credentials \
    apikey privatekey accesskey secretkey authkey";
/// Words that make `<word> key` a secret's name (`api_key`, `apiKey`, `X-Api-Key`).
const KEY_QUALIFIERS: &str = "api private access secret auth";
/// Last words that make the name describe a secret rather than hold one
/// (`TOKEN_LIMIT`, `PASSWORD_FILE`, `token_type`, `password_reset`).
const PROPERTY_WORDS: &str = "count counts limit limits budget size len length max min type kind \
    ttl url uri endpoint file path dir name id env var expiry expires expiration timeout reset \
    policy hint field header prefix format mode usage provider enabled";
/// First words that make the name a quantity (`max_token`, `num_tokens`).
const QUANTITY_WORDS: &str = "max min num";

fn is_listed(words: &str, word: &str) -> bool {
    words.split_ascii_whitespace().any(|w| w == word)
}

/// Whether `name` (a variable, key, header or flag) names a secret.
fn is_sensitive_name(name: &str) -> bool {
    let words = name_words(name);
    let names_secret = words.iter().enumerate().any(|(i, w)| {
        let ends_like_secret = SECRET_WORD_ENDINGS
            .split_ascii_whitespace()
            .any(|end| w.ends_with(end));
        // `MYSQL_PWD`, `DB_PWD`; `PWD` and `OLDPWD` are the working directory.
        let qualified_pwd = w == "pwd" && i > 0 && words[i - 1] != "old";
        let qualifies_key =
            is_listed(KEY_QUALIFIERS, w) && words.get(i + 1).is_some_and(|n| n == "key");
        ends_like_secret || qualifies_key || qualified_pwd
    });
    let describes_secret = words.last().is_some_and(|w| is_listed(PROPERTY_WORDS, w))
        || words.first().is_some_and(|w| is_listed(QUANTITY_WORDS, w));
    names_secret && !describes_secret
}

/// Lower-cased words of a name, split at non-alphanumerics and camelCase humps.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    words.extend((!current.is_empty()).then_some(current));
    words
}

/// False for empty values, for what redaction already wrote, for placeholders that reference
/// a secret without holding it (`$TOKEN`, `${API_KEY}`, `<your key>`, `****`), and for
/// example prefixes (`sk-...`).
fn is_secret_literal(value: &str) -> bool {
    let v = value.trim();
    let filler_only = v.chars().all(|c| matches!(c, '.' | '…' | '*' | 'x' | 'X'));
    // `sk-...`, `ghp_…`: a key's prefix alone, shown as an example.
    let example_prefix = v
        .strip_suffix("...")
        .or_else(|| v.strip_suffix('…'))
        .is_some_and(|prefix| prefix.len() <= 12 && prefix.ends_with(['-', '_']));
    !(filler_only
        || example_prefix
        || v == REDACTED
        || v.starts_with(['$', '<'])
        || v.starts_with("{{"))
}

/// Words that end an assignment's value in code, never in a config file.
const CODE_KEYWORDS: &str = "none null nil true false undefined await new function async yield \
    require lambda this self typeof try const let var return not";

/// Whether a bare value is an expression rather than a literal: a call, an index, a keyword,
/// a dotted attribute path, or a variable that itself names a secret (`apiKeyValue`,
/// `db_password`).
fn looks_like_code(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let identifier = value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let has_hump = value.contains('_')
        || value
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let variable_naming_a_secret = identifier && has_hump && is_sensitive_name(value);
    let dotted_path = value.contains('.')
        && value.split('.').all(|seg| {
            seg.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    value.contains(['(', '['])
        || value.starts_with(['{', '%', '*'])
        || is_listed(CODE_KEYWORDS, &lower)
        || variable_naming_a_secret
        || dotted_path
}

/// Generated keys mix character classes; words and slugs do not.
fn looks_random(s: &str) -> bool {
    let lower = s.chars().any(|c| c.is_ascii_lowercase());
    let upper = s.chars().any(|c| c.is_ascii_uppercase());
    let digit = s.chars().any(|c| c.is_ascii_digit());
    u8::from(lower) + u8::from(upper) + u8::from(digit) >= 2
}

/// A bearer token: has a digit (nearly every generated token does) or is long and mixed-case;
/// `Bearer authentication` is prose.
fn looks_like_token(s: &str) -> bool {
    let digit = s.chars().any(|c| c.is_ascii_digit());
    let mixed =
        s.chars().any(|c| c.is_ascii_lowercase()) && s.chars().any(|c| c.is_ascii_uppercase());
    is_secret_literal(s) && ((s.len() >= 8 && digit) || (s.len() >= 32 && mixed))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    #[test]
    fn a_view_stays_borrowed_unless_it_holds_a_secret() {
        let clean = Message::tool("c", "cargo test: 12 passed, token count 4096");
        assert!(matches!(
            redact_view(Cow::Borrowed(&clean)),
            Cow::Borrowed(_)
        ));
        let key = "sk-proj-Abcdefghijklmnopqrstuvwx1234";
        for holder in [
            Message::user(format!("use {key} please")),
            Message::assistant_tool_calls(vec![crate::message::ToolCall::function(
                "c",
                "Bash",
                format!(r#"{{"command":"export OPENAI_API_KEY={key}"}}"#),
            )]),
        ] {
            let view = redact_view(Cow::Borrowed(&holder));
            assert!(matches!(view, Cow::Owned(_)), "{holder:?}");
            assert_eq!(*view, redact_message(&holder));
            assert!(!format!("{view:?}").contains(key));
        }
        let mut reasoning = Message::assistant("ok");
        reasoning.reasoning.insert(
            "reasoning".into(),
            Value::String(format!("the key is {key}")),
        );
        assert!(!format!("{:?}", redact_view(Cow::Borrowed(&reasoning))).contains(key));
    }

    #[test]
    fn only_a_key_names_a_secret_in_arguments() {
        for named in [
            r#"{"api_key": "abc"}"#,
            r#"{"a": {"Auth_Token" :"x"}}"#,
            r#"{"x": [1], "DB_PASSWORD":"y"}"#,
            r#"{"my\"key": 1}"#,
        ] {
            assert!(names_a_secret(named), "{named}");
        }
        for unnamed in [
            r#"{"path": "src/tokenizer.rs", "by": "the author, a monkey"}"#,
            r#"{"command": "grep -r key ."}"#,
            "not json with a key in it",
        ] {
            assert!(!names_a_secret(unnamed), "{unnamed}");
        }
        // A named key's value is redacted however plain it looks.
        assert_eq!(
            redact_arguments(r#"{"api_key":"plainvalue123"}"#),
            r#"{"api_key":"[REDACTED]"}"#
        );
    }

    fn redact_arguments(arguments: &str) -> String {
        redacted_arguments(arguments).unwrap_or_else(|| arguments.to_string())
    }

    use super::*;
    use crate::message::{ContentPart, ToolCall};
    use serde_json::json;

    const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MmvYEvPh0aYHL1f\nq8Xd7vL2lC9zJx0k5E1xYb3Fq7Gv+WmTq9nZC0wIDAQABAoIBAQCJ3Fz6c4k==\n-----END RSA PRIVATE KEY-----";

    /// One planted secret per line: kind | text containing it (`\n` for a newline) | the
    /// secret, which must disappear.
    const PLANTED: &str = r#"
openai | key is sk-4fGh7Jk2LmN9pQ3rS6tUv8wXy1zA5bC0dE2fG4hJ ok | sk-4fGh7Jk2LmN9pQ3rS6tUv8wXy1zA5bC0dE2fG4hJ
openai project | use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_Ab7cDe0fGh3. | sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_Ab7cDe0fGh3
anthropic | x-api-key sk-ant-api03-Xy7zAb2cDe5fGh8iJk1lMn4oPq7rSt0uVw3xYz6aBc9dEf2gHi5j-AA | sk-ant-api03-Xy7zAb2cDe5fGh8iJk1lMn4oPq7rSt0uVw3xYz6aBc9dEf2gHi5j-AA
openrouter | OR key: sk-or-v1-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071 | sk-or-v1-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071
google | https://maps.googleapis.com/api?key=AIzaSyD4x7Qm2Lp9Vb3Nk8Jh1Gf6Ds5Aq0Wz2Ec | AIzaSyD4x7Qm2Lp9Vb3Nk8Jh1Gf6Ds5Aq0Wz2Ec
github classic | git push https://ghp_R4nD0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy@github.com/o/r | ghp_R4nD0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy
github fine-grained | github_pat_11ABCDEFG0123456789abc_dEfGhIjKlMnOpQrStUvWxYz0123456789 | github_pat_11ABCDEFG0123456789abc_dEfGhIjKlMnOpQrStUvWxYz0123456789
slack | bot token xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx | xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx
stripe live | stripe: sk_live_51HqLyjWDarjtT1zdp7dcXYZab | sk_live_51HqLyjWDarjtT1zdp7dcXYZab
stripe restricted | rk_live_51HqLyjWDarjtT1zdp7dcQRSde rotated | rk_live_51HqLyjWDarjtT1zdp7dcQRSde
huggingface | huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678 | hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678
groq | gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp | gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp
gitlab | glpat-xY7zAb2cDe5fGh8iJk1l | glpat-xY7zAb2cDe5fGh8iJk1l
authorization header | curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api | 9f8e7d6c5b4a39281706f5e4d3c2b1a0
bearer | send it as bearer tok_81ab29cd0e3f with the request | tok_81ab29cd0e3f
url password | DATABASE at postgres://admin:S3cr3tP4ss@db.internal:5432/app | S3cr3tP4ss
url password with @ | redis://:p@ssw0rd!@cache:6379/0 | p@ssw0rd!
ado password | Server=tcp:db.example.com,1433;User Id=admin;Password=Tr0ub4dor &3;Encrypt=true; | Tr0ub4dor &3
pem | -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7\nq8Xd7vL2lC9zJx0k5E1xYb3Fq7Gv+WmTq9nZC0wIDAQAB==\n-----END RSA PRIVATE KEY----- | MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn
aws key id | AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A | AKIAIOSFODNN7EXAMPLE
aws secret | [default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n | wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
jwt | cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c; | SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c
env password | DB_PASSWORD=hunter2 | hunter2
env token quoted | export GITHUB_TOKEN="abc def 123" | abc def 123
env secret | STRIPE_WEBHOOK_SECRET='whatever-it-is' | whatever-it-is
env credential | GOOGLE_CREDENTIALS=b64:eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0 | b64:eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0
json api key | {"api_key": "c0ffee-and-t34", "model": "gpt"} | c0ffee-and-t34
cli flag | mysqladmin --password s3kr1t status | s3kr1t
yaml | database:\n  password: correct-horse-battery\n  host: db | correct-horse-battery
query string | GET /hook?user=1&access_token=qwertyuiop123&x=2 | qwertyuiop123
json inside json | "{\"api_key\": \"nested-s3cret\", \"x\": 1}" | nested-s3cret
escaped env value | "run: DEPLOY_TOKEN=\"dpl-77aa91\" ./deploy" | dpl-77aa91
"#;

    /// (kind, text, secret) for every line of [`PLANTED`].
    fn planted() -> Vec<(&'static str, String, &'static str)> {
        PLANTED
            .lines()
            .filter(|l| !l.is_empty())
            .map(|line| {
                let mut fields = line.splitn(3, " | ");
                let (kind, text, secret) = (fields.next(), fields.next(), fields.next());
                let text = text.unwrap().replace("\\n", "\n");
                (kind.unwrap(), text, secret.unwrap())
            })
            .collect()
    }

    #[test]
    fn every_rule_compiles() {
        assert_eq!(
            RULES.len(),
            2 + PROVIDER_KEYS.len()
                + SHAPE_KEYS.len()
                + command_line_patterns().len()
                + credential_patterns().len()
        );
    }

    #[test]
    fn each_secret_kind_is_redacted_once_and_for_all() {
        for (kind, text, secret) in planted() {
            let out = redact(&text);
            assert!(!out.contains(secret), "{kind}: {secret} survived in {out}");
            assert!(out.contains(REDACTED), "{kind}: no marker in {out}");
            assert!(contains_secret(&text), "{kind}");
            assert_eq!(redact(&out), out, "{kind}: not idempotent");
        }
    }

    #[test]
    fn names_and_hosts_around_a_secret_are_kept() {
        assert_eq!(redact("DB_PASSWORD=hunter2"), "DB_PASSWORD=[REDACTED]");
        assert_eq!(
            redact("postgres://admin:S3cr3t@db:5432/app"),
            "postgres://admin:[REDACTED]@db:5432/app"
        );
        assert_eq!(redact(r#""token": "abc123""#), r#""token": "[REDACTED]""#);
        assert_eq!(redact("Password=a b;Host=x"), "Password=[REDACTED];Host=x");
        assert_eq!(
            redact("Authorization: Bearer abcdef123456"),
            "Authorization: Bearer [REDACTED]"
        );
        assert_eq!(
            redact(&format!("before\n{PEM}\nafter")),
            "before\n[REDACTED]\nafter"
        );
        assert_eq!(redact("AKIAIOSFODNN7EXAMPLE"), REDACTED);
        let cut_short = "Bearer abcdef123456... (cut) PASSWORD=hunter2...";
        assert_eq!(
            redact(cut_short),
            "Bearer [REDACTED] (cut) PASSWORD=[REDACTED]"
        );
        let multibyte = "clé → DB_PASSWORD=mötörhead ✓ токен Bearer ab12cd34ef56 ключ";
        let expected = "clé → DB_PASSWORD=[REDACTED] ✓ токен Bearer [REDACTED] ключ";
        assert_eq!(redact(multibyte), expected);
    }

    #[test]
    fn a_cut_off_pem_block_is_still_redacted() {
        let cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZW\n...[truncated]";
        let out = redact(cut);
        assert!(!out.contains("b3BlbnNzaC1rZXktdjEA"), "{out}");
        assert!(out.ends_with("...[truncated]"), "{out}");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let texts = [
            "We used 1,200 tokens; max_tokens=4096, prompt_tokens: 1200, TOKEN_LIMIT=8000",
            "Implement the password reset flow and the token refresh endpoint.",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b touched src/auth/token_store.rs",
            "request id 123e4567-e89b-12d3-a456-426614174000 at /home/me/.ssh/id_rsa",
            "Bearer authentication is required; see the Authorization: header docs",
            "api_key=os.environ['OPENAI_API_KEY']\ntoken = get_token()\npassword=self.password",
            "tokenizer=cl100k_base PASSWORD_FILE=/run/secrets/db token_type=bearer",
            "if password == expected: return; while token != None: pass",
            "pip install scikit-learn; class sk-spinner-fading-circle-container-wrapper",
            "https://example.com/path?q=1&page=2 and git@github.com:org/repo.git",
            "api_key: str = None  # set later\n--token-limit 500\napiKey: ${API_KEY}",
            "Password: the user forgot it again. Tokens: 5",
            "export OPENAI_API_KEY=$OPENAI_API_KEY; headers={\"x-api-key\": \"<your key>\"}",
            "with --api-key sk-... in the docs example",
            "const credentials = await setup.getCredentials(); env.CODEMIE_API_KEY = apiKeyValue;",
            r#"{"apiKey": "...", "token": "****"} TOKEN=\"${REVIEW_TOKEN:-}\" let token = try next()"#,
        ];
        for t in texts {
            assert!(
                matches!(redact(t), Cow::Borrowed(_)),
                "changed: {t} -> {}",
                redact(t)
            );
            assert!(!contains_secret(t));
        }
    }

    #[test]
    fn json_arguments_stay_valid_json() {
        let args = r#"{"cmd": "curl -H \"Authorization: Bearer abc123def456\" https://x", "password": "hunter2", "n": 3}"#;
        let out = redact_arguments(args);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["password"], REDACTED);
        assert_eq!(
            v["cmd"],
            "curl -H \"Authorization: Bearer [REDACTED]\" https://x"
        );
        assert_eq!(v["n"], 3);
        let clean = r#"{ "path" : "src/main.rs" }"#;
        assert_eq!(
            redact_arguments(clean),
            clean,
            "untouched arguments keep their formatting"
        );
        assert_eq!(
            redact_arguments("{broken DB_PASSWORD=x1"),
            "{broken DB_PASSWORD=[REDACTED]"
        );
    }

    #[test]
    fn no_planted_secret_survives_redact_message() {
        let mut transcript = Vec::new();
        for (i, (_, text, _)) in planted().into_iter().enumerate() {
            let message = match i % 5 {
                0 => Message::user(text),
                1 => Message::assistant_tool_calls(vec![ToolCall::function(
                    format!("call_{i}"),
                    "terminal",
                    json!({"command": text, "env": {"secret": "plain-value-9"}}).to_string(),
                )]),
                2 => Message::tool(format!("call_{i}"), text),
                3 => {
                    let mut m = Message::assistant("thinking done");
                    m.reasoning.insert("reasoning_content".into(), json!(text));
                    m.reasoning.insert(
                        "reasoning_details".into(),
                        json!([{"type": "reasoning.text", "text": text, "signature": "sig"}]),
                    );
                    m
                }
                _ => {
                    let mut m = Message::user("");
                    m.content = Some(Content::Parts(vec![
                        ContentPart::text(text),
                        ContentPart::image_url("https://example.com/a.png"),
                    ]));
                    m
                }
            };
            transcript.push(message);
        }
        let redacted: Vec<Message> = transcript.iter().map(redact_message).collect();
        let dump = serde_json::to_string(&redacted).unwrap();
        for (kind, _, secret) in planted() {
            assert!(!dump.contains(secret), "{kind}: {secret} survived");
        }
        assert!(!dump.contains("plain-value-9"));
        assert!(
            dump.contains("\"signature\":\"sig\""),
            "opaque fields untouched"
        );
        for m in &redacted {
            for call in m.calls() {
                serde_json::from_str::<Value>(&call.function.arguments).unwrap();
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn idempotent_on_mixed_fragments(parts in proptest::collection::vec(0usize..20, 0..16)) {
            const FRAGMENTS: [&str; 20] = [
                "TOKEN=", "abc123", " ", "Bearer ", "://u:", "@h/", "\"api_key\": \"", "\"",
                "sk-AbCdEf0123456789GhIjKl", "password: x1\n", "=", ";", "'", "\n", "Password=",
                "--token ", "-----BEGIN PRIVATE KEY-----\nAAAABBBBCCCCDDDDEEEE", "?access_token=",
                "Authorization: ", "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl",
            ];
            let text: String = parts.iter().map(|&i| FRAGMENTS[i]).collect();
            let once = redact(&text).into_owned();
            proptest::prop_assert_eq!(redact(&once), once.clone());
        }
    }
}
