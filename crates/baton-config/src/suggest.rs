//! The nearest known key to a misspelled one.

use crate::schema::{KEYS, PRICE_KEYS, PRICING_SECTION};

/// The known key closest to `path` (`compression.treshold` → `compression.threshold`,
/// `compression.context_length` → `model.context_length`). The key's own name counts most; a
/// match in the same section wins a tie.
pub fn nearest_key(path: &str) -> Option<String> {
    let (section, key) = path.rsplit_once('.').unwrap_or(("", path));
    if section == PRICING_SECTION || section.starts_with("pricing.") {
        return PRICE_KEYS
            .iter()
            .min_by_key(|k| strsim::levenshtein(key, k))
            .map(|k| format!("{section}.{k}"));
    }
    KEYS.iter()
        .min_by_key(|k| {
            strsim::levenshtein(key, k.key) * 2
                + usize::from(k.section != section)
                + strsim::levenshtein(section, k.section).min(1)
        })
        .map(|k| k.path())
}

/// The known top-level table closest to `name` (`modle` → `model`).
pub fn nearest_section(name: &str) -> Option<String> {
    let mut sections: Vec<&str> = KEYS
        .iter()
        .map(|k| k.section.split('.').next().unwrap_or(k.section))
        .collect();
    sections.push(PRICING_SECTION);
    sections
        .into_iter()
        .min_by_key(|s| strsim::levenshtein(name, s))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_keys_get_their_intended_key() {
        assert_eq!(
            nearest_key("compression.treshold").as_deref(),
            Some("compression.threshold")
        );
        assert_eq!(
            nearest_key("compression.context_length").as_deref(),
            Some("model.context_length")
        );
        assert_eq!(
            nearest_key("memory.memory_limit").as_deref(),
            Some("memory.memory_char_limit")
        );
        assert_eq!(
            nearest_key("pricing.gpt-4o.cache_reads").as_deref(),
            Some("pricing.gpt-4o.cache_read")
        );
        assert_eq!(nearest_section("modle").as_deref(), Some("model"));
    }
}
