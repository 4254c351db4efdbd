//! Bounded views of messages for summarizers.
//!
//! A summarizer reads the start and the end of a long tool result (the command's first error
//! lines, its exit status) and nothing of the middle; the model-facing prompt truncates each
//! message anyway. Cutting long content *before* redaction and summarization keeps a pass
//! proportional to the number of messages rather than to megabytes of build logs, and the
//! marker keeps the exact size of what was cut so counts stay true ("212 lines of output").
//! Cuts fall on line boundaries where one is near, so a secret on a line is either wholly kept
//! (and redacted) or wholly dropped, never half-kept.

use crate::message::{Content, Message};
use crate::truncate::{char_count, grouped};
use memchr::memmem::Finder;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

/// How much of a long text a view keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewLimits {
    /// Bytes kept from the start.
    pub head_bytes: usize,
    /// Bytes kept from the end.
    pub tail_bytes: usize,
}

impl ViewLimits {
    /// For summarizers that read the prompt: what the prompt serializer keeps anyway.
    pub const PROMPT: ViewLimits = ViewLimits {
        head_bytes: 4_000,
        tail_bytes: 1_500,
    };
    /// For the extractive summarizer and the ledger: first error lines and the exit status.
    pub const EXTRACTIVE: ViewLimits = ViewLimits {
        head_bytes: 1_200,
        tail_bytes: 800,
    };
}

const MARKER_OPEN: &str = "[… view omitted ";
const MARKER_LINES: &str = " lines, ";
const MARKER_CLOSE: &str = " chars …]";
/// A break near the cut is preferred when it is at most this far away.
const SNAP_BYTES: usize = 200;

/// `message` with every long text (content, text parts) cut to `limits`.
pub fn message_view(message: &Message, limits: ViewLimits) -> Cow<'_, Message> {
    let needs_cut = |s: &str| s.len() > limits.head_bytes + limits.tail_bytes + SNAP_BYTES;
    let long = match &message.content {
        Some(Content::Text(s)) => needs_cut(s),
        Some(Content::Parts(parts)) => parts.iter().any(|p| p.text_value().is_some_and(needs_cut)),
        _ => false,
    };
    if !long {
        return Cow::Borrowed(message);
    }
    // Built field by field: cloning the message first would copy the long text just to
    // throw it away.
    let content = match &message.content {
        Some(Content::Text(s)) => Some(Content::Text(text_view(s, limits).into_owned())),
        Some(Content::Parts(parts)) => Some(Content::Parts(
            parts
                .iter()
                .map(|part| {
                    let mut part = part.clone();
                    if let Some(Value::String(s)) = part.fields_mut().get_mut("text") {
                        *s = text_view(s, limits).into_owned();
                    }
                    part
                })
                .collect(),
        )),
        other => other.clone(),
    };
    Cow::Owned(message.copy_with(content, message.tool_calls.clone()))
}

/// `text` cut to head + marker + tail when longer than the limits.
pub fn text_view(text: &str, limits: ViewLimits) -> Cow<'_, str> {
    if text.len() <= limits.head_bytes + limits.tail_bytes + SNAP_BYTES {
        return Cow::Borrowed(text);
    }
    let head_end = snap_back_to_line(text, text.floor_char_boundary(limits.head_bytes));
    let tail_start = past_cut_key_block(
        text,
        snap_forward_to_line(
            text,
            text.ceil_char_boundary(text.len() - limits.tail_bytes),
        ),
    );
    if tail_start <= head_end {
        return Cow::Borrowed(text);
    }
    let omitted = &text[head_end..tail_start];
    let lines = memchr::memchr_iter(b'\n', omitted.as_bytes()).count();
    let chars = char_count(omitted);
    Cow::Owned(format!(
        "{}{MARKER_OPEN}{}{MARKER_LINES}{}{MARKER_CLOSE}{}",
        &text[..head_end],
        grouped(lines),
        grouped(chars),
        &text[tail_start..]
    ))
}

/// Lines of the original text a view stands for (its own lines plus those the marker says it
/// omitted). Equals `text.lines().count()` for text that was not cut.
pub fn original_line_count(view: &str) -> usize {
    crate::truncate::line_count(view) + omitted(view).map_or(0, |(lines, _)| lines)
}

/// Characters of the original text a view stands for.
pub fn original_char_count(view: &str) -> usize {
    match omitted(view) {
        Some((_, chars)) => {
            let marker_len = marker_text(view).map_or(0, |m| m.chars().count());
            view.chars().count() - marker_len + chars
        }
        None => view.chars().count(),
    }
}

/// The omission marker, found with a vectorized search (every summarized call's result is
/// searched, most of them for a marker they do not hold), prepared once: building the
/// searcher at each call was half of the search on a real session's short results.
fn marker_text(view: &str) -> Option<&str> {
    static OPEN: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(MARKER_OPEN));
    let start = OPEN.find(view.as_bytes())?;
    let end = view[start..].find(MARKER_CLOSE)? + start + MARKER_CLOSE.len();
    Some(&view[start..end])
}

