//! The `memory` tool: its function schema and the handler that turns a call into a store
//! operation and a JSON result with the live state.

use crate::outcome::WriteOutcome;
use crate::store::MemoryStore;
use crate::target::Target;
use serde_json::{Value, json};

/// The tool's function name.
pub const TOOL_NAME: &str = "memory";

/// System-prompt guidance shown when the tool is loaded.
pub const GUIDANCE: &str = include_str!("../templates/memory_guidance.txt");

const DESCRIPTION: &str = "Keep durable facts in persistent memory, which is shown at the start \
of every later session. Save without being asked when the user corrects you or asks you to \
remember something, shares a preference or personal detail (name, role, timezone, style), or \
when you learn a stable fact about their environment, project conventions or tools. User \
preferences and corrections matter most: good memory spares the user from repeating themselves.\n\
\n\
Do not store task progress, finished-work logs or temporary to-dos; those can be found in \
past transcripts.\n\
\n\
TARGETS: 'user' is who the user is (name, role, preferences, communication style); 'memory' \
is your own notes (environment facts, conventions, tool quirks, lessons).\n\
\n\
ACTIONS: add (a new entry), replace (correct or update an entry: old_text is a short piece of \
text found in exactly one entry), remove (delete the entry old_text identifies). When a fact \
changes, replace the old entry; adding a second version is refused and the existing entry is \
shown.\n\
\n\
SKIP: trivia, things easy to find again, raw data, and short-lived task state.";

/// The function schema (OpenAI `function` object, without the `type` wrapper). No top-level
/// `anyOf`/`oneOf`/`allOf`/`enum`/`not`: some backends reject those.
pub fn schema() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["add", "replace", "remove"],
                    "description": "What to do."
                },
                "target": {
                    "type": "string",
                    "enum": ["memory", "user"],
                    "description": "'memory' for your notes, 'user' for the user profile."
                },
                "content": {
                    "type": "string",
                    "description": "The entry text. Required for add and replace."
                },
                "old_text": {
                    "type": "string",
                    "description": "A short piece of text found in exactly one entry: the entry to replace or remove."
                }
            },
            "required": ["action", "target"]
        }
    })
}

/// `{"success": false, "error": …}`: the shape of every tool-level error.
pub fn tool_error(message: impl Into<String>) -> Value {
    json!({"success": false, "error": message.into()})
}

/// Runs a `memory` tool call. Never panics on bad arguments: each gets an error result the
/// model can correct.
pub fn handle(store: &MemoryStore, args: &Value) -> Value {
    let field = |k: &str| args.get(k).and_then(Value::as_str);
    let Some(action) = field("action") else {
        return tool_error("'action' is required: one of add, replace, remove.");
    };
    let target_name = field("target").unwrap_or("memory");
    let Ok(target) = target_name.parse::<Target>() else {
        return tool_error(format!(
            "Invalid target '{target_name}': use 'memory' or 'user'."
        ));
    };
    let (content, old_text) = (field("content"), field("old_text"));
    let result = match action {
        "add" => match content {
            Some(c) => store.add(target, c),
            None => return tool_error("'content' is required for add."),
        },
        "replace" => match (old_text, content) {
            (Some(o), Some(c)) => store.replace(target, o, c),
            (None, _) => return tool_error("'old_text' is required for replace."),
            (_, None) => return tool_error("'content' is required for replace."),
        },
        "remove" => match old_text {
            Some(o) => store.remove(target, o),
            None => return tool_error("'old_text' is required for remove."),
        },
        other => {
            return tool_error(format!(
                "Unknown action '{other}': use add, replace or remove."
            ));
        }
    };
    match result {
        Ok(outcome) => outcome.to_json(),
        Err(e) => tool_error(format!("Memory could not be updated: {e}")),
    }
}

/// Whether a tool result reports a successful write (used to mirror writes to providers).
pub fn succeeded(result: &Value) -> bool {
    result.get("success").and_then(Value::as_bool) == Some(true)
}

impl WriteOutcome {
    /// The tool result as the string a tool message carries.
    pub fn to_tool_content(&self) -> String {
        self.to_json().to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Limits;

    fn store() -> (tempfile::TempDir, MemoryStore) {
        let d = tempfile::tempdir().unwrap();
        let s = MemoryStore::open(d.path(), Limits::default()).unwrap();
        (d, s)
    }

    #[test]
    fn schema_has_no_top_level_combinators() {
        let s = schema();
        for k in ["allOf", "anyOf", "oneOf", "enum", "not"] {
            assert!(s["parameters"].get(k).is_none(), "{k}");
        }
        assert_eq!(s["parameters"]["required"], json!(["action", "target"]));
    }

    #[test]
    fn a_call_round_trips_through_the_store_with_live_state() {
        let (_d, s) = store();
        let r = handle(
            &s,
            &json!({"action": "add", "target": "user", "content": "Name: Ana"}),
        );
        assert_eq!(r["success"], true);
        assert_eq!(r["entries"], json!(["Name: Ana"]));
        assert_eq!(r["usage"], "0% — 9/1,375 chars");
        let r = handle(
            &s,
            &json!({"action": "replace", "target": "user", "old_text": "Ana", "content": "Name: Ana Lima"}),
        );
        assert_eq!(r["entries"], json!(["Name: Ana Lima"]));
        let r = handle(
            &s,
            &json!({"action": "remove", "target": "user", "old_text": "Lima"}),
        );
        assert_eq!(r["entry_count"], 0);
    }

    #[test]
    fn bad_arguments_get_errors_not_panics() {
        let (_d, s) = store();
        let cases = [
            (json!({}), "'action' is required"),
            (
                json!({"action": "add", "target": "x"}),
                "Invalid target 'x'",
            ),
            (
                json!({"action": "add", "target": "memory"}),
                "'content' is required",
            ),
            (
                json!({"action": "replace", "target": "memory", "content": "a"}),
                "'old_text' is required",
            ),
            (
                json!({"action": "replace", "target": "memory", "old_text": "a"}),
                "'content' is required",
            ),
            (
                json!({"action": "remove", "target": "memory"}),
                "'old_text' is required",
            ),
            (
                json!({"action": "read", "target": "memory"}),
                "Unknown action 'read'",
            ),
            (json!([1, 2]), "'action' is required"),
        ];
        for (args, want) in cases {
            let r = handle(&s, &args);
            assert_eq!(r["success"], false);
            let err = r["error"].as_str().unwrap();
            assert!(err.contains(want), "{err} vs {want}");
        }
    }
}
