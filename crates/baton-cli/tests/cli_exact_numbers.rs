//! Numbers that `u64`, `i64` and `f64` cannot hold come back as they were through
//! `baton compress` (no-op and compacting, OpenAI and Anthropic files) and through
//! `sessions import` + `sessions export` (issue 13, item 2); and importing a file stores it
//! under the same id as earlier builds did, so a re-import after the upgrade stores nothing twice.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::baton;
use std::path::Path;

/// Over 64 bits, a 39-digit id, one below `i64::MIN`, and a fraction past `f64`'s precision.
const BIG: &str = "98765432109876543210";
const ID39: &str = "123456789012345678901234567890123456789";
const NEG: &str = "-9223372036854775809";
const FRAC: &str = "1.00000000000000000000001";

/// The exact texts each output must hold: record-level fields, a message's extra fields, and
/// a tool call's arguments text.
fn record_fields() -> Vec<String> {
    vec![
        format!(r#""seq":{BIG}"#),
        format!(r#""uid":{ID39}"#),
        format!(r#""neg":{NEG}"#),
        format!(r#""frac":{FRAC}"#),
    ]
}

fn message_fields() -> Vec<String> {
    vec![
        format!(r#""meta":{{"id39":{ID39},"neg":{NEG},"frac":{FRAC}}}"#),
        format!(r#""ref":{BIG}"#),
        format!(r#""n":{FRAC},"big":{ID39},"neg":{NEG}"#),
        format!(r#""arguments":"{{\"id\": {BIG}, \"n\": {NEG}, \"x\": {FRAC}, \"big\": {ID39}}}""#),
    ]
}

/// One OpenAI record: the numbers in the head (kept), ten long middle messages (summarized by
/// a forced compaction), and a tail holding a tool call (kept with `--protect-last 4`).
fn record() -> String {
    let filler: String = (0..80)
        .map(|i| format!("keep going with the parser module rewrite item {i} "))
        .collect();
    let mut messages = vec![
        r#"{"role":"system","content":"You are helpful."}"#.to_string(),
        format!(
            r#"{{"role":"user","content":"Please look up the record.","ref":{BIG},"meta":{{"id39":{ID39},"neg":{NEG},"frac":{FRAC}}}}}"#
        ),
    ];
    for i in 0..10 {
        let role = if i % 2 == 0 { "assistant" } else { "user" };
        messages.push(format!(
            r#"{{"role":"{role}","content":"step {i}: {filler}"}}"#
        ));
    }
    messages.push(format!(
        r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"lookup","arguments":"{{\"id\": {BIG}, \"n\": {NEG}, \"x\": {FRAC}, \"big\": {ID39}}}"}}}}]}}"#
    ));
    messages.push(r#"{"role":"tool","content":"ok","tool_call_id":"c1"}"#.to_string());
    messages.push(format!(
        r#"{{"role":"assistant","content":"done","n":{FRAC},"big":{ID39},"neg":{NEG}}}"#
    ));
    format!(
        r#"{{"id":"big-1","seq":{BIG},"uid":{ID39},"neg":{NEG},"frac":{FRAC},"messages":[{}]}}"#,
        messages.join(",")
    ) + "\n"
}

fn assert_holds(text: &str, wanted: &[String], what: &str) {
    for w in wanted {
        assert!(text.contains(w.as_str()), "{what} lost `{w}`:\n{text}");
    }
}

fn compress(input: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let output = baton()
        .args(["compress", "--report", "json", "-o"])
        .arg(out)
        .args(extra)
        .arg(input)
        .assert()
        .success()
        .get_output()
        .clone();
    serde_json::from_slice(&output.stderr).unwrap()
}

#[test]
fn compress_writes_every_number_back_exactly_noop_and_compacting() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, record()).unwrap();
    let all: Vec<String> = record_fields()
        .into_iter()
        .chain(message_fields())
        .collect();

    let noop = dir.path().join("noop.jsonl");
    let report = compress(&input, &noop, &[]);
    assert_eq!(report["after_messages"], report["before_messages"]);
    let text = std::fs::read_to_string(&noop).unwrap();
    assert_holds(&text, &all, "no-op compress");
    assert_eq!(text, record(), "a no-op writes the record back unchanged");

    let forced = dir.path().join("forced.jsonl");
    let report = compress(
        &input,
        &forced,
        &["--force", "--context-length", "8000", "--protect-last", "4"],
    );
    assert!(
        report["after_messages"].as_u64().unwrap() < report["before_messages"].as_u64().unwrap(),
        "the compaction ran: {report}"
    );
    assert_holds(
        &std::fs::read_to_string(&forced).unwrap(),
        &all,
        "compacting compress",
    );
}

#[test]
fn compress_of_an_anthropic_file_writes_every_number_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.json");
    let body = format!(
        r#"{{"model":"claude-x","max_tokens":100,"seq":{BIG},"messages":[{{"role":"user","content":"hi","meta":{{"id39":{ID39},"frac":{FRAC}}}}},{{"role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"f","input":{{"id":{BIG},"n":{NEG},"x":{FRAC}}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"ok"}}]}}]}}"#
    ) + "\n";
    std::fs::write(&input, &body).unwrap();
    let out = dir.path().join("out.json");
    compress(&input, &out, &[]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), body);
}

#[test]
fn import_then_export_writes_every_message_number_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, record()).unwrap();
    let db = dir.path().join("state.db");
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .arg("import")
        .arg(&input)
        .assert()
        .success();
    let list = baton()
        .args(["sessions", "--json", "--db"])
        .arg(&db)
        .arg("list")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let out = dir.path().join("export.jsonl");
    baton()
        .args(["sessions", "--db"])
        .arg(&db)
        .args(["export", &id, "-o"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_holds(&text, &message_fields(), "import + export");
}

/// Ids derived by hashing the messages are the ones earlier builds (numbers read into
/// u64/i64/f64) derived, for numbers written in any form (`1.50`, `1e3`, `-0`, over 64 bits),
/// in OpenAI arguments text (hashed as written) and in Anthropic `tool_use` input (hashed as
/// the older compact form). The expected ids are what the build before this change stored.
#[test]
fn import_ids_are_the_ids_earlier_builds_gave() {
    let dir = tempfile::tempdir().unwrap();
    let anthropic = dir.path().join("a.json");
    std::fs::write(
        &anthropic,
        r#"{"model":"claude-x","max_tokens":100,"temperature":0.50,"messages":[{"role":"user","content":"weigh it","meta":{"w":2.50,"z":-0,"e":1e3}},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"scale","input":{"kg":1.50,"g":1e3,"big":98765432109876543210}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},{"role":"assistant","content":"1.5 kg"}]}
"#,
    )
    .unwrap();
    let openai = dir.path().join("o.jsonl");
    std::fs::write(
        &openai,
        r#"{"messages":[{"role":"user","content":"weigh it","w":2.50,"e":1e3,"z":-0},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"scale","arguments":"{\"kg\":1.50}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"assistant","content":"done"}]}
"#,
    )
    .unwrap();
    for (file, want) in [
        (&anthropic, "import_4f08e09d2577e6ee"),
        (&openai, "import_11e0d19909b35712"),
    ] {
        let db = dir.path().join(format!("{want}.db"));
        baton()
            .args(["sessions", "--db"])
            .arg(&db)
            .arg("import")
            .arg(file)
            .assert()
            .success();
        let list = baton()
            .args(["sessions", "--json", "--db"])
            .arg(&db)
            .arg("list")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
        assert_eq!(list[0]["id"], want, "{}", file.display());
    }
}
