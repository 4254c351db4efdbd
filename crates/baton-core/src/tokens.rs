//! Token accounting: how many tokens a text, a message, or a whole request costs.
//!
//! Two families of counters implement [`TokenCounter`]:
//! - [`RoughCounter`], the reference design's cheap estimator (characters / 4, with CJK
//!   characters counted one token each and other non-ASCII text by UTF-8 bytes / 4, the
//!   reference's later refinement after Chinese and Cyrillic were under-counted 2-4x);
//! - [`BpeCounter`], exact `o200k_base` / `cl100k_base` counts. The BPE ranks are compiled
//!   into the binary by `tiktoken-rs`, so nothing is downloaded at run time.
//!
//! Message counts use one structure for both families (content + tool calls + reasoning +
//! a fixed per-message overhead), so an estimate and an exact count of the same message differ
//! only in how text is tokenized. [`Calibration`] learns the per-model ratio between what a
//! provider reported and what we estimated; [`RunningCount`] keeps per-message counts so that
//! re-estimating a conversation after one new message costs one message, not the history.

mod byte_pair;
mod o200k_pieces;
mod o200k_ranks;

use crate::conversation::Conversation;
use crate::message::{Content, ContentPart, Message, PartKind};
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use tiktoken_rs::CoreBPE;

/// Tokens every message costs beyond its text: the chat template's start/role/end markers.
/// OpenAI documents 3 per message plus the role name (1 token for every role we know).
pub const MESSAGE_OVERHEAD: usize = 4;
/// Tokens a request costs beyond its messages: the assistant reply priming (`<|start|>assistant`).
pub const REPLY_PRIMING: usize = 3;
/// Flat cost of one image part. Counting a base64 payload as text would make a 1 MB screenshot
/// look like 250,000 tokens; providers bill images by resolution, ~1,600 tokens for a large one.
pub const IMAGE_TOKENS: usize = 1_600;
/// Flat cost of an audio or file part, for the same reason as [`IMAGE_TOKENS`].
pub const ATTACHMENT_TOKENS: usize = 1_600;
/// Envelope of one tool call beyond its name and arguments (id, type, JSON punctuation).
pub const TOOL_CALL_OVERHEAD: usize = 8;
/// Envelope of one tool schema beyond its JSON text.
pub const TOOL_SCHEMA_OVERHEAD: usize = 8;

/// Counts tokens of text; message and request counts are built on top of it.
///
/// Implementations must be cheap to share across threads: the compressor, the CLI and the
/// benchmark all hold one `&'static dyn TokenCounter`.
pub trait TokenCounter: Send + Sync {
    /// Short name shown to users (`o200k_base`, `cl100k_base`, `rough`).
    fn name(&self) -> &'static str;

    /// Tokens of plain text.
    fn count_text(&self, text: &str) -> usize;

    /// Whether counts are exact for some provider's tokenizer (BPE) or an estimate.
    fn is_exact(&self) -> bool;

    /// Tokens one message costs in a request. See [`message_tokens`].
    fn count_message(&self, message: &Message) -> usize {
        message_tokens(self, message)
    }
}

/// The longest token of the byte-level BPEs counted here (o200k, cl100k), in bytes: a text
/// counts at least its UTF-8 length over this many tokens. `longest_tokens_are_128_bytes`
/// reads both tables.
pub const MAX_TOKEN_BYTES: usize = 128;

/// An upper bound of every byte-level BPE count (o200k, cl100k): a text's UTF-8 length, since
/// each BPE token covers at least one byte. Counts nothing and costs a length read, so a whole
/// record can be proven under a token target without running the tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8Bound;

impl TokenCounter for Utf8Bound {
    fn name(&self) -> &'static str {
        "utf8_bytes"
    }

    fn count_text(&self, text: &str) -> usize {
        text.len()
    }

    fn is_exact(&self) -> bool {
        false
    }
}

/// Which counter to use; parsed from the CLI's `--encoding` and from config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    O200k,
    Cl100k,
    Rough,
}

impl Encoding {
    pub const ALL: [Encoding; 3] = [Encoding::O200k, Encoding::Cl100k, Encoding::Rough];

    /// Accepts `o200k`, `o200k_base`, `cl100k`, `cl100k_base`, `rough` (case-insensitive).
    pub fn parse(s: &str) -> Result<Encoding, UnknownEncoding> {
        match s.trim().to_ascii_lowercase().as_str() {
            "o200k" | "o200k_base" => Ok(Encoding::O200k),
            "cl100k" | "cl100k_base" => Ok(Encoding::Cl100k),
            "rough" | "estimate" => Ok(Encoding::Rough),
            _ => Err(UnknownEncoding(s.to_string())),
        }
    }

