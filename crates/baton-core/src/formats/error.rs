//! What can go wrong when reading a conversation in some provider's or dataset's format.
//!
//! Every variant says *where* (a line, a message index, a JSON location) and *what was
//! expected*, so a user holding a 10 000-line file can go straight to the bad record. File
//! names are added by the caller, which is the only one that knows them.

use crate::message::MessageError;

/// A conversation could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The text is not JSON at all. `line` is `None` when the input had no lines to speak of
    /// (an embedded JSON string, say).
    #[error("invalid JSON{}: {message}", json_position(*.line, *.column))]
    Json {
        line: Option<usize>,
        column: usize,
        message: String,
    },
    /// A message parsed as JSON but is not a valid chat message.
    #[error(transparent)]
    Message(#[from] MessageError),
    /// A value sits where something of another shape was expected.
    #[error("at `{at}`: expected {expected}, found {found}")]
    Shape {
        /// Where, as a path such as `messages[3].content[1].tool_use_id`.
        at: String,
        expected: String,
        found: String,
    },
    /// The input matches none of the formats the caller asked for.
    #[error("unrecognised conversation format: {hint}")]
    UnknownFormat { hint: String },
}

impl FormatError {
    /// A [`FormatError::Shape`] describing `found` briefly (never dumping a huge value).
    pub fn shape(
        at: impl Into<String>,
        expected: impl Into<String>,
        found: &serde_json::Value,
    ) -> Self {
        FormatError::Shape {
            at: at.into(),
            expected: expected.into(),
            found: crate::message::describe_value(found),
        }
    }

    /// A [`FormatError::Shape`] for a required field that is absent.
    pub fn missing(at: impl Into<String>, expected: impl Into<String>) -> Self {
        FormatError::Shape {
            at: at.into(),
            expected: expected.into(),
            found: "nothing (field missing)".into(),
        }
    }
}

/// `record[key]` converted by `as_kind` (e.g. `Value::as_object`), or the error naming the field
/// (as `at.key`, or `key` when `at` is empty) and what was expected there: missing, or present
/// with the wrong shape.
pub fn required_field<'a, T: ?Sized>(
    record: &'a serde_json::Map<String, serde_json::Value>,
    at: &str,
    key: &str,
    expected: &str,
    as_kind: impl FnOnce(&'a serde_json::Value) -> Option<&'a T>,
) -> Result<&'a T, FormatError> {
    let path = || {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match record.get(key) {
        None => Err(FormatError::missing(path(), expected)),
        Some(v) => as_kind(v).ok_or_else(|| FormatError::shape(path(), expected, v)),
    }
}

impl From<serde_json::Error> for FormatError {
    /// serde_json reports line 0 when the error is not tied to input text; that becomes `None`.
    fn from(err: serde_json::Error) -> Self {
        FormatError::Json {
            line: (err.line() > 0).then_some(err.line()),
            column: err.column(),
            message: bare_message(&err),
        }
    }
}

/// serde_json's text without its trailing " at line L column C" (we print the position
/// ourselves, and only once).
fn bare_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match text.strip_suffix(&suffix) {
        Some(bare) => bare.to_string(),
        None => text,
    }
}

fn json_position(line: Option<usize>, column: usize) -> String {
    match line {
        Some(line) => format!(" at line {line}, column {column}"),
        None if column > 0 => format!(" at column {column}"),
        None => String::new(),
    }
}
