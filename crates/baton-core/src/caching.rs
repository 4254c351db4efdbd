//! Prompt-cache breakpoints: the `system_and_3` layout.
//!
//! Anthropic models only reuse a cached prompt prefix when the request says where the prefix
//! ends, with a `cache_control` marker, and accept at most four of them per request. The layout
//! spends one on the system prompt (the largest stable block) and the rest on the newest
//! messages, so the next turn's request still shares every marked prefix with this one and the
//! window of cached history slides forward by one message per turn.
//!
//! Everything here is a pure function over a copy of the request: markers are request-local and
//! never belong in a stored transcript. Marking turns string content into a list of parts, so it
//! must run after every other rewrite of the request (whitespace fixes, merges, sanitising),
//! otherwise those passes stop seeing the strings they expect and the cached prefix changes
//! byte for byte from one turn to the next.
//!
//! OpenAI and most other providers cache automatically and either ignore or reject the field, so
//! [`layout_for`] only places markers on routes known to honour them.

use crate::message::{Content, ContentPart, Message, Role};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Anthropic rejects a request carrying more than four `cache_control` markers.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// The field name, on a message (native tool results) or on a content part.
const CACHE_CONTROL: &str = "cache_control";

/// Providers of the Alibaba/Qwen family: they honour markers but only keep a five-minute cache,
/// and reject the one-hour tier.
const ALIBABA_FAMILY_PROVIDERS: [&str; 4] = ["opencode", "opencode-go", "opencode-zen", "alibaba"];

/// Routes measured to actually keep a one-hour entry despite belonging to the family above.
const MEASURED_ONE_HOUR_PROVIDERS: [&str; 1] = ["opencode-go"];

/// Models that ignore the one-hour tier even on a measured route.
const NO_ONE_HOUR_MODELS: [&str; 1] = ["minimax-m2.5"];

/// How long the provider keeps a cached prefix. Five minutes is cheaper to write; one hour pays
/// off when turns are more than five minutes apart (a user reading, a long tool run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

/// A TTL string that is neither `"5m"` nor `"1h"`. Rejected rather than defaulted so a typo in
/// configuration does not silently change what the cache costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheTtlError {
    pub found: String,
}

impl fmt::Display for CacheTtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown prompt-cache TTL {:?}: expected \"5m\" or \"1h\"",
            self.found
        )
    }
}

impl std::error::Error for CacheTtlError {}

impl CacheTtl {
    /// Parses the configuration spelling, `"5m"` or `"1h"`.
    pub fn parse(s: &str) -> Result<Self, CacheTtlError> {
        match s {
            "5m" => Ok(CacheTtl::FiveMinutes),
            "1h" => Ok(CacheTtl::OneHour),
            other => Err(CacheTtlError {
                found: other.to_string(),
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        }
    }

    /// The `cache_control` value. Five minutes is the provider default, so it is sent without a
    /// `ttl` key; one hour must be asked for explicitly.
    pub fn marker(self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::String("ephemeral".into()));
        if self == CacheTtl::OneHour {
            m.insert("ttl".into(), Value::String("1h".into()));
        }
        Value::Object(m)
    }

    /// The TTL the route can actually honour. Qwen/Alibaba routes reject the one-hour tier, so
    /// asking for it there would fail the request instead of extending the cache; measured
    /// routes are checked first because the family rule would otherwise swallow them.
    pub fn clamp_for_route(self, provider: &str, model: &str) -> CacheTtl {
        if self == CacheTtl::FiveMinutes {
            return self;
        }
        let provider = normalise(provider);
        if MEASURED_ONE_HOUR_PROVIDERS.contains(&provider.as_str()) {
            return if NO_ONE_HOUR_MODELS.contains(&bare_model_id(model).as_str()) {
                CacheTtl::FiveMinutes
            } else {
                CacheTtl::OneHour
            };
        }
        if is_qwen(model) || ALIBABA_FAMILY_PROVIDERS.contains(&provider.as_str()) {
            CacheTtl::FiveMinutes
        } else {
            CacheTtl::OneHour
        }
    }
}

impl FromStr for CacheTtl {
    type Err = CacheTtlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CacheTtl::parse(s)
    }
}