    /// The tokenizer an OpenAI-family model uses; `None` when the model's tokenizer is not one
    /// we ship (Claude, Gemini, open-weight models), where calibration against reported usage
    /// is the honest answer.
    pub fn for_model(model: &str) -> Option<Encoding> {
        let m = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let o200k = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "o1",
            "o3",
            "o4",
            "chatgpt-4o",
        ];
        let cl100k = ["gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada"];
        if o200k.iter().any(|p| m.starts_with(p)) {
            Some(Encoding::O200k)
        } else if cl100k.iter().any(|p| m.starts_with(p)) {
            Some(Encoding::Cl100k)
        } else {
            None
        }
    }

    /// The shared counter for this encoding. BPE tables load once, on first use.
    pub fn counter(self) -> &'static dyn TokenCounter {
        static O200K: BpeCounter = BpeCounter(Encoding::O200k);
        static CL100K: BpeCounter = BpeCounter(Encoding::Cl100k);
        static ROUGH: RoughCounter = RoughCounter;
        match self {
            Encoding::O200k => &O200K,
            Encoding::Cl100k => &CL100K,
            Encoding::Rough => &ROUGH,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.counter().name())
    }
}

/// An `--encoding` value we do not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown encoding `{0}`: expected one of o200k, cl100k, rough")]
pub struct UnknownEncoding(pub String);

/// The reference design's cheap estimator. Never returns 0 for non-empty text.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoughCounter;

impl TokenCounter for RoughCounter {
    fn name(&self) -> &'static str {
        "rough"
    }

    fn count_text(&self, text: &str) -> usize {
        rough_text_tokens(text)
    }

    fn is_exact(&self) -> bool {
        false
    }
}

/// `ceil(units / 4)`, where an ASCII character weighs 1 unit, another non-ASCII character its
/// UTF-8 length, and a CJK / kana / hangul character 3 units (¾ of a token).
///
/// The reference's later version counts a CJK character as a whole token; measured against
/// `o200k_base` on the shared corpus, Chinese and Japanese text costs 0.73-0.76 tokens per
/// character, so ¾ keeps the rough estimate within a few percent on CJK-heavy conversations
/// and leaves calibration only the mix-dependent remainder to correct.
pub fn rough_text_tokens(text: &str) -> usize {
    (text.len() - dense_astral_chars(text)).div_ceil(4)
}

/// Characters of the CJK extensions B–F (U+20000–U+2FA1F), the only dense-script characters
/// outside the Basic Multilingual Plane.
///
/// Why the estimate needs nothing else: in quarter-token units an ASCII character is 1, a
/// dense-script character (CJK, kana, hangul, full-width forms) 3 and any other its UTF-8 length. Every
/// dense range below U+10000 lies in the 3-byte band, so there 3 units is the UTF-8 length
/// too, and the units of a text are its byte length less one per 4-byte dense character.
/// Counting those is a scan for their lead byte (0xF0 followed by 0xA0–0xAF): the estimate
/// runs at memory speed instead of decoding every character (it ran on every message of
/// every pass: 9% of a compaction of `synth_10k`).
fn dense_astral_chars(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr_iter(0xF0, bytes)
        .filter(|&i| {
            let rest = &bytes[i..];
            if rest.len() < 4 || !(0xA0..=0xAF).contains(&rest[1]) {
                return false;
            }
            let code = ((u32::from(rest[1]) & 0x3F) << 12)
                | ((u32::from(rest[2]) & 0x3F) << 6)
                | (u32::from(rest[3]) & 0x3F);
            code <= 0x2FA1F
        })
        .count()
}

/// Exact BPE counts for one of the OpenAI encodings.
///
/// o200k_base is counted by Baton's own pre-tokenizer and merge over an embedded rank table
/// (`tokens/o200k_pieces.rs`, `byte_pair.rs`, `o200k_ranks.rs`): one table per process,
/// loaded in milliseconds, shared by every thread. cl100k_base goes through tiktoken-rs.
///
/// cl100k: each thread counts with its own `CoreBPE`, built on the thread's first count. A shared
/// `CoreBPE` does not scale: it keeps "per-thread" clones of its pretokenizer regex, but
/// cloning a `fancy_regex::Regex` shares the compiled program and with it one pool of match
/// scratch space and DFA caches. Only the first thread to use that pool gets its lock-free
/// path; every other thread takes a mutex-guarded slow path on every regex match. Profiling
/// `baton trajectories compress --threads 2` put about a third of the second worker's time in
/// `Pool::get_slow` / `put_value` / `PoolGuard::drop`. The cost of the fix is memory: one set
/// of BPE tables (tens of MB) per counting thread.
#[derive(Debug, Clone, Copy)]
pub struct BpeCounter(Encoding);

