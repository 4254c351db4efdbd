//! The actions of one pass's tool calls, each classified once.
//!
//! Pruning stubs, the task ledger and the extractive summary all ask what a call did, and
//! classifying parses the call's JSON arguments: asked separately, a compaction parsed every
//! call of its span three times (issue #17). A pass fills one table as it goes and hands it on,
//! so each distinct call is parsed once whichever part asks first.
//!
//! Calls are keyed by their text (name and arguments), not by where they sit: a summarizer
//! reads views of the messages (copies where cut or redacted), and a view's call is the same
//! call when its text is the same. A call whose view was redacted is a different text and is
//! classified on its own, so nothing a summary shows comes from unredacted arguments.

use super::{ToolAction, classify};
use crate::split_work::{SPLIT_FROM_ITEMS, in_shards};
use rustc_hash::{FxHashMap, FxHasher};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// Tool calls (by name and arguments) and their actions.
#[derive(Debug, Default, Clone)]
pub struct ActionTable<'m> {
    /// Where each call's entry is in `blocks`.
    by_call: FxHashMap<CallText<'m>, Slot>,
    /// The entries, [`BLOCK_CALLS`] to a block, a block never grown past that: an entry stays
    /// where it was written. A classified call is 192 bytes, and a long span's tables are
    /// built on several threads and merged: moving whole entries into the merged table (fresh
    /// memory, touched for the first time) was a quarter of classifying `synth_10k`'s 2,218
    /// distinct calls, so a merge moves blocks, not entries. Boxing each entry instead was an
    /// allocation per distinct call, 250 of a real session's pass's 2,000 (issue #17).
    blocks: Vec<Vec<Classified>>,
}

/// An entry's place: its block and its index there.
#[derive(Debug, Clone, Copy)]
struct Slot {
    block: u32,
    at: u32,
}

/// Entries per block: five 192-byte entries stay under 1 KiB, from which on a request makes
/// glibc's `malloc` consolidate every small chunk freed so far.
const BLOCK_CALLS: usize = 5;

/// `classified` written into the last block of `blocks`, or a new one when it is full.
fn store(blocks: &mut Vec<Vec<Classified>>, classified: Classified) -> Slot {
    if blocks.last().is_none_or(|b| b.len() >= BLOCK_CALLS) {
        blocks.push(Vec::with_capacity(BLOCK_CALLS));
    }
    let block = blocks.len() - 1;
    let entries = &mut blocks[block];
    entries.push(classified);
    Slot {
        block: block as u32,
        at: (entries.len() - 1) as u32,
    }
}

/// A call's action, and what a summary may show of the call once the first reader that shows
/// it has written that.
#[derive(Debug, Clone)]
struct Classified {
    action: ToolAction,
    shown: OnceLock<Shown>,
}

impl Classified {
    fn new(action: ToolAction) -> Self {
        Classified {
            action,
            shown: OnceLock::new(),
        }
    }
}

/// What a reader may show of a call where that differs from the call itself (a summary hides
/// secrets): `None` where it is the call's own action or arguments. Kept with the call's
/// action so a call repeated across a span is rewritten once: `synth_100k` shows 28,075
/// calls of 2,620 texts, and redacting each call as it was shown was about 4% of its pass's
/// work on both threads (`perf record`, issue #17).
#[derive(Debug, Clone)]
pub struct Shown {
    pub action: Option<ToolAction>,
    pub arguments: Option<String>,
    /// What identifies the call in a summary's lines, and a digest of that, each written by
    /// the first reader that needs it (the extractive summary's label and label key,
    /// `summary/extractive/label_key.rs`): functions of the call's name and what it shows, so
    /// the calls of one text share them. Taking the key for each of `synth_100k`'s 28,075
    /// calls was 2.5% of its pass's instructions (callgrind, issue #17).
    pub label: OnceLock<String>,
    pub key: OnceLock<u64>,
}

impl Shown {
    /// What a reader shows of a call: `action` and `arguments` where they differ from the
    /// call's own, no label written yet.
    pub fn new(action: Option<ToolAction>, arguments: Option<String>) -> Self {
        Shown {
            action,
            arguments,
            label: OnceLock::new(),
            key: OnceLock::new(),
        }
    }
}

/// A call's name and arguments, compared by text. The pass looks each call up again with the
/// very strings it was classified from, so texts at the same address are equal without
/// comparing them: on `synth_100k` the comparisons of arguments with themselves were 1.4% of
/// a pass (`perf record`, issue #17).
#[derive(Debug, Clone, Copy)]
struct CallText<'m>(&'m str, &'m str);

/// Bytes of the arguments hashed from each end.
const HASHED_END_BYTES: usize = 32;

