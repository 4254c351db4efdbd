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
    let total: usize = counts.iter().sum();
    if total <= config.target_max_tokens {
        return Plan::UnderTarget;
    }
    let (start, end) = compressible_region(messages, config);
    if start >= end {
        return Plan::Blocked(Blocked::NothingBetweenProtectedTurns);
    }
    let need = total - config.target_max_tokens + config.summary_target_tokens;
    let until = greedy_end(counts, start, end, need);
    let until = cut_forward(messages, until, end);
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

/// First index from `from` on where the greedy sum reaches `need`, as an exclusive end; `end`
/// when the whole region is not enough (the reference then takes all of it).
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

    #[test]
    fn greedy_end_stops_as_soon_as_the_need_is_met() {
        assert_eq!(greedy_end(&[5, 5, 5, 5], 1, 4, 6), 3);
        assert_eq!(greedy_end(&[5, 5, 5, 5], 1, 4, 100), 4);
    }
}