thread_local! {
    /// This thread's cl100k_base tokenizer, built on first use; `None` if building failed
    /// (never for the built-in tables), which falls back to the shared one.
    static THREAD_CL100K: OnceCell<Option<CoreBPE>> = const { OnceCell::new() };
}

/// Runs `f` with this thread's own cl100k_base `CoreBPE`.
fn with_cl100k<T>(f: impl FnOnce(&CoreBPE) -> T) -> T {
    let mut f = Some(f);
    let own = THREAD_CL100K.try_with(|cell| {
        let bpe = cell
            .get_or_init(|| tiktoken_rs::cl100k_base().ok())
            .as_ref()?;
        f.take().map(|f| f(bpe))
    });
    match (own, f) {
        (Ok(Some(out)), _) => out,
        // Thread-local storage gone (thread exiting) or the build failed: the shared one.
        (_, Some(f)) => f(tiktoken_rs::cl100k_base_singleton()),
        (_, None) => unreachable!("the closure ran but produced no value"),
    }
}

impl TokenCounter for BpeCounter {
    fn name(&self) -> &'static str {
        match self.0 {
            Encoding::Cl100k => "cl100k_base",
            _ => "o200k_base",
        }
    }

    fn count_text(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        // Special tokens' texts (`<|endoftext|>`) in user text count as text, as the API
        // counts them: `count_ordinary`, and o200k's merge knows no special tokens.
        let mut total = 0;
        for_each_bpe_chunk(text, |chunk| {
            total += match self.0 {
                Encoding::Cl100k => with_cl100k(|bpe| bpe.count_ordinary(chunk)),
                _ => o200k_pieces::count(chunk),
            };
        });
        total
    }

    fn is_exact(&self) -> bool {
        true
    }
}

/// Longest run of non-whitespace bytes handed to BPE in one piece.
///
/// tiktoken merges the byte pairs of one pre-tokenized piece in time quadratic in its length,
/// and its pre-tokenizer keeps a run of one letter (`aaaa…`) as a single piece: `baton tokens`
/// on 10 MB of one character took 6.8 s and 546 MiB. Runs longer than this are cut into
/// pieces of at most this many bytes (on char boundaries) and counted piece by piece, so
/// counting is linear in the input. Text without such a run (all ordinary prose, code, JSON)
/// is counted exactly as before. A long run is cut at its last letter→digit/punctuation
/// boundary within each chunk, where both pre-tokenizers end a piece anyway, so base64, URLs
/// and minified JSON still count exactly; only a 256-byte stretch without such a boundary
/// (`aaaa…`) is cut mid-piece, which may count at most one extra token per cut.
pub const BPE_RUN_CHUNK_BYTES: usize = 256;

/// Calls `f` on consecutive pieces of `text` that together are `text`: the whole text when no
/// non-whitespace run is longer than [`BPE_RUN_CHUNK_BYTES`], otherwise the text between long
/// runs and each long run cut into chunks of at most that many bytes.
fn for_each_bpe_chunk(text: &str, mut f: impl FnMut(&str)) {
    if !may_hold_a_long_run(text) {
        return f(text);
    }
    let mut start = 0; // start of the text not yet handed to `f`
    let mut run_start = 0; // start of the current non-whitespace run
    let mut cut = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            run_start = i + c.len_utf8();
            continue;
        }
        let end = i + c.len_utf8();
        if end - run_start > BPE_RUN_CHUNK_BYTES {
            // `text[run_start..i]` is a full chunk of a long run: hand over what precedes it
            // (if anything), then the chunk up to its last piece boundary (so base64, URLs
            // and minified JSON count exactly), and continue the run from there.
            let at = last_piece_boundary(&text[run_start..i]).map_or(i, |b| run_start + b);
            if start < run_start {
                f(&text[start..run_start]);
            }
            f(&text[run_start..at]);
            start = at;
            run_start = at;
            cut = true;
        }
    }
    if !cut {
        f(text);
    } else if start < text.len() {
        f(&text[start..]);
    }
}

/// Whether `text` may hold a non-whitespace run longer than [`BPE_RUN_CHUNK_BYTES`]: a byte
/// scan, since ASCII whitespace bytes only ever stand for themselves in UTF-8 and other
/// whitespace only shortens runs further. Nearly all text is settled here, without the
/// char-by-char walk.
fn may_hold_a_long_run(text: &str) -> bool {
    let mut run = 0;
    for &b in text.as_bytes() {
        if matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r') {
            run = 0;
        } else {
            run += 1;
            if run > BPE_RUN_CHUNK_BYTES {
                return true;
            }
        }
    }
    false
}

