//! Per-role token tallies of a set of conversations: what `baton tokens` prints.
//!
//! Each row holds the rough estimate next to an exact count, so a user sees at a glance how
//! far the cheap estimator is from the real tokenizer on their own data (CJK text and base64
//! blobs are where they part ways).

use crate::conversation::Conversation;
use crate::message::Role;
use crate::tokens::{REPLY_PRIMING, RoughCounter, TokenCounter, tools_tokens};
use serde::Serialize;

/// Messages and tokens of one role (or of tool schemas, or of everything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Tally {
    pub messages: usize,
    /// [`RoughCounter`] tokens.
    pub estimated: usize,
    /// Tokens from the chosen exact counter (equal to `estimated` when that counter is rough).
    pub exact: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.messages += other.messages;
        self.estimated += other.estimated;
        self.exact += other.exact;
    }
}

/// Token tallies per role, for tool schemas, and in total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenReport {
    /// Name of the exact counter (`o200k_base`, `cl100k_base`, or `rough`).
    pub encoding: &'static str,
    pub conversations: usize,
    /// One row per role present, in [`Role::ALL`] order.
    pub roles: Vec<(Role, Tally)>,
    /// Tool schemas sent with the requests (`messages` counts schemas here).
    pub tools: Tally,
    /// Everything, including per-request reply priming: the sum of each conversation's
    /// request estimate.
    pub total: Tally,
}

impl TokenReport {
    /// Counts every message of every conversation with both the rough and the `exact` counter.
    pub fn build(conversations: &[Conversation], exact: &dyn TokenCounter) -> TokenReport {
        let mut by_role = [Tally::default(); Role::ALL.len()];
        let mut tools = Tally::default();
        for conv in conversations {
            for m in &conv.messages {
                let slot = &mut by_role[role_slot(m.role)];
                slot.add(Tally {
                    messages: 1,
                    estimated: RoughCounter.count_message(m),
                    exact: exact.count_message(m),
                });
            }
            if let Some(schemas) = conv.tools.as_deref() {
                tools.add(Tally {
                    messages: schemas.len(),
                    estimated: tools_tokens(&RoughCounter, schemas),
                    exact: tools_tokens(exact, schemas),
                });
            }
        }
        let roles: Vec<(Role, Tally)> = Role::ALL
            .into_iter()
            .zip(by_role)
            .filter(|(_, t)| t.messages > 0)
            .collect();
        let mut total = Tally::default();
        for (_, t) in &roles {
            total.add(*t);
        }
        let priming = REPLY_PRIMING * conversations.len();
        total.estimated += tools.estimated + priming;
        total.exact += tools.exact + priming;
        TokenReport {
            encoding: exact.name(),
            conversations: conversations.len(),
            roles,
            tools,
            total,
        }
    }
}

fn role_slot(role: Role) -> usize {
    Role::ALL.iter().position(|r| *r == role).unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::tokens::{Encoding, estimate_conversation};

    #[test]
    fn total_equals_sum_of_request_estimates() {
        let mut a = Conversation::new(vec![
            Message::system("You are terse."),
            Message::user("你好，世界"),
            Message::assistant("hello"),
        ]);
        a.tools = Some(vec![
            serde_json::json!({"type":"function","function":{"name":"f"}}),
        ]);
        let b = Conversation::new(vec![Message::user("second conversation")]);
        let exact = Encoding::O200k.counter();
        let report = TokenReport::build(&[a.clone(), b.clone()], exact);
        let want =
            estimate_conversation(exact, &a).total() + estimate_conversation(exact, &b).total();
        assert_eq!(report.total.exact, want);
        let want_rough = estimate_conversation(&RoughCounter, &a).total()
            + estimate_conversation(&RoughCounter, &b).total();
        assert_eq!(report.total.estimated, want_rough);
        assert_eq!(report.total.messages, 4);
        assert_eq!(report.tools.messages, 1);
    }

    #[test]
    fn only_roles_present_get_rows_in_canonical_order() {
        let conv = Conversation::new(vec![Message::user("u"), Message::system("s")]);
        let report = TokenReport::build(&[conv], Encoding::Rough.counter());
        let roles: Vec<Role> = report.roles.iter().map(|(r, _)| *r).collect();
        assert_eq!(roles, vec![Role::System, Role::User]);
        assert_eq!(report.encoding, "rough");
    }
}