impl fmt::Display for CacheTtl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether, and in which shape, a route honours `cache_control` markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheSupport {
    /// No markers: the provider caches on its own (OpenAI, Gemini…) or not at all, and an
    /// unexpected field risks a rejected request.
    None,
    /// The Anthropic Messages wire: tool results take a message-level marker, which the adapter
    /// moves into the `tool_result` block.
    Native,
    /// An OpenAI-format envelope relayed to an Anthropic-style cache (OpenRouter, Nous Portal,
    /// Qwen routes): only markers inside content parts are honoured, and a message-level marker
    /// on a tool message hangs OpenRouter requests.
    Envelope,
}

impl CacheSupport {
    /// Decides from the provider id and the model name. Claude behind an aggregator is only
    /// cached when marked; a third-party gateway speaking the Anthropic wire cannot be
    /// recognised from its id alone, so its caller should pick [`CacheSupport::Native`] itself.
    pub fn for_route(provider: &str, model: &str) -> CacheSupport {
        let provider = normalise(provider);
        let claude = model.to_lowercase().contains("claude");
        let qwen = is_qwen(model);
        match provider.as_str() {
            "anthropic" | "minimax" | "minimax-cn" => CacheSupport::Native,
            "openrouter" if claude => CacheSupport::Envelope,
            "nous" if claude || qwen => CacheSupport::Envelope,
            p if qwen && ALIBABA_FAMILY_PROVIDERS.contains(&p) => CacheSupport::Envelope,
            _ => CacheSupport::None,
        }
    }

    pub fn places_markers(self) -> bool {
        self != CacheSupport::None
    }

    pub fn is_native(self) -> bool {
        self == CacheSupport::Native
    }
}

/// True when requests to this route should carry `cache_control` markers.
pub fn supports_prompt_caching(provider: &str, model: &str) -> bool {
    CacheSupport::for_route(provider, model).places_markers()
}

/// The request messages as they should be sent to `provider`/`model`: laid out with markers
/// where the route honours them, stripped of any stale markers where it does not.
pub fn layout_for(
    provider: &str,
    model: &str,
    messages: &[Message],
    ttl: CacheTtl,
) -> Vec<Message> {
    let support = CacheSupport::for_route(provider, model);
    if !support.places_markers() {
        return strip_cache_markers(messages);
    }
    let ttl = ttl.clamp_for_route(provider, model);
    apply_cache_layout(messages, ttl, support.is_native())
}

/// Places up to [`MAX_CACHE_BREAKPOINTS`] markers: one on a leading system prompt, the rest on
/// the newest messages that can carry one (all four on messages when there is no system prompt).
///
/// Markers already present are removed first, so the result does not depend on whether the
/// input was laid out before: applying twice gives the same request as applying once, and a
/// retry after a provider switch never exceeds the limit.
pub fn apply_cache_layout(
    messages: &[Message],
    ttl: CacheTtl,
    native_anthropic: bool,
) -> Vec<Message> {
    let mut out = strip_cache_markers(messages);
    let marker = ttl.marker();
    let mut budget = MAX_CACHE_BREAKPOINTS;
    if let Some(system) = out.first_mut().filter(|m| m.role == Role::System)
        && mark_message(system, &marker, native_anthropic)
    {
        budget -= 1;
    }
    for index in newest_carriers(&out, budget, native_anthropic) {
        if let Some(message) = out.get_mut(index) {
            mark_message(message, &marker, native_anthropic);
        }
    }
    out
}

/// A copy of the messages without any `cache_control`, for a route that does not want them or
/// before laying them out again. String content that marking had wrapped into a single text part
/// is turned back into a string, so the copy is byte-identical to what was stored.
pub fn strip_cache_markers(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .cloned()
        .map(|mut m| {
            strip_message(&mut m);
            m
        })
        .collect()
}

/// Number of markers in the messages, message-level and part-level together: the figure the
/// provider checks against its limit.
pub fn count_cache_markers(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            let on_parts = match &m.content {
                Some(Content::Parts(parts)) => parts
                    .iter()
                    .filter(|p| p.fields().contains_key(CACHE_CONTROL))
                    .count(),
                _ => 0,
            };
            usize::from(m.extra.contains_key(CACHE_CONTROL)) + on_parts
        })
        .sum()
}

