//! `config.toml` (issue #12 item 2): read by every command, precedence flags > env > file >
//! defaults, errors naming file/line/key, unknown-key warnings with the nearest known key,
//! `config show` provenance, engine selection, and where `compress` got the window from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{baton, sample};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use tempfile::TempDir;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A fresh `BATON_HOME` holding `config` as its config.toml.
fn home_with(config: &str) -> TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    home
}

fn config_file(home: &TempDir) -> String {
    home.path().join("config.toml").display().to_string()
}

/// `baton compress SAMPLE --report json` under `home` with `extra` arguments and `envs`; the
/// parsed report.
fn compress_report(home: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Value {
    let mut cmd = baton();
    cmd.env("BATON_HOME", home);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["compress", "--report", "json", "-o", "-"])
        .arg(sample("tau-bench-airline.jsonl"))
        .args(extra)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // One JSON report per conversation; the first is enough.
    serde_json::from_str(stderr.lines().next().unwrap()).unwrap()
}

const FILE_THRESHOLD: &str = "# tuned for long sessions\n[compression]\nthreshold = 0.9\n";

#[test]
fn without_a_file_the_defaults_apply() {
    let home = tempfile::tempdir().unwrap();
    let r = compress_report(home.path(), &[], &[]);
    assert_eq!(r["settings"]["threshold"]["requested"], 0.5);
    assert_eq!(r["settings"]["threshold"]["from"], "default");
}

#[test]
fn the_file_overrides_the_defaults_and_is_named_with_its_line() {
    let home = home_with(FILE_THRESHOLD);
    let r = compress_report(home.path(), &[], &[]);
    assert_eq!(r["settings"]["threshold"]["requested"], 0.9);
    assert_eq!(
        r["settings"]["threshold"]["from"],
        format!("{} line 3", config_file(&home))
    );
}

#[test]
fn the_environment_overrides_the_file() {
    let home = home_with(FILE_THRESHOLD);
    let r = compress_report(
        home.path(),
        &[],
        &[("CONTEXT_COMPRESSION_THRESHOLD", "0.8")],
    );
    assert_eq!(r["settings"]["threshold"]["requested"], 0.8);
    assert_eq!(
        r["settings"]["threshold"]["from"],
        "environment variable CONTEXT_COMPRESSION_THRESHOLD"
    );
}

#[test]
fn flags_override_the_environment_and_the_file() {
    let home = home_with(FILE_THRESHOLD);
    let env = [("CONTEXT_COMPRESSION_THRESHOLD", "0.8")];
    let r = compress_report(home.path(), &["--threshold", "0.95"], &env);
    assert_eq!(r["settings"]["threshold"]["requested"], 0.95);
    assert_eq!(r["settings"]["threshold"]["from"], "--threshold");
    // `--set` is a flag too, and the command's own flag still wins over it.
    let r = compress_report(home.path(), &["--set", "compression.threshold=0.85"], &env);
    assert_eq!(r["settings"]["threshold"]["from"], "--set");
    let r = compress_report(
        home.path(),
        &["--set", "compression.threshold=0.85", "--threshold", "0.7"],
        &env,
    );
    assert_eq!(r["settings"]["threshold"]["requested"], 0.7);
}

#[test]
fn memory_limits_come_from_the_file_unless_flagged() {
    let home = home_with("[memory]\nmemory_char_limit = 100\nuser_char_limit = 50\n");
    let show = |extra: &[&str]| {
        let out = baton()
            .env("BATON_HOME", home.path())
            .args(["memory", "show", "--json"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<Value>(&out).unwrap()["usage"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(show(&[]).ends_with("0/100 chars"), "{}", show(&[]));
    assert!(show(&["--target", "user"]).ends_with("0/50 chars"));
    assert!(show(&["--memory-limit", "70"]).ends_with("0/70 chars"));
}

#[test]
fn a_wrong_type_fails_every_command_naming_file_line_and_key() {
    let home = home_with("[model]\ndefault = \"gpt-4o\"\n\n[compression]\nthreshold = \"high\"\n");
    for args in [
        vec![
            "tokens",
            sample("tau-bench-airline.jsonl").to_str().unwrap(),
        ],
        vec!["sessions", "list"],
        vec!["memory", "show"],
        vec!["config", "show"],
    ] {
        baton()
            .env("BATON_HOME", home.path())
            .args(&args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(format!(
                "{}:5: `compression.threshold` must be a number greater than 0 and at most 1, found string \"high\"",
                config_file(&home)
            )));
    }
    // The way to find the broken file still works.
    baton()
        .env("BATON_HOME", home.path())
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!("{}\n", config_file(&home)));
}

#[test]
fn invalid_toml_is_an_error_with_its_line() {
    let home = home_with("[compression]\nthreshold = 0.6\nprotect_last_n = \n");
    baton()
        .env("BATON_HOME", home.path())
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}:3:",
            config_file(&home)
        )))
        .stderr(predicate::str::contains("invalid TOML"));
}

