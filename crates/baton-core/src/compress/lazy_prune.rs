//! Pruning as a pass uses it: the passes over the whole conversation at once, each old
//! message's demotion (its stub, its cut arguments) only when something asks for it.
//!
//! A pass keeps the head and the tail of the pruned conversation and replaces the span between
//! them with the summary, which reads the original messages. Demoting a span message is
//! therefore thrown away, and demoting is most of pruning's time (reading every old result to
//! describe it in a stub): on `synth_10k`, 1,826 of the 1,880 messages pruning changed lay in
//! the summarized span (issue #17). So the pass asks for a message's demotion only where it
//! needs one: the tail walk for the messages it reaches, the output for the head and tail it
//! keeps, and the whole conversation only when the pruned conversation itself is the output.
//! What any message is demoted to is the same as when everything is demoted at once
//! ([`super::prune::prune_old_tool_results`] is this, asked for every message).

use super::demote::{Demoter, may_change};
use super::prune::{
    CallRef, PruneConfig, PruneOutcome, deduplicate_results, prune_boundary, pruned_tokens,
    resolve_calls,
};
use super::pruned::Pruned;
use crate::message::Message;
use crate::tokens::TokenCounter;
use crate::tool_action::ActionTable;
use std::cell::RefCell;
use std::ops::Range;

/// A message whose pruned tokens have not been counted yet.
const NOT_COUNTED: u64 = u64::MAX;

/// A conversation with deduplication and tail pressure applied, and passes 2–3 (stubs and
/// argument cuts before the prune boundary) applied to the messages asked for so far.
pub(crate) struct LazyPrune<'a, 'c> {
    originals: &'a [Message],
    /// Interior mutability so the tail walk, which only reads counts, can demote the message
    /// it is counting.
    outcome: RefCell<PruneOutcome<'a>>,
    /// `decided[i]`: message `i` (before the prune boundary) has had its demotion applied.
    decided: RefCell<Vec<bool>>,
    /// Tokens of each message as pruned, once settled and asked for ([`NOT_COUNTED`] before):
    /// the tail walk, the refusal check and the tail's floor all ask.
    counts: RefCell<Vec<u64>>,
    calls: Vec<Option<CallRef>>,
    config: PruneConfig,
    counter: &'c dyn TokenCounter,
}

impl<'a, 'c> LazyPrune<'a, 'c> {
    /// Pruning of `messages` with every pass that reads the whole conversation already run;
    /// `original[i]`, when given, is the tokens of message `i` (a pass has counted them).
    pub(crate) fn new(
        messages: &'a [Message],
        config: &PruneConfig,
        counter: &'c dyn TokenCounter,
        original: &[u64],
    ) -> Self {
        let mut outcome = PruneOutcome::unchanged(messages);
        outcome.deduplicated = deduplicate_results(&mut outcome.messages);
        let boundary = prune_boundary(&outcome.messages, config, counter, original);
        let lazy = LazyPrune {
            originals: messages,
            outcome: RefCell::new(outcome),
            decided: RefCell::new(vec![false; boundary]),
            counts: RefCell::new(vec![NOT_COUNTED; messages.len()]),
            calls: resolve_calls(messages),
            config: config.clone(),
            counter,
        };
        if config.protect_tail_tokens > 0 {
            // Pressure demotion touches only the protected tail (from the boundary on) and the
            // lazy passes only what lies before it, so running it first changes nothing.
            let mut outcome = lazy.outcome.borrow_mut();
            lazy.demoter()
                .relieve_tail_pressure(&mut outcome, boundary, original);
        }
        lazy
    }

    /// A conversation pruning has nothing to do for (no tool activity): nothing is demoted.
    pub(crate) fn untouched(messages: &'a [Message], counter: &'c dyn TokenCounter) -> Self {
        LazyPrune {
            originals: messages,
            outcome: RefCell::new(PruneOutcome::unchanged(messages)),
            decided: RefCell::new(Vec::new()),
            counts: RefCell::new(vec![NOT_COUNTED; messages.len()]),
            calls: Vec::new(),
            config: PruneConfig::default(),
            counter,
        }
    }

    fn demoter(&self) -> Demoter<'_, 'a> {
        Demoter {
            originals: self.originals,
            calls: &self.calls,
            config: &self.config,
            counter: self.counter,
        }
    }

