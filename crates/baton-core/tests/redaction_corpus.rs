//! Secret redaction measured both ways (issue #13 item 8): recall on a planted corpus of
//! credential kinds (each a fake but format-valid value inside realistic surrounding text),
//! and false positives on every message of the shared corpus. Run with `--nocapture` to see
//! the figures quoted in the README.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::compress::{CompressorConfig, Outcome};
use baton_core::message::{Message, ToolCall};
use baton_core::summary::redact::{REDACTED, redact};
use baton_core::summary::{BoxFuture, Summarizer, SummaryError, SummaryInput};
use serde_json::Value;
use std::sync::{Arc, Mutex};

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// `n` pseudo-random characters of `set`, seeded: fake values with the entropy of real ones.
fn rnd(seed: u64, n: usize, set: &str) -> String {
    let set = set.as_bytes();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            set[(x % set.len() as u64) as usize] as char
        })
        .collect()
}

/// (kind, text, secret): each secret planted in the kind of text a user or tool writes.
fn planted() -> Vec<(&'static str, String, String)> {
    let a = |seed, n| rnd(seed, n, ALNUM);
    let h = |seed, n| rnd(seed, n, HEX);
    let mut v: Vec<(&'static str, String, String)> = Vec::new();
    let mut add = |kind: &'static str, secret: String, text: &dyn Fn(&str) -> String| {
        v.push((kind, text(&secret), secret));
    };
    add(
        "aws access key id",
        format!("AKIA{}", rnd(1, 16, UPPER_NUM)),
        &|s| format!("[default]\naws_access_key_id = {s}\nregion = eu-west-1"),
    );
    add(
        "aws secret access key",
        format!("{}/{}", a(2, 20), a(3, 19)),
        &|s| format!("export AWS_SECRET_ACCESS_KEY={s}\n"),
    );
    add("gcp api key", format!("AIza{}", a(4, 35)), &|s| {
        format!("fetch(`https://maps.googleapis.com/maps/api/js?key={s}`)")
    });
    add("gcp service account private_key", a(5, 64), &|s| {
        format!(
            r#"{{"type": "service_account", "private_key_id": "{}", "private_key": "-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----\n"}}"#,
            h(6, 40)
        )
    });
    add(
        "azure storage connection string",
        format!("{}==", a(7, 86)),
        &|s| {
            format!(
                "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net"
            )
        },
    );
    add(
        "azure ad client secret",
        format!("{}8Q~{}", a(8, 3), a(9, 34)),
        &|s| format!("client secret value shown once: {s} (copy it now)"),
    );
    add("github pat classic", format!("ghp_{}", a(10, 36)), &|s| {
        format!("git remote set-url origin https://{s}@github.com/acme/api.git")
    });
    add(
        "github fine-grained pat",
        format!("github_pat_11{}_{}", a(11, 20), a(12, 59)),
        &|s| format!("gh auth login --with-token <<< {s}"),
    );
    add("github oauth token", format!("gho_{}", a(13, 36)), &|s| {
        format!("oauth_token: {s}\nuser: octocat")
    });
    add("github app token", format!("ghs_{}", a(14, 36)), &|s| {
        format!("installation token {s} expires in 1h")
    });
    add("gitlab pat", format!("glpat-{}", a(15, 20)), &|s| {
        format!("curl --header \"PRIVATE-TOKEN: {s}\" https://gitlab.example.com/api/v4/projects")
    });
    add("gitlab runner token", format!("glrt-{}", a(16, 20)), &|s| {
        format!("gitlab-runner register --token {s} --url https://gitlab.com")
    });
    add(
        "slack bot token",
        format!(
            "xoxb-{}-{}-{}",
            rnd(17, 12, "0123456789"),
            rnd(18, 13, "0123456789"),
            a(19, 24)
        ),
        &|s| format!("SLACK_BOT_TOKEN={s}"),
    );
    add(
        "slack user token",
        format!(
            "xoxp-{}-{}-{}-{}",
            rnd(20, 12, "0123456789"),
            rnd(21, 12, "0123456789"),
            rnd(22, 13, "0123456789"),
            h(23, 32)
        ),
        &|s| format!("client = WebClient(token=\"{s}\")"),
    );
    add(
        "slack app token",
        format!(
            "xapp-1-A{}-{}-{}",
            rnd(24, 10, UPPER_NUM),
            rnd(25, 13, "0123456789"),
            h(26, 64)
        ),
        &|s| format!("socket mode with {s}"),
    );
    add(
        "slack webhook",
        format!(
            "T{}/B{}/{}",
            rnd(27, 8, UPPER_NUM),
            rnd(28, 10, UPPER_NUM),
            a(29, 24)
        ),
        &|s| format!("curl -X POST -d '{{\"text\":\"hi\"}}' https://hooks.slack.com/services/{s}"),
    );
    add("discord webhook", a(30, 68), &|s| {
        format!("WEBHOOK = \"https://discord.com/api/webhooks/1234567890123456789/{s}\"")
    });
    add(
        "discord bot token",
        format!("MT{}.{}.{}", a(31, 22), a(32, 6), a(33, 38)),
        &|s| format!("client.run('{s}')"),
    );
    add(
        "telegram bot token",
        format!("{}:AA{}", rnd(34, 10, "0123456789"), a(35, 33)),
        &|s| format!("https://api.telegram.org/bot{s}/sendMessage"),
    );
    add(
        "stripe live secret",
        format!("sk_live_{}", a(36, 24)),
        &|s| format!("stripe.api_key = {s}"),
    );
    add(
        "stripe test secret",
        format!("sk_test_{}", a(37, 24)),
        &|s| format!("Stripe::setApiKey({s});"),
    );
    add(
        "stripe restricted",
        format!("rk_live_{}", a(38, 24)),
        &|s| format!("restricted key {s} for the reporting job"),
    );
    add("twilio api key", format!("SK{}", h(39, 32)), &|s| {
        format!("client = Client({s}, api_secret, account_sid)")
    });
    add(
        "sendgrid",
        format!("SG.{}.{}", a(40, 22), a(41, 43)),
        &|s| format!("sg = SendGridAPIClient({s})"),
    );
    add("mailgun", format!("key-{}", h(42, 32)), &|s| {
        format!("auth=(\"api\", \"{s}\")")
    });
    add("mailchimp", format!("{}-us{}", h(43, 32), 14), &|s| {
        format!("client.set_config({{\"api_key\": {s}, \"server\": \"us14\"}})")
    });
    add("npm token", format!("npm_{}", a(44, 36)), &|s| {
        format!("//registry.npmjs.org/:_authToken={s}")
    });
    add(
        "pypi token",
        format!("pypi-AgEIcHlwaS5vcmc{}", a(45, 60)),
        &|s| format!("twine upload -u __token__ -p {s} dist/*"),
    );
    add("rubygems", format!("rubygems_{}", h(46, 48)), &|s| {
        format!("---\n:rubygems_api_key: {s}\n")
    });
    add("docker hub pat", format!("dckr_pat_{}", a(47, 27)), &|s| {
        format!("echo {s} | docker login -u acme --password-stdin")
    });
    add("vault token", format!("hvs.{}", a(48, 90)), &|s| {
        format!("vault login {s}")
    });
    add(
        "terraform cloud",
        format!("{}.atlasv1.{}", a(49, 14), a(50, 67)),
        &|s| format!("credentials \"app.terraform.io\" {{\n  token = {s}\n}}"),
    );
    add("heroku", format!("HRKU-{}", a(51, 60)), &|s| {
        format!("heroku authorizations:create => {s}")
    });
    add("digitalocean", format!("dop_v1_{}", h(52, 64)), &|s| {
        format!("doctl auth init -t {s}")
    });
    add("shopify", format!("shpat_{}", h(53, 32)), &|s| {
        format!("X-Shopify-Access-Token: {s}")
    });
    add("openai", format!("sk-proj-{}", a(54, 48)), &|s| {
        format!("client = OpenAI(api_key={s})")
    });
    add(
        "anthropic",
        format!("sk-ant-api03-{}-{}AA", a(55, 80), a(56, 10)),
        &|s| format!("here's my key {s} use it"),
    );
    add("huggingface", format!("hf_{}", a(57, 34)), &|s| {
        format!("login(token={s})")
    });
    add("groq", format!("gsk_{}", a(58, 52)), &|s| {
        format!("Groq(api_key={s})")
    });
    add("replicate", format!("r8_{}", a(59, 37)), &|s| {
        format!("replicate.Client({s})")
    });
    add(
        "google oauth client secret",
        format!("GOCSPX-{}", a(60, 28)),
        &|s| format!("client_id=123.apps.googleusercontent.com client {s}"),
    );
    add(
        "jwt",
        format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{}.{}", a(61, 20), a(62, 43)),
        &|s| format!("Cookie: session={s}; Path=/"),
    );
    add("postgres url", a(63, 16), &|s| {
        format!("DATABASE_URL=postgresql://app:{s}@db.internal:5432/app")
    });
    add("mysql url", a(64, 14), &|s| {
        format!("mysql://root:{s}@127.0.0.1:3306/shop")
    });
    add("mongodb url", a(65, 18), &|s| {
        format!("MONGO_URI=\"mongodb+srv://admin:{s}@cluster0.ab12c.mongodb.net/prod\"")
    });
    add("redis url", a(66, 20), &|s| {
        format!("REDIS_URL=rediss://default:{s}@redis-12345.c1.cloud.redislabs.com:12345")
    });
    add("datadog api key", h(67, 32), &|s| {
        format!("DD_API_KEY={s} datadog-agent run")
    });
    add(
        "new relic",
        format!("NRAK-{}", rnd(68, 27, UPPER_NUM)),
        &|s| format!("NEW_RELIC_API_KEY {s}"),
    );
    add("sentry dsn", h(69, 32), &|s| {
        format!("sentry_sdk.init(dsn=\"https://{s}@o450123.ingest.sentry.io/5512345\")")
    });
    add("sentry auth token", format!("sntrys_{}", a(70, 60)), &|s| {
        format!("sentry-cli --auth-token {s} releases new")
    });
    add(
        "atlassian api token",
        format!("ATATT3xFfGF0{}", a(71, 180)),
        &|s| format!("jira login with {s}"),
    );
    add("linear", format!("lin_api_{}", a(72, 40)), &|s| {
        format!("Authorization: {s}")
    });
    add(
        "notion",
        format!("ntn_{}{}", rnd(73, 11, "0123456789"), a(74, 35)),
        &|s| format!("notion = Client(auth={s})"),
    );
    add("square", format!("sq0atp-{}", a(75, 22)), &|s| {
        format!("square access {s}")
    });
    add(
        "braintree",
        format!(
            "access_token$production${}${}",
            rnd(76, 16, "abcdefghijklmnopqrstuvwxyz0123456789"),
            h(77, 32)
        ),
        &|s| format!("gateway = braintree.BraintreeGateway(access_token=\"{s}\")"),
    );
    add(
        "firebase fcm server key",
        format!("AAAA{}:APA91b{}", a(78, 7), a(79, 134)),
        &|s| format!("Authorization: key={s}"),
    );
    add("databricks", format!("dapi{}", h(80, 32)), &|s| {
        format!("databricks configure --token {s}")
    });
    add(
        "postman",
        format!("PMAK-{}-{}", h(81, 24), h(82, 34)),
        &|s| format!("postman login --with-api-key {s}"),
    );
    add(
        "age secret key",
        format!("AGE-SECRET-KEY-1{}", rnd(83, 58, UPPER_NUM)),
        &|s| format!("# created: 2024\n{s}"),
    );
    add("private key at end", a(84, 64), &|s| {
        format!(
            "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----"
        )
    });
    // Passwords as typed on command lines and in chat.
    add("mysql -p", format!("Xk9{}", a(85, 9)), &|s| {
        format!("mysql -u root -p{s} -h db shop < dump.sql")
    });
    add("mysql --password=", format!("Xk9{}", a(86, 9)), &|s| {
        format!("mysqldump --user=root --password={s} shop > shop.sql")
    });
    add("sshpass -p", format!("Xk9{}", a(87, 9)), &|s| {
        format!("sshpass -p '{s}' ssh deploy@10.0.0.5 uptime")
    });
    add("--password value", format!("Xk9{}", a(88, 9)), &|s| {
        format!("psql --host db --password {s} -c 'select 1'")
    });
    add("PGPASSWORD", format!("Xk9{}", a(89, 9)), &|s| {
        format!("PGPASSWORD={s} psql -h db -U app")
    });
    add("MYSQL_PWD", format!("Xk9{}", a(90, 9)), &|s| {
        format!("MYSQL_PWD={s} mysql -u root")
    });
    add("curl -u", format!("Xk9{}", a(91, 9)), &|s| {
        format!("curl -u admin:{s} https://jenkins.example.com/api/json")
    });
    add("url user:pass", format!("Xk9{}", a(92, 9)), &|s| {
        format!("pip install --index-url https://deploy:{s}@pypi.internal/simple pkg")
    });
    add("my password is", "correcthorse7".into(), &|s| {
        format!("ok so my password is {s}. please log in and fix it")
    });
    add("password: in prose", "Tr0ub4dor&3".into(), &|s| {
        format!("the router login is admin, password: {s} — don't share")
    });
    v
}

