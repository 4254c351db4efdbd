//! Markdown for a plain terminal, rendered as the answer streams in: fenced code blocks in
//! their own colour between dim fence lines, headings in bold without their `#`s, list
//! bullets as `•`, `inline code` coloured and `**bold**` bold. Text is written as soon as it
//! can be classified: a line's first few characters are held until it is clear whether they
//! open a fence, a heading or a list item, and a lone `*` until the next character says
//! whether it starts `**`. With colour off (`NO_COLOR`, or a terminal that asked for none)
//! the Markdown is written unchanged, so nothing it says is lost.

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";

/// How the current line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// Not classified yet: its first characters are held.
    Undecided,
    Text,
    Heading,
    Quote,
    Fence,
    Code,
}

#[derive(Debug)]
pub struct MarkdownStream {
    color: bool,
    kind: LineKind,
    held: String,
    /// Inside a fenced block, and the fence that opened it (``` or ~~~).
    fence: Option<char>,
    code_span: bool,
    bold: bool,
    held_star: bool,
    at_line_start: bool,
}

impl MarkdownStream {
    pub fn new(color: bool) -> Self {
        MarkdownStream {
            color,
            kind: LineKind::Undecided,
            held: String::new(),
            fence: None,
            code_span: false,
            bold: false,
            held_star: false,
            at_line_start: true,
        }
    }

    /// Whether the last text written ended a line (the prompt needs a newline otherwise).
    pub fn at_line_start(&self) -> bool {
        self.at_line_start
    }

    /// Renders a piece of the answer; returns what to write now.
    pub fn feed(&mut self, text: &str) -> String {
        let text = baton_core::terminal_text::escape_controls(text);
        let mut out = String::with_capacity(text.len() + 16);
        if !self.color {
            out.push_str(&text);
            if let Some(last) = text.chars().last() {
                self.at_line_start = last == '\n';
            }
            return out;
        }
        for c in text.chars() {
            self.push_char(c, &mut out);
        }
        out
    }

