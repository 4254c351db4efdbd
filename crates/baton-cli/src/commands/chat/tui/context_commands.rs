//! `/compress`, `/model`, `/pin` and `/history`: what the model sees, and getting back what
//! it no longer sees.

use super::Chat;
use super::activity::one_line;
use super::slash::PinAction;
use super::status::Activity;
use super::view::Tone;
use crate::commands::compress_settings::Window;
use baton_agent::{AgentEvent, Trigger};
use baton_core::Role;
use baton_core::truncate::group_digits;
use baton_llm::context_length::{ContextLengths, ContextSource};
use baton_store::{SearchQuery, StoreError};

/// Hits one `/history` search lists.
const HISTORY_HITS: usize = 10;
/// Messages shown either side of an expanded hit.
const EXPAND_AROUND: usize = 1;

impl Chat {
    /// A manual compaction, with what it did: messages and tokens before and after, and the
    /// focus kept. Ctrl-C cancels it before anything changes.
    pub(super) async fn compress(&mut self, focus: Option<&str>) -> Result<(), String> {
        self.interrupt.clear();
        self.view.set_activity(Activity::Compacting);
        let view = &mut self.view;
        let mut sink = |event: AgentEvent| view.show(&event);
        let done = tokio::select! {
            done = self.agent.compact(Trigger::Manual, focus, true, None, &mut sink) => done,
            () = self.interrupt.raised() => {
                self.view.line("compaction cancelled; nothing changed", Tone::Warn);
                return Ok(());
            }
        };
        let Some(compacted) = done.map_err(|e| e.to_string())? else {
            // The agent said why in a notice.
            return Ok(());
        };
        let before = compacted.tokens_before;
        let saved = before.saturating_sub(compacted.tokens_after);
        let percent = (saved * 100).checked_div(before).unwrap_or(0);
        self.view.line(
            &format!(
                "compressed: {} → {} messages, ~{} → ~{} tokens ({percent}% smaller){}",
                compacted.messages_before,
                compacted.messages_after,
                group_digits(before as usize),
                group_digits(compacted.tokens_after as usize),
                focus
                    .map(|f| format!(" · kept in detail: {f}"))
                    .unwrap_or_default()
            ),
            Tone::Good,
        );
        self.view.line(
            "the originals stay stored: /history finds them, and the model can recall them",
            Tone::Dim,
        );
        self.view.context_changed(&mut self.agent);
        Ok(())
    }

    /// Lists the server's models, or switches to one with its window as the server states
    /// it; a smaller window compacts at once if the context is over its threshold.
    pub(super) async fn model(&mut self, name: Option<&str>) -> Result<(), String> {
        let provider = self.launch.provider.clone();
        let Some(name) = name else {
            let current = self.agent.config().model.clone();
            self.view.line(
                &format!(
                    "model {current} · window {} tokens",
                    group_digits(self.agent.config().context_length as usize)
                ),
                Tone::Plain,
            );
            match provider.list_models().await {
                Ok(models) if models.is_empty() => {
                    self.view.line("the server lists no models", Tone::Dim);
                }
                Ok(models) => {
                    for m in models {
                        let mark = if m.id == current { "●" } else { " " };
                        let window = m
                            .context_length
                            .map(|n| format!("{} tokens", group_digits(n as usize)))
                            .unwrap_or_else(|| "window not stated".into());
                        self.view
                            .line(&format!("  {mark} {} · {window}", m.id), Tone::Plain);
                    }
                    self.view.line("/model NAME switches", Tone::Dim);
                }
                Err(e) => self
                    .view
                    .line(&format!("cannot list the server's models: {e}"), Tone::Warn),
            }
            return Ok(());
        };
        let (tokens, source) = ContextLengths::new().resolve(provider.as_ref(), name).await;
        let (source, detail) = match source {
            ContextSource::Server => ("server", "listed by the server"),
            ContextSource::Table => ("table", "the model family's known window"),
            ContextSource::Configured => ("file", "configured"),
            ContextSource::ProviderError => ("server", "stated by the server"),
            ContextSource::Fallback => ("default", "a default: the server did not state it"),
        };
        let old_window = self.agent.config().context_length;
        self.agent.switch_model(name, tokens);
        self.launch.set_model(
            name,
            Window {
                tokens,
                source,
                detail: detail.into(),
            },
        );
        self.view.line(
            &format!(
                "model {name} · window {} tokens ({detail})",
                group_digits(tokens as usize)
            ),
            Tone::Good,
        );
        if tokens < old_window {
            self.view.set_activity(Activity::Compacting);
            let view = &mut self.view;
            let mut sink = |event: AgentEvent| view.show(&event);
            let changed = self
                .agent
                .fit_to_window(&mut sink)
                .await
                .map_err(|e| e.to_string())?;
            let threshold = self.agent.engine_status().tokens.threshold_tokens;
            let now = self.agent.rough_prompt_tokens();
            if !changed && now <= threshold {
                self.view.line(
                    "the context fits the smaller window; nothing compacted",
                    Tone::Dim,
                );
            } else if now > threshold {
                self.view.line(
                    &format!(
                        "the context (~{} tokens) is still over this window's compaction point ({}); the next turn compacts again, or /new starts fresh",
                        group_digits(now as usize),
                        group_digits(threshold as usize)
                    ),
                    Tone::Warn,
                );
            }
        }
        self.view.context_changed(&mut self.agent);
        Ok(())
    }

