//! The summary's trimmable lists: bullet lists that drop their oldest items (and say how many)
//! and the numbered Completed Actions, sized by counting, never by rendering.

// The limits, wordings and patterns every part of the summarizer shares.
use super::*;

/// Items in the order first seen, each once: what a section lists before it is capped. A
/// long span's requests give thousands of candidate lines, and a scan of the list per line
/// (the former `push_unique`) was quadratic. The set hashes with `FxHash`: the lines are the
/// user's own words, not chosen to collide, and SipHash was 1.9% of `synth_10k`'s pass here
/// and in the blockers' set.
#[derive(Default)]
pub(super) struct Distinct {
    items: Vec<String>,
    seen: rustc_hash::FxHashSet<String>,
}

impl Distinct {
    /// Starts from `items` (carried from an earlier summary), kept as they are: only what is
    /// pushed after them is checked for repeats.
    pub(super) fn from_items(items: Vec<String>) -> Self {
        Distinct {
            seen: items.iter().cloned().collect(),
            items,
        }
    }

    /// Adds `item` unless it is already listed.
    pub(super) fn push(&mut self, item: String) {
        if !self.seen.contains(&item) {
            self.seen.insert(item.clone());
            self.items.push(item);
        }
    }

    /// [`Distinct::push`], copying `item` only when it is not already listed.
    pub(super) fn push_str(&mut self, item: &str) {
        if !self.seen.contains(item) {
            self.seen.insert(item.to_string());
            self.items.push(item.to_string());
        }
    }

    pub(super) fn into_items(self) -> Vec<String> {
        self.items
    }
}

/// A bullet list that can be trimmed for the size budget. Items before `head` are kept until
/// the rest are gone; every drop is counted in the rendered list.
pub(super) struct Bullets {
    pub(super) items: Vec<String>,
    /// Characters of each item, kept beside them so sizes are sums, not rescans.
    pub(super) item_chars: Vec<usize>,
    pub(super) head: usize,
    pub(super) dropped: usize,
    pub(super) noun: &'static str,
    pub(super) empty: &'static str,
}

impl Bullets {
    pub(super) fn new(items: Vec<String>, noun: &'static str, empty: &'static str) -> Self {
        Bullets {
            item_chars: items.iter().map(|i| i.chars().count()).collect(),
            items,
            head: 0,
            dropped: 0,
            noun,
            empty,
        }
    }

    /// Keeps the newest `max` items, counting the rest as dropped.
    pub(super) fn capped(mut self, max: usize) -> Self {
        if self.items.len() > max {
            let excess = self.items.len() - max;
            self.items.drain(..excess);
            self.item_chars.drain(..excess);
            self.dropped += excess;
        }
        self
    }

    pub(super) fn drop_oldest(&mut self) {
        let i = if self.items.len() > self.head {
            self.head
        } else {
            self.head = self.head.saturating_sub(1);
            0
        };
        self.items.remove(i);
        self.item_chars.remove(i);
        self.dropped += 1;
    }

    pub(super) fn omission_line(&self) -> String {
        format!("… {} earlier {} omitted", self.dropped, self.noun)
    }

    /// `self.omission_line().chars().count()`, without formatting it: the trim loop asks
    /// after every trim.
    fn omission_chars(&self) -> usize {
        "…  earlier  omitted".chars().count()
            + digits(self.dropped as u64)
            + self.noun.chars().count()
    }

    /// The characters [`Self::write_body`] writes, counted from the items' cached sizes.
    pub(super) fn body_chars(&self) -> usize {
        let omission = (self.dropped > 0).then(|| self.omission_chars());
        let lines = self.items.len() + usize::from(omission.is_some());
        if lines == 0 {
            return self.empty.chars().count();
        }
        let items: usize = self.item_chars.iter().map(|c| c + 2).sum();
        omission.unwrap_or(0) + items + (lines - 1)
    }