    /// The answer ended: writes what is held and closes every style.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.color {
            return out;
        }
        if self.kind == LineKind::Undecided && !self.held.is_empty() {
            // The answer stopped mid-marker: what is held is literal text.
            out.push_str(&std::mem::take(&mut self.held));
        }
        if self.held_star {
            out.push('*');
            self.held_star = false;
        }
        if self.kind != LineKind::Undecided || self.code_span || self.bold {
            out.push_str(RESET);
        }
        self.kind = LineKind::Undecided;
        self.code_span = false;
        self.bold = false;
        self.fence = None;
        out
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        if c == '\n' {
            self.end_line(out);
            return;
        }
        self.at_line_start = false;
        match self.kind {
            LineKind::Undecided => {
                self.held.push(c);
                if let Some(kind) = self.classify(false) {
                    self.start_line(kind, out);
                }
            }
            LineKind::Fence | LineKind::Code => out.push(c),
            LineKind::Text | LineKind::Heading | LineKind::Quote => self.inline(c, out),
        }
    }

    fn end_line(&mut self, out: &mut String) {
        if self.kind == LineKind::Undecided {
            let kind = self.classify(true).unwrap_or(LineKind::Text);
            self.start_line(kind, out);
        }
        if self.held_star {
            out.push('*');
            self.held_star = false;
        }
        if self.kind != LineKind::Text || self.code_span || self.bold {
            out.push_str(RESET);
        }
        // Spans do not cross lines in what models write; a stray marker must not colour
        // the rest of the answer.
        self.code_span = false;
        self.bold = false;
        out.push('\n');
        self.kind = LineKind::Undecided;
        self.at_line_start = true;
    }

    /// What the held start of a line is, once it can be told (`whole`: the line ended).
    fn classify(&self, whole: bool) -> Option<LineKind> {
        let trimmed = self.held.trim_start_matches(' ');
        let indent = self.held.len() - trimmed.len();
        if let Some(fence) = self.fence {
            let marker: String = std::iter::repeat_n(fence, 3).collect();
            if indent <= 3 && trimmed.starts_with(&marker) {
                return Some(LineKind::Fence);
            }
            let could_still_be = indent <= 3 && marker.starts_with(trimmed);
            return (whole || !could_still_be).then_some(LineKind::Code);
        }
        if indent > 3 {
            return Some(LineKind::Text);
        }
        let mut chars = trimmed.chars();
        let Some(first) = chars.next() else {
            return whole.then_some(LineKind::Text);
        };
        match first {
            '`' | '~' => {
                let run = trimmed.chars().take_while(|c| *c == first).count();
                if run >= 3 {
                    Some(LineKind::Fence)
                } else if run < trimmed.chars().count() || whole {
                    Some(LineKind::Text)
                } else {
                    None
                }
            }
            '#' => {
                let hashes = trimmed.chars().take_while(|c| *c == '#').count();
                match trimmed.chars().nth(hashes) {
                    Some(' ') if hashes <= 6 => Some(LineKind::Heading),
                    Some(_) => Some(LineKind::Text),
                    None if whole => Some(LineKind::Text),
                    None => None,
                }
            }
            '>' => Some(LineKind::Quote),
            // A bullet needs its space: `-x` and `**bold**` are text.
            '-' | '*' | '+' if trimmed.len() < 2 && !whole => None,
            _ => Some(LineKind::Text),
        }
    }

    fn start_line(&mut self, kind: LineKind, out: &mut String) {
        let held = std::mem::take(&mut self.held);
        self.kind = kind;
        match kind {
            LineKind::Fence => {
                let trimmed = held.trim_start();
                let marker = trimmed.chars().next().unwrap_or('`');
                self.fence = match self.fence {
                    Some(_) => None,
                    None => Some(marker),
                };
                out.push_str(DIM);
                out.push_str(&held);
            }
            LineKind::Code => {
                out.push_str(CODE);
                out.push_str(&held);
            }
            LineKind::Heading => {
                out.push_str(BOLD);
                let title = held.trim_start_matches(' ').trim_start_matches('#');
                for c in title.trim_start().chars() {
                    self.inline(c, out);
                }
            }
            LineKind::Quote => {
                out.push_str(DIM);
                out.push_str(&held);
            }
            LineKind::Text | LineKind::Undecided => {
                self.kind = LineKind::Text;
                let trimmed = held.trim_start_matches(' ');
                let indent = held.len() - trimmed.len();
                let mut rest = trimmed;
                // A list bullet (`- `, `* `, `+ `) becomes `•`.
                for bullet in ["- ", "* ", "+ "] {
                    if let Some(after) = trimmed.strip_prefix(bullet) {
                        out.push_str(&held[..indent]);
                        out.push_str("• ");
                        rest = after;
                        break;
                    }
                }
                if rest.len() == trimmed.len() {
                    out.push_str(&held[..indent]);
                }
                for c in rest.chars() {
                    self.inline(c, out);
                }
            }
        }
    }

    /// One character of running text: code spans and bold.
    fn inline(&mut self, c: char, out: &mut String) {
        if self.held_star {
            self.held_star = false;
            if c == '*' && !self.code_span {
                self.bold = !self.bold;
                self.restyle(out);
                return;
            }
            out.push('*');
        }
        match c {
            '`' => {
                self.code_span = !self.code_span;
                self.restyle(out);
            }
            '*' if !self.code_span => self.held_star = true,
            _ => out.push(c),
        }
    }

    /// Re-applies the line's style after a span opened or closed.
    fn restyle(&self, out: &mut String) {
        out.push_str(RESET);
        match self.kind {
            LineKind::Heading => out.push_str(BOLD),
            LineKind::Quote => out.push_str(DIM),
            _ => {}
        }
        if self.bold {
            out.push_str(BOLD);
        }
        if self.code_span {
            out.push_str(CODE);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Renders `pieces` as a stream, then strips the styles to check the visible text.
    fn render(pieces: &[&str]) -> String {
        let mut md = MarkdownStream::new(true);
        let mut out: String = pieces.iter().map(|p| md.feed(p)).collect();
        out.push_str(&md.finish());
        out
    }

    fn visible(styled: &str) -> String {
        let mut out = String::new();
        let mut chars = styled.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn a_code_block_split_across_deltas_is_coloured_between_dim_fences() {
        let out = render(&["Run:\n``", "`sh\ncargo t", "est\n``", "`\ndone\n"]);
        assert_eq!(visible(&out), "Run:\n```sh\ncargo test\n```\ndone\n");
        assert!(out.contains(&format!("{DIM}```sh")), "{out:?}");
        assert!(out.contains(&format!("{CODE}cargo test")), "{out:?}");
        assert!(out.contains("done\n") && !out.contains(&format!("{CODE}done")));
    }

    #[test]
    fn markdown_inside_a_code_block_is_left_alone() {
        let out = render(&["```\n# not a heading\n- not a bullet `x` **y**\n```\n"]);
        assert_eq!(
            visible(&out),
            "```\n# not a heading\n- not a bullet `x` **y**\n```\n"
        );
    }

    #[test]
    fn headings_bullets_bold_and_inline_code_are_styled_without_markers() {
        let out = render(&["## Plan\n- run `cargo` **now*", "*\n* second\n"]);
        assert_eq!(visible(&out), "Plan\n• run cargo now\n• second\n");
        assert!(out.contains(&format!("{BOLD}Plan")));
        assert!(out.contains(&format!("{CODE}cargo")));
    }

    #[test]
    fn a_lone_star_and_a_hash_without_space_stay_literal() {
        let out = render(&["2 * 3 = 6\n#hashtag\n"]);
        assert_eq!(visible(&out), "2 * 3 = 6\n#hashtag\n");
    }

    #[test]
    fn text_is_written_before_the_line_ends() {
        let mut md = MarkdownStream::new(true);
        assert_eq!(visible(&md.feed("Hello wor")), "Hello wor");
        assert!(!md.at_line_start());
        // Only an undecided line start is held back.
        assert_eq!(md.feed("ld\n``"), "ld\n");
        assert_eq!(visible(&md.finish()), "``");
    }

    #[test]
    fn an_unclosed_span_does_not_colour_the_next_line() {
        let out = render(&["a `b\nplain\n"]);
        let second = out.split('\n').nth(1).unwrap();
        assert_eq!(second, "plain");
    }

    #[test]
    fn without_colour_the_markdown_is_written_unchanged_but_controls_are_escaped() {
        let mut md = MarkdownStream::new(false);
        let out = md.feed("## T\n`x`\x1b]0;title\x07");
        assert!(out.starts_with("## T\n`x`"));
        assert!(!out.contains('\x1b'));
    }
}
