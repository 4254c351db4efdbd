//! Token usage as reported by providers, normalized into one shape.
//!
//! Every API family reports usage differently, and the differences matter for context
//! management: Anthropic's `input_tokens` excludes cached tokens while OpenAI's
//! `prompt_tokens` includes them, so comparing raw numbers against a context window gives
//! answers that are off by the whole cached prefix. [`CanonicalUsage`] keeps the buckets apart
//! (uncached input, cache reads, cache writes, output, reasoning) and [`CanonicalUsage::prompt`]
//! gives the real context occupancy regardless of caching.
//!
//! Reading is forgiving on purpose: a missing, `null`, negative or non-numeric field counts as
//! zero, because a usage report is bookkeeping and must never fail a turn. For each bucket the
//! first *non-zero* of several known field paths wins, so OpenAI-compatible servers that put
//! the same number under a different name (DeepSeek, OpenRouter, Kimi) are read correctly.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::iter::Sum;
use std::ops::{Add, AddAssign};

/// Token counts for one request (or a sum of requests), split into buckets that never overlap.
///
/// `input` is the *uncached* part of the prompt; `cache_read` and `cache_write` are the cached
/// parts; `reasoning` is a subset of `output` that some providers report separately, so it is
/// not added again in [`total`](Self::total).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CanonicalUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
}

impl CanonicalUsage {
    /// Everything the model read: uncached input plus both cache buckets. This is the number to
    /// compare with the context window, since cached tokens occupy the window all the same.
    pub fn prompt(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Prompt plus output. Reasoning is already part of output.
    pub fn total(&self) -> u64 {
        self.prompt().saturating_add(self.output)
    }

    /// True when no bucket holds any tokens.
    pub fn is_zero(&self) -> bool {
        *self == CanonicalUsage::default()
    }

    /// Bucket-wise maximum. Streaming reports are cumulative snapshots of the same request, so
    /// merging them must keep the latest (largest) figure instead of summing.
    fn max_per_bucket(self, other: CanonicalUsage) -> CanonicalUsage {
        CanonicalUsage {
            input: self.input.max(other.input),
            output: self.output.max(other.output),
            cache_read: self.cache_read.max(other.cache_read),
            cache_write: self.cache_write.max(other.cache_write),
            reasoning: self.reasoning.max(other.reasoning),
        }
    }
}

/// Summing is for *separate* requests (a session total); saturating so a corrupt report cannot
/// wrap a counter around.
impl Add for CanonicalUsage {
    type Output = CanonicalUsage;

    fn add(self, other: CanonicalUsage) -> CanonicalUsage {
        CanonicalUsage {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
            reasoning: self.reasoning.saturating_add(other.reasoning),
        }
    }
}

impl AddAssign for CanonicalUsage {
    fn add_assign(&mut self, other: CanonicalUsage) {
        *self = *self + other;
    }
}

impl Sum for CanonicalUsage {
    fn sum<I: Iterator<Item = CanonicalUsage>>(iter: I) -> CanonicalUsage {
        iter.fold(CanonicalUsage::default(), Add::add)
    }
}

/// The wire families whose usage objects differ in field names and in whether the prompt
/// total includes cached tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiShape {
    /// Anthropic Messages (also Bedrock and Anthropic-compatible endpoints): `input_tokens`
    /// is the uncached input only.
    AnthropicMessages,
    /// OpenAI Chat Completions and the many servers that copy it: `prompt_tokens` includes
    /// cached tokens.
    ChatCompletions,
    /// OpenAI Responses: `input_tokens` includes cached tokens, details sit in
    /// `input_tokens_details` / `output_tokens_details`.
    Responses,
}

impl ApiShape {
    /// Infers the shape from the field names of the usage object found in `value` (a usage
    /// object, a response body or a streaming event). `None` when `value` carries no usage.
    pub fn detect(value: &Value) -> Option<ApiShape> {
        locate_usage(value).map(shape_of_usage_fields)
    }

    fn table(self) -> &'static ShapeTable {
        match self {
            ApiShape::AnthropicMessages => &ANTHROPIC,
            ApiShape::ChatCompletions => &CHAT,
            ApiShape::Responses => &RESPONSES,
        }
    }
}

