//! The recognizers, in the order they run: key formats by their provider prefix, secrets
//! typed on command lines, and credentials recognised by their surroundings. Each rule names
//! the literals one of which every match of it contains (its [`Needs`]); the tests check that
//! claim against strings generated from the pattern itself.

use super::judge::{
    is_listed, is_secret_literal, is_sensitive_name, looks_like_code, looks_like_token,
    looks_random,
};
use super::near::{self, Shape};
use super::rule::{Check, Found, Needs, Rule};
use std::sync::LazyLock;

/// A rule before it is built.
type Spec = (Needs, String, Check);

/// Names a secret may have (matched case-insensitively, then confirmed by
/// [`is_sensitive_name`]).
const SENSITIVE: &str = r"(?:secret|token|passw(?:or)?d|pwd|passphrase|credential|(?:api|private|access|auth)[_.\-]?key)";
/// What every [`SENSITIVE`] name contains.
const NAMED_KEY: &[&str] = &[
    "secret",
    "token",
    "passw",
    "pwd",
    "passphrase",
    "credential",
    "key",
];
/// Characters of a variable, key or flag name.
const NAME: &str = r"[A-Za-z0-9_.\-]";
/// A quoted value, captured without its quotes; `\"…\"` is a quoted value inside a string
/// that was itself JSON-encoded (a tool output quoting a config file, say).
const QUOTED: &str =
    r#"\\"(?P<eq>[^"\\\r\n]*)\\"|"(?P<dq>(?:[^"\\\r\n]|\\.)*)"|'(?P<sq>(?:[^'\\\r\n]|\\.)*)'"#;