/// Where a marker goes on one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkerSite {
    /// On the message itself.
    Message,
    /// String content becomes one text part carrying the marker.
    WrappedText,
    /// On the last content part, which ends the cached prefix.
    LastPart,
}

/// The placement rule for one message, or `None` when no marker would be honoured there.
///
/// Native tool results and empty content take a message-level marker. On the envelope an empty
/// assistant turn (a pure tool call) or empty tool result would ignore it, and OpenRouter hangs on
/// a message-level marker on a tool message, so those are skipped. An empty part list has no
/// part to mark.
fn marker_site(message: &Message, native_anthropic: bool) -> Option<MarkerSite> {
    if message.role == Role::Tool && native_anthropic {
        return Some(MarkerSite::Message);
    }
    match &message.content {
        None | Some(Content::Null) => empty_content_site(message.role, native_anthropic),
        Some(Content::Text(s)) if s.is_empty() => {
            empty_content_site(message.role, native_anthropic)
        }
        Some(Content::Text(_)) => Some(MarkerSite::WrappedText),
        Some(Content::Parts(parts)) if parts.is_empty() => None,
        Some(Content::Parts(_)) => Some(MarkerSite::LastPart),
    }
}

fn empty_content_site(role: Role, native_anthropic: bool) -> Option<MarkerSite> {
    let envelope_ignores_it = matches!(role, Role::Tool | Role::Assistant);
    if envelope_ignores_it && !native_anthropic {
        None
    } else {
        Some(MarkerSite::Message)
    }
}

/// Whether a marker on this message would be honoured, so it may take one of the breakpoints.
/// The envelope only honours markers inside content parts: a message-level one there would waste
/// a breakpoint.
fn can_carry_marker(message: &Message, native_anthropic: bool) -> bool {
    match marker_site(message, native_anthropic) {
        Some(MarkerSite::Message) => native_anthropic,
        Some(_) => true,
        None => false,
    }
}

/// Indices of the last `budget` non-system messages that can carry a marker, oldest first.
/// System messages past the first are left alone, as the layout reserves only the leading one.
fn newest_carriers(messages: &[Message], budget: usize, native_anthropic: bool) -> Vec<usize> {
    let carriers: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role != Role::System && can_carry_marker(m, native_anthropic))
        .map(|(i, _)| i)
        .collect();
    let skip = carriers.len().saturating_sub(budget);
    carriers.into_iter().skip(skip).collect()
}

/// Puts the marker where [`marker_site`] says; returns whether one was placed.
fn mark_message(message: &mut Message, marker: &Value, native_anthropic: bool) -> bool {
    match marker_site(message, native_anthropic) {
        Some(MarkerSite::Message) => {
            message.extra.insert(CACHE_CONTROL.into(), marker.clone());
            true
        }
        Some(MarkerSite::WrappedText) => {
            let Some(Content::Text(text)) = message.content.take() else {
                return false;
            };
            let mut part = ContentPart::text(text);
            part.fields_mut()
                .insert(CACHE_CONTROL.into(), marker.clone());
            message.content = Some(Content::Parts(vec![part]));
            true
        }
        Some(MarkerSite::LastPart) => match &mut message.content {
            Some(Content::Parts(parts)) => parts.last_mut().is_some_and(|part| {
                part.fields_mut()
                    .insert(CACHE_CONTROL.into(), marker.clone());
                true
            }),
            _ => false,
        },
        None => false,
    }
}

/// Removes markers from one message. Only a single plain text part that lost a marker is turned
/// back into a string: that is the one shape the layout creates from string content, and any
/// other list (images, several parts, extra keys) is how the message was written.
fn strip_message(message: &mut Message) {
    message.extra.shift_remove(CACHE_CONTROL);
    let Some(Content::Parts(parts)) = &mut message.content else {
        return;
    };
    let mut removed = false;
    for part in parts.iter_mut() {
        removed |= part.fields_mut().shift_remove(CACHE_CONTROL).is_some();
    }
    if !removed {
        return;
    }
    if let [only] = parts.as_slice()
        && let Some(text) = plain_text(only)
    {
        message.content = Some(Content::Text(text.to_string()));
    }
}

/// The text of a part that is exactly `{"type":"text","text":…}`.
fn plain_text(part: &ContentPart) -> Option<&str> {
    let only_type_and_text = part.fields().keys().all(|k| k == "type" || k == "text");
    if part.type_name() == "text" && only_type_and_text {
        part.text_value()
    } else {
        None
    }
}

