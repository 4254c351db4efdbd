//! Lossless recall: what a compaction summarized away stays stored, and the model can get it
//! back. Every installed summary names the span it replaced (`span.rs`), `history_search`
//! finds past messages of the current lineage in any language, and `history_expand` returns
//! the originals of a span or a message, cut honestly to a token cap.

pub mod history_expand;
pub mod history_search;
pub mod render;
pub mod span;

pub use history_expand::HistoryExpand;
pub use history_search::HistorySearch;
pub use span::{SpanRef, summary_span_note};