/// A path of object keys from the usage object to a count.
type FieldPath = &'static [&'static str];

/// Where each bucket lives for one shape, in priority order (first non-zero wins).
struct ShapeTable {
    prompt: &'static [FieldPath],
    output: &'static [FieldPath],
    cache_read: &'static [FieldPath],
    cache_write: &'static [FieldPath],
    /// Whether the prompt figure already includes the cache buckets and must have them
    /// subtracted to get the uncached input.
    prompt_includes_cache: bool,
}

const ANTHROPIC: ShapeTable = ShapeTable {
    prompt: &[&["input_tokens"]],
    output: &[&["output_tokens"]],
    cache_read: &[&["cache_read_input_tokens"]],
    cache_write: &[&["cache_creation_input_tokens"]],
    prompt_includes_cache: false,
};

const RESPONSES: ShapeTable = ShapeTable {
    prompt: &[&["input_tokens"]],
    output: &[&["output_tokens"]],
    cache_read: &[&["input_tokens_details", "cached_tokens"]],
    cache_write: &[
        &["input_tokens_details", "cache_write_tokens"],
        &["input_tokens_details", "cache_creation_tokens"],
    ],
    prompt_includes_cache: true,
};

const CHAT: ShapeTable = ShapeTable {
    prompt: &[&["prompt_tokens"], &["input_tokens"]],
    output: &[&["completion_tokens"], &["output_tokens"]],
    cache_read: &[
        &["prompt_tokens_details", "cached_tokens"],
        &["cache_read_input_tokens"],
        // DeepSeek reports cache hits at the top level.
        &["prompt_cache_hit_tokens"],
        // Kimi / Moonshot.
        &["cached_tokens"],
    ],
    cache_write: &[
        // OpenRouter.
        &["prompt_tokens_details", "cache_write_tokens"],
        &["prompt_tokens_details", "cache_creation_input_tokens"],
        &["cache_creation_input_tokens"],
        &["cache_write_tokens"],
    ],
    prompt_includes_cache: true,
};

/// Reasoning is read from the same places for every shape.
const REASONING: &[FieldPath] = &[
    &["output_tokens_details", "reasoning_tokens"],
    &["completion_tokens_details", "reasoning_tokens"],
];

/// Keys whose presence marks an object as a usage object rather than an envelope.
const USAGE_MARKERS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

/// Normalizes the usage found in `value` (usage object, response body or streaming event)
/// as `shape`. Anything without usage normalizes to zeros.
pub fn normalize_usage(shape: ApiShape, value: &Value) -> CanonicalUsage {
    locate_usage(value)
        .map(|usage| normalize_usage_object(shape, usage))
        .unwrap_or_default()
}

/// Like [`normalize_usage`], with the shape inferred from the usage field names.
pub fn detect_and_normalize(value: &Value) -> CanonicalUsage {
    locate_usage(value)
        .map(|usage| normalize_usage_object(shape_of_usage_fields(usage), usage))
        .unwrap_or_default()
}

/// Finds the usage object in a body or event: top-level `usage` (non-streaming bodies, the
/// final OpenAI chunk, Anthropic `message_delta`), `message.usage` (Anthropic `message_start`),
/// `response.usage` (Responses `response.*` events), or `value` itself when it already is one.
/// A `usage: null` (OpenAI chunks before the last) means "no usage in this event".
fn locate_usage(value: &Value) -> Option<&Map<String, Value>> {
    let obj = value.as_object()?;
    if let Some(usage) = obj.get("usage") {
        return usage.as_object();
    }
    for envelope in ["message", "response"] {
        if let Some(usage) = obj.get(envelope).and_then(|inner| inner.get("usage")) {
            return usage.as_object();
        }
    }
    is_usage_object(obj).then_some(obj)
}

fn is_usage_object(obj: &Map<String, Value>) -> bool {
    USAGE_MARKERS.iter().any(|key| obj.contains_key(*key))
}

