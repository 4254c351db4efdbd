//! Tests of the quick array reading against `serde_json`'s reader.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Arrays well formed, and broken in each way the quick reading hands over on.
fn arrays() -> Vec<String> {
    let rec = |i: u32| {
        format!(
            r#"{{"id": {i}, "conversations": [{{"from": "human", "value": "q \"{i}\" \u00e9 ]}}[ 1.50e3"}}]}}"#
        )
    };
    let deep = |n: usize| {
        format!(
            r#"{{"messages": [], "x": {}1{}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let mut texts = vec![
        format!("[{}, {}]", rec(1), rec(2)),
        format!("\u{feff}[\n  {},\n\n  {}\n]\n", rec(1), rec(2)),
        "[]".to_string(),
        " [ ]\n".to_string(),
        format!("[{},]", rec(1)),
        format!("[{}] x", rec(1)),
        format!("[{}, {}", rec(1), rec(2)),
        format!("[{}, {{\"messa", rec(1)),
        format!("[{} {}]", rec(1), rec(2)),
        format!("[{}, \"text\"]", rec(1)),
        "[\"text\", 1]".to_string(),
        format!(r#"[{}, {{"messages": [], "bad": "\q"}}]"#, rec(1)),
        format!("[{}, {{\"messages\": [], \"raw\": \"a\u{1}b\"}}]", rec(1)),
    ];
    // Nesting around serde_json's recursion limit (which a `RawValue` element escapes).
    texts.extend([123, 126, 127, 128, 300].map(|n| format!("[{}, {}]", rec(1), deep(n))));
    texts.push(format!("[{}]", deep(300)));
    texts
}

fn problem(p: &ArrayProblem) -> String {
    match p {
        ArrayProblem::Io(e) => format!("io {e}"),
        ArrayProblem::Json(e) => format!("json {e}"),
        ArrayProblem::FirstRecord(e) => format!("first {e}"),
    }
}

/// The quick check counts and refuses as `serde_json`'s reader does, or hands over; and
/// it hands over only where something is unexpected.
#[test]
fn the_quick_check_agrees_with_the_serde_reader() {
    // Invalid UTF-8 inside a string of the first element and of a later one.
    let bytes_cases = [
        b"[{\"messages\": [], \"x\": \"\xff\"}, {\"messages\": []}]".to_vec(),
        b"[{\"messages\": []}, {\"messages\": [], \"x\": \"\xff\xfe\"}]".to_vec(),
    ];
    let texts = arrays().into_iter().map(String::into_bytes);
    for text in texts.chain(bytes_cases) {
        let body = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&text);
        let shown = String::from_utf8_lossy(&text);
        let serde = scan_array(body).map_err(|e| problem(&e));
        match quick_scan(body) {
            None => assert!(serde.is_err(), "handed over a readable array: {shown}"),
            Some(quick) => assert_eq!(quick.map_err(|e| problem(&e)), serde, "{shown}"),
        }
    }
    assert!(matches!(quick_scan(arrays()[0].as_bytes()), Some(Ok(2))));
    assert!(matches!(quick_scan(arrays()[3].as_bytes()), Some(Ok(0))));
    assert!(matches!(
        quick_scan(arrays()[10].as_bytes()),
        Some(Err(ArrayProblem::FirstRecord(_)))
    ));
}

/// A file read quickly hands on the same elements, and ends with the same error, as
/// `serde_json`'s reader: after a hand-over nothing is repeated or lost.
#[test]
fn a_file_array_streams_as_the_serde_reader_streams_it() {
    let dir = tempfile::tempdir().unwrap();
    let drain = |mut src: ArraySource| {
        let mut out = Vec::new();
        loop {
            match src.next_item() {
                Ok(Some(item)) => out.push(Ok((item.number, item.bytes))),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    };
    for (i, text) in arrays().iter().enumerate() {
        let path = dir.path().join(format!("array{i}.json"));
        std::fs::write(&path, text).unwrap();
        let quick = drain(ArraySource::spawn_file(&path).unwrap());
        let serde = drain(ArraySource::spawn(std::fs::File::open(&path).unwrap()).unwrap());
        assert_eq!(quick, serde, "{text}");
    }
}