#[test]
fn unknown_keys_warn_with_the_nearest_known_key_and_the_command_runs() {
    let home = home_with("[compression]\ntreshold = 0.6\n\n[modle]\ndefault = \"x\"\n");
    baton()
        .env("BATON_HOME", home.path())
        .args(["tokens"])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "warning: {}:2: unknown key `compression.treshold`, ignored (nearest known key: `compression.threshold`)",
            config_file(&home)
        )))
        .stderr(predicate::str::contains(
            "unknown table [modle], ignored (nearest known table: [model])",
        ));
}

#[test]
fn config_show_names_each_values_origin() {
    let home = home_with(
        "[model]\nprovider = \"openai\"\nbase_url = \"http://file.invalid/v1\"\n\n[compression]\nthreshold = 0.9\n\n[pricing.\"my-model\"]\ninput = 1.5\noutput = 6\n",
    );
    let run = |args: &[&str]| {
        baton()
            .env("BATON_HOME", home.path())
            .env("OPENAI_BASE_URL", "http://env.invalid/v1")
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let json: Value = serde_json::from_slice(&run(&[
        "config",
        "show",
        "--json",
        "--set",
        "compression.target_ratio=0.3",
    ]))
    .unwrap();
    let s = &json["settings"];
    assert_eq!(json["exists"], true);
    assert_eq!(s["compression"]["threshold"]["value"], 0.9);
    assert_eq!(s["compression"]["threshold"]["source"], "file");
    assert_eq!(s["compression"]["threshold"]["line"], 6);
    assert_eq!(s["model"]["base_url"]["value"], "http://env.invalid/v1");
    assert_eq!(s["model"]["base_url"]["source"], "env");
    assert_eq!(s["model"]["base_url"]["variable"], "OPENAI_BASE_URL");
    assert_eq!(s["compression"]["target_ratio"]["source"], "flag");
    assert_eq!(s["compression"]["target_ratio"]["flag"], "--set");
    assert_eq!(s["compression"]["protect_last_n"]["source"], "default");
    assert_eq!(s["compression"]["protect_last_n"]["value"], 8);
    assert_eq!(s["context"]["engine"]["value"], "compressor");
    assert_eq!(json["pricing"]["my-model"]["input"], 1.5);
    assert_eq!(json["pricing"]["my-model"]["output"], 6.0);
    assert_eq!(json["pricing"]["my-model"]["cache_read"], Value::Null);

    let text = String::from_utf8(run(&["config", "show"])).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("threshold ")
            && l.contains("= 0.9")
            && l.ends_with("# file, line 6")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("base_url ") && l.ends_with("# env OPENAI_BASE_URL")),
        "{text}"
    );
    assert!(text.contains("[pricing.\"my-model\"]"), "{text}");
}

#[test]
fn openai_base_url_does_not_apply_to_other_providers() {
    let home = home_with("[model]\nprovider = \"ollama\"\nbase_url = \"http://file.invalid\"\n");
    let out = baton()
        .env("BATON_HOME", home.path())
        .env("OPENAI_BASE_URL", "http://env.invalid/v1")
        .args(["config", "show", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["settings"]["model"]["base_url"]["source"], "file");
}

#[test]
fn config_path_is_under_baton_home() {
    let home = tempfile::tempdir().unwrap();
    let out = baton()
        .env("BATON_HOME", home.path())
        .args(["config", "path", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["path"], config_file(&home));
    assert_eq!(json["exists"], false);
}

#[test]
fn the_configured_engine_is_looked_up_in_the_registry() {
    let home = home_with("[context]\nengine = \"lcm\"\n");
    baton()
        .env("BATON_HOME", home.path())
        .args(["compress", "-o", "-"])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "unknown context engine `lcm` (from {} line 2); known engines: compressor",
            config_file(&home)
        )));
    // A flag picks a known engine over the file's unknown one.
    let r = compress_report(home.path(), &["--engine", "compressor"], &[]);
    assert_eq!(r["settings"]["engine"], "compressor");
    let home = home_with("[context]\nengine = \"compressor\"\n");
    let r = compress_report(home.path(), &[], &[]);
    assert_eq!(r["settings"]["engine"], "compressor");
}

