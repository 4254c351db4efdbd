//! One input line ↔ one trajectory: which dialect it is in, its messages, and how to write it
//! back in that same dialect.
//!
//! The conversion itself is the format loaders' (`formats::sharegpt`, `formats::openai`): they
//! keep every field of the record and every field of every turn, so a compressed record differs
//! from its input only where turns were replaced.

use crate::conversation::Conversation;
use crate::formats::{openai, sharegpt};
use serde_json::Value;

/// The dialect of one record; the output keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordFormat {
    /// `{"conversations": [{"from", "value"}, …], …}`
    ShareGpt,
    /// `{"messages": [{"role", "content"}, …], …}`
    OpenAi,
}

/// A parsed input line.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub format: RecordFormat,
    pub conversation: Conversation,
}

/// Why a line is not a trajectory record. The pipeline adds the line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("not UTF-8 text")]
    NotUtf8,
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error(
        "expected a JSON object with `conversations` (ShareGPT) or `messages` (OpenAI), found {0}"
    )]
    NotARecord(String),
    /// The record has the right top-level key, but its turns do not read (an unknown role, a
    /// missing `value`, a malformed tool call…).
    #[error("{0}")]
    Turns(String),
}

impl Record {
    /// Parses one JSONL line (without its newline). A record holding both keys is read as
    /// ShareGPT, the dataset convention this tool was first written for.
    pub fn parse(line: &[u8]) -> Result<Record, RecordError> {
        let text = std::str::from_utf8(line).map_err(|_| RecordError::NotUtf8)?;
        let value: Value =
            serde_json::from_str(text).map_err(|e| RecordError::Json(e.to_string()))?;
        let Value::Object(obj) = value else {
            return Err(RecordError::NotARecord(crate::message::describe_value(
                &value,
            )));
        };
        if obj.contains_key("conversations") {
            let conversation = sharegpt::from_sharegpt(&Value::Object(obj))
                .map_err(|e| RecordError::Turns(e.to_string()))?;
            Ok(Record {
                format: RecordFormat::ShareGpt,
                conversation,
            })
        } else if obj.contains_key("messages") {
            let conversation = openai::conversation_from_object(obj)
                .map_err(|e| RecordError::Turns(e.to_string()))?;
            Ok(Record {
                format: RecordFormat::OpenAi,
                conversation,
            })
        } else {
            let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
            Err(RecordError::NotARecord(format!(
                "an object without either key (keys: {})",
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            )))
        }
    }

    /// The record as one JSON line (no newline), in its own dialect.
    pub fn to_line(&self) -> String {
        match self.format {
            RecordFormat::ShareGpt => sharegpt::to_sharegpt(&self.conversation).to_string(),
            RecordFormat::OpenAi => openai::conversation_to_object(&self.conversation).to_string(),
        }
    }

    /// The record's `id` field, when it has a string or number one: metrics carry it so a row
    /// can be matched to its record without counting lines.
    pub fn id(&self) -> Option<String> {
        match self.conversation.extra.get("id")? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn sharegpt_record_round_trips_exactly() {
        let line = r#"{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}],"tools":"[]","id":7}"#;
        let r = Record::parse(line.as_bytes()).unwrap();
        assert_eq!(r.format, RecordFormat::ShareGpt);
        assert_eq!(r.id().as_deref(), Some("7"));
        assert_eq!(r.to_line(), line);
    }

    #[test]
    fn openai_record_round_trips_exactly() {
        let line = r#"{"id":"a","messages":[{"role":"user","content":"hi"}],"meta":{"k":1}}"#;
        let r = Record::parse(line.as_bytes()).unwrap();
        assert_eq!(r.format, RecordFormat::OpenAi);
        assert_eq!(r.to_line(), line);
    }

    #[test]
    fn malformed_records_say_what_is_wrong() {
        let e = Record::parse(b"{\"x\":1}").unwrap_err();
        assert!(e.to_string().contains("conversations"), "{e}");
        let e = Record::parse(b"{\"conversations\":[{\"from\":\"wizard\",\"value\":\"x\"}]}")
            .unwrap_err();
        assert!(e.to_string().contains("wizard"), "{e}");
        let e = Record::parse(b"{\"messages\": [").unwrap_err();
        assert!(matches!(e, RecordError::Json(_)), "{e}");
        assert_eq!(
            Record::parse(&[0xff, 0xfe]).unwrap_err(),
            RecordError::NotUtf8
        );
    }
}
