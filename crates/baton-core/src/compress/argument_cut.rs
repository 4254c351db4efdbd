//! Tool-call arguments with their long string leaves cut: an old call that wrote a whole file
//! keeps its path and the file's first characters, not the file.
//!
//! The result is defined as what parsing the arguments into a `serde_json::Value`, cutting its
//! leaves and serializing gives: compact, keys in their order, numbers as written. That path
//! decodes and allocates every string, whole files included, only to throw most of it away;
//! it was a tenth of compacting a real session (`perf record`, issue #17). [`Rewriter`] writes
//! the same text in one pass instead: structure and short strings are copied in serde_json's
//! compact form, a long leaf is decoded only as far as its cut, and the rest of it is skipped
//! eight bytes at a time while still checked as serde_json checks it (no raw control
//! character, every escape well formed). Whatever it does not copy exactly as serde_json would
//! (a repeated or escaped key, a surrogate escape, deep nesting, broken JSON) makes it give up,
//! and the arguments take the `Value` path, so the result never depends on which path ran.

use crate::byte_scan::closing_quote;
use crate::json_check::Unsure;
use rewriter::Rewriter;
use serde_json::Value;

/// Appended to a string leaf of tool-call arguments that was cut.
pub const ARGS_TRUNCATION_MARKER: &str = "...[truncated]";

/// Tool-call arguments with every string leaf longer than `leaf_max_chars` cut to that many
/// characters plus [`ARGS_TRUNCATION_MARKER`].
///
/// Returns `None` when the arguments are not a JSON object or array (they are then left exactly
/// as they are: slicing them could only make them worse) or when no leaf was long enough. The
/// result always parses; cutting it again returns `None`.
pub fn truncate_tool_call_args(arguments: &str, leaf_max_chars: usize) -> Option<String> {
    // A string's characters never outnumber the bytes of its JSON form, so arguments without
    // a long string token have nothing to cut: most calls skip the parse (issue #17).
    if !has_string_token_longer_than(arguments.as_bytes(), leaf_max_chars) {
        return None;
    }
    match Rewriter::rewrite(arguments, leaf_max_chars) {
        Ok(rewritten) => rewritten,
        Err(Unsure) => through_value(arguments, leaf_max_chars),
    }
}

/// The definition of [`truncate_tool_call_args`], and its path for whatever the rewriter
/// gives up on.
fn through_value(arguments: &str, leaf_max_chars: usize) -> Option<String> {
    let mut value: Value = serde_json::from_str(arguments).ok()?;
    if !(value.is_object() || value.is_array()) {
        return None;
    }
    if !cut_long_leaves(&mut value, leaf_max_chars) {
        return None;
    }
    serde_json::to_string(&value).ok()
}

/// Whether JSON text has a string token (key or value) with more than `max` bytes between
/// its quotes. Text that is not JSON may answer either way; it fails to parse after.
///
/// Each token is read only as far as `max + 1` bytes: a token with no closing quote by then
/// is long, wherever it ends (a written file's content was read to its end here, and again by
/// the rewriter).
fn has_string_token_longer_than(json: &[u8], max: usize) -> bool {
    let mut at = 0;
    while let Some(i) = json.get(at..).and_then(|rest| memchr::memchr(b'"', rest)) {
        let open = at + i + 1;
        // Within the window, a quote closes a token of at most `max` bytes; none found (or an
        // escape running past the window's end) means the token goes on past `max` bytes.
        let window = json.len().min(open.saturating_add(max).saturating_add(1));
        let close = closing_quote(&json[..window], open);
        if close - open > max {
            return true;
        }
        at = close + 1;
    }
    false
}

fn cut_long_leaves(value: &mut Value, max_chars: usize) -> bool {
    match value {
        Value::String(s) => cut_leaf(s, max_chars),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| cut_long_leaves(v, max_chars) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| cut_long_leaves(v, max_chars) | changed),
        _ => false,
    }
}

/// Cuts one string; a leaf this function already cut comes out identical, hence unchanged.
/// The leaf's first `max_chars` characters are sliced, not collected one by one, and a long
/// leaf (a file's whole content) is read only as far as the cut.
fn cut_leaf(leaf: &mut String, max_chars: usize) -> bool {
    let Some(head_end) = crate::truncate::char_start(leaf, max_chars) else {
        return false;
    };
    if leaf[head_end..] == *ARGS_TRUNCATION_MARKER {
        return false;
    }
    leaf.truncate(head_end);
    leaf.push_str(ARGS_TRUNCATION_MARKER);
    true
}

mod rewriter;
#[cfg(test)]
mod tests;