#[test]
fn planted_corpus_recall_is_total_for_every_kind() {
    let corpus = planted();
    let mut missed = Vec::new();
    for (kind, text, secret) in &corpus {
        let out = redact(text);
        let leaked = out.contains(secret.as_str());
        if leaked || !out.contains(REDACTED) {
            missed.push(format!("{kind}: {out}"));
        }
        assert_eq!(redact(&out), out, "{kind}: not idempotent");
    }
    let kinds = corpus.len();
    println!(
        "redaction recall: {}/{kinds} planted kinds redacted ({:.1}%)",
        kinds - missed.len(),
        100.0 * (kinds - missed.len()) as f64 / kinds as f64
    );
    assert!(kinds >= 40, "at least 40 kinds, have {kinds}");
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
}

#[test]
fn each_command_line_password_form_is_redacted_and_the_command_kept() {
    let cases = [
        (
            "mysql -u root -pS3cr3t! shop",
            "mysql -u root -p[REDACTED] shop",
        ),
        (
            "mysql --password=S3cr3t! shop",
            "mysql --password=[REDACTED] shop",
        ),
        (
            "sshpass -p S3cr3t! ssh host",
            "sshpass -p [REDACTED] ssh host",
        ),
        (
            "sshpass -pS3cr3t! ssh host",
            "sshpass -p[REDACTED] ssh host",
        ),
        (
            "mysqladmin --password S3cr3t! status",
            "mysqladmin --password [REDACTED] status",
        ),
        (
            "PGPASSWORD=S3cr3t! psql -h db",
            "PGPASSWORD=[REDACTED] psql -h db",
        ),
        ("MYSQL_PWD=S3cr3t! mysql", "MYSQL_PWD=[REDACTED] mysql"),
        (
            "curl -u admin:S3cr3t! https://x",
            "curl -u admin:[REDACTED] https://x",
        ),
        (
            "git clone https://bob:S3cr3t!@git.example.com/r.git",
            "git clone https://bob:[REDACTED]@git.example.com/r.git",
        ),
        ("my password is S3cr3t9.", "my password is [REDACTED]."),
    ];
    for (input, expected) in cases {
        assert_eq!(redact(input), expected, "{input}");
    }
    // Look-alikes that hold no password.
    for keep in [
        "mkdir -p build && cc -pthread x.c",
        "mysql -P 3306 -h db",
        "cd $PWD && echo $OLDPWD; PWD=/home/me",
        "the password is required",
        "curl -u $USER:$TOKEN https://x",
    ] {
        assert_eq!(redact(keep), keep, "{keep}");
    }
}