/// The last offset in `chunk` (not 0) where a letter is followed by an ASCII digit or ASCII
/// punctuation other than `'`: both tokenizers' pre-tokenizers end a letter piece there and
/// start a new piece, so cutting there changes no count. `None` for a run without one
/// (`aaaa…`), which is then cut at the chunk's end.
fn last_piece_boundary(chunk: &str) -> Option<usize> {
    let mut prev_letter = false;
    let mut last = None;
    for (i, c) in chunk.char_indices() {
        if i > 0 && prev_letter && starts_piece_after_letter(c) {
            last = Some(i);
        }
        prev_letter = c.is_alphabetic();
    }
    last
}

/// Whether `c` after a letter starts a new pre-tokenizer piece in both o200k and cl100k: a
/// digit, or punctuation (ASCII other than `'`, General Punctuation, CJK Symbols and
/// Punctuation such as `、。「」`, fullwidth ASCII punctuation). Marks, which extend a letter
/// piece, are never in these sets.
fn starts_piece_after_letter(c: char) -> bool {
    if c.is_alphabetic() {
        return false;
    }
    c.is_numeric()
        || (c.is_ascii_punctuation() && c != '\'')
        || matches!(c, '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}' | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF40}' | '\u{FF5B}'..='\u{FF65}')
}

/// Tokens one message costs: overhead, content, name, tool-call id, every tool call's name and
/// arguments (the full call, which the reference found under-counted 2-15x when only arguments
/// were counted), and reasoning fields the provider will receive back.
pub fn message_tokens<C: TokenCounter + ?Sized>(counter: &C, message: &Message) -> usize {
    let mut tokens = MESSAGE_OVERHEAD;
    if let Some(content) = &message.content {
        tokens += content_tokens(counter, content);
    }
    if let Some(name) = &message.name {
        tokens += 1 + counter.count_text(name);
    }
    if let Some(id) = &message.tool_call_id {
        tokens += counter.count_text(id);
    }
    for call in message.calls() {
        tokens += TOOL_CALL_OVERHEAD
            + counter.count_text(&call.id)
            + counter.count_text(&call.function.name)
            + counter.count_text(&call.function.arguments);
    }
    for value in message.reasoning.values() {
        tokens += match value {
            Value::String(s) => counter.count_text(s),
            Value::Null => 0,
            other => counter.count_text(&other.to_string()),
        };
    }
    tokens
}

/// Tokens of a `content` value: text counted, images and other attachments at a flat cost.
pub fn content_tokens<C: TokenCounter + ?Sized>(counter: &C, content: &Content) -> usize {
    match content {
        Content::Null => 0,
        Content::Text(s) => counter.count_text(s),
        Content::Parts(parts) => parts.iter().map(|p| part_tokens(counter, p)).sum(),
    }
}

fn part_tokens<C: TokenCounter + ?Sized>(counter: &C, part: &ContentPart) -> usize {
    match part.kind() {
        PartKind::Text => part.text_value().map_or(0, |t| counter.count_text(t)),
        PartKind::ImageUrl => IMAGE_TOKENS,
        PartKind::InputAudio | PartKind::File => ATTACHMENT_TOKENS,
        // Unknown part types: count any text they carry; a part with none costs the overhead
        // of an attachment rather than nothing, so it is never invisible to the budget.
        PartKind::Other => part
            .text_value()
            .map_or(ATTACHMENT_TOKENS, |t| counter.count_text(t)),
    }
}

/// Tokens of the tool schemas sent with a request.
pub fn tools_tokens<C: TokenCounter + ?Sized>(counter: &C, tools: &[Value]) -> usize {
    tools
        .iter()
        .map(|t| TOOL_SCHEMA_OVERHEAD + counter.count_text(&t.to_string()))
        .sum()
}

/// What a request will cost, by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestEstimate {
    /// System and developer messages at the head of the conversation.
    pub system: usize,
    /// Every other message.
    pub messages: usize,
    /// Tool schemas.
    pub tools: usize,
}

impl RequestEstimate {
    /// The prompt tokens the provider will report: all parts plus reply priming.
    pub fn total(&self) -> usize {
        self.system + self.messages + self.tools + REPLY_PRIMING
    }
}

/// Estimate of a full request: system prompt + messages + tool schemas. The preflight check
/// needs all three; counting messages alone under-estimates agents with large tool sets by
/// thousands of tokens.
pub fn estimate_request<C: TokenCounter + ?Sized>(
    counter: &C,
    messages: &[Message],
    tools: Option<&[Value]>,
) -> RequestEstimate {
    let mut estimate = RequestEstimate::default();
    let leading_instructions = messages
        .iter()
        .take_while(|m| m.role.is_instruction())
        .count();
    for (i, m) in messages.iter().enumerate() {
        let t = counter.count_message(m);
        if i < leading_instructions {
            estimate.system += t;
        } else {
            estimate.messages += t;
        }
    }
    estimate.tools = tools.map_or(0, |t| tools_tokens(counter, t));
    estimate
}

