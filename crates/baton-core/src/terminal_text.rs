//! Stored text made safe to print on a terminal.
//!
//! Transcripts hold whatever a tool or a model produced, including escape sequences that a
//! terminal would obey: OSC titles, hyperlinks that hide their target, screen clears, BEL, cursor
//! moves that overwrite earlier lines. Printing such text raw lets a stored session rewrite the
//! reader's screen, so every human-facing view (`sessions show`, `sessions search`, the future
//! interactive view) passes text through [`escape_controls`]; `--raw` and JSON skip it.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` would be obeyed by a terminal rather than drawn: C0 controls other than `\n` and
/// `\t`, DEL, C1 controls (U+0080–U+009F, which some terminals take as 8-bit CSI/OSC), and the
/// bidirectional overrides and isolates that reorder what is shown.
pub fn is_unsafe(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every unsafe character written visibly: ESC as `\x1b`, BEL as `\x07`, other C0
/// controls and DEL as `\xNN`, C1 controls and bidi overrides as `\u{NNNN}`. A `\r` directly
/// before `\n` (a CRLF line end) is kept, since it cannot overwrite anything. Text with nothing
/// to escape is returned borrowed, so the common case costs one scan.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_unsafe(c) || (c == '\r' && chars.peek() == Some(&'\n')) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let t = "héllo\tworld\nnext line ✓";
        assert!(matches!(escape_controls(t), Cow::Borrowed(s) if s == t));
    }

    #[test]
    fn osc_title_hyperlink_clear_and_bel_are_visible() {
        let t = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\";
        let e = escape_controls(t);
        assert!(!e.chars().any(|c| c == '\x1b' || c == '\x07'));
        assert_eq!(
            e,
            "\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;http://evil\\x1b\\link\\x1b]8;;\\x1b\\"
        );
    }

    #[test]
    fn c1_bidi_lone_cr_escaped_crlf_kept() {
        assert_eq!(escape_controls("a\u{9b}2Jb"), "a\\u{009b}2Jb");
        assert_eq!(escape_controls("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(
            escape_controls("ok\r\nbad\roverwrite"),
            "ok\r\nbad\\x0doverwrite"
        );
        assert_eq!(escape_controls("\x00\x7f"), "\\x00\\x7f");
    }
}