fn normalise(provider: &str) -> String {
    provider.trim().to_lowercase()
}

fn is_qwen(model: &str) -> bool {
    model.to_lowercase().contains("qwen")
}

/// The model id without an aggregator's `vendor/` prefix.
fn bare_model_id(model: &str) -> String {
    let trimmed = model.trim();
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_lowercase()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use serde_json::json;

    fn msg(v: Value) -> Message {
        Message::from_value(v, 0).unwrap()
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::system("You are terse."),
            Message::user("first question"),
            Message::assistant("first answer"),
            Message::user("second question"),
            Message::assistant_tool_calls(vec![ToolCall::function("c1", "read", "{}")]),
            Message::tool("c1", "file body"),
            Message::assistant("second answer"),
            Message::user("third question"),
        ]
    }

    fn marked_indices(messages: &[Message]) -> Vec<usize> {
        messages
            .iter()
            .enumerate()
            .filter(|(_, m)| count_cache_markers(std::slice::from_ref(m)) > 0)
            .map(|(i, _)| i)
            .collect()
    }

    fn part_marker(m: &Message) -> Option<&Value> {
        match &m.content {
            Some(Content::Parts(parts)) => parts.last()?.fields().get(CACHE_CONTROL),
            _ => None,
        }
    }

    #[test]
    fn input_is_not_mutated() {
        let input = conversation();
        let before = input.clone();
        let _ = apply_cache_layout(&input, CacheTtl::OneHour, false);
        let _ = apply_cache_layout(&input, CacheTtl::FiveMinutes, true);
        assert_eq!(input, before);
    }

    #[test]
    fn empty_input_gives_empty_output() {
        assert!(apply_cache_layout(&[], CacheTtl::FiveMinutes, true).is_empty());
    }

    #[test]
    fn never_more_than_four_markers() {
        let mut long = vec![Message::system("sys")];
        for i in 0..30 {
            long.push(Message::user(format!("q{i}")));
            long.push(Message::assistant(format!("a{i}")));
        }
        for native in [false, true] {
            let out = apply_cache_layout(&long, CacheTtl::FiveMinutes, native);
            assert_eq!(count_cache_markers(&out), MAX_CACHE_BREAKPOINTS);
        }
    }

    #[test]
    fn pre_existing_markers_do_not_accumulate() {
        let mut input = conversation();
        for m in &mut input {
            m.extra
                .insert(CACHE_CONTROL.into(), json!({"type": "ephemeral"}));
        }
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert!(count_cache_markers(&out) <= MAX_CACHE_BREAKPOINTS);
    }

    #[test]
    fn system_prompt_is_always_marked() {
        let out = apply_cache_layout(&conversation(), CacheTtl::FiveMinutes, false);
        assert_eq!(
            out[0].to_value(),
            json!({"role": "system", "content": [
                {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
            ]})
        );
    }

    #[test]
    fn last_three_eligible_messages_follow_the_system_prompt() {
        // Envelope: index 4 (tool-call-only assistant) cannot carry, so the three newest
        // carriers are the tool result, the answer and the last question.
        let out = apply_cache_layout(&conversation(), CacheTtl::FiveMinutes, false);
        assert_eq!(marked_indices(&out), vec![0, 5, 6, 7]);
    }

    #[test]
    fn without_system_prompt_the_last_four_are_marked() {
        let input: Vec<Message> = conversation().into_iter().skip(1).collect();
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert_eq!(marked_indices(&out), vec![2, 4, 5, 6]);
    }

    #[test]
    fn applying_twice_equals_applying_once() {
        for native in [false, true] {
            for ttl in [CacheTtl::FiveMinutes, CacheTtl::OneHour] {
                let once = apply_cache_layout(&conversation(), ttl, native);
                let twice = apply_cache_layout(&once, ttl, native);
                assert_eq!(once, twice);
            }
        }
    }

    #[test]
    fn relayout_with_new_ttl_replaces_markers() {
        let five = apply_cache_layout(&conversation(), CacheTtl::FiveMinutes, false);
        let hour = apply_cache_layout(&five, CacheTtl::OneHour, false);
        assert_eq!(
            hour,
            apply_cache_layout(&conversation(), CacheTtl::OneHour, false)
        );
    }

    #[test]
    fn strip_restores_the_stored_transcript() {
        for native in [false, true] {
            let out = apply_cache_layout(&conversation(), CacheTtl::OneHour, native);
            assert_eq!(strip_cache_markers(&out), conversation());
        }
    }

    #[test]
    fn five_minute_marker_has_no_ttl_key() {
        assert_eq!(CacheTtl::FiveMinutes.marker(), json!({"type": "ephemeral"}));
    }

    #[test]
    fn one_hour_marker_carries_ttl() {
        assert_eq!(
            CacheTtl::OneHour.marker(),
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        let out = apply_cache_layout(&conversation(), CacheTtl::OneHour, false);
        assert_eq!(
            part_marker(&out[7]),
            Some(&json!({"type": "ephemeral", "ttl": "1h"}))
        );
    }

    #[test]
    fn ttl_parses_only_known_spellings() {
        assert_eq!(CacheTtl::parse("5m"), Ok(CacheTtl::FiveMinutes));
        assert_eq!("1h".parse::<CacheTtl>(), Ok(CacheTtl::OneHour));
        for bad in ["", "5M", "60m", "1 h", "24h"] {
            let err = CacheTtl::parse(bad).unwrap_err();
            assert_eq!(err.found, bad);
        }
        assert!(
            CacheTtl::parse("2h")
                .unwrap_err()
                .to_string()
                .contains("\"1h\"")
        );
    }

    #[test]
    fn ttl_round_trips_through_serde() {
        assert_eq!(
            serde_json::to_value(CacheTtl::OneHour).unwrap(),
            json!("1h")
        );
        let ttl: CacheTtl = serde_json::from_value(json!("5m")).unwrap();
        assert_eq!(ttl, CacheTtl::FiveMinutes);
        assert!(serde_json::from_value::<CacheTtl>(json!("10m")).is_err());
    }

    #[test]
    fn one_hour_is_clamped_on_qwen_routes() {
        let hour = CacheTtl::OneHour;
        assert_eq!(
            hour.clamp_for_route("alibaba", "qwen3-max"),
            CacheTtl::FiveMinutes
        );
        assert_eq!(
            hour.clamp_for_route("nous", "qwen/qwen3.6-plus"),
            CacheTtl::FiveMinutes
        );
        assert_eq!(
            hour.clamp_for_route("opencode-go", "qwen3.6-plus"),
            CacheTtl::OneHour
        );
        assert_eq!(
            hour.clamp_for_route("opencode-go", "vendor/MiniMax-M2.5"),
            CacheTtl::FiveMinutes
        );
        assert_eq!(
            hour.clamp_for_route("anthropic", "claude-opus-4"),
            CacheTtl::OneHour
        );
        assert_eq!(
            CacheTtl::FiveMinutes.clamp_for_route("anthropic", "x"),
            CacheTtl::FiveMinutes
        );
    }

    #[test]
    fn native_tool_message_gets_message_level_marker() {
        let input = vec![Message::tool("c1", "result")];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, true);
        assert_eq!(
            out[0].to_value(),
            json!({"role": "tool", "content": "result", "tool_call_id": "c1",
                   "cache_control": {"type": "ephemeral"}})
        );
    }

    #[test]
    fn envelope_tool_message_gets_part_marker_only() {
        let input = vec![Message::tool("c1", "result")];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert!(!out[0].extra.contains_key(CACHE_CONTROL));
        assert_eq!(
            out[0].to_value(),
            json!({"role": "tool", "content": [
                {"type": "text", "text": "result", "cache_control": {"type": "ephemeral"}}
            ], "tool_call_id": "c1"})
        );
    }

    #[test]
    fn envelope_empty_content_is_skipped_and_does_not_use_a_breakpoint() {
        let input = vec![
            Message::user("a"),
            Message::assistant("b"),
            Message::user("c"),
            Message::assistant("d"),
            Message::assistant_tool_calls(vec![ToolCall::function("c1", "f", "{}")]),
            Message::tool("c1", ""),
            msg(json!({"role": "assistant", "content": ""})),
        ];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert_eq!(marked_indices(&out), vec![0, 1, 2, 3]);
        assert_eq!(out[4..], input[4..]);
    }

    #[test]
    fn native_empty_assistant_gets_message_level_marker() {
        let input = vec![Message::assistant_tool_calls(vec![ToolCall::function(
            "c1", "f", "{}",
        )])];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, true);
        assert_eq!(out[0].content, Some(Content::Null));
        assert_eq!(
            out[0].extra.get(CACHE_CONTROL),
            Some(&json!({"type": "ephemeral"}))
        );
    }

    #[test]
    fn empty_part_list_is_skipped_in_both_layouts() {
        let input = vec![
            Message::user("a"),
            Message::user("b"),
            Message::user("c"),
            Message::user("d"),
            msg(json!({"role": "user", "content": []})),
        ];
        for native in [false, true] {
            let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, native);
            assert_eq!(marked_indices(&out), vec![0, 1, 2, 3]);
        }
    }

    #[test]
    fn list_content_marks_only_the_last_part() {
        let input = vec![msg(json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
        ]}))];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert_eq!(
            out[0].to_value(),
            json!({"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"},
                 "cache_control": {"type": "ephemeral"}}
            ]})
        );
        assert_eq!(strip_cache_markers(&out), input);
    }

    #[test]
    fn unknown_fields_survive_the_layout() {
        let input = vec![msg(
            json!({"role": "user", "content": "hi", "x_meta": {"id": 7}}),
        )];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, false);
        assert_eq!(out[0].extra.get("x_meta"), Some(&json!({"id": 7})));
    }

    #[test]
    fn later_system_messages_are_not_marked() {
        let input = vec![
            Message::user("q"),
            Message::system("late note"),
            Message::assistant("a"),
        ];
        let out = apply_cache_layout(&input, CacheTtl::FiveMinutes, true);
        assert_eq!(marked_indices(&out), vec![0, 2]);
    }

    #[test]
    fn strip_keeps_lists_the_caller_wrote() {
        let written = msg(json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}));
        assert_eq!(
            strip_cache_markers(std::slice::from_ref(&written)),
            vec![written]
        );
    }

    #[test]
    fn route_support_matches_the_reference_policy() {
        assert_eq!(
            CacheSupport::for_route("anthropic", "claude-sonnet-4"),
            CacheSupport::Native
        );
        assert_eq!(
            CacheSupport::for_route("MiniMax", "MiniMax-M2.7"),
            CacheSupport::Native
        );
        assert_eq!(
            CacheSupport::for_route("openrouter", "anthropic/claude-opus-4"),
            CacheSupport::Envelope
        );
        assert_eq!(
            CacheSupport::for_route("nous", "qwen3.6-plus"),
            CacheSupport::Envelope
        );
        assert_eq!(
            CacheSupport::for_route("opencode-zen", "qwen3-coder"),
            CacheSupport::Envelope
        );
        assert_eq!(
            CacheSupport::for_route("openrouter", "openai/gpt-5"),
            CacheSupport::None
        );
        assert_eq!(
            CacheSupport::for_route("opencode", "gpt-5"),
            CacheSupport::None
        );
        assert!(!supports_prompt_caching("openai", "gpt-5"));
        assert!(!supports_prompt_caching("gemini", "gemini-2.5-pro"));
        assert!(supports_prompt_caching(" Anthropic ", "claude-haiku-4-5"));
    }

    #[test]
    fn unsupported_provider_gets_no_markers() {
        let marked = apply_cache_layout(&conversation(), CacheTtl::FiveMinutes, false);
        let out = layout_for("openai", "gpt-5", &marked, CacheTtl::FiveMinutes);
        assert_eq!(count_cache_markers(&out), 0);
        assert_eq!(out, conversation());
    }

    #[test]
    fn supported_provider_gets_its_layout_and_clamped_ttl() {
        let native = layout_for(
            "anthropic",
            "claude-sonnet-4",
            &conversation(),
            CacheTtl::OneHour,
        );
        assert_eq!(
            native,
            apply_cache_layout(&conversation(), CacheTtl::OneHour, true)
        );
        let qwen = layout_for("alibaba", "qwen3-max", &conversation(), CacheTtl::OneHour);
        assert_eq!(
            qwen,
            apply_cache_layout(&conversation(), CacheTtl::FiveMinutes, false)
        );
    }
}