/// Chat's `prompt_tokens` is unmistakable; Responses alone has the `*_tokens_details`
/// objects next to `input_tokens`; anything else using `input_tokens`/`output_tokens` is
/// Anthropic. When nothing matches, Chat is the safest reading: its table also tries the
/// Anthropic field names.
fn shape_of_usage_fields(usage: &Map<String, Value>) -> ApiShape {
    let has = |key: &str| usage.contains_key(key);
    if has("prompt_tokens") || has("completion_tokens") {
        ApiShape::ChatCompletions
    } else if has("input_tokens_details") || has("output_tokens_details") {
        ApiShape::Responses
    } else if has("input_tokens")
        || has("output_tokens")
        || has("cache_creation_input_tokens")
        || has("cache_read_input_tokens")
    {
        ApiShape::AnthropicMessages
    } else {
        ApiShape::ChatCompletions
    }
}

fn normalize_usage_object(shape: ApiShape, usage: &Map<String, Value>) -> CanonicalUsage {
    let table = shape.table();
    let prompt = first_nonzero(usage, table.prompt);
    let cache_read = first_nonzero(usage, table.cache_read);
    let cache_write = first_nonzero(usage, table.cache_write);
    let input = if table.prompt_includes_cache {
        prompt
            .saturating_sub(cache_read)
            .saturating_sub(cache_write)
    } else {
        prompt
    };
    CanonicalUsage {
        input,
        output: first_nonzero(usage, table.output),
        cache_read,
        cache_write,
        reasoning: first_nonzero(usage, REASONING),
    }
}

/// The first path holding a non-zero count, else 0. Non-zero rather than present: some
/// servers send a field as `0` while the real figure sits under another name.
fn first_nonzero(usage: &Map<String, Value>, paths: &[FieldPath]) -> u64 {
    paths
        .iter()
        .map(|path| count_at(usage, path))
        .find(|&count| count > 0)
        .unwrap_or(0)
}

fn count_at(usage: &Map<String, Value>, path: FieldPath) -> u64 {
    let Some((first, rest)) = path.split_first() else {
        return 0;
    };
    let mut current = usage.get(*first);
    for key in rest {
        current = current.and_then(|value| value.get(*key));
    }
    current.map_or(0, as_count)
}

/// A token count read leniently: non-negative integers as they are, positive floats
/// truncated, numeric strings parsed; negatives, `null`, booleans and anything else are 0.
fn as_count(value: &Value) -> u64 {
    match value {
        Value::Number(number) => number
            .as_u64()
            .or_else(|| number.as_f64().map(float_to_count))
            .unwrap_or(0),
        Value::String(text) => {
            let text = text.trim();
            text.parse::<u64>()
                .ok()
                .or_else(|| text.parse::<f64>().ok().map(float_to_count))
                .unwrap_or(0)
        }
        _ => 0,
    }
}

fn float_to_count(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        // `as` saturates at u64::MAX and truncates the fraction, which is what we want.
        value as u64
    } else {
        0
    }
}

/// Merges the usage reports of one streamed response.
///
/// Streaming usage arrives as cumulative snapshots, not increments: Anthropic's
/// `message_start` carries input and cache counts with a provisional output count, and each
/// `message_delta` carries the output count so far; OpenAI sends one final chunk; Responses
/// sends `response.completed`. Summing the events would double-count, so the accumulator keeps
/// the largest figure seen per bucket. Use `+` on [`CanonicalUsage`] to total separate requests.
#[derive(Debug, Clone, Default)]
pub struct UsageAccumulator {
    shape: Option<ApiShape>,
    usage: CanonicalUsage,
    saw_usage: bool,
}

impl UsageAccumulator {
    /// An accumulator that infers the shape of each event from its field names.
    pub fn new() -> Self {
        Self::default()
    }

    /// An accumulator for a known wire shape.
    pub fn with_shape(shape: ApiShape) -> Self {
        UsageAccumulator {
            shape: Some(shape),
            ..Self::default()
        }
    }

    /// Folds one streaming event (or body) in. Returns whether the event carried usage.
    pub fn observe(&mut self, event: &Value) -> bool {
        let Some(usage) = locate_usage(event) else {
            return false;
        };
        let shape = self.shape.unwrap_or_else(|| shape_of_usage_fields(usage));
        self.usage = self
            .usage
            .max_per_bucket(normalize_usage_object(shape, usage));
        self.saw_usage = true;
        true
    }