#[test]
fn hashes_uuids_and_digests_are_not_taken_for_keys() {
    for keep in [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id 123e4567-e89b-12d3-a456-426614174000 and etag \"5d41402abc4b2a76b9719d911017c592\"",
        "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
        "docker pull ghcr.io/acme/api@sha256:0b5a1d3c2e4f6a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b",
        "SKIP_TESTS=1 make; see https://example.com/a/b?page=2",
    ] {
        assert_eq!(redact(keep), keep, "{keep}");
    }
}

/// Records every input a summarizer is given.
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Summarizer for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn summarize<'a>(
        &'a self,
        input: SummaryInput<'a>,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        let mut seen = self.0.lock().unwrap();
        seen.push(input.prompt.to_string());
        for m in input.turns {
            seen.push(m.to_json());
        }
        Box::pin(std::future::ready(Ok(
            "## Active Task\nUser asked: inspect the server\n".to_string(),
        )))
    }
}

/// A long tool output whose last lines are a private key: the bounded view keeps the tail
/// but not the BEGIN line far above it.
fn transcript_with_key_at_end() -> (Vec<Message>, Vec<String>) {
    let body: Vec<String> = (0..30).map(|i| rnd(200 + i, 64, ALNUM)).collect();
    let log: String = (0..400)
        .map(|i| format!("[{i:04}] building module {i} ... ok\n"))
        .collect();
    let output = format!(
        "{log}$ cat /etc/ssl/private/server.key\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
        body.join("\n")
    );
    let mut m = vec![
        Message::system("You operate servers."),
        Message::user("build it and show me the server key file"),
        Message::assistant_tool_calls(vec![ToolCall::function(
            "c1",
            "Bash",
            r#"{"command":"make && cat /etc/ssl/private/server.key"}"#,
        )]),
        Message::tool("c1", output),
        Message::assistant("Built; the key is in place."),
    ];
    common::filler::push_routine_steps(&mut m, 40);
    (m, body)
}