    /// Tokens of message `index` as pruned, its demotion applied first if it had not been;
    /// `original` is the tokens of the unpruned message, used when pruning leaves it as it is.
    pub(crate) fn count_of(&self, index: usize, original: u64) -> u64 {
        if self.is_undecided(index) {
            let mut outcome = self.outcome.borrow_mut();
            self.demoter().demote_one(&mut outcome, index);
            self.decided.borrow_mut()[index] = true;
        }
        self.settled_count(index, original)
    }

    /// Tokens of message `index` as pruned when that is known without demoting anything:
    /// `None` for a message whose demotion is still to be decided and could change it.
    pub(crate) fn known_count(&self, index: usize, original: u64) -> Option<u64> {
        (!self.is_undecided(index)).then(|| self.settled_count(index, original))
    }

    /// Tokens of message `index`, whose demotion is settled: counted once if pruning changed
    /// it, else `original`.
    fn settled_count(&self, index: usize, original: u64) -> u64 {
        let mut counts = self.counts.borrow_mut();
        let Some(slot) = counts.get_mut(index) else {
            return original;
        };
        if *slot == NOT_COUNTED {
            let outcome = self.outcome.borrow();
            *slot = pruned_tokens(&outcome.messages, index, self.counter, Some(original));
        }
        *slot
    }

    /// Whether message `index` could still be demoted: before the prune boundary, not yet
    /// decided, and not one demotion is certain to leave as it is (a short result, calls with
    /// short arguments, a user message): those need no deciding to be counted.
    fn is_undecided(&self, index: usize) -> bool {
        if self.decided.borrow().get(index).is_none_or(|&done| done) {
            return false;
        }
        self.originals
            .get(index)
            .is_some_and(|m| may_change(&self.config, m))
    }

    /// Applies the demotion of every message of `range` not yet decided (on several threads
    /// when they are many).
    pub(crate) fn decide(&mut self, range: Range<usize>) {
        let decided = self.decided.get_mut();
        let end = range.end.min(decided.len());
        let todo: Vec<usize> = (range.start..end)
            .filter(|&i| !decided[i] && may_change(&self.config, &self.originals[i]))
            .collect();
        if todo.is_empty() {
            return;
        }
        for &i in &todo {
            decided[i] = true;
        }
        let mut outcome = self.outcome.borrow_mut();
        self.demoter().demote_each(&mut outcome, &todo);
    }