/// [`estimate_request`] for a loaded conversation.
pub fn estimate_conversation<C: TokenCounter + ?Sized>(
    counter: &C,
    conversation: &Conversation,
) -> RequestEstimate {
    estimate_request(
        counter,
        &conversation.messages,
        conversation.tools.as_deref(),
    )
}

/// Per-model ratio between provider-reported prompt tokens and our estimate.
///
/// One observation is enough to start correcting (the first request of a session calibrates the
/// rest); later observations refine it through the median of a small window, so one odd report
/// (a provider counting a cached prefix differently, an estimate of a tiny request dominated by
/// overhead) cannot swing every later estimate.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    models: HashMap<String, RatioWindow>,
}

/// Observations older than this many are forgotten, so a model whose template changes recovers.
const CALIBRATION_WINDOW: usize = 9;
/// Requests smaller than this say more about fixed overheads than about the tokenizer.
const MIN_CALIBRATION_TOKENS: usize = 64;
/// Ratios outside this range are reporting errors (a usage block of zeros, a cached-only count),
/// not tokenizer differences.
const PLAUSIBLE_RATIO: std::ops::RangeInclusive<f64> = 0.2..=5.0;

#[derive(Debug, Clone, Default)]
struct RatioWindow {
    samples: Vec<f64>,
}

impl RatioWindow {
    fn push(&mut self, ratio: f64) {
        if self.samples.len() == CALIBRATION_WINDOW {
            self.samples.remove(0);
        }
        self.samples.push(ratio);
    }

    fn median(&self) -> Option<f64> {
        let mut sorted = self.samples.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(sorted[n / 2]),
            _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
        }
    }
}

/// Whether an observation was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalibrationOutcome {
    Accepted,
    /// The request was too small to say anything about the tokenizer.
    TooSmall,
    /// The reported/estimated ratio was implausible (reporting error).
    Implausible,
}

impl Calibration {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that a request we estimated at `estimated` tokens was reported as `reported`.
    pub fn observe(&mut self, model: &str, reported: u64, estimated: usize) -> CalibrationOutcome {
        if estimated < MIN_CALIBRATION_TOKENS {
            return CalibrationOutcome::TooSmall;
        }
        let ratio = reported as f64 / estimated as f64;
        if !PLAUSIBLE_RATIO.contains(&ratio) {
            return CalibrationOutcome::Implausible;
        }
        self.models
            .entry(model.to_string())
            .or_default()
            .push(ratio);
        CalibrationOutcome::Accepted
    }

    /// The current ratio for `model` (1.0 before any accepted observation).
    pub fn ratio(&self, model: &str) -> f64 {
        self.models
            .get(model)
            .and_then(RatioWindow::median)
            .unwrap_or(1.0)
    }

    /// `estimate` corrected by the model's ratio, rounded up.
    pub fn apply(&self, model: &str, estimate: usize) -> usize {
        (estimate as f64 * self.ratio(model)).ceil() as usize
    }

    /// Number of observations kept for `model`.
    pub fn samples(&self, model: &str) -> usize {
        self.models.get(model).map_or(0, |w| w.samples.len())
    }
}

/// Per-message token counts of a growing conversation.
///
/// Agents append; they rarely rewrite. [`RunningCount::sync`] therefore checks only the last
/// message it has already counted (by fingerprint) and counts what was appended after it, so a
/// turn costs O(new messages). When the history was rewritten (compaction, an edit), it finds
/// the first changed message and recounts from there.
#[derive(Debug, Clone, Default)]
pub struct RunningCount {
    entries: Vec<(u64, usize)>,
    total: usize,
}

impl RunningCount {
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the counts up to date with `messages` and returns the messages' total tokens.
    pub fn sync<C: TokenCounter + ?Sized>(&mut self, counter: &C, messages: &[Message]) -> usize {
        let keep = self.unchanged_prefix(messages);
        for (_, tokens) in self.entries.drain(keep..) {
            self.total -= tokens;
        }
        for m in &messages[keep..] {
            let tokens = counter.count_message(m);
            self.entries.push((fingerprint(m), tokens));
            self.total += tokens;
        }
        self.total
    }

    /// How many leading messages still match what was counted. Fast path: when the last counted
    /// message is unchanged, the whole prefix is assumed unchanged (append-only use).
    fn unchanged_prefix(&self, messages: &[Message]) -> usize {
        let n = self.entries.len();
        if n == 0 {
            return 0;
        }
        if messages.len() >= n && self.entries[n - 1].0 == fingerprint(&messages[n - 1]) {
            return n;
        }
        self.entries
            .iter()
            .zip(messages)
            .take_while(|((fp, _), m)| *fp == fingerprint(m))
            .count()
    }