fn omitted(view: &str) -> Option<(usize, usize)> {
    let marker = marker_text(view)?;
    let inner = marker
        .strip_prefix(MARKER_OPEN)?
        .strip_suffix(MARKER_CLOSE)?;
    let (lines, chars) = inner.split_once(MARKER_LINES)?;
    let num = |s: &str| s.replace(',', "").parse::<usize>().ok();
    Some((num(lines)?, num(chars)?))
}

/// Moves a tail cut past the end of a private-key block whose BEGIN line the cut leaves out.
/// Redaction recognizes a key by its BEGIN line; a tail that starts inside the block would
/// hand the key's last lines and its END line to the summarizer unrecognized. Moving the cut
/// adds the rest of the block to what the marker counts as omitted, so counts stay exact.
fn past_cut_key_block(text: &str, tail_start: usize) -> usize {
    const END: &str = "-----END ";
    let tail = &text[tail_start..];
    let Some(end_at) = tail.find(END) else {
        return tail_start;
    };
    let line_end = tail[end_at..]
        .find('\n')
        .map_or(tail.len(), |i| end_at + i + 1);
    let end_line = &tail[end_at..line_end];
    let ends_key = end_line.contains("PRIVATE KEY") && end_line.trim_end().ends_with("-----");
    if ends_key && !tail[..end_at].contains("-----BEGIN ") {
        tail_start + line_end
    } else {
        tail_start
    }
}

/// Moves a head cut back to just after a newline, when one is within [`SNAP_BYTES`].
fn snap_back_to_line(text: &str, cut: usize) -> usize {
    let from = cut.saturating_sub(SNAP_BYTES);
    memchr::memrchr(b'\n', &text.as_bytes()[from..cut]).map_or(cut, |i| from + i + 1)
}

/// Moves a tail cut forward to just after a newline, when one is within [`SNAP_BYTES`].
fn snap_forward_to_line(text: &str, cut: usize) -> usize {
    let to = (cut + SNAP_BYTES).min(text.len());
    memchr::memchr(b'\n', &text.as_bytes()[cut..to]).map_or(cut, |i| cut + i + 1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn big(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line {i} of the build log\n"))
            .collect()
    }

    #[test]
    fn short_text_is_borrowed_unchanged() {
        let t = "short";
        assert!(matches!(
            text_view(t, ViewLimits::EXTRACTIVE),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn long_text_keeps_head_and_tail_on_line_boundaries_with_exact_counts() {
        let t = big(2_000);
        let v = text_view(&t, ViewLimits::EXTRACTIVE);
        assert!(v.len() < 2_500);
        assert!(v.starts_with("line 0 of the build log\n"));
        assert!(v.ends_with("line 1999 of the build log\n"));
        assert_eq!(original_line_count(&v), t.lines().count());
        assert_eq!(original_char_count(&v), t.chars().count());
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let t = "修复认证模块中的错误。".repeat(500);
        let v = text_view(&t, ViewLimits::EXTRACTIVE);
        assert!(v.contains(MARKER_OPEN));
        assert_eq!(original_char_count(&v), t.chars().count());
    }

    #[test]
    fn a_key_block_cut_at_its_begin_line_is_left_out_of_the_tail() {
        let key_lines: String = (0..40)
            .map(|i| format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:08}KcwggSjAgEAAoIBAQC7\n"))
            .collect();
        let t = format!(
            "{}-----BEGIN OPENSSH PRIVATE KEY-----\n{key_lines}-----END OPENSSH PRIVATE KEY-----\n$ echo done\n",
            big(2_000)
        );
        let v = text_view(&t, ViewLimits::EXTRACTIVE);
        assert!(!v.contains("MIIEvQIBAD"), "{v}");
        assert!(!v.contains("-----END"), "{v}");
        assert!(v.ends_with("$ echo done\n"), "{v}");
        assert_eq!(original_line_count(&v), t.lines().count());
        assert_eq!(original_char_count(&v), t.chars().count());
        // A whole block inside the tail is kept for redaction to replace as a whole.
        let whole = format!(
            "{}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            big(2_000)
        );
        assert!(text_view(&whole, ViewLimits::EXTRACTIVE).contains("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn message_view_cuts_text_parts_and_leaves_short_messages_alone() {
        let m = Message::tool("c1", big(3_000));
        let v = message_view(&m, ViewLimits::PROMPT);
        assert!(matches!(v, Cow::Owned(_)));
        assert_eq!(v.tool_call_id.as_deref(), Some("c1"));
        let short = Message::user("hi");
        assert!(matches!(
            message_view(&short, ViewLimits::PROMPT),
            Cow::Borrowed(_)
        ));
    }
}
