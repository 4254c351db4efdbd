//! Judging what a pattern matched: whether a name names a secret, and whether a value is a
//! literal secret rather than code, a placeholder or a word.

use super::REDACTED;

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

pub(super) fn is_listed(words: &str, word: &str) -> bool {
    words.split_ascii_whitespace().any(|w| w == word)
}

/// Whether `name` (a variable, key, header or flag) names a secret.
pub(super) fn is_sensitive_name(name: &str) -> bool {
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
pub(super) fn is_secret_literal(value: &str) -> bool {
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
pub(super) fn looks_like_code(value: &str) -> bool {
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
pub(super) fn looks_random(s: &str) -> bool {
    let lower = s.chars().any(|c| c.is_ascii_lowercase());
    let upper = s.chars().any(|c| c.is_ascii_uppercase());
    let digit = s.chars().any(|c| c.is_ascii_digit());
    u8::from(lower) + u8::from(upper) + u8::from(digit) >= 2
}

/// A bearer token: has a digit (nearly every generated token does) or is long and mixed-case;
/// `Bearer authentication` is prose.
pub(super) fn looks_like_token(s: &str) -> bool {
    let digit = s.chars().any(|c| c.is_ascii_digit());
    let mixed =
        s.chars().any(|c| c.is_ascii_lowercase()) && s.chars().any(|c| c.is_ascii_uppercase());
    is_secret_literal(s) && ((s.len() >= 8 && digit) || (s.len() >= 32 && mixed))
}