/// A call hashes by its name and its arguments' length and two ends: equal texts hash alike,
/// and calls whose arguments differ only in the middle (rare: their length and their first
/// and last 32 bytes agree) only share a bucket. Hashing every byte of the arguments, a whole
/// file being written, was 4% of a pass over `synth_100k`'s 10 MB of them, paid once when a
/// call is classified and once when it is looked up (`perf record`, issue #17).
impl Hash for CallText<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        let args = self.1.as_bytes();
        args.len().hash(state);
        if args.len() <= 2 * HASHED_END_BYTES {
            state.write(args);
        } else {
            state.write(&args[..HASHED_END_BYTES]);
            state.write(&args[args.len() - HASHED_END_BYTES..]);
        }
    }
}

impl PartialEq for CallText<'_> {
    fn eq(&self, other: &Self) -> bool {
        same_text(self.0, other.0) && same_text(self.1, other.1)
    }
}

impl Eq for CallText<'_> {}

/// The hash of a call's text that picks its shard: equal calls have equal hashes.
fn shard_hash(call: &CallText<'_>) -> u64 {
    let mut hasher = FxHasher::default();
    call.hash(&mut hasher);
    hasher.finish()
}

/// The shard of `shards` a call of hash `hash` falls to. Taken from the hash's middle bits,
/// which the table's buckets (its low bits) and tags (its top seven) do not use, so one
/// shard's calls still spread over a whole table.
fn shard_of(hash: u64, shards: usize) -> usize {
    ((hash >> 32) as usize) % shards.max(1)
}

