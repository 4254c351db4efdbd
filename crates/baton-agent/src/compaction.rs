//! A compaction is a session boundary: the current session ends with reason `compression`,
//! its continuation starts holding the compacted messages (one store transaction), the system
//! prompt is rebuilt with a fresh memory snapshot, and the engine and memory manager are told.
//! Nothing of the parent is deleted: `history_search` / `history_expand` read it back.

use crate::agent::Agent;
use crate::error::AgentError;
use crate::event::AgentEvent;
use crate::recall::summary_span_note;
use baton_core::compress::markers::is_summary_message;
use baton_core::compress::{CompressionResult, Outcome};
use baton_core::engine::CompressRequest;
use baton_core::message::{Content, ContentPart, Message};
use baton_memory::provider::SessionSwitch;
use baton_store::continuation::ChildSettings;

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Before a call: the estimate of the next request is over the threshold.
    Preflight,
    /// After a call: the provider's reported prompt size is over the threshold.
    PostResponse,
    /// The provider refused the request as too large.
    Overflow,
    /// The user asked (`/compress [focus]`).
    Manual,
    /// The cost policy judged compacting now cheaper than continuing on the warm cache.
    Cost,
    /// A resumed session was over the hygiene line.
    Resume,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Preflight => "preflight",
            Trigger::PostResponse => "post_response",
            Trigger::Overflow => "overflow",
            Trigger::Manual => "manual",
            Trigger::Cost => "cost",
            Trigger::Resume => "resume",
        }
    }
}

/// What a compaction that happened did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    pub from_session: String,
    pub to_session: String,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// Said once a lineage has been compacted twice: summaries of summaries lose detail.
pub const DETAIL_LOSS_NOTICE: &str = "This conversation has now been compacted {n} times; \
     details of early turns may be lost from the summary. The originals are kept: the model can \
     recall them with history_search and history_expand, and /new starts a fresh session.";

impl Agent {
    /// Compacts the live session. `Ok(None)` when the engine did not change anything (nothing
    /// to compress, blocked by the anti-thrashing guard, summarizer unavailable); the reason is
    /// sent as a notice for manual and overflow compactions.
    pub async fn compact(
        &mut self,
        trigger: Trigger,
        focus: Option<&str>,
        force: bool,
        current_tokens: Option<u64>,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<Option<Compacted>, AgentError> {
        if let Some(memory) = &self.memory {
            // Providers flush what they learned before the span is summarized away.
            let _ = memory.on_pre_compress(&self.session.messages);
        }
        let result = self
            .engine
            .compress(CompressRequest {
                messages: self.session.messages.as_slice().into(),
                current_tokens,
                focus_topic: focus,
                force,
            })
            .await;
        match &result.outcome {
            Outcome::Compressed | Outcome::PrunedOnly => {}
            other => {
                if matches!(
                    trigger,
                    Trigger::Manual | Trigger::Overflow | Trigger::Resume
                ) {
                    sink(AgentEvent::Notice {
                        message: format!("context not compacted: {}", describe(other)),
                    });
                }
                return Ok(None);
            }
        }
        self.install(trigger, result, sink).map(Some)
    }

    /// Makes the compacted messages the new session.
    fn install(
        &mut self,
        trigger: Trigger,
        result: CompressionResult,
        sink: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<Compacted, AgentError> {
        let parent = self.session.id.clone();
        let messages_before = self.session.messages.len();
        let mut messages = result.messages;
        if let Some(range) = &result.summarized_range {
            note_span(&mut messages, &parent, range);
        }
        let budget = (self.config.context_length as f64 * self.config.pin_budget_ratio) as usize;
        let pinned = crate::pins::restore_pins(
            &mut messages,
            self.first_request.as_ref(),
            &self.pins,
            budget,
        );
        let system_prompt = self.prompt.build();
        let child = self.store.start_continuation_with(
            &parent,
            &messages,
            &ChildSettings {
                system_prompt: Some(system_prompt.clone()),
                model: Some(self.config.model.clone()),
            },
        )?;
        let compacted = Compacted {
            from_session: parent.clone(),
            to_session: child.clone(),
            messages_before,
            messages_after: messages.len(),
            tokens_before: result.tokens_before,
            tokens_after: result.tokens_after,
        };
        self.session.id = child.clone();
        self.session.lineage.push(child.clone());
        self.session.messages = std::sync::Arc::new(messages);
        self.session.system_prompt = system_prompt;
        self.estimator
            .set_system_prompt(&self.session.system_prompt);
        self.engine.on_session_start(&child);
        if let Some(memory) = &self.memory {
            memory.on_session_switch(&SessionSwitch {
                new_session_id: child.clone(),
                parent_session_id: Some(parent.clone()),
                reset: false,
                reason: "compression".into(),
            });
        }
        self.totals.compactions += 1;
        self.record_compaction(
            &parent,
            &child,
            trigger.as_str(),
            (result.tokens_before, result.tokens_after),
        );
        let n = self.session.lineage_compactions();
        sink(AgentEvent::Compaction {
            from_session: parent,
            to_session: child,
            tokens_before: result.tokens_before,
            tokens_after: result.tokens_after,
            trigger: trigger.as_str().into(),
            lineage_compactions: n,
        });
        for dropped in pinned.dropped {
            sink(AgentEvent::Notice { message: dropped });
        }
        if n >= 2 {
            sink(AgentEvent::Notice {
                message: DETAIL_LOSS_NOTICE.replace("{n}", &n.to_string()),
            });
        }
        Ok(compacted)
    }
}

/// Appends to the installed summary which stored messages it replaced, so the model knows what
/// `history_expand` can give back. (`range` indexes the parent's messages, which are its stored
/// rows: the live view and the store are kept row for row equal.)
fn note_span(messages: &mut [Message], parent: &str, range: &std::ops::Range<usize>) {
    let Some(summary) = messages.iter_mut().find(|m| is_summary_message(m)) else {
        return;
    };
    let note = summary_span_note(parent, range);
    summary.content = Some(match summary.content.take() {
        Some(Content::Text(text)) => Content::Text(format!("{text}\n\n{note}")),
        Some(Content::Parts(mut parts)) => {
            parts.push(ContentPart::text(note));
            Content::Parts(parts)
        }
        Some(Content::Null) | None => Content::Text(note),
    });
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::NoOp { reason } | Outcome::Blocked { reason } => reason.clone(),
        Outcome::Unavailable { reason } => format!("the summarizer is unavailable: {reason}"),
        Outcome::Compressed | Outcome::PrunedOnly => "compacted".into(),
    }
}
