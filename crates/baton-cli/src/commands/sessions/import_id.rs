//! The session id `sessions import` gives a conversation: the transcript's own id, else a hash
//! of its messages.
//!
//! The hash must not change between Baton versions, or a file imported before an upgrade is
//! stored a second time when it is imported again. serde_json keeps numbers as their source
//! text (`arbitrary_precision`, so `98765432109876543210` is written back exactly); earlier
//! builds read every number into `u64`, `i64` or `f64` and wrote that back (`1.50` as `1.5`,
//! `1e3` as `1000.0`, `98765432109876543210` as `9.876543210987654e+19`). The hash is taken over
//! that older form, so every id stays what it was.

use baton_core::conversation::Conversation;
use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// The transcript's own session id when it has one, else a hash of the messages.
/// `arguments_from_objects`: the reader built tool-call arguments from JSON objects (any
/// format but OpenAI's, where arguments are text kept as it was).
pub(super) fn session_id(c: &Conversation, index: usize, arguments_from_objects: bool) -> String {
    let from_meta = c
        .meta()
        .and_then(|m| m.get("session_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    if let Some(id) = from_meta {
        return id.to_string();
    }
    let mut hasher = Sha256::new();
    for m in &c.messages {
        let mut v = with_machine_numbers(m.to_value());
        if arguments_from_objects {
            arguments_with_machine_numbers(&mut v);
        }
        hasher.update(v.to_string().as_bytes());
        hasher.update(b"\n");
    }
    hasher.update(index.to_le_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("import_{hex}")
}

/// Rewrites each tool call's arguments that are the compact text of a JSON value (as a reader
/// writes an object) with that value's numbers in the older form.
fn arguments_with_machine_numbers(message: &mut Value) {
    let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) else {
        return;
    };
    for call in calls {
        let Some(Value::String(args)) = call.pointer_mut("/function/arguments") else {
            continue;
        };
        let Ok(parsed) = serde_json::from_str::<Value>(args) else {
            continue;
        };
        // Only the reader's compact text; `Value == String` would compare as a JSON string.
        let compact: String = parsed.to_string();
        if compact.as_str() == args.as_str() {
            *args = with_machine_numbers(parsed).to_string();
        }
    }
}

/// `v` with every number as earlier builds wrote it: an integer that fits `u64` or `i64` as
/// that integer (`-0` as the float `-0.0`, as serde_json's parser read it), anything else as
/// the nearest `f64` (`null` when it is not finite).
fn with_machine_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) => machine_number(&n),
        Value::Array(items) => Value::Array(items.into_iter().map(with_machine_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, with_machine_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

fn machine_number(n: &Number) -> Value {
    let negative_zero = n.to_string().starts_with('-') && n.as_i64() == Some(0);
    if let Some(u) = n.as_u64() {
        Value::from(u)
    } else if let (Some(i), false) = (n.as_i64(), negative_zero) {
        Value::from(i)
    } else {
        n.as_f64()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn machine_text(json: &str) -> String {
        with_machine_numbers(serde_json::from_str(json).unwrap()).to_string()
    }

    /// The forms earlier builds wrote (read into u64/i64/f64 and written back), so an id
    /// derived before the upgrade is derived again.
    #[test]
    fn numbers_hash_in_the_form_machine_numbers_wrote() {
        assert_eq!(
            machine_text("[1, -0, -7, 1.50, 1e3, 0.1, 2.0]"),
            "[1,-0.0,-7,1.5,1000.0,0.1,2.0]"
        );
        assert_eq!(
            machine_text("{\"a\": 98765432109876543210, \"b\": -9223372036854775809}"),
            "{\"a\":9.876543210987654e+19,\"b\":-9.223372036854776e+18}"
        );
        assert_eq!(machine_text("1.00000000000000000000001"), "1.0");
        assert_eq!(machine_text("18446744073709551615"), "18446744073709551615");
    }
}