#[test]
fn compression_disabled_in_the_file_is_a_stated_no_op_unless_forced() {
    let home = home_with("[compression]\nenabled = false\n");
    let r = compress_report(home.path(), &[], &[]);
    let reason = r["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("compression is disabled") && reason.contains("line 2"),
        "{reason}"
    );
    assert_eq!(r["settings"]["compression_enabled"], false);
    // A small window, so the sample's first conversation has a span worth summarizing beyond
    // the tail's floors.
    let r = compress_report(home.path(), &["--force", "--context-length", "8000"], &[]);
    assert_ne!(r["outcome"]["kind"], "no_op", "{r}");
}

#[test]
fn window_from_flag_file_and_default_is_named() {
    let home = home_with("[model]\ncontext_length = 96000\n");
    let r = compress_report(home.path(), &[], &[]);
    assert_eq!(r["settings"]["context_length"], 96_000);
    assert_eq!(r["settings"]["context_length_source"], "file");
    let r = compress_report(home.path(), &["--context-length", "64000"], &[]);
    assert_eq!(r["settings"]["context_length"], 64_000);
    assert_eq!(r["settings"]["context_length_source"], "flag");
    let empty = tempfile::tempdir().unwrap();
    let r = compress_report(empty.path(), &[], &[]);
    assert_eq!(r["settings"]["context_length"], 200_000);
    assert_eq!(r["settings"]["context_length_source"], "default");

    // The text report says it too.
    baton()
        .env("BATON_HOME", home.path())
        .args(["compress", "-o", "-"])
        .arg(sample("tau-bench-airline.jsonl"))
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "window: 96,000 tokens ({} line 2)",
            config_file(&home)
        )));
}

fn models_fixture() -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures/vllm_models.json");
    std::fs::read_to_string(p).unwrap()
}

