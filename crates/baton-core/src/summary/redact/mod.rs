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

mod candidates;
mod dfa_table;
mod judge;
mod near;
mod occurrences;
mod rule;
mod rules;
mod scan_prefixes;
mod scan_table;

use crate::message::{Content, Message};
use candidates::{Candidates, candidates, candidates_and_key_hint};
use judge::{is_secret_literal, is_sensitive_name};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What a secret is replaced with. Markers match the reference design's, so summaries from
/// either system read the same.
pub const REDACTED: &str = "[REDACTED]";

/// The text with every recognised secret replaced by [`REDACTED`]; borrowed when nothing was
/// found.
pub fn redact(text: &str) -> Cow<'_, str> {
    let first = candidates(text);
    if first.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = redact_once(Cow::Borrowed(text), first);
    // One redaction can complete a pattern an earlier rule saw only in part
    // (`Password=?token=x;` reads as a connection string once the query value is gone), so
    // passes repeat until one changes nothing: that is what makes `redact` idempotent. Each
    // pass that changes anything removes unredacted text, so this ends quickly.
    for _ in 0..MAX_EXTRA_PASSES {
        let Cow::Owned(current) = &out else { break };
        // Writing the marker never adds a rule's literal, but it can change a literal's
        // surroundings (`x[REDACTED]` now ends a word), so the candidates are taken again.
        let next = match redact_once(Cow::Borrowed(current.as_str()), candidates(current)) {
            Cow::Borrowed(_) => break,
            Cow::Owned(next) => next,
        };
        out = Cow::Owned(next);
    }
    out
}

/// [`redact`] of a text the caller may already own: the text itself (borrowed or owned, no
/// copy) when nothing was found, for quoting a message's text that may or may not be joined.
pub fn redact_text<'a>(text: Cow<'a, str>) -> Cow<'a, str> {
    match redact(&text) {
        Cow::Owned(redacted) => Cow::Owned(redacted),
        Cow::Borrowed(_) => text,
    }
}

/// A bound on repeat passes, far above what real text needs, so pathological input cannot loop.
const MAX_EXTRA_PASSES: usize = 8;

/// Applies the rules that may match, in order; the others could not change the text.
fn redact_once(text: Cow<'_, str>, candidates: Candidates) -> Cow<'_, str> {
    candidates.rules().fold(text, |acc, rule| rule.apply(acc))
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
    for call in out.tool_calls.iter_mut().flatten() {
        if let Some(redacted) = redacted_arguments(&call.function.arguments) {
            call.function.arguments = redacted;
        }
    }
    redact_owned_text(out)
}

/// A view of a message with its secrets redacted: still borrowed when the message holds none
/// (almost every message), so a pass over a long span copies only what it must change.
pub fn redact_view(view: Cow<'_, Message>) -> Cow<'_, Message> {
    match view {
        Cow::Owned(m) => Cow::Owned(redact_owned_message(m)),
        Cow::Borrowed(m) if text_holds_secret(m) || calls_hold_secret(m) => {
            Cow::Owned(redact_message(m))
        }
        borrowed => borrowed,
    }
}

/// [`redact_view`] of a message's text (content and reasoning) only: its tool calls' arguments
/// are left as written, for a reader that redacts what it shows of a call (the extractive
/// summary and the ledger, through `summary::span_calls`: each call's path, command or
/// pattern). Scanning the whole arguments, a file being written or an edit's old and new text,
/// was a twelfth of a compaction of a real session, for text no summary line shows (issue #17).
pub fn redact_view_text(view: Cow<'_, Message>) -> Cow<'_, Message> {
    match view {
        Cow::Owned(m) => Cow::Owned(redact_owned_text(m)),
        Cow::Borrowed(m) if text_holds_secret(m) => Cow::Owned(redact_owned_text(m.clone())),
        borrowed => borrowed,
    }
}

/// The arguments of a tool call with their secrets redacted, as [`redact_message`] redacts
/// them (string values inside JSON, a value under a secret-named key as a whole); borrowed when
/// nothing is a secret.
pub fn redact_arguments(arguments: &str) -> Cow<'_, str> {
    match redacted_arguments(arguments) {
        Some(redacted) => Cow::Owned(redacted),
        None => Cow::Borrowed(arguments),
    }
}

/// `out` with its content and reasoning redacted, its tool calls untouched.
fn redact_owned_text(mut out: Message) -> Message {
    if let Some(content) = &mut out.content {
        redact_content(content);
    }
    redact_reasoning(&mut out.reasoning);
    out
}

/// Whether [`redact_owned_text`] would change `m`.
fn text_holds_secret(m: &Message) -> bool {
    let changes = |s: &str| matches!(redact(s), Cow::Owned(_));
    let content = match &m.content {
        Some(Content::Text(s)) => changes(s),
        Some(Content::Parts(parts)) => parts.iter().filter_map(|p| p.text_value()).any(changes),
        _ => false,
    };
    content
        || (!m.reasoning.is_empty() && {
            let mut reasoning = m.reasoning.clone();
            redact_reasoning(&mut reasoning);
            reasoning != m.reasoning
        })
}

/// Whether redacting `m`'s tool calls' arguments would change any.
fn calls_hold_secret(m: &Message) -> bool {
    m.calls()
        .iter()
        .any(|c| redacted_arguments(&c.function.arguments).is_some())
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
    let (candidates, names_a_secret) = candidates_and_key_hint(arguments);
    if candidates.is_empty() && !names_a_secret {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    /// An assistant message with `text` and `key` in a call's arguments and in its reasoning.
    fn everywhere(key: &str, text: &str) -> Message {
        let mut m = Message::assistant(text);
        m.tool_calls = Some(vec![crate::message::ToolCall::function(
            "c",
            "Bash",
            format!(r#"{{"command":"curl -H 'Authorization: Bearer {key}' x"}}"#),
        )]);
        m.reasoning
            .insert("reasoning".into(), Value::String(format!("use {key}")));
        m
    }

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
            everywhere(key, &format!("run it with {key}")),
            everywhere(key, "running the tests"),
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
            assert!(candidates_and_key_hint(named).1, "{named}");
        }
        for unnamed in [
            r#"{"path": "src/tokenizer.rs", "by": "the author, a monkey"}"#,
            r#"{"command": "grep -r key ."}"#,
            "not json with a key in it",
        ] {
            assert!(!candidates_and_key_hint(unnamed).1, "{unnamed}");
        }
        // A named key's value is redacted however plain it looks.
        assert_eq!(
            redact_arguments(r#"{"api_key":"plainvalue123"}"#),
            r#"{"api_key":"[REDACTED]"}"#
        );
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
