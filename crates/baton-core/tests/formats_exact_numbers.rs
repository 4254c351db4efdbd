//! Numbers that `u64`, `i64` and `f64` cannot hold come back digit for digit through every
//! writer and through conversion between formats (issue 13, item 2).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use baton_core::formats::{Dialect, FormatName, parse_document};

/// Over 64 bits, a 39-digit id, one below `i64::MIN`, and a fraction past `f64`'s precision.
const NUMBERS: [&str; 4] = [
    "98765432109876543210",
    "123456789012345678901234567890123456789",
    "-9223372036854775809",
    "1.00000000000000000000001",
];

/// One OpenAI record with the numbers at the record level, in a message's extra field, and in
/// a tool call's arguments (which Anthropic and ShareGPT hold as a JSON object).
fn record() -> String {
    let [a, b, c, d] = NUMBERS;
    let args = format!(r#"{{\"id\": {a}, \"big\": {b}, \"n\": {c}, \"x\": {d}}}"#);
    format!(
        r#"{{"id":"r1","seq":{a},"uid":{b},"neg":{c},"frac":{d},"messages":[{{"role":"system","content":"s"}},{{"role":"user","content":"hi","meta":{{"ref":{a},"id39":{b},"neg":{c},"frac":{d}}}}},{{"role":"assistant","content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"lookup","arguments":"{args}"}}}}]}},{{"role":"tool","content":"ok","tool_call_id":"c1"}},{{"role":"assistant","content":"done","n":{d}}}]}}"#
    )
}

fn assert_all_numbers(text: &str, what: &str) {
    for n in NUMBERS {
        assert!(text.contains(n), "{what} lost {n}:\n{text}");
    }
}

#[test]
fn same_format_write_keeps_every_number_text() {
    let input = record();
    let doc = parse_document(&input, Some(FormatName::Object)).unwrap();
    assert_eq!(doc.to_text().trim(), input);
}

#[test]
fn anthropic_and_back_keeps_every_number() {
    let doc = parse_document(&record(), Some(FormatName::Object)).unwrap();
    let anthropic = doc.converted_to(Dialect::Anthropic).to_text();
    // The arguments become the tool_use input object, numbers as numbers.
    assert!(
        anthropic.contains(r#""input":{"id":98765432109876543210,"big":123456789012345678901234567890123456789,"n":-9223372036854775809,"x":1.00000000000000000000001}"#),
        "{anthropic}"
    );
    assert!(
        anthropic.contains(r#""seq":98765432109876543210"#),
        "{anthropic}"
    );
    assert!(
        anthropic.contains(r#""frac":1.00000000000000000000001"#),
        "{anthropic}"
    );
    let back = parse_document(&anthropic, Some(FormatName::Anthropic))
        .unwrap()
        .converted_to(Dialect::OpenAi)
        .to_text();
    assert_all_numbers(&back, "anthropic → openai");
    assert!(
        back.contains(r#"\"id\":98765432109876543210,\"big\":123456789012345678901234567890123456789,\"n\":-9223372036854775809,\"x\":1.00000000000000000000001"#),
        "arguments text: {back}"
    );
    assert!(
        back.contains(r#""id39":123456789012345678901234567890123456789"#),
        "{back}"
    );
    assert!(back.contains(r#""n":1.00000000000000000000001"#), "{back}");
}

#[test]
fn sharegpt_and_back_keeps_every_number() {
    let doc = parse_document(&record(), Some(FormatName::Object)).unwrap();
    let sharegpt = doc.converted_to(Dialect::ShareGpt).to_text();
    assert_all_numbers(&sharegpt, "openai → sharegpt");
    let back = parse_document(&sharegpt, Some(FormatName::ShareGpt))
        .unwrap()
        .converted_to(Dialect::OpenAi)
        .to_text();
    assert_all_numbers(&back, "sharegpt → openai");
    assert!(
        back.contains(r#"\"n\":-9223372036854775809"#),
        "arguments text: {back}"
    );
}