/// Runs the binary off the async runtime, so the loopback server keeps serving.
async fn run_blocking(home: std::path::PathBuf, args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        baton()
            .env("BATON_HOME", home)
            .env("OPENAI_API_KEY", "sk-test-config-window")
            .env_remove("OPENAI_BASE_URL")
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_is_discovered_from_the_configured_server() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(models_fixture(), "application/json"))
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    let args: Vec<String> = [
        "compress",
        "--report",
        "json",
        "-o",
        "-",
        sample("tau-bench-airline.jsonl").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();

    // The configured model, found in the server's listing.
    let home = home_with(&format!(
        "[model]\ndefault = \"Qwen/Qwen2.5-7B-Instruct\"\nbase_url = \"{url}\"\n"
    ));
    let out = run_blocking(home.path().to_path_buf(), args.clone()).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(r["settings"]["context_length"], 32_768, "{r}");
    assert_eq!(r["settings"]["context_length_source"], "server");
    let detail = r["settings"]["context_length_detail"].as_str().unwrap();
    assert!(
        detail.contains(&url) && detail.contains("Qwen/Qwen2.5-7B-Instruct"),
        "{detail}"
    );

    // No model configured: the server's only model.
    let home = home_with(&format!("[model]\nbase_url = \"{url}\"\n"));
    let out = run_blocking(home.path().to_path_buf(), args.clone()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(r["settings"]["context_length"], 32_768, "{r}");

    // A model the server does not list and no family knows: the default, saying why.
    let home = home_with(&format!(
        "[model]\ndefault = \"mystery-model\"\nbase_url = \"{url}\"\n"
    ));
    let out = run_blocking(home.path().to_path_buf(), args.clone()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(r["settings"]["context_length"], 200_000, "{r}");
    assert_eq!(r["settings"]["context_length_source"], "default");
    assert!(
        r["settings"]["context_length_detail"]
            .as_str()
            .unwrap()
            .contains("did not report a window for model mystery-model"),
        "{r}"
    );

    // `[model] context_length` wins without asking the server.
    let before = server.received_requests().await.unwrap().len();
    let home = home_with(&format!(
        "[model]\ndefault = \"Qwen/Qwen2.5-7B-Instruct\"\nbase_url = \"{url}\"\ncontext_length = 50000\n"
    ));
    let out = run_blocking(home.path().to_path_buf(), args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(r["settings"]["context_length"], 50_000);
    assert_eq!(server.received_requests().await.unwrap().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_uses_the_configured_server() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(models_fixture(), "application/json"))
        .mount(&server)
        .await;
    let home = home_with(&format!("[model]\nbase_url = \"{}/v1\"\n", server.uri()));
    let out = run_blocking(
        home.path().to_path_buf(),
        vec!["models".into(), "--json".into()],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["models"][0]["id"], "Qwen/Qwen2.5-7B-Instruct");
}

#[test]
fn memory_defaults_match_the_memory_crate() {
    assert_eq!(
        baton_config::config::defaults::MEMORY_CHAR_LIMIT as usize,
        baton_memory::limits::DEFAULT_MEMORY_CHARS
    );
    assert_eq!(
        baton_config::config::defaults::USER_CHAR_LIMIT as usize,
        baton_memory::limits::DEFAULT_USER_CHARS
    );
}

#[test]
fn compression_defaults_match_the_engine() {
    use baton_config::config::defaults as d;
    let engine = baton_core::compress::CompressorConfig::default();
    assert_eq!(d::THRESHOLD, engine.threshold);
    assert_eq!(d::TARGET_RATIO, engine.target_ratio);
    assert_eq!(d::PROTECT_LAST_N as usize, engine.protect_last_n);
    assert_eq!(d::MAX_ATTEMPTS as u32, engine.max_passes_per_turn);
    assert_eq!(d::ENGINE, baton_core::engine::DEFAULT_ENGINE);
}

/// `[auxiliary.compression]` names the summarizing model: `compress` uses it without any
/// `--summarizer` flag, and `provider = "auto"` takes the `[model]` provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auxiliary_compression_model_writes_the_summary() {
    let server = MockServer::start().await;
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures/openai_summary_completion.json");
    // The fixture's two-section stub is what the quality gate rejects; answer with a summary
    // that has the required sections, so the model's summary is the one installed.
    let mut body: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    body["choices"][0]["message"]["content"] = Value::String(
        "## Active Task\nUser asked: continue implementation\n\n## Goal\nFix the failing build.\n\n\
         ## Completed Actions\n1. READ src/main.rs — found the typo [tool: read_file]\n\n\
         ## Active State\n- Build fixed.\n\n## Relevant Files\n- src/main.rs"
            .into(),
    );
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json"))
        .mount(&server)
        .await;
    let home = home_with(&format!(
        "[auxiliary.compression]\nprovider = \"auto\"\nmodel = \"summary-model\"\nbase_url = \"{}/v1\"\n",
        server.uri()
    ));
    let args: Vec<String> = [
        "compress",
        "--force",
        "--context-length",
        "64000",
        "--report",
        "json",
        "-o",
        "-",
        sample("claude-code-session.jsonl").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run_blocking(home.path().to_path_buf(), args).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(r["summarizer"], "llm:summary-model", "{r}");
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["model"], "summary-model");
}

#[test]
fn without_a_home_no_file_is_read_not_even_in_the_working_folder() {
    let cwd = home_with("[compression]\nthreshold = \"broken\"\n");
    baton()
        .env_remove("BATON_HOME")
        .env_remove("HOME")
        .current_dir(cwd.path())
        .args(["config", "show", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"exists\": false"));
}

/// `ping` with no flags at all: provider, server and model come from `[model]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_uses_the_configured_provider_server_and_model() {
    let server = MockServer::start().await;
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../baton-llm/tests/fixtures/anthropic_message.json");
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            std::fs::read_to_string(fixture).unwrap(),
            "application/json",
        ))
        .mount(&server)
        .await;
    let home = home_with(&format!(
        "[model]\nprovider = \"anthropic\"\nbase_url = \"{}\"\ndefault = \"claude-sonnet-4\"\n",
        server.uri()
    ));
    let h = home.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        baton()
            .env("BATON_HOME", h)
            .env("ANTHROPIC_API_KEY", "sk-ant-config-test-0123456")
            .args(["ping", "--json"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["model"], "claude-sonnet-4");
    assert_eq!(report["provider"], "anthropic");
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["model"], "claude-sonnet-4");
}
