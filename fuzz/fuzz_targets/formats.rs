//! Every conversation reader: detection, each forced format (OpenAI, Anthropic, ShareGPT in
//! every layout; Claude Code, Codex, Gemini CLI transcripts), then what `compress` and
//! `tokens` do with a document that loaded: convert it to each dialect and write it back.
#![no_main]

use baton_core::formats::{self, Dialect, FormatName};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = formats::detect(text);
    let forced = std::iter::once(None).chain(FormatName::ALL.into_iter().map(Some));
    for f in forced {
        if let Ok(doc) = formats::parse_document(text, f) {
            let _ = doc.to_text();
            for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::ShareGpt] {
                let _ = doc.converted_to(d).to_text();
            }
        }
    }
});
