//! `/new`, `/resume`, `/sessions` and `/title`: which stored session the terminal is in.

use super::view::Tone;
use super::{Chat, screen};
use crate::commands::sessions::list::{ListArgs, table_lines};
use crate::commands::sessions::resolve;
use baton_agent::AgentEvent;
use baton_core::Role;

/// Sessions `/sessions` and a bare `/resume` list.
const LISTED_SESSIONS: usize = 10;
/// Characters of each recent message shown after `/resume`.
const RECAP_CHARS: usize = 160;

impl Chat {
    pub(super) fn new_session(&mut self) -> Result<(), String> {
        let agent = self.launch.start().map_err(|e| e.to_string())?;
        let previous = std::mem::replace(&mut self.agent, agent);
        self.view.context_changed(&mut self.agent);
        self.view.line(
            &format!(
                "new session {} · the previous one, {}, is saved",
                self.agent.session_id(),
                previous.session_id()
            ),
            Tone::Good,
        );
        Ok(())
    }

    pub(super) async fn resume(&mut self, target: Option<&str>) -> Result<(), String> {
        let Some(target) = target else {
            self.sessions()?;
            self.view.line(
                "/resume ID or /resume TITLE continues one of them",
                Tone::Dim,
            );
            return Ok(());
        };
        let id = resolve(self.launch.store.as_ref(), target).map_err(|e| e.to_string())?;
        let agent = self.launch.resume(&id).map_err(|e| e.to_string())?;
        self.agent = agent;
        let session = self.agent.session();
        let lineage = session.lineage.len().saturating_sub(1);
        let mut line = format!(
            "resumed session {} · {} messages in view",
            session.id,
            session.messages.len()
        );
        if lineage > 0 {
            line.push_str(&format!(" · compacted {lineage} times before"));
        }
        self.view.line(&line, Tone::Good);
        let recap: Vec<String> = session
            .messages
            .iter()
            .filter(|m| matches!(m.role, Role::User | Role::Assistant) && !m.text().is_empty())
            .rev()
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(|m| {
                let who = if m.role == Role::User {
                    "you"
                } else {
                    "assistant"
                };
                format!(
                    "  {who}: {}",
                    super::activity::one_line(&m.text(), RECAP_CHARS)
                )
            })
            .collect();
        for line in recap {
            self.view.line(&line, Tone::Dim);
        }
        let view = &mut self.view;
        let mut sink = |event: AgentEvent| view.show(&event);
        self.agent
            .resume_hygiene(&mut sink)
            .await
            .map_err(|e| e.to_string())?;
        self.view.context_changed(&mut self.agent);
        Ok(())
    }

    pub(super) fn sessions(&mut self) -> Result<(), String> {
        let width = usize::from(screen::lock(&self.view.screen).cols());
        let args = ListArgs {
            limit: LISTED_SESSIONS,
            source: None,
        };
        let lines =
            table_lines(self.launch.store.as_ref(), &args, width).map_err(|e| e.to_string())?;
        self.view.lines(&lines);
        self.view.line(
            &format!("you are in {}", self.agent.session_id()),
            Tone::Dim,
        );
        Ok(())
    }

    pub(super) fn title(&mut self, name: &str) -> Result<(), String> {
        let stored = self
            .launch
            .store
            .set_title(self.agent.session_id(), name)
            .map_err(|e| e.to_string())?;
        let shown = stored.unwrap_or_else(|| name.to_string());
        self.view.line(
            &format!(
                "titled {:?} · /resume {shown:?} or baton chat --resume {shown:?} continues it",
                shown
            ),
            Tone::Good,
        );
        Ok(())
    }
}