    /// Sum of the counted messages.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Tokens of message `index`, if counted.
    pub fn message(&self, index: usize) -> Option<usize> {
        self.entries.get(index).map(|(_, t)| *t)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A hash of everything that affects a message's count.
fn fingerprint(message: &Message) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    message.role.hash(&mut h);
    message.to_json().hash(&mut h);
    h.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// [`MAX_TOKEN_BYTES`] bounds every token of both tables, special tokens included.
    #[test]
    fn longest_tokens_are_128_bytes() {
        for (name, bpe, ranks) in [
            ("o200k", tiktoken_rs::o200k_base().unwrap(), 200_019),
            ("cl100k", tiktoken_rs::cl100k_base().unwrap(), 100_300),
        ] {
            let longest = (0..ranks)
                .filter_map(|r| bpe.decode_bytes(&[r]).ok())
                .map(|b| b.len())
                .max();
            assert_eq!(longest, Some(MAX_TOKEN_BYTES), "{name}");
        }
    }

    #[test]
    fn long_runs_are_cut_into_bounded_chunks_that_cover_the_text() {
        let text = format!("intro {} mid {} end", "a".repeat(1000), "é".repeat(300));
        let mut pieces = Vec::new();
        for_each_bpe_chunk(&text, |p| pieces.push(p.to_string()));
        assert_eq!(pieces.concat(), text, "the chunks are the text, in order");
        let longest_run = pieces
            .iter()
            .flat_map(|p| p.split_whitespace())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest_run <= BPE_RUN_CHUNK_BYTES, "{longest_run}");
        let mut whole = Vec::new();
        for_each_bpe_chunk("ordinary prose, no long runs", |p| {
            whole.push(p.to_string())
        });
        assert_eq!(
            whole,
            ["ordinary prose, no long runs"],
            "short runs are not cut"
        );
    }

    #[test]
    fn long_runs_with_piece_boundaries_count_exactly() {
        let counter = BpeCounter(Encoding::O200k);
        let base64ish: String = (0..3000)
            .map(|i| ["QUJD", "ZGVm", "/+9a", "x1Y=", "path.rs"][i % 5])
            .collect();
        let url = format!("https://example.com/{}", "segment-name/".repeat(200));
        let japanese = "設定ファイルを読み込んで、テストを実行しました。".repeat(40);
        for text in [base64ish, url, japanese] {
            let uncut = tiktoken_rs::o200k_base_singleton().count_ordinary(&text);
            assert_eq!(counter.count_text(&text), uncut, "{}", &text[..40]);
        }
    }

    #[test]
    fn a_long_single_character_run_counts_close_to_its_uncut_count() {
        let counter = Encoding::O200k.counter();
        let run = "a".repeat(4096);
        let cut = counter.count_text(&run);
        let uncut = tiktoken_rs::o200k_base_singleton().count_ordinary(&run);
        assert!(
            cut >= uncut && cut <= uncut + 4096 / BPE_RUN_CHUNK_BYTES,
            "{cut} vs {uncut}"
        );
    }

    #[test]
    fn rough_count_is_ceil_of_quarter_chars_for_ascii() {
        assert_eq!(rough_text_tokens(""), 0);
        assert_eq!(rough_text_tokens("a"), 1);
        assert_eq!(rough_text_tokens("abcd"), 1);
        assert_eq!(rough_text_tokens("abcde"), 2);
        assert_eq!(rough_text_tokens(&"x".repeat(400)), 100);
    }

    #[test]
    fn rough_count_weighs_cjk_three_quarters_of_a_token_per_character() {
        assert_eq!(rough_text_tokens("你好世界"), 3);
        assert_eq!(rough_text_tokens("こんにちは"), 4);
        // Cyrillic: 2 bytes per char, quarter-weighted by bytes.
        assert_eq!(rough_text_tokens("привет"), 3);
    }

    #[test]
    fn exact_counts_match_known_tokenizations() {
        let o200k = Encoding::O200k.counter();
        let cl100k = Encoding::Cl100k.counter();
        assert_eq!(o200k.count_text("hello world"), 2);
        assert_eq!(cl100k.count_text("hello world"), 2);
        assert!(o200k.is_exact() && !Encoding::Rough.counter().is_exact());
        // Special-token text in user content is counted as ordinary text, not rejected.
        assert!(o200k.count_text("<|endoftext|>") > 1);
    }

    #[test]
    fn image_parts_cost_a_flat_amount_not_their_base64_length() {
        let huge = format!("data:image/png;base64,{}", "A".repeat(1_000_000));
        let mut m = Message::user("");
        m.content = Some(Content::Parts(vec![
            ContentPart::text("look"),
            ContentPart::image_url(huge),
        ]));
        let t = RoughCounter.count_message(&m);
        assert_eq!(t, MESSAGE_OVERHEAD + 1 + IMAGE_TOKENS);
    }