    /// The usage merged so far.
    pub fn usage(&self) -> CanonicalUsage {
        self.usage
    }

    /// Whether any event carried usage; distinguishes "reported zero" from "never reported".
    pub fn saw_usage(&self) -> bool {
        self.saw_usage
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const ANTHROPIC_CACHE_WRITE: &str =
        include_str!("../tests/fixtures/usage/anthropic_messages_cache_write.json");
    const ANTHROPIC_CACHE_READ: &str =
        include_str!("../tests/fixtures/usage/anthropic_messages_cache_read.json");
    const OPENAI_CHAT: &str =
        include_str!("../tests/fixtures/usage/openai_chat_cached_reasoning.json");
    const OPENROUTER: &str = include_str!("../tests/fixtures/usage/openrouter_cache_write.json");
    const DEEPSEEK: &str = include_str!("../tests/fixtures/usage/deepseek_cache_hit.json");
    const KIMI: &str = include_str!("../tests/fixtures/usage/kimi_cached_tokens.json");
    const RESPONSES_BODY: &str =
        include_str!("../tests/fixtures/usage/openai_responses_cached_reasoning.json");
    const ANTHROPIC_STREAM: &str =
        include_str!("../tests/fixtures/usage/anthropic_stream_events.json");
    const OPENAI_STREAM: &str =
        include_str!("../tests/fixtures/usage/openai_chat_stream_chunks.json");
    const RESPONSES_STREAM: &str =
        include_str!("../tests/fixtures/usage/openai_responses_stream_events.json");

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("fixture is valid JSON")
    }

    fn usage(
        input: u64,
        output: u64,
        cache_read: u64,
        cache_write: u64,
        reasoning: u64,
    ) -> CanonicalUsage {
        CanonicalUsage {
            input,
            output,
            cache_read,
            cache_write,
            reasoning,
        }
    }

    struct BodyCase {
        name: &'static str,
        body: &'static str,
        shape: ApiShape,
        expected: CanonicalUsage,
    }

    const BODY_CASES: &[BodyCase] = &[
        BodyCase {
            name: "anthropic cache write",
            body: ANTHROPIC_CACHE_WRITE,
            shape: ApiShape::AnthropicMessages,
            expected: CanonicalUsage {
                input: 21,
                output: 393,
                cache_read: 0,
                cache_write: 188_086,
                reasoning: 0,
            },
        },
        BodyCase {
            name: "anthropic cache read",
            body: ANTHROPIC_CACHE_READ,
            shape: ApiShape::AnthropicMessages,
            expected: CanonicalUsage {
                input: 14,
                output: 512,
                cache_read: 188_086,
                cache_write: 1_024,
                reasoning: 0,
            },
        },
        BodyCase {
            name: "openai chat",
            body: OPENAI_CHAT,
            shape: ApiShape::ChatCompletions,
            expected: CanonicalUsage {
                input: 86,
                output: 1_024,
                cache_read: 1_920,
                cache_write: 0,
                reasoning: 768,
            },
        },
        BodyCase {
            name: "openrouter",
            body: OPENROUTER,
            shape: ApiShape::ChatCompletions,
            expected: CanonicalUsage {
                input: 32,
                output: 60,
                cache_read: 0,
                cache_write: 10_307,
                reasoning: 0,
            },
        },
        BodyCase {
            name: "deepseek",
            body: DEEPSEEK,
            shape: ApiShape::ChatCompletions,
            expected: CanonicalUsage {
                input: 512,
                output: 412,
                cache_read: 1_024,
                cache_write: 0,
                reasoning: 230,
            },
        },
        BodyCase {
            name: "kimi",
            body: KIMI,
            shape: ApiShape::ChatCompletions,
            expected: CanonicalUsage {
                input: 3_328,
                output: 120,
                cache_read: 4_864,
                cache_write: 0,
                reasoning: 0,
            },
        },
        BodyCase {
            name: "openai responses",
            body: RESPONSES_BODY,
            shape: ApiShape::Responses,
            expected: CanonicalUsage {
                input: 138,
                output: 1_035,
                cache_read: 1_152,
                cache_write: 0,
                reasoning: 832,
            },
        },
    ];