/// `a == b`, without reading them when they are the same string.
fn same_text(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

impl<'m> ActionTable<'m> {
    /// The action of the call, classified now unless the table already holds it.
    pub fn classify(&mut self, name: &'m str, arguments: &'m str) -> &ToolAction {
        let blocks = &mut self.blocks;
        let slot = *self
            .by_call
            .entry(CallText(name, arguments))
            .or_insert_with(|| store(blocks, Classified::new(classify(name, arguments))));
        &self.blocks[slot.block as usize][slot.at as usize].action
    }

    /// Every call `calls()` yields (`count` of them: name and arguments) classified, unless
    /// the table holds it already. Many calls are split over threads by their text's hash
    /// (`split_work::in_shards`): each call's text is hashed once, and each shard picks out
    /// the calls of its hashes and classifies them, so a call repeated across the span is
    /// classified once, by one thread. Parsing a 10,000-message span's 2,949 calls on the
    /// calling thread was a sixth of its pass (`perf record`, issue #17); split by position
    /// instead, `synth_100k`'s 2,620 distinct calls among 28,075 would have been parsed 22,511
    /// times. The shards outnumber the threads, which take them as they come free: with one
    /// shard per thread, a thread that started late or shared its core waited for by the
    /// other was 0.3–1.0 ms of `synth_10k`'s pass in a slow hour.
    pub fn classify_all<I>(&mut self, count: usize, calls: impl Fn() -> I + Sync)
    where
        I: Iterator<Item = (&'m str, &'m str)>,
    {
        self.reserve(count);
        if count < SPLIT_FROM_ITEMS {
            for (name, arguments) in calls() {
                self.classify(name, arguments);
            }
            return;
        }
        let hashed: Vec<(u64, CallText<'m>)> = calls()
            .map(|(name, arguments)| {
                let call = CallText(name, arguments);
                (shard_hash(&call), call)
            })
            .collect();
        let held = &self.by_call;
        let shards = in_shards(count, |shard, shards| {
            let mut found = ActionTable::default();
            for &(hash, call) in &hashed {
                if shard_of(hash, shards) == shard && !held.contains_key(&call) {
                    found.classify(call.0, call.1);
                }
            }
            found
        });
        for found in shards {
            self.absorb(found);
        }
    }

    /// The action of the call: the table's when it holds it, else classified now (and not
    /// kept: a reader of a shared table cannot add to it).
    pub fn action_of<'s>(&'s self, name: &'s str, arguments: &'s str) -> Cow<'s, ToolAction> {
        match self.held(name, arguments) {
            Some(held) => Cow::Borrowed(&held.action),
            None => Cow::Owned(classify(name, arguments)),
        }
    }

    /// The held call's action and what `show` makes of it (`show` runs for the first reader
    /// only; the table is shared by several threads, and another one may have written it);
    /// `None` when the table does not hold the call.
    pub fn shown_of<'s>(
        &'s self,
        name: &'s str,
        arguments: &'s str,
        show: impl FnOnce(&ToolAction) -> Shown,
    ) -> Option<(&'s ToolAction, &'s Shown)> {
        let held = self.held(name, arguments)?;
        Some((&held.action, held.shown.get_or_init(|| show(&held.action))))
    }

    fn held<'s>(&'s self, name: &'s str, arguments: &'s str) -> Option<&'s Classified> {
        // The keys outlive the lookup's strings; seen as living only as long, they compare.
        let by_call: &'s FxHashMap<CallText<'s>, Slot> = &self.by_call;
        let slot = by_call.get(&CallText(name, arguments))?;
        self.blocks.get(slot.block as usize)?.get(slot.at as usize)
    }

    /// Room for `additional` more calls: a pass knows how many its span holds, and growing the
    /// table as they come rehashed it several times (`perf record`, issue #17).
    pub fn reserve(&mut self, additional: usize) {
        self.by_call.reserve(additional);
    }

    /// Adds the calls `other` classified (a range of a pass classified on another thread).
    pub fn absorb(&mut self, other: ActionTable<'m>) {
        let offset = self.blocks.len() as u32;
        self.blocks.extend(other.blocks);
        self.by_call
            .extend(other.by_call.into_iter().map(|(call, slot)| {
                let slot = Slot {
                    block: slot.block + offset,
                    ..slot
                };
                (call, slot)
            }));
    }

    /// Distinct calls held.
    pub fn len(&self) -> usize {
        self.by_call.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_call.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_classified_once_and_found_again_by_its_text() {
        let arguments = String::from(r#"{"file_path":"src/lib.rs"}"#);
        let same_text = arguments.clone();
        let mut table = ActionTable::default();
        let first = table.classify("Read", &arguments).clone();
        assert!(matches!(first, ToolAction::Read { ref path, .. } if path == "src/lib.rs"));
        assert!(matches!(
            table.action_of("Read", &same_text),
            Cow::Borrowed(_)
        ));
        assert_eq!(table.len(), 1);
        // Another name or other arguments are another call.
        assert!(matches!(
            table.action_of("Write", &same_text),
            Cow::Owned(_)
        ));
        assert!(matches!(
            table.action_of("Read", r#"{"file_path":"src/main.rs"}"#),
            Cow::Owned(ToolAction::Read { ref path, .. }) if path == "src/main.rs"
        ));
    }

    /// A long list of calls, classified on several threads, leaves the table holding each
    /// distinct call once with the action classifying it alone gives, the ones it held kept.
    #[test]
    fn many_calls_classified_together_are_each_held_once_as_classified_alone() {
        let texts: Vec<(String, String)> = (0..3 * SPLIT_FROM_ITEMS)
            .map(|i| match i % 3 {
                0 => (
                    "Read".into(),
                    format!(r#"{{"file_path":"src/{}.rs"}}"#, i % 700),
                ),
                1 => (
                    "Bash".into(),
                    format!(r#"{{"command":"cargo test -p c{}"}}"#, i % 450),
                ),
                _ => (
                    "Write".into(),
                    format!(r#"{{"file_path":"out/{i}.txt","content":"x"}}"#),
                ),
            })
            .collect();
        let mut table = ActionTable::default();
        let held = table.classify(&texts[0].0, &texts[0].1).clone();
        table.classify_all(texts.len(), || {
            texts.iter().map(|(n, a)| (n.as_str(), a.as_str()))
        });
        let distinct: std::collections::HashSet<&(String, String)> = texts.iter().collect();
        assert_eq!(table.len(), distinct.len());
        assert_eq!(*table.action_of(&texts[0].0, &texts[0].1), held);
        for (name, arguments) in &texts {
            let found = table.action_of(name, arguments);
            assert!(matches!(found, Cow::Borrowed(_)), "{name} {arguments}");
            assert_eq!(*found, classify(name, arguments), "{name} {arguments}");
        }
    }

    /// Long arguments hash by their ends, so calls that differ only in the middle share a
    /// bucket: each is still its own call, classified from its own text.
    #[test]
    fn long_arguments_that_differ_only_in_the_middle_are_different_calls() {
        let write = |path: &str| {
            format!(
                r#"{{"content":"{}","file_path":"{path}","mode":"{}"}}"#,
                "x".repeat(100),
                "y".repeat(40)
            )
        };
        let (a, b) = (write("src/a.rs"), write("src/b.rs"));
        assert_eq!(a.len(), b.len());
        assert_eq!(a[..32], b[..32]);
        assert_eq!(a[a.len() - 32..], b[b.len() - 32..]);
        let mut table = ActionTable::default();
        let path = |action: &ToolAction| match action {
            ToolAction::Write { path, .. } => path.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(path(table.classify("Write", &a)), "src/a.rs");
        assert_eq!(path(table.classify("Write", &b)), "src/b.rs");
        assert_eq!(table.len(), 2);
        assert_eq!(path(&table.action_of("Write", &a.clone())), "src/a.rs");
        assert!(matches!(
            table.action_of("Write", &b.clone()),
            Cow::Borrowed(_)
        ));
        assert_eq!(path(&table.action_of("Write", &b)), "src/b.rs");
    }
}