/// Provider key formats. Each is distinctive enough by its prefix; [`looks_random`] then
/// rejects lookalikes such as `sk-this-is-a-css-class-name`.
const PROVIDER_KEYS: [(&[&str], &str); 43] = [
    // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-v1-).
    (&["sk-"], r"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}"),
    // Stripe secret and restricted keys, and webhook signing secrets.
    (
        &["sk_", "rk_"],
        r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    (&["whsec_"], r"(?-u:\b)whsec_[A-Za-z0-9]{24,}"),
    // Google API keys.
    (&["aiza"], r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    // GitHub personal, OAuth, user, server and refresh tokens; fine-grained PATs.
    (
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}",
    ),
    (&["github_pat_"], r"(?-u:\b)github_pat_[A-Za-z0-9_]{30,}"),
    // GitLab and npm tokens.
    (
        &[
            "glpat-", "glrt-", "glptt-", "gldt-", "glcbt-", "glft-", "gloas-", "glsoat-",
            "glagent-",
        ],
        r"(?-u:\b)gl(?:pat|rt|ptt|dt|cbt|ft|oas|soat|agent)-[A-Za-z0-9_\-]{20,}",
    ),
    (&["gr1348941"], r"(?-u:\b)GR1348941[A-Za-z0-9_\-]{20,}"),
    (&["npm_"], r"(?-u:\b)npm_[A-Za-z0-9]{36,}"),
    // Slack bot, app, user, refresh and legacy tokens.
    (&["xox"], r"(?-u:\b)xox[baprs]-[A-Za-z0-9\-]{10,}"),
    // Hugging Face and Groq.
    (&["hf_"], r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
    (&["gsk_"], r"(?-u:\b)gsk_[A-Za-z0-9]{40,}"),
    // AWS access key ids (long-term and temporary).
    (
        &["akia", "asia", "abia", "acca"],
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
    ),
    // Slack app-level tokens.
    (&["xapp-"], r"(?-u:\b)xapp-[0-9]-[A-Za-z0-9\-]{20,}"),
    // Telegram bot tokens.
    (&[":aa"], r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}"),
    // age encryption identities.
    (
        &["age-secret-key-1"],
        r"(?-u:\b)AGE-SECRET-KEY-1[0-9A-Z]{58}",
    ),
    // SendGrid, Mailgun, Mailchimp.
    (
        &["sg."],
        r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    ),
    (&["key-"], r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    (&["-us"], r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)"),
    // PyPI, RubyGems, Docker Hub.
    (
        &["pypi-"],
        r"(?-u:\b)pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}",
    ),
    (&["rubygems_"], r"(?-u:\b)rubygems_[0-9a-f]{48}"),
    (&["dckr_pat_"], r"(?-u:\b)dckr_pat_[A-Za-z0-9_\-]{27,}"),
    // HashiCorp Vault and Terraform Cloud.
    (&["hvs.", "hvb."], r"(?-u:\b)hv[sb]\.[A-Za-z0-9_\-]{24,}"),
    (
        &[".atlasv1."],
        r"(?-u:\b)[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}",
    ),
    // Heroku, DigitalOcean, Shopify.
    (&["hrku-"], r"(?-u:\b)HRKU-[A-Za-z0-9_\-]{30,}"),
    (
        &["doo_v1_", "dop_v1_", "dor_v1_"],
        r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}",
    ),
    (
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    ),
    // Replicate, Perplexity, Google OAuth client secrets.
    (&["r8_"], r"(?-u:\b)r8_[A-Za-z0-9]{37}"),
    (&["pplx-"], r"(?-u:\b)pplx-[A-Za-z0-9]{40,}"),
    (&["gocspx-"], r"(?-u:\b)GOCSPX-[A-Za-z0-9_\-]{28}"),
    // New Relic, Sentry auth tokens, Atlassian, Linear, Notion.
    (
        &["nrak-", "nrii-", "nrjs-"],
        r"(?-u:\b)NR(?:AK|II|JS)-[A-Za-z0-9]{27,}",
    ),
    (
        &["sntrys_", "sntryu_"],
        r"(?-u:\b)sntry[su]_[A-Za-z0-9_=+/]{30,}",
    ),
    (&["atatt3"], r"(?-u:\b)ATATT3[A-Za-z0-9_\-=]{50,}"),
    (&["lin_api_"], r"(?-u:\b)lin_api_[A-Za-z0-9]{40}"),
    (
        &["secret_", "ntn_"],
        r"(?-u:\b)(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})",
    ),
    // Square, PayPal/Braintree, Firebase Cloud Messaging.
    (
        &["sq0atp-", "sq0csp-"],
        r"(?-u:\b)sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",
    ),
    (
        &["access_token$production$"],
        r"(?-u:\b)access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}",
    ),
    (
        &[":apa91b"],
        r"(?-u:\b)AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}",
    ),
    // Databricks, Postman, Pulumi, Doppler, Azure AD client secrets.
    (&["dapi"], r"(?-u:\b)dapi[a-f0-9]{32}(?-u:\b)"),
    (&["pmak-"], r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    (&["pul-"], r"(?-u:\b)pul-[a-f0-9]{40}"),
    (&["dp.pt."], r"(?-u:\b)dp\.pt\.[A-Za-z0-9]{43}"),
    (
        &["q~"],
        r"(?-u:\b)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
    ),
];

/// Key formats with no fixed literal to prefilter on (Twilio API keys, Discord bot tokens):
/// searched only in text with their byte shape ([`Needs::Shape`]).
const SHAPE_KEYS: [(Shape, &str); 2] = [
    (near::twilio_shape, r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)"),
    (
        near::discord_shape,
        r"(?-u:\b)[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?-u:\b)",
    ),
];

/// Where a provider key's literal must sit. A prefix right after the pattern's `(?-u:\b)`
/// (`sk-`, `ghp_`, `AKIA`) starts a word; Mailchimp's `-us` follows 32 hex digits and
/// precedes a digit; a literal inside the pattern (`.atlasv1.`, `:APA91b`, `Q~`) may sit
/// anywhere. The candidate tests check each choice against the pattern.
fn provider_needs(literals: &'static [&'static str], pattern: &str) -> Needs {
    if literals == ["-us"] {
        return Needs::LiteralNear(literals, near::mailchimp);
    }
    if literals == ["secret_", "ntn_"] {
        return Needs::LiteralNear(literals, near::notion);
    }
    let prefix_after_boundary = pattern
        .strip_prefix(r"(?-u:\b)")
        .is_some_and(|rest| !rest.starts_with('[') && !rest.starts_with("(?:["));
    let literals_start_words = literals
        .iter()
        .all(|l| l.starts_with(|c: char| c.is_ascii_alphanumeric()));
    if prefix_after_boundary && literals_start_words {
        Needs::LiteralNear(literals, near::word_start_then_key)
    } else {
        Needs::Literal(literals)
    }
}

/// Every rule, in the order applied: whole blocks first, so later rules never see half a key.
/// Building the list compiles nothing (see [`Rule`]).
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut specs: Vec<Spec> = vec![(Needs::Literal(&["-----begin"]), pem_pattern(), always)];
    specs.push((
        Needs::LiteralNear(&["eyj"], near::word_start_then_key),
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}".into(),
        always,
    ));
    specs.extend(
        PROVIDER_KEYS
            .iter()
            .map(|(needs, p)| (provider_needs(needs, p), p.to_string(), provider_key as _)),
    );
    specs.extend(
        SHAPE_KEYS
            .iter()
            .map(|(shape, p)| (Needs::Shape(*shape), p.to_string(), provider_key as _)),
    );
    specs.extend(command_line_patterns());
    specs.extend(credential_patterns());
    specs
        .into_iter()
        .map(|(needs, pattern, is_secret)| Rule::new(needs, pattern, is_secret))
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
            Needs::LiteralNear(&["mysql", "mariadb"], near::mysql_password),
            format!(
                r"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb|mariadb-dump)(?-u:\b)[^\n|;&]*?[ \t]-p(?:{QUOTED}|{bare})"
            ),
            |_, s| is_secret_literal(s),
        ),
        (
            Needs::LiteralNear(&["sshpass"], near::then_blank),
            format!(r"(?-u:\b)sshpass[ \t]+(?:-[A-Za-oq-z]+[ \t]+)*-p[ \t]*(?:{QUOTED}|{bare})"),
            |_, s| is_secret_literal(s),
        ),
        (
            Needs::LiteralNear(&["curl"], near::curl_user),
            r#"(?-u:\b)curl(?-u:\b)[^\n|;&]*?[ \t](?:-u|--user)[ \t=]*["']?[^\s:"']+:(?P<secret>[^\s"'@]+)"#
                .into(),
            |_, s| is_secret_literal(s),
        ),
        (
            Needs::LiteralNear(&["accountkey", "sharedaccesskey"], near::then_equals),
            r"(?i)(?-u:\b)(?:Account|SharedAccess)Key[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})".into(),
            always,
        ),
        (
            Needs::Literal(&["hooks.slack.com/"]),
            r"(?-u:\b)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_\-]{20,})".into(),
            always,
        ),
        (
            Needs::Literal(&["/api/webhooks/"]),
            r"(?-u:\b)discord(?:app)?\.com/api/webhooks/[0-9]+/(?P<secret>[A-Za-z0-9_\-]{30,})".into(),
            always,
        ),
        (
            Needs::LiteralNear(&["://"], near::sentry_dsn),
            r"(?-u:\b)https?://(?P<secret>[0-9a-f]{32})@[A-Za-z0-9.\-]*sentry".into(),
            always,
        ),
        (
            Needs::LiteralNear(
                &["password", "passwd", "passphrase", "passcode", "pin"],
                near::in_password_sentence,
            ),
            r#"(?i)(?-u:\b)(?:my|the|our|your|his|her|their|admin|root|db|database|wifi|sudo|user|account|login)[ \t]+(?:password|passwd|passphrase|passcode|pin)[ \t]+(?:is|was|will be)[ \t]*:?[ \t]+["'`]?(?P<secret>[^\s"'`]*[^\s"'`.,;:!?)])"#.into(),
            |_, s| is_secret_literal(s) && !is_listed(PROSE_WORDS, &s.to_ascii_lowercase()),
        ),
        (
            Needs::LiteralNear(
                &["password", "passwd", "passphrase"],
                near::then_colon_blank,
            ),
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
            Needs::LiteralNear(&["://"], near::url_with_password),
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s/?#"'<>]+)@"#
                .into(),
            |_, s| is_secret_literal(s),
        ),
        (
            Needs::LiteralNear(&["authorization"], near::then_colon_or_equals),
            format!(
                r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?(?:(?P<scheme>bearer|basic|token|bot)[ \t]+)?(?P<secret>{token})"#
            ),
            authorization_value,
        ),
        (
            Needs::Literal(&["bearer"]),
            format!(r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>{token})"),
            |_, s| looks_like_token(s),
        ),
        // ADO / ODBC connection strings: `Password=two words;` runs to the semicolon.
        (
            Needs::LiteralNear(&["password", "pwd"], near::then_equals),
            r#"(?i)(?-u:\b)(?:password|pwd)[ \t]*=[ \t]*(?P<secret>[^;\r\n"'=]+);"#.into(),
            |_, s| is_secret_literal(s.trim()),
        ),
        // "api_key": "…" and 'password': '…' (JSON, Python, JS object literals).
        (
            Needs::LiteralNear(NAMED_KEY, near::quoted_key),
            format!(r#"(?i)\\?["'](?P<key>{key})\\?["'][ \t]*[:=][ \t]*(?:{QUOTED})"#),
            named_value,
        ),
        // NAME=value (.env, shell, INI, URL query strings, --flag=value).
        (
            Needs::LiteralNear(NAMED_KEY, near::key_equals),
            format!(
                r#"(?i)(?P<key>{key})[ \t]*=[ \t]*(?:{QUOTED}|(?P<secret>[^\s"'`;,&)}}\]=>\\][^\s"'`;,&)}}\]]*))"#
            ),
            named_value,
        ),
        // --password value
        (
            Needs::LiteralNear(NAMED_KEY, near::key_flag),
            format!(r#"(?i)--(?P<key>{key})[ \t]+(?P<secret>[^\s"'\-][^\s"']*)"#),
            named_value,
        ),
        // YAML and HTTP headers: `password: value` alone on its line.
        (
            Needs::LiteralNear(NAMED_KEY, near::key_colon),
            format!(
                r#"(?im)^[ \t]*(?:-[ \t]+)?["']?(?P<key>{key})["']?[ \t]*:[ \t]+(?:{QUOTED}|(?P<secret>[^\s"'\#]\S*))[ \t]*\r?$"#
            ),
            named_value,
        ),
    ]
}