    #[test]
    fn every_fixture_body_normalizes_to_expected_buckets() {
        for case in BODY_CASES {
            let body = parse(case.body);
            assert_eq!(
                normalize_usage(case.shape, &body),
                case.expected,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn shape_is_detected_from_usage_field_names() {
        for case in BODY_CASES {
            let body = parse(case.body);
            assert_eq!(ApiShape::detect(&body), Some(case.shape), "{}", case.name);
            assert_eq!(detect_and_normalize(&body), case.expected, "{}", case.name);
        }
    }

    #[test]
    fn usage_object_and_full_body_normalize_the_same() {
        for case in BODY_CASES {
            let body = parse(case.body);
            let bare = body.get("usage").expect("fixture has usage");
            assert_eq!(
                detect_and_normalize(bare),
                detect_and_normalize(&body),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn anthropic_cache_tokens_are_separate_buckets() {
        let got = normalize_usage(ApiShape::AnthropicMessages, &parse(ANTHROPIC_CACHE_READ));
        // input_tokens is already the uncached part: nothing is subtracted from it.
        assert_eq!(got.input, 14);
        assert_eq!(got.prompt(), 14 + 188_086 + 1_024);
    }

    #[test]
    fn chat_cached_tokens_are_subtracted_from_prompt_total() {
        let got = normalize_usage(ApiShape::ChatCompletions, &parse(OPENAI_CHAT));
        assert_eq!(got.input + got.cache_read, 2_006);
        assert_eq!(got.prompt(), 2_006);
    }

    #[test]
    fn chat_cached_tokens_never_make_input_negative() {
        let body = json!({
            "prompt_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 150, "cache_write_tokens": 20}
        });
        let got = normalize_usage(ApiShape::ChatCompletions, &body);
        assert_eq!(got, usage(0, 0, 150, 20, 0));
    }

    #[test]
    fn responses_cached_tokens_never_make_input_negative() {
        let body = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 64}});
        assert_eq!(normalize_usage(ApiShape::Responses, &body).input, 0);
    }

    #[test]
    fn null_fields_count_as_zero() {
        let body = json!({
            "prompt_tokens": 40,
            "completion_tokens": null,
            "prompt_tokens_details": null,
            "completion_tokens_details": {"reasoning_tokens": null}
        });
        assert_eq!(detect_and_normalize(&body), usage(40, 0, 0, 0, 0));
    }

    #[test]
    fn negative_and_non_numeric_fields_count_as_zero() {
        let body = json!({
            "input_tokens": -5,
            "output_tokens": "many",
            "cache_read_input_tokens": true,
            "cache_creation_input_tokens": [1, 2]
        });
        assert_eq!(
            normalize_usage(ApiShape::AnthropicMessages, &body),
            CanonicalUsage::default()
        );
    }

    #[test]
    fn numeric_strings_and_floats_are_read() {
        let body = json!({"prompt_tokens": "120", "completion_tokens": 7.9});
        assert_eq!(detect_and_normalize(&body), usage(120, 7, 0, 0, 0));
    }

    #[test]
    fn first_nonzero_path_wins_over_a_zero_placeholder() {
        // A proxy that fills prompt_tokens with 0 and puts the real figure in input_tokens.
        let body = json!({"prompt_tokens": 0, "input_tokens": 900, "completion_tokens": 3});
        assert_eq!(normalize_usage(ApiShape::ChatCompletions, &body).input, 900);
    }

    #[test]
    fn deepseek_prompt_cache_hit_tokens_count_as_cache_read() {
        let got = detect_and_normalize(&parse(DEEPSEEK));
        assert_eq!((got.cache_read, got.input), (1_024, 512));
    }

    #[test]
    fn openrouter_cache_write_tokens_are_not_counted_as_input() {
        let got = detect_and_normalize(&parse(OPENROUTER));
        assert_eq!((got.input, got.cache_write), (32, 10_307));
    }

    #[test]
    fn top_level_cache_write_tokens_are_read_for_chat() {
        let body = json!({"prompt_tokens": 500, "completion_tokens": 1, "cache_write_tokens": 450});
        assert_eq!(detect_and_normalize(&body), usage(50, 1, 0, 450, 0));
    }

    #[test]
    fn responses_cache_creation_tokens_count_as_cache_write() {
        let body = json!({
            "input_tokens": 300,
            "input_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 200},
            "output_tokens": 5
        });
        assert_eq!(detect_and_normalize(&body), usage(100, 5, 0, 200, 0));
    }

    #[test]
    fn reasoning_is_part_of_output_not_added_to_total() {
        let got = detect_and_normalize(&parse(RESPONSES_BODY));
        assert_eq!(got.total(), got.prompt() + got.output);
        assert_eq!(got.total(), 1_290 + 1_035);
    }

    #[test]
    fn body_without_usage_is_zero_and_undetected() {
        let body = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "usage": null});
        assert_eq!(ApiShape::detect(&body), None);
        assert!(detect_and_normalize(&body).is_zero());
        assert!(detect_and_normalize(&json!("not an object")).is_zero());
    }

    #[test]
    fn separate_requests_add_bucket_by_bucket() {
        let mut total = usage(1, 2, 3, 4, 5);
        total += usage(10, 20, 30, 40, 50);
        assert_eq!(total, usage(11, 22, 33, 44, 55));
        let summed: CanonicalUsage = [usage(1, 1, 1, 1, 1), usage(u64::MAX, 0, 0, 0, 0)]
            .into_iter()
            .sum();
        assert_eq!(summed.input, u64::MAX);
        assert_eq!(summed.total(), u64::MAX);
    }

    #[test]
    fn canonical_usage_round_trips_through_serde() {
        let original = usage(1, 2, 3, 4, 5);
        let text = serde_json::to_string(&original).unwrap();
        assert_eq!(
            serde_json::from_str::<CanonicalUsage>(&text).unwrap(),
            original
        );
        assert_eq!(
            serde_json::from_str::<CanonicalUsage>(r#"{"input": 9}"#).unwrap(),
            usage(9, 0, 0, 0, 0)
        );
    }

    fn accumulate(events: &str, accumulator: &mut UsageAccumulator) -> usize {
        parse(events)
            .as_array()
            .expect("stream fixture is an array")
            .iter()
            .filter(|event| accumulator.observe(event))
            .count()
    }

    #[test]
    fn anthropic_stream_takes_latest_output_instead_of_summing() {
        let mut acc = UsageAccumulator::new();
        let reports = accumulate(ANTHROPIC_STREAM, &mut acc);
        assert_eq!(reports, 2);
        assert_eq!(acc.usage(), usage(472, 15, 9_120, 0, 0));
    }

    #[test]
    fn anthropic_stream_with_pinned_shape_matches_detection() {
        let mut pinned = UsageAccumulator::with_shape(ApiShape::AnthropicMessages);
        accumulate(ANTHROPIC_STREAM, &mut pinned);
        let mut detected = UsageAccumulator::new();
        accumulate(ANTHROPIC_STREAM, &mut detected);
        assert_eq!(pinned.usage(), detected.usage());
    }

    #[test]
    fn openai_stream_reads_usage_from_final_chunk_only() {
        let mut acc = UsageAccumulator::new();
        assert_eq!(accumulate(OPENAI_STREAM, &mut acc), 1);
        assert_eq!(acc.usage(), usage(13, 7, 1_152, 0, 0));
    }

    #[test]
    fn responses_stream_reads_completed_event() {
        let mut acc = UsageAccumulator::with_shape(ApiShape::Responses);
        assert_eq!(accumulate(RESPONSES_STREAM, &mut acc), 1);
        assert_eq!(acc.usage(), usage(328, 96, 0, 0, 64));
    }

    #[test]
    fn accumulator_distinguishes_no_report_from_zero_report() {
        let mut acc = UsageAccumulator::new();
        assert!(!acc.observe(&json!({"type": "ping"})));
        assert!(!acc.saw_usage());
        assert!(acc.observe(&json!({"usage": {"prompt_tokens": 0, "completion_tokens": 0}})));
        assert!(acc.saw_usage());
        assert!(acc.usage().is_zero());
    }
}