    pub(super) fn pin(&mut self, action: PinAction) -> Result<(), String> {
        match action {
            PinAction::PinLast => {
                let messages = &self.agent.session().messages;
                let position = messages
                    .iter()
                    .rposition(|m| m.role == Role::User)
                    .ok_or("there is no message of yours to pin yet")?;
                let text = messages[position].text();
                self.agent.pin(position).map_err(|e| e.to_string())?;
                self.view.line(
                    &format!(
                        "pinned: {} · every compaction keeps it verbatim ({} pins)",
                        one_line(&text, 80),
                        self.agent.pins().len()
                    ),
                    Tone::Good,
                );
            }
            PinAction::List => {
                if self.agent.pins().is_empty() {
                    self.view
                        .line("no pins · /pin pins your last message", Tone::Dim);
                }
                let lines: Vec<String> = self
                    .agent
                    .pins()
                    .iter()
                    .enumerate()
                    .map(|(i, m)| format!("  {} {}", i + 1, one_line(&m.text(), 100)))
                    .collect();
                self.view.lines(&lines);
            }
            PinAction::Remove(n) => {
                let index = n.checked_sub(1).ok_or("pins are numbered from 1")?;
                self.agent.unpin(index).map_err(|e| e.to_string())?;
                self.view.line(&format!("pin {n} removed"), Tone::Good);
            }
        }
        Ok(())
    }

    /// `/history QUERY` searches every session of this conversation's lineage (the
    /// compacted-away ones and the live one); `/history N` shows hit N with its neighbours.
    pub(super) async fn history(&mut self, query: Option<&str>) -> Result<(), String> {
        let lineage = self.agent.session().lineage.clone();
        let Some(query) = query else {
            let archived = lineage.len().saturating_sub(1);
            self.view.line(
                &format!(
                    "this conversation has {archived} compacted session(s) before the current one · /history QUERY searches them all, /history N expands a hit"
                ),
                Tone::Plain,
            );
            return Ok(());
        };
        if let Ok(n) = query.trim_start_matches('#').parse::<usize>() {
            return self.expand_hit(n);
        }
        let store = self.launch.store.clone();
        let text = query.to_string();
        let sessions = lineage.clone();
        let found = tokio::task::spawn_blocking(move || {
            let hits = store.search(&SearchQuery {
                text,
                session_ids: sessions,
                limit: HISTORY_HITS,
                ..SearchQuery::default()
            })?;
            let mut located = Vec::new();
            for hit in hits {
                let (session, position) = store.message_position(hit.message_id)?;
                located.push((session, position, hit.role, hit.snippet));
            }
            Ok::<_, StoreError>(located)
        })
        .await
        .map_err(|e| format!("history search stopped: {e}"))?
        .map_err(|e| format!("history search failed: {e}"))?;
        if found.is_empty() {
            self.view.line(
                &format!("nothing in this conversation matches {query:?}"),
                Tone::Dim,
            );
            return Ok(());
        }
        let live = self.agent.session_id().to_string();
        self.history_hits.clear();
        let mut lines = Vec::new();
        // A continuation starts with copies of its parent's head: one hit per text.
        let mut seen = std::collections::HashSet::new();
        let found: Vec<_> = found
            .into_iter()
            .filter(|(_, _, role, snippet)| seen.insert((role.clone(), snippet.clone())))
            .collect();
        for (i, (session, position, role, snippet)) in found.into_iter().enumerate() {
            let place = if session == live {
                "in view".to_string()
            } else {
                format!("compacted, {session}")
            };
            lines.push(format!(
                "  {} [{place} #{position}] {role}: {}",
                i + 1,
                one_line(&snippet, 110)
            ));
            self.history_hits.push((session, position));
        }
        self.view.lines(&lines);
        self.view.line("/history N shows a hit in full", Tone::Dim);
        Ok(())
    }

    fn expand_hit(&mut self, n: usize) -> Result<(), String> {
        let (session, position) = n
            .checked_sub(1)
            .and_then(|i| self.history_hits.get(i))
            .cloned()
            .ok_or_else(|| {
                format!("there is no hit {n}: run /history QUERY first, then /history N")
            })?;
        let start = position.saturating_sub(EXPAND_AROUND);
        let messages = self
            .launch
            .store
            .messages_range(&session, start, position + EXPAND_AROUND + 1)
            .map_err(|e| e.to_string())?;
        for (offset, message) in messages.iter().enumerate() {
            let rendered = baton_agent::recall::render::render(&session, start + offset, message);
            let tone = if start + offset == position {
                Tone::Plain
            } else {
                Tone::Dim
            };
            for line in rendered.lines() {
                self.view.line(line, tone);
            }
        }
        Ok(())
    }
}