    /// Appends the list as the summary shows it to `out`: the omission line, then a `- `
    /// line per item, or the empty wording. The summary is written into one string, not put
    /// together from a string per line and per section (issue #17).
    pub(super) fn write_body(&self, out: &mut String) {
        let mut first = true;
        let mut line = |out: &mut String, parts: &[&str]| {
            if !first {
                out.push('\n');
            }
            first = false;
            parts.iter().for_each(|p| out.push_str(p));
        };
        if self.dropped > 0 {
            line(out, &[&self.omission_line()]);
        }
        for item in &self.items {
            line(out, &["- ", item]);
        }
        if first {
            out.push_str(self.empty);
        }
    }

    pub(super) fn size(&self) -> usize {
        self.item_chars.iter().sum()
    }
}

/// The numbered Completed Actions list; numbers continue across compactions, and gaps in
/// them are rendered as omission lines.
pub(super) struct Actions {
    pub(super) items: Vec<(u64, String)>,
    /// Characters of each item's text.
    pub(super) item_chars: Vec<usize>,
    /// The highest number ever given, so a fully trimmed list still says how much it held.
    pub(super) last_number: u64,
}

impl Actions {
    pub(super) fn drop_oldest(&mut self) {
        let i = if self.items.len() > HEAD_ACTIONS + 1 {
            HEAD_ACTIONS
        } else {
            0
        };
        self.items.remove(i);
        self.item_chars.remove(i);
    }

    /// The numbered list as the summary shows it, gaps as omission lines.
    pub(super) fn body(&self) -> String {
        let mut out = String::new();
        self.write_body(&mut out);
        out
    }

    /// Appends [`Self::body`] to `out`.
    pub(super) fn write_body(&self, out: &mut String) {
        use std::fmt::Write;
        let start = out.len();
        let mut previous = 0u64;
        for (n, text) in &self.items {
            if out.len() > start {
                out.push('\n');
            }
            if *n > previous + 1 {
                out.push_str(&actions_omitted(n - previous - 1));
                out.push('\n');
            }
            // Writing to a `String` cannot fail.
            let _ = write!(out, "{n}. ");
            out.push_str(text);
            previous = previous.max(*n);
        }
        if self.items.is_empty() && self.last_number > 0 {
            out.push_str(&actions_omitted(self.last_number));
        } else if self.items.is_empty() {
            out.push_str("No tool calls in the compacted span.");
        }
    }

    /// `self.body().chars().count()`, without building the body.
    pub(super) fn body_chars(&self) -> usize {
        let omission = |n: u64| "…  earlier actions omitted".chars().count() + digits(n);
        let (mut chars, mut lines, mut previous) = (0, 0, 0u64);
        for (i, (n, _)) in self.items.iter().enumerate() {
            if *n > previous + 1 {
                chars += omission(n - previous - 1);
                lines += 1;
            }
            chars += digits(*n) + 2 + self.item_chars[i];
            lines += 1;
            previous = previous.max(*n);
        }
        if lines == 0 {
            return self.body().chars().count();
        }
        chars + lines - 1
    }

    pub(super) fn size(&self) -> usize {
        self.item_chars.iter().sum()
    }
}

/// The line standing for `n` actions trimmed or dropped.
pub(super) fn actions_omitted(n: u64) -> String {
    format!("… {n} earlier actions omitted")
}

/// Decimal digits of `n`.
pub(super) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The omission lines' sizes, counted without formatting them, are the formatted
    /// lines' sizes.
    #[test]
    fn omission_sizes_are_the_written_lines_sizes() {
        for dropped in [1, 9, 10, 99, 100, 12_345] {
            let list = Bullets {
                dropped,
                ..Bullets::new(Vec::new(), "decisions", "None.")
            };
            assert_eq!(list.omission_chars(), list.omission_line().chars().count());
            let actions = Actions {
                items: vec![(dropped as u64 + 1, "x".into())],
                item_chars: vec![1],
                last_number: dropped as u64 + 1,
            };
            assert_eq!(actions.body_chars(), actions.body().chars().count());
        }
    }

    #[test]
    fn distinct_items_keep_their_first_place_and_carried_ones_stay_as_they_were() {
        let carried = vec!["a".to_string(), "a".to_string(), "b".to_string()];
        let mut list = Distinct::from_items(carried);
        for item in ["c", "a", "d", "c", "b", "e"] {
            list.push(item.to_string());
        }
        assert_eq!(list.into_items(), ["a", "a", "b", "c", "d", "e"]);
    }
}
