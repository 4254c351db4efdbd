//! A term's candidates are looked for window by window of ids, newest first
//! (`search_window.rs`): past the first window, a rare term's window is filtered on its own
//! matches, a common one's narrowed by the primary key. Whichever way a window is read, a
//! search finds every match it should, and only those.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

use baton_core::Message;
use baton_store::{SearchQuery, SessionBatch, SessionStore};

/// Messages beyond the first window (20,000 ids), so later windows are read.
const MESSAGES: usize = 26_000;

fn text_of(i: usize) -> String {
    let mut text = format!("note {i} about the build");
    if i.is_multiple_of(500) {
        text.push_str(" zebra");
    }
    if i.is_multiple_of(40) {
        text.push_str(" walrus");
    }
    text
}

#[test]
fn terms_found_past_the_first_window_are_all_found_whichever_way_it_is_read() {
    let Some(store) = pg::fresh_store() else {
        return;
    };
    let messages: Vec<Message> = (0..MESSAGES).map(|i| Message::user(text_of(i))).collect();
    let ids: Vec<String> = (0..messages.len().div_ceil(1_000))
        .map(|k| format!("s{k}"))
        .collect();
    let batches: Vec<SessionBatch<'_>> = messages
        .chunks(1_000)
        .zip(&ids)
        .map(|(chunk, id)| pg::new_session(id, "import", chunk))
        .collect();
    store.write_new_sessions_deferred(&batches).unwrap();
    while store.catch_up_index(20_000).unwrap() > 0 {}
    assert_eq!(store.index_backlog().unwrap(), 0);

    // (term, matches): 52 of `zebra` (rare: its second window is filtered on its matches),
    // 650 of `walrus` (fewer than the 1,000 candidates a term is ranked among, so every
    // window back to the first message is read).
    for (term, expected) in [("zebra", MESSAGES / 500), ("walrus", MESSAGES / 40)] {
        let mut q = SearchQuery::new(term);
        q.limit = 5_000;
        let hits = store.search(&q).unwrap();
        assert_eq!(hits.len(), expected, "{term}");
        assert!(
            hits.iter().all(|h| h.snippet.contains(term)),
            "{term}: every hit holds it"
        );
        let mut ids: Vec<i64> = hits.iter().map(|h| h.message_id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), expected, "{term}: no hit twice");
    }
}
