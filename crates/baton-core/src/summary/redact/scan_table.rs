//! The redaction scan's automaton, as the build script wrote it from [`SCAN_PREFIXES`]
//! (`build.rs`): static tables, nothing built when a process starts.
//!
//! [`SCAN_PREFIXES`]: super::scan_prefixes::SCAN_PREFIXES

use super::dfa_table::DfaTable;
use std::borrow::Cow;

include!(concat!(env!("OUT_DIR"), "/scan_table.rs"));

/// The automaton of `SCAN_PREFIXES`, its pattern numbers their positions in the list.
pub(super) fn scan_table() -> DfaTable {
    DfaTable {
        classes: Cow::Borrowed(&SCAN_CLASSES),
        stride: SCAN_STRIDE,
        trans: Cow::Borrowed(&SCAN_TRANS),
        start: SCAN_START,
        match_below: SCAN_MATCH_BELOW,
        match_starts: Cow::Borrowed(&SCAN_MATCH_STARTS),
        match_literals: Cow::Borrowed(&SCAN_MATCH_LITERALS),
        literal_lens: Cow::Borrowed(&SCAN_LITERAL_LENS),
    }
}
