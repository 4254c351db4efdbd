//! Which turns of one trajectory get replaced by a summary.
//!
//! The rule is the reference trajectory compressor's: protect the first turn of each chosen
//! role and the last N turns, then take turns greedily from the start of what is left until
//! removing them saves the overshoot plus room for the summary. Only as much as needed is
//! summarized, so the rest of the middle stays verbatim and the sample keeps real tool use.
//!
//! Boundaries never fall between a tool call and its results: a span never starts on a tool
//! result and never ends just before one, so every call keeps its answer on the same side.

use crate::message::{Message, Role};

/// Which "first turn of a role" stays verbatim. All four by default, as in the reference: the
/// system prompt, the task as first stated, the first reply and the first tool result show
/// the model how the episode begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectFirst {
    pub system: bool,
    pub human: bool,
    pub gpt: bool,
    pub tool: bool,
}

impl Default for ProtectFirst {
    fn default() -> Self {
        ProtectFirst {
            system: true,
            human: true,
            gpt: true,
            tool: true,
        }
    }
}

impl ProtectFirst {
    /// Nothing protected at the head.
    pub const NONE: ProtectFirst = ProtectFirst {
        system: false,
        human: false,
        gpt: false,
        tool: false,
    };

    /// Parses `system,human,gpt,tool` (any subset, any order; `user`/`assistant` accepted as
    /// the OpenAI spellings) or `none`.
    pub fn parse(s: &str) -> Result<ProtectFirst, String> {
        let mut out = ProtectFirst::NONE;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "none" => {}
                "system" => out.system = true,
                "human" | "user" => out.human = true,
                "gpt" | "assistant" => out.gpt = true,
                "tool" | "observation" => out.tool = true,
                other => {
                    return Err(format!(
                        "`{other}` is not a role to protect; expected a comma-separated subset of system, human, gpt, tool, or none"
                    ));
                }
            }
        }
        Ok(out)
    }

    fn covers(&self, role: Role) -> bool {
        match role {
            Role::System | Role::Developer => self.system,
            Role::User => self.human,
            Role::Assistant => self.gpt,
            Role::Tool => self.tool,
        }
    }
}

/// The budget and protection settings one plan needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanConfig {
    /// A trajectory at or under this many tokens is left alone.
    pub target_max_tokens: usize,
    /// Room reserved for the summary turn when deciding how much to remove.
    pub summary_target_tokens: usize,
    pub protect_first: ProtectFirst,
    pub protect_last_n: usize,
}

impl Default for PlanConfig {
    /// The reference defaults: 15,250 tokens, a 750-token summary, last 4 turns protected.
    fn default() -> Self {
        PlanConfig {
            target_max_tokens: 15_250,
            summary_target_tokens: 750,
            protect_first: ProtectFirst::default(),
            protect_last_n: 4,
        }
    }
}

/// Why a trajectory over the target is left as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Blocked {
    /// The protected head and tail cover every turn (or meet in the middle).
    NothingBetweenProtectedTurns,
    /// What could be summarized is no bigger than the summary itself, so replacing it would
    /// not shrink the trajectory.
    SpanNotLargerThanSummary,
}

/// What to do with one trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// At or under the target: copy it through unchanged.
    UnderTarget,
    /// Over the target but nothing can be summarized.
    Blocked(Blocked),
    /// Replace `messages[start..end]` with one summary turn.
    Summarize {
        start: usize,
        end: usize,
        /// Tokens of the replaced turns.
        span_tokens: usize,
    },
}

/// Plans one trajectory. `counts[i]` is the token count of `messages[i]`.
pub fn plan(messages: &[Message], counts: &[usize], config: &PlanConfig) -> Plan {
    match cut(messages, &mut |i| counts[i], config) {
        Cut::UnderTarget => Plan::UnderTarget,
        Cut::Blocked(why) => Plan::Blocked(why),
        Cut::Summarize { start, end } => Plan::Summarize {
            start,
            end,
            span_tokens: counts[start..end].iter().sum(),
        },
    }
}

/// A [`Plan`] without the span's token count, which [`cut`] does not always take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    UnderTarget,
    Blocked(Blocked),
    Summarize { start: usize, end: usize },
}