    #[test]
    fn tool_call_arguments_and_names_are_counted() {
        let args = format!("{{\"path\":\"{}\"}}", "a".repeat(400));
        let m =
            Message::assistant_tool_calls(vec![ToolCall::function("call_1", "read_file", args)]);
        let bare = Message::assistant_tool_calls(vec![]);
        let diff = RoughCounter.count_message(&m) - RoughCounter.count_message(&bare);
        assert!(diff > 100, "arguments must count, got {diff}");
    }

    #[test]
    fn reasoning_fields_are_counted() {
        let mut m = Message::assistant("ok");
        let base = RoughCounter.count_message(&m);
        m.reasoning
            .insert("reasoning_content".into(), Value::String("x".repeat(400)));
        assert_eq!(RoughCounter.count_message(&m), base + 100);
    }

    #[test]
    fn request_estimate_includes_system_messages_and_tools() {
        let messages = vec![
            Message::system("s".repeat(40)),
            Message::user("u".repeat(80)),
        ];
        let tools =
            vec![serde_json::json!({"type":"function","function":{"name":"t","parameters":{}}})];
        let e = estimate_request(&RoughCounter, &messages, Some(&tools));
        assert_eq!(e.system, MESSAGE_OVERHEAD + 10);
        assert_eq!(e.messages, MESSAGE_OVERHEAD + 20);
        assert!(e.tools > TOOL_SCHEMA_OVERHEAD);
        assert_eq!(e.total(), e.system + e.messages + e.tools + REPLY_PRIMING);
        let without_tools = estimate_request(&RoughCounter, &messages, None);
        assert!(without_tools.total() < e.total());
    }

    #[test]
    fn encoding_parse_accepts_short_and_long_names_and_rejects_others() {
        assert_eq!(Encoding::parse("o200k").unwrap(), Encoding::O200k);
        assert_eq!(Encoding::parse("CL100K_BASE").unwrap(), Encoding::Cl100k);
        assert_eq!(Encoding::parse("rough").unwrap(), Encoding::Rough);
        let err = Encoding::parse("p50k").unwrap_err();
        assert!(err.to_string().contains("p50k") && err.to_string().contains("o200k"));
    }