    /// The pruned conversation as decided so far.
    pub(crate) fn pruned(&mut self) -> &Pruned<'a> {
        &self.outcome.get_mut().messages
    }

    /// Messages of `range` pruning has changed so far.
    pub(crate) fn changed_in(&mut self, range: Range<usize>) -> usize {
        self.pruned().changed_in(range)
    }

    /// Every message demoted: the pruning of the whole conversation.
    pub(crate) fn into_outcome(mut self) -> PruneOutcome<'a> {
        self.decide(0..usize::MAX);
        self.outcome.into_inner()
    }

    /// The calls classified so far for stubs, handed on to the ledger and the summary.
    pub(crate) fn take_actions(&mut self) -> ActionTable<'a> {
        std::mem::take(&mut self.outcome.get_mut().actions)
    }

    /// This pruning holding `actions` (the table [`Self::take_actions`] handed on, grown by
    /// the summary's calls, which may borrow from shorter-lived views), so a stub decided
    /// later does not classify its call again.
    pub(crate) fn with_actions<'v>(self, actions: ActionTable<'v>) -> LazyPrune<'v, 'c>
    where
        'a: 'v,
    {
        let mut outcome: PruneOutcome<'v> = self.outcome.into_inner();
        outcome.actions = actions;
        LazyPrune {
            originals: self.originals,
            outcome: RefCell::new(outcome),
            decided: self.decided,
            counts: self.counts,
            calls: self.calls,
            config: self.config,
            counter: self.counter,
        }
    }

    /// Whether the pruned messages of `range` hold at least `tokens`, deciding the range's
    /// demotions only until that is settled: counted from what is known (a message still to be
    /// decided as nothing), then adding decided messages one at a time.
    pub(crate) fn reaches(
        &self,
        range: Range<usize>,
        original: &dyn Fn(usize) -> u64,
        tokens: u64,
    ) -> bool {
        if tokens == 0 {
            return true;
        }
        let mut undecided = Vec::new();
        let mut known = 0u64;
        // Newest first: the tail, settled already, often answers alone.
        for i in range.rev() {
            match self.known_count(i, original(i)) {
                Some(count) => known += count,
                None => undecided.push(i),
            }
            if known >= tokens {
                return true;
            }
        }
        undecided.into_iter().any(|i| {
            known += self.count_of(i, original(i));
            known >= tokens
        })
    }

    /// Tokens of the pruned messages of `range`, deciding those still to be decided.
    pub(crate) fn tokens_in(&self, range: Range<usize>, original: &dyn Fn(usize) -> u64) -> u64 {
        range.map(|i| self.count_of(i, original(i))).sum()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::compress::Outcome;
    use crate::compress::classify_once_tests::compress_forced;
    use crate::compress::demote::tests::every_demotion as session;
    use crate::compress::prune::prune_old_tool_results;
    use crate::compress::stubs::looks_like_stub;
    use crate::message::Role;
    use crate::tokens::RoughCounter;

    fn config() -> PruneConfig {
        PruneConfig {
            protect_tail_count: 6,
            protect_tail_tokens: 400,
            ..PruneConfig::default()
        }
    }

    fn counts(messages: &[Message]) -> Vec<u64> {
        messages
            .iter()
            .map(|m| RoughCounter.count_message(m) as u64)
            .collect()
    }

    /// The pass hands pruning its counts of the input; the boundary and the tail's pressure
    /// read them instead of counting, and decide what counting decides, pressure included.
    #[test]
    fn the_pass_counts_give_what_counting_gives() {
        let mut messages = session(40);
        // A huge result late in the tail: the protected tail is over its soft limit.
        let late = messages.len() - 6;
        messages.insert(
            late,
            Message::tool("call_late", "huge output line\n".repeat(400)),
        );
        let original = counts(&messages);
        let mut pressured = 0;
        for (count, tokens) in [(1, 150), (2, 100), (0, 100), (6, 400), (3, 2_000)] {
            let config = PruneConfig {
                protect_tail_count: count,
                protect_tail_tokens: tokens,
                ..PruneConfig::default()
            };
            let with = LazyPrune::new(&messages, &config, &RoughCounter, &original).into_outcome();
            let without = LazyPrune::new(&messages, &config, &RoughCounter, &[]).into_outcome();
            assert!(
                with.messages.iter().eq(without.messages.iter()),
                "{config:?}"
            );
            assert_eq!(
                (
                    with.deduplicated,
                    with.stubbed,
                    with.args_truncated,
                    with.media_removed
                ),
                (
                    without.deduplicated,
                    without.stubbed,
                    without.args_truncated,
                    without.media_removed
                ),
                "{config:?}"
            );
            pressured += usize::from(with.messages.is_changed(late));
        }
        assert!(pressured > 0, "no configuration demoted the late result");
    }

    #[test]
    fn demotions_asked_for_in_any_order_equal_pruning_everything_at_once() {
        let messages = session(60);
        let original = counts(&messages);
        let eager = prune_old_tool_results(&messages, &config(), &RoughCounter);
        assert!(eager.stubbed > 0 && eager.args_truncated > 0 && eager.media_removed > 0);
        assert!(eager.deduplicated > 0);
        let n = messages.len();
        // Counted from the end (as the tail walk does), then ranges, then the rest.
        let mut lazy = LazyPrune::new(&messages, &config(), &RoughCounter, &[]);
        for i in (n / 2..n).rev() {
            lazy.count_of(i, original[i]);
        }
        lazy.decide(3..20);
        lazy.decide(0..5);
        let lazy = lazy.into_outcome();
        assert!(lazy.messages.iter().eq(eager.messages.iter()));
        assert_eq!(
            (
                lazy.deduplicated,
                lazy.stubbed,
                lazy.args_truncated,
                lazy.media_removed
            ),
            (
                eager.deduplicated,
                eager.stubbed,
                eager.args_truncated,
                eager.media_removed
            )
        );
        assert_eq!(lazy.actions.len(), eager.actions.len());
    }

    #[test]
    fn counts_are_the_pruned_messages_counts_and_only_asked_ones_are_demoted() {
        let messages = session(60);
        let original = counts(&messages);
        let eager = prune_old_tool_results(&messages, &config(), &RoughCounter);
        let lazy = LazyPrune::new(&messages, &config(), &RoughCounter, &[]);
        let stubbed = (0..messages.len())
            .find(|&i| eager.messages.is_changed(i) && messages[i].role == Role::Tool && i % 2 == 0)
            .unwrap();
        assert_eq!(lazy.known_count(stubbed, original[stubbed]), None);
        let pruned = RoughCounter.count_message(eager.messages.get(stubbed).unwrap()) as u64;
        assert_eq!(lazy.count_of(stubbed, original[stubbed]), pruned);
        assert!(pruned < original[stubbed]);
        assert_eq!(lazy.known_count(stubbed, original[stubbed]), Some(pruned));
        // Nothing else was demoted; a user message's count is known without deciding anything.
        let later = (stubbed + 1..messages.len())
            .find(|&i| eager.messages.is_changed(i) && messages[i].role == Role::Tool)
            .unwrap();
        assert_eq!(lazy.known_count(later, original[later]), None);
        assert_eq!(lazy.known_count(0, original[0]), Some(original[0]));
        let everything: u64 = (0..messages.len())
            .map(|i| RoughCounter.count_message(eager.messages.get(i).unwrap()) as u64)
            .sum();
        assert_eq!(
            lazy.tokens_in(0..messages.len(), &|i| original[i]),
            everything
        );
    }

    #[test]
    fn reaching_a_size_demotes_only_until_it_is_settled() {
        let messages = session(60);
        let original = counts(&messages);
        let whole = 0..messages.len();
        let exact = prune_old_tool_results(&messages, &config(), &RoughCounter)
            .messages
            .iter()
            .map(|m| RoughCounter.count_message(m) as u64)
            .sum::<u64>();
        let undecided = |lazy: &LazyPrune<'_, '_>| {
            whole
                .clone()
                .filter(|&i| lazy.known_count(i, original[i]).is_none())
                .count()
        };
        let lazy = LazyPrune::new(&messages, &config(), &RoughCounter, &[]);
        let before = undecided(&lazy);
        assert!(before > 40, "{before}");
        // What is known already settles a small size: nothing is demoted.
        assert!(lazy.reaches(whole.clone(), &|i| original[i], 10));
        assert!(lazy.reaches(0..0, &|i| original[i], 0));
        assert!(!lazy.reaches(0..0, &|i| original[i], 1));
        assert_eq!(undecided(&lazy), before);
        // A size just under the pruned total demotes most, a size over it all of it.
        assert!(lazy.reaches(whole.clone(), &|i| original[i], exact));
        assert!(!lazy.reaches(whole.clone(), &|i| original[i], exact + 1));
        assert_eq!(undecided(&lazy), 0);
    }

    /// A long span summarized: its messages are never demoted, and the result counts only
    /// the kept messages pruning changed.
    #[test]
    fn a_pass_demotes_what_it_keeps_and_not_the_summarized_span() {
        let messages = session(400);
        let result = compress_forced(&messages, 20_000);
        assert_eq!(
            result.outcome,
            Outcome::Compressed,
            "{:?}",
            result.escalations
        );
        let span = result.summarized_range.clone().unwrap();
        assert!(span.len() > messages.len() / 2, "{span:?}");
        let eager = prune_old_tool_results(&messages, &config(), &RoughCounter);
        assert!(eager.pruned() > result.pruned);
        // Every message of the result that differs from its original is a pruned one (the
        // summary aside), and there are `pruned` of them.
        let kept = messages[..span.start].iter().chain(&messages[span.end..]);
        let changed = result
            .messages
            .iter()
            .filter(|m| !crate::compress::markers::is_summary_message(m))
            .zip(kept)
            .filter(|(out, original)| out != original)
            .count();
        assert!(result.pruned > 0);
        assert_eq!(changed, result.pruned);
        assert!(
            result
                .messages
                .iter()
                .any(|m| m.role == Role::Tool && looks_like_stub(&m.text()))
        );
    }
}
