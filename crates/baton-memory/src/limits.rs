//! Capacity of each file, in characters, and the usage line the agent sees.
//!
//! Limits count Unicode scalar values, not bytes, so a profile written in Chinese gets the
//! same room as one in English; the delimiters between entries count too, because they are
//! part of what is injected.

use crate::entries::join;
use crate::target::Target;
use baton_core::truncate::group_digits;

/// Default capacity of `MEMORY.md` (about 800 tokens).
pub const DEFAULT_MEMORY_CHARS: usize = 2_200;
/// Default capacity of `USER.md` (about 500 tokens).
pub const DEFAULT_USER_CHARS: usize = 1_375;

/// Character limits per target (`[memory] memory_char_limit`, `user_char_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub memory_chars: usize,
    pub user_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_chars: DEFAULT_MEMORY_CHARS,
            user_chars: DEFAULT_USER_CHARS,
        }
    }
}

impl Limits {
    pub fn for_target(&self, target: Target) -> usize {
        match target {
            Target::Memory => self.memory_chars,
            Target::User => self.user_chars,
        }
    }
}

/// Characters the entries occupy once joined (what the limit is checked against).
pub fn char_count<S: AsRef<str>>(entries: &[S]) -> usize {
    join(entries).chars().count()
}

/// `"85% — 1,870/2,200 chars"`: the percentage is floored and capped at 100.
pub fn usage(current: usize, limit: usize) -> String {
    format!(
        "{}% — {}/{} chars",
        percent(current, limit),
        group_digits(current),
        group_digits(limit)
    )
}

/// `"1,870/2,200"`: the bare fraction used in refusals.
pub fn fraction(current: usize, limit: usize) -> String {
    format!("{}/{}", group_digits(current), group_digits(limit))
}

fn percent(current: usize, limit: usize) -> usize {
    if limit == 0 {
        return 100;
    }
    (current.saturating_mul(100) / limit).min(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_matches_the_documented_header() {
        assert_eq!(usage(1_870, 2_200), "85% — 1,870/2,200 chars");
        assert_eq!(usage(0, 1_375), "0% — 0/1,375 chars");
        assert_eq!(usage(5_000, 2_200), "100% — 5,000/2,200 chars");
        assert_eq!(usage(3, 0), "100% — 3/0 chars");
    }

    #[test]
    fn count_is_in_characters_and_includes_delimiters() {
        assert_eq!(char_count(&["日本語", "é"]), 3 + 3 + 1);
        assert_eq!(char_count::<&str>(&[]), 0);
    }
}