    #[test]
    fn model_names_map_to_their_tokenizer() {
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Some(Encoding::O200k));
        assert_eq!(Encoding::for_model("openai/gpt-5"), Some(Encoding::O200k));
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Some(Encoding::Cl100k));
        assert_eq!(Encoding::for_model("claude-sonnet-4-5"), None);
    }

    #[test]
    fn calibration_starts_at_one_and_applies_first_observation() {
        let mut c = Calibration::new();
        assert_eq!(c.ratio("m"), 1.0);
        assert_eq!(c.observe("m", 1_500, 1_000), CalibrationOutcome::Accepted);
        assert!((c.ratio("m") - 1.5).abs() < 1e-9);
        assert_eq!(c.apply("m", 2_000), 3_000);
        assert_eq!(c.ratio("other"), 1.0, "ratios are per model");
    }

    #[test]
    fn calibration_ignores_outliers_and_tiny_requests() {
        let mut c = Calibration::new();
        for _ in 0..4 {
            c.observe("m", 1_200, 1_000);
        }
        // One wild observation inside the plausible range does not move the median.
        c.observe("m", 4_000, 1_000);
        assert!((c.ratio("m") - 1.2).abs() < 1e-9);
        assert_eq!(c.observe("m", 0, 1_000), CalibrationOutcome::Implausible);
        assert_eq!(c.observe("m", 50, 10), CalibrationOutcome::TooSmall);
        assert_eq!(c.samples("m"), 5);
    }

    #[test]
    fn calibration_window_forgets_old_observations() {
        let mut c = Calibration::new();
        for _ in 0..CALIBRATION_WINDOW {
            c.observe("m", 2_000, 1_000);
        }
        for _ in 0..CALIBRATION_WINDOW {
            c.observe("m", 1_000, 1_000);
        }
        assert!((c.ratio("m") - 1.0).abs() < 1e-9);
    }

    /// Counts how many messages were tokenized, to prove incremental cost.
    struct Spy(AtomicUsize);
    impl TokenCounter for Spy {
        fn name(&self) -> &'static str {
            "spy"
        }
        fn count_text(&self, text: &str) -> usize {
            rough_text_tokens(text)
        }
        fn is_exact(&self) -> bool {
            false
        }
        fn count_message(&self, message: &Message) -> usize {
            self.0.fetch_add(1, Ordering::Relaxed);
            message_tokens(self, message)
        }
    }

    /// Quarter-token units of one CJK / kana / hangul character.
    const DENSE_CHAR_UNITS: usize = 3;

    /// CJK ideographs, kana, hangul and full-width forms: scripts where one character is roughly
    /// one token (or more) rather than a quarter of one.
    fn is_dense_script(c: char) -> bool {
        matches!(c as u32,
            0x3040..=0x30FF      // hiragana, katakana
            | 0x3400..=0x4DBF    // CJK extension A
            | 0x4E00..=0x9FFF    // CJK unified ideographs
            | 0xAC00..=0xD7AF    // hangul syllables
            | 0x1100..=0x11FF    // hangul jamo
            | 0xF900..=0xFAFF    // CJK compatibility ideographs
            | 0xFF00..=0xFFEF    // half/full-width forms
            | 0x3000..=0x303F    // CJK punctuation
            | 0x20000..=0x2FA1F  // CJK extensions B-F, compatibility supplement
        )
    }

    /// The estimate's definition, character by character.
    fn rough_by_chars(text: &str) -> usize {
        let units: usize = text
            .chars()
            .map(|c| match c {
                c if c.is_ascii() => 1,
                c if is_dense_script(c) => DENSE_CHAR_UNITS,
                c => c.len_utf8(),
            })
            .sum();
        units.div_ceil(4)
    }

    #[test]
    fn the_rough_estimate_by_bytes_equals_its_definition_by_characters() {
        let samples = [
            "",
            "plain ascii text",
            "Größe café naïve",
            "用户配置文件 こんにちは 안녕하세요 ｆｕｌｌ",
            "𠀀𠀁𪚥𫝀 𯨟𯨠 🙂🙂 \u{10FFFF}",
            "mixed 用户 🙂 𠀀 text",
        ];
        for s in samples {
            assert_eq!(rough_text_tokens(s), rough_by_chars(s), "{s:?}");
        }
        // Every code point around the dense astral range's edges.
        for c in (0x1FFF0u32..0x20010)
            .chain(0x2FA10..0x2FA30)
            .filter_map(char::from_u32)
        {
            let s = format!("ab{c}{c}");
            assert_eq!(rough_text_tokens(&s), rough_by_chars(&s), "{c:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_rough_estimate_by_bytes_equals_its_definition_on_any_text(s in "\\PC*") {
            proptest::prop_assert_eq!(rough_text_tokens(&s), rough_by_chars(&s));
        }
    }

    #[test]
    fn the_utf8_bound_is_never_below_an_exact_count() {
        let texts = [
            "",
            "a",
            "Hello, world! 你好，世界！ こんにちは 🙂🙂🙂",
            &"aaaa".repeat(300),
            "fn main() { println!(\"{}\", 1 + 2); }\n\t\t",
        ];
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let exact = encoding.counter();
            for t in texts {
                assert!(Utf8Bound.count_text(t) >= exact.count_text(t), "{t:?}");
            }
            let m = Message::assistant_tool_calls(vec![crate::message::ToolCall::function(
                "call_1",
                "terminal",
                r#"{"command":"ls -la /tmp"}"#,
            )]);
            assert!(message_tokens(&Utf8Bound, &m) >= exact.count_message(&m));
        }
    }

    #[test]
    fn running_count_after_one_append_counts_only_the_new_message() {
        let spy = Spy(AtomicUsize::new(0));
        let mut messages: Vec<Message> = (0..500).map(|i| Message::user(format!("m{i}"))).collect();
        let mut running = RunningCount::new();
        let first = running.sync(&spy, &messages);
        assert_eq!(spy.0.load(Ordering::Relaxed), 500);
        messages.push(Message::assistant("new"));
        let second = running.sync(&spy, &messages);
        assert_eq!(
            spy.0.load(Ordering::Relaxed),
            501,
            "only the new message is counted"
        );
        assert_eq!(second, first + RoughCounter.count_message(&messages[500]));
        let full: usize = messages.iter().map(|m| RoughCounter.count_message(m)).sum();
        assert_eq!(second, full);
    }

    #[test]
    fn running_count_recounts_from_the_first_rewritten_message() {
        let spy = Spy(AtomicUsize::new(0));
        let mut messages: Vec<Message> = (0..100).map(|i| Message::user(format!("m{i}"))).collect();
        let mut running = RunningCount::new();
        running.sync(&spy, &messages);
        // Compaction: replace messages 10.. with one summary.
        messages.truncate(10);
        messages.push(Message::user("summary ".repeat(50)));
        let before = spy.0.load(Ordering::Relaxed);
        let total = running.sync(&spy, &messages);
        assert_eq!(spy.0.load(Ordering::Relaxed) - before, 1);
        let full: usize = messages.iter().map(|m| RoughCounter.count_message(m)).sum();
        assert_eq!(total, full);
        assert_eq!(running.len(), 11);
    }
}
