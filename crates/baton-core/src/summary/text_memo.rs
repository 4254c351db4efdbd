//! What a pass works out from a text, kept by the text for the rest of the pass and shared by
//! its threads.
//!
//! A long session repeats itself far apart (`synth_100k`: 24,780 user messages of 2,681
//! texts, 47,144 assistant messages of 3,509), so a thread's range holds few repeats and a
//! per-range cache saves nothing (issue #17). A [`TextMemo`] is one map for the whole pass,
//! keyed by the borrowed text, behind a lock taken for a lookup before the work and for an
//! insert after it, never during it.

use rustc_hash::FxHashMap;
use std::sync::{Mutex, MutexGuard};

/// Values worked out from texts, by text.
pub(crate) struct TextMemo<'a, V> {
    known: Mutex<FxHashMap<&'a str, V>>,
}

impl<V> Default for TextMemo<'_, V> {
    fn default() -> Self {
        TextMemo {
            known: Mutex::default(),
        }
    }
}

impl<'a, V: Clone> TextMemo<'a, V> {
    /// `work(text)`, worked out unless it was for this text before. Worked outside the lock,
    /// so two threads may both work on a text the first time they meet it: `work` must give
    /// equal values for equal texts.
    pub(crate) fn get_or_work(&self, text: &'a str, work: impl FnOnce(&'a str) -> V) -> V {
        if let Some(known) = self.lock().get(text) {
            return known.clone();
        }
        let value = work(text);
        self.lock().insert(text, value.clone());
        value
    }

    /// What is kept for `text`, if anything.
    #[cfg(test)]
    pub(crate) fn get(&self, text: &str) -> Option<V> {
        self.lock().get(text).cloned()
    }

    /// How many texts are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// The map, whatever a thread that panicked while holding it left: each entry is a
    /// finished value.
    fn lock(&self) -> MutexGuard<'_, FxHashMap<&'a str, V>> {
        self.known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Texts met by several threads are each worked on once (or, the first time two threads
    /// meet one together, by both), and every caller gets the text's own value.
    #[test]
    fn each_text_is_worked_on_once_and_gives_its_own_value() {
        let texts: Vec<String> = (0..40).map(|i| format!("text {}", i % 8)).collect();
        let memo = TextMemo::default();
        let worked = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for text in &texts {
                        let value = memo.get_or_work(text, |t| {
                            worked.fetch_add(1, Ordering::Relaxed);
                            t.len()
                        });
                        assert_eq!(value, text.len());
                    }
                });
            }
        });
        assert_eq!(memo.len(), 8);
        assert_eq!(memo.get("text 3"), Some(6));
        let worked = worked.into_inner();
        assert!((8..=16).contains(&worked), "{worked}");
    }
}