/// The plan, asking `count` for a turn's tokens only where the decision depends on them.
///
/// The greedy rule takes turns from `start` until the span's tokens reach the need (the
/// overshoot plus room for the summary). Since the need is the total less the target plus
/// the summary, a span `[start, u)` reaches it exactly when the head, the turns from `u` on
/// and the summary fit the target: the cut depends on the head and on the turns after it,
/// never on the span's own turns. So the head is counted, then turns from the end backwards
/// while they fit, then (to prove the record is over the target at all) more turns down
/// towards the head until the counted ones alone exceed it. On a long trajectory the middle
/// of the span, far from the cut, is never counted (issue #17). Only when the region runs out
/// before the need is met does the span's size decide, and then it is counted.
pub(crate) fn cut(
    messages: &[Message],
    count: &mut dyn FnMut(usize) -> usize,
    config: &PlanConfig,
) -> Cut {
    let n = messages.len();
    let (target, summary) = (config.target_max_tokens, config.summary_target_tokens);
    let (start, end) = compressible_region(messages, config);
    let head: usize = (0..start).map(&mut *count).sum();
    // The smallest `u` (from `start + 1`) whose suffix fits with the head and the summary.
    let room = target.checked_sub(summary + head);
    let (mut u, mut suffix) = (n, 0usize);
    if let Some(room) = room {
        while u > start + 1 {
            let c = count(u - 1);
            if suffix + c > room {
                break;
            }
            suffix += c;
            u -= 1;
        }
    }
    let mut counted = head + suffix;
    let mut next = u.min(n);
    while counted <= target && next > start {
        next -= 1;
        counted += count(next);
    }
    if counted <= target {
        // Every turn was counted: the total itself is at most the target.
        return Cut::UnderTarget;
    }
    if start >= end {
        return Cut::Blocked(Blocked::NothingBetweenProtectedTurns);
    }
    // Within the region, the span from `start` to `u` meets the need; past it, the region
    // runs out first and the greedy rule takes all of it.
    let reached = room.is_some() && u <= end;
    let until = cut_forward(messages, if reached { u } else { end }, end);
    if !reached {
        let span: usize = (start..until).map(&mut *count).sum();
        if until <= start || span <= summary {
            return Cut::Blocked(Blocked::SpanNotLargerThanSummary);
        }
    }
    // Reached: the span holds at least the need, which exceeds the summary.
    Cut::Summarize { start, end: until }
}

/// `[start, end)`: the turns between the protected head and the protected tail, with both
/// edges moved so that no call/result group straddles them.
///
/// Protected indices in the first half of the trajectory form the head (everything up to the
/// last of them), those in the second half the tail (everything from the first of them), as in
/// the reference: a "first tool turn" that only appears near the end does not pin the middle.
pub fn compressible_region(messages: &[Message], config: &PlanConfig) -> (usize, usize) {
    let n = messages.len();
    let protected = protected_indices(messages, config);
    let half = n / 2;
    let start = protected
        .iter()
        .filter(|&&i| i < half)
        .max()
        .map_or(0, |&i| i + 1);
    let end = protected
        .iter()
        .filter(|&&i| i >= half)
        .min()
        .copied()
        .unwrap_or(n);
    let start = skip_tool_results(messages, start);
    let end = cut_backward(messages, end);
    (start, end.max(start))
}

fn protected_indices(messages: &[Message], config: &PlanConfig) -> Vec<usize> {
    let mut out = Vec::new();
    let mut seen = [false; 4];
    for (i, m) in messages.iter().enumerate() {
        let slot = match m.role {
            Role::System | Role::Developer => 0,
            Role::User => 1,
            Role::Assistant => 2,
            Role::Tool => 3,
        };
        if !seen[slot] && config.protect_first.covers(m.role) {
            seen[slot] = true;
            out.push(i);
        }
    }
    let n = messages.len();
    out.extend(n.saturating_sub(config.protect_last_n)..n);
    out
}

/// Moves a start boundary past tool results: a span (or the tail) must not open with a result
/// whose call is on the other side.
fn skip_tool_results(messages: &[Message], i: usize) -> usize {
    let mut i = i.min(messages.len());
    while i < messages.len() && messages[i].role == Role::Tool {
        i += 1;
    }
    i
}

/// Moves an end boundary forward past the results of the calls just before it, but not past
/// `limit`: the span takes the whole group rather than leaving results orphaned in the tail.
fn cut_forward(messages: &[Message], i: usize, limit: usize) -> usize {
    let mut i = i;
    while i < limit && messages.get(i).is_some_and(|m| m.role == Role::Tool) {
        i += 1;
    }
    i
}