#[test]
fn a_key_at_the_end_of_a_long_output_reaches_no_summarizer_input() {
    let (transcript, body) = transcript_with_key_at_end();
    // A summarizer that reads the prompt (the exec and model path) ...
    let seen = Arc::new(Mutex::new(Vec::new()));
    let config = CompressorConfig {
        context_length: 8_000,
        protect_first_n: 1,
        protect_last_n: 3,
        summarizer: Arc::new(Recorder(seen.clone())),
        ..CompressorConfig::default()
    };
    let result = common::compress_with(&transcript, config, true);
    assert_eq!(result.outcome, Outcome::Compressed);
    let seen = seen.lock().unwrap().join("\n");
    assert!(
        seen.contains("building module"),
        "the tool output was summarized: {seen}"
    );
    // ... and the extractive summarizer (its bounded views).
    let extractive = common::compress_with(
        &transcript,
        CompressorConfig {
            context_length: 8_000,
            protect_first_n: 1,
            protect_last_n: 3,
            ..CompressorConfig::default()
        },
        true,
    );
    assert_eq!(extractive.outcome, Outcome::Compressed);
    let summary = extractive.summary.unwrap_or_default();
    for line in &body {
        assert!(
            !seen.contains(line.as_str()),
            "summarizer saw key line {line}"
        );
        assert!(
            !summary.contains(line.as_str()),
            "summary kept key line {line}"
        );
    }
    assert!(!seen.contains("-----END RSA PRIVATE KEY-----"));
}

#[test]
fn false_positives_on_the_shared_corpus_are_reported() {
    let Some(files) = common::shared_normalized_files() else {
        return;
    };
    let (mut texts, mut changed, mut markers) = (0usize, 0usize, 0usize);
    let mut samples = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let mut all = Vec::new();
            common::json_strings(&value, &mut all);
            for s in all {
                texts += 1;
                let out = redact(s);
                if out.as_ref() != s {
                    changed += 1;
                    markers += out.matches(REDACTED).count() - s.matches(REDACTED).count();
                    if samples.len() < 60 {
                        let at = out.find(REDACTED).unwrap_or(0);
                        let from = out.floor_char_boundary(at.saturating_sub(60));
                        let to = out.ceil_char_boundary((at + 40).min(out.len()));
                        samples.push(format!(
                            "  {}: …{}…",
                            file.file_name().unwrap().to_string_lossy(),
                            out[from..to].replace('\n', "⏎")
                        ));
                    }
                }
            }
        }
    }
    println!(
        "redaction on shared corpus: {changed} of {texts} strings changed ({:.3}%), {markers} redactions",
        100.0 * changed as f64 / texts.max(1) as f64
    );
    println!("sample:\n{}", samples.join("\n"));
    assert!(texts > 0);
}
