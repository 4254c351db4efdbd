//! Server-sent events, parsed incrementally from the bytes as they arrive.
//!
//! Network chunks split lines (and UTF-8 characters) anywhere, so bytes are buffered until a
//! line is complete; an event is dispatched at the blank line that ends it, as the SSE spec
//! says. Comments (`:`-lines, used as keep-alives) and unknown fields are skipped.

/// The end of a streamed answer: the assembled response when the stream ended as its protocol
/// says, else [`LlmError::Interrupted`] holding what arrived and why it stopped (the read
/// failed, the server sent an error event, or the stream closed before `final_event`).
pub(crate) fn finish_stream(
    provider: String,
    read: Result<(), crate::errors::LlmError>,
    server_error: Option<String>,
    complete: bool,
    final_event: &str,
    response: Result<crate::response::ChatResponse, crate::errors::LlmError>,
) -> Result<crate::response::ChatResponse, crate::errors::LlmError> {
    let why = match (read, server_error) {
        (_, Some(error)) => format!(
            "the server sent an error in the stream: {}",
            crate::errors::bound(&error)
        ),
        (Err(e), None) => e.to_string(),
        (Ok(()), None) if !complete => format!("the stream ended before {final_event}"),
        (Ok(()), None) => return response,
    };
    Err(crate::errors::LlmError::Interrupted {
        provider,
        partial: Box::new(response?),
        message: why,
    })
}

/// Whether a server answered a streamed request with one JSON document instead of an event
/// stream. Some OpenAI-compatible servers and proxies ignore `stream: true`; their answer is
/// complete, so it is parsed whole rather than reported as a stream that never finished.
pub(crate) fn answered_whole(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"))
}

/// Hands a whole answer to a stream's sink as if it had streamed (reasoning, text, usage), so
/// a host that shows deltas shows it too.
pub(crate) fn replay(
    response: &crate::response::ChatResponse,
    sink: &mut crate::provider::EventSink<'_>,
) {
    use crate::response::StreamEvent;
    let reasoning = response.message.reasoning_text();
    if !reasoning.is_empty() {
        sink(StreamEvent::ReasoningDelta(reasoning));
    }
    let text = response.message.text();
    if !text.is_empty() {
        sink(StreamEvent::TextDelta(text));
    }
    sink(StreamEvent::Usage(response.usage));
}

/// One event: its `event:` name, if any, and its `data:` lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds bytes; returns the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if let Some(event) = self.take_line(line) {
                events.push(event);
            }
        }
        events
    }

    /// The stream ended: an event still missing its blank line is dispatched if complete
    /// lines of it arrived. Returns `true` in `has_partial_line` terms via [`Self::is_clean`].
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&rest).into_owned();
            self.take_line(line.trim_end_matches('\r'));
        }
        self.dispatch()
    }

    fn take_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if self.data.is_empty() {
            return None;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let mut p = SseParser::new();
        let mut events = p.push(b"event: message_start\r\ndata: {\"a\"");
        assert!(events.is_empty());
        events.extend(p.push(b":1}\r\n\r\n: ping\n\ndata: x\ndata: y\n\n"));
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "x\ny".into()
                }
            ]
        );
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let mut p = SseParser::new();
        let bytes = "data: é\n\n".as_bytes();
        let mut events = p.push(&bytes[..7]);
        events.extend(p.push(&bytes[7..]));
        assert_eq!(events[0].data, "é");
    }

    #[test]
    fn finish_flushes_an_unterminated_event() {
        let mut p = SseParser::new();
        assert!(p.push(b"data: [DONE]").is_empty());
        assert_eq!(p.finish().map(|e| e.data), Some("[DONE]".into()));
    }
}
