//! Usage derived from the request when a reply does not script it: about one token per four
//! characters of what the model reads, and, when the simulated cache is on, the prefix shared
//! with the previous request of the same API reported as cached — as a provider's prompt cache
//! would (Anthropic only caches up to its last `cache_control` marker, and writes the rest of
//! that marked prefix).

use crate::reply::{Reply, ReplyKind, Usage};
use crate::server::Api;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub(crate) struct UsageMeter {
    pub(crate) cache: bool,
    previous: HashMap<Api, String>,
}

/// The part of a request the model reads, as text, in the order it is laid out.
pub(crate) fn prompt_text(api: Api, body: &Value) -> String {
    let keys: &[&str] = match api {
        Api::ChatCompletions => &["tools", "messages"],
        Api::Messages => &["system", "tools", "messages"],
        Api::Responses => &["instructions", "tools", "input"],
    };
    keys.iter()
        .filter_map(|k| body.get(*k))
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

impl UsageMeter {
    pub(crate) fn measure(&mut self, api: Api, body: &Value, reply: &Reply) -> Usage {
        let text = prompt_text(api, body);
        let prompt = tokens(text.chars().count()).max(1);
        let completion = tokens(answer_chars(reply)).max(1);
        let (cached, cache_write) = if self.cache {
            let shared = self
                .previous
                .get(&api)
                .map_or(0, |prev| common_prefix_chars(prev, &text));
            match api {
                Api::Messages => {
                    let marked = text
                        .rfind("\"cache_control\"")
                        .map_or(0, |byte| text[..byte].chars().count());
                    let cached = shared.min(marked);
                    (tokens(cached), tokens(marked.saturating_sub(cached)))
                }
                Api::ChatCompletions | Api::Responses => {
                    // OpenAI caches in 128-token steps past the first 1,024.
                    let cached = tokens(shared);
                    let cached = if cached >= 1024 {
                        cached / 128 * 128
                    } else {
                        0
                    };
                    (cached, 0)
                }
            }
        } else {
            (0, 0)
        };
        self.previous.insert(api, text);
        Usage {
            prompt: prompt.max(cached + cache_write),
            cached,
            cache_write,
            completion,
        }
    }
}

fn answer_chars(reply: &Reply) -> usize {
    match &reply.kind {
        ReplyKind::Text(t) | ReplyKind::BrokenStream(t) => t.chars().count(),
        ReplyKind::ToolCalls { text, calls } => {
            text.as_deref().map_or(0, |t| t.chars().count())
                + calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
        }
        ReplyKind::Error { .. } => 0,
    }
}

fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}