fn always(_: &Found<'_>, _: &str) -> bool {
    true
}

fn provider_key(_: &Found<'_>, s: &str) -> bool {
    looks_random(s)
}

/// With an explicit scheme anything token-like is a credential; without one (`Authorization:
/// required`) the value has to look generated.
fn authorization_value(caps: &Found<'_>, s: &str) -> bool {
    if caps.name("scheme").is_some() {
        s.len() >= 6 && is_secret_literal(s)
    } else {
        looks_like_token(s)
    }
}

/// A value under a secret-named key. Quoted values are literals and always count; bare ones
/// are skipped when they are code (`api_key=os.environ[…]`, `token=get_token()`).
fn named_value(caps: &Found<'_>, s: &str) -> bool {
    let Some(key) = caps.name("key") else {
        return false;
    };
    if !is_sensitive_name(key) {
        return false;
    }
    if caps.name("secret").is_some() {
        is_secret_literal(s) && !looks_like_code(s) && !s.eq_ignore_ascii_case(key)
    } else {
        is_secret_literal(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        assert_eq!(
            RULES.len(),
            2 + PROVIDER_KEYS.len()
                + SHAPE_KEYS.len()
                + command_line_patterns().len()
                + credential_patterns().len()
        );
        for rule in RULES.iter() {
            assert!(rule.regex().is_some(), "{}", rule.pattern);
        }
    }
}