/// Moves the tail's first index back to the call whose results it would otherwise split off,
/// so the whole group stays in the protected tail.
fn cut_backward(messages: &[Message], i: usize) -> usize {
    let mut i = i.min(messages.len());
    while i > 0 && i < messages.len() && messages[i].role == Role::Tool {
        i -= 1;
    }
    i
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn protect_first_parses_subsets_and_none() {
        assert_eq!(ProtectFirst::parse("none").unwrap(), ProtectFirst::NONE);
        let p = ProtectFirst::parse("system, gpt").unwrap();
        assert!(p.system && p.gpt && !p.human && !p.tool);
        assert!(
            ProtectFirst::parse("wizard")
                .unwrap_err()
                .contains("wizard")
        );
    }

    /// The greedy rule as the reference states it: turns from `start` until their sum reaches
    /// `need`; `end` when the region is not enough.
    fn greedy_end(counts: &[usize], start: usize, end: usize, need: usize) -> usize {
        let mut acc = 0usize;
        for (i, &c) in counts.iter().enumerate().take(end).skip(start) {
            acc += c;
            if acc >= need {
                return i + 1;
            }
        }
        end
    }

    /// [`plan`] as the reference computes it, every count summed first.
    fn plan_from_totals(messages: &[Message], counts: &[usize], config: &PlanConfig) -> Plan {
        let total: usize = counts.iter().sum();
        if total <= config.target_max_tokens {
            return Plan::UnderTarget;
        }
        let (start, end) = compressible_region(messages, config);
        if start >= end {
            return Plan::Blocked(Blocked::NothingBetweenProtectedTurns);
        }
        let need = total - config.target_max_tokens + config.summary_target_tokens;
        let until = cut_forward(messages, greedy_end(counts, start, end, need), end);
        let span_tokens: usize = counts[start..until].iter().sum();
        if until <= start || span_tokens <= config.summary_target_tokens {
            return Plan::Blocked(Blocked::SpanNotLargerThanSummary);
        }
        Plan::Summarize {
            start,
            end: until,
            span_tokens,
        }
    }

    #[test]
    fn a_long_trajectory_is_cut_without_counting_its_middle() {
        let mut messages = vec![Message::system("s"), Message::user("task")];
        for _ in 0..99 {
            messages.push(Message::assistant("a"));
            messages.push(Message::user("u"));
        }
        let config = PlanConfig {
            target_max_tokens: 2_000,
            summary_target_tokens: 200,
            ..PlanConfig::default()
        };
        let mut asked = 0;
        let decided = cut(
            &messages,
            &mut |_| {
                asked += 1;
                100
            },
            &config,
        );
        assert!(matches!(decided, Cut::Summarize { .. }), "{decided:?}");
        // About the target's worth of turns (20 of 100 tokens) plus the head, not all 200.
        assert!(asked < 30, "{asked} of {} turns counted", messages.len());
    }

    proptest::proptest! {
        /// The cut decides as the reference does on random trajectories (roles, sizes, targets,
        /// protection), and what it leaves uncounted is inside the span.
        #[test]
        fn the_cut_decides_as_the_reference_does(
            turns in proptest::collection::vec((0u8..4, 1usize..400), 0..40),
            target in 0usize..4_000,
            summary in 0usize..600,
            protect_last_n in 0usize..6,
            protect in 0u8..16,
        ) {
            let messages: Vec<Message> = turns
                .iter()
                .map(|&(role, _)| match role {
                    0 => Message::system("s"),
                    1 => Message::user("u"),
                    2 => Message::assistant("a"),
                    _ => Message::tool("c", "t"),
                })
                .collect();
            let counts: Vec<usize> = turns.iter().map(|&(_, c)| c).collect();
            let config = PlanConfig {
                target_max_tokens: target,
                summary_target_tokens: summary,
                protect_first: ProtectFirst {
                    system: protect & 1 != 0,
                    human: protect & 2 != 0,
                    gpt: protect & 4 != 0,
                    tool: protect & 8 != 0,
                },
                protect_last_n,
            };
            let mut asked = vec![false; counts.len()];
            let decided = cut(&messages, &mut |i| { asked[i] = true; counts[i] }, &config);
            let reference = plan_from_totals(&messages, &counts, &config);
            proptest::prop_assert_eq!(plan(&messages, &counts, &config), reference);
            match (decided, reference) {
                (Cut::Summarize { start, end }, Plan::Summarize { start: s, end: e, .. }) => {
                    proptest::prop_assert_eq!((start, end), (s, e));
                    // The head is always counted. Turns after the span go uncounted only when the
                    // region ran out, and then the span itself was counted instead.
                    let span_counted = asked[start..end].iter().all(|a| *a);
                    for (i, asked) in asked.iter().enumerate() {
                        proptest::prop_assert!(
                            *asked || (start..end).contains(&i) || (i >= end && span_counted),
                            "turn {} not counted outside the span",
                            i
                        );
                    }
                }
                (Cut::UnderTarget, Plan::UnderTarget) => {
                    proptest::prop_assert!(asked.iter().all(|a| *a), "under the target needs every count");
                }
                (Cut::Blocked(a), Plan::Blocked(b)) => proptest::prop_assert_eq!(a, b),
                (a, b) => proptest::prop_assert!(false, "{:?} against {:?}", a, b),
            }
        }
    }
}
