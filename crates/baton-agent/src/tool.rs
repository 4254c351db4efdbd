//! The tool contract: a JSON schema the model sees, and a call that turns arguments into the
//! text of a tool message. Errors are results too — the model reads them and tries again — so
//! every error says what was wrong in words a model can act on.

use crate::approval::Approver;
use crate::interrupt::Interrupt;
use baton_core::summary::BoxFuture;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What a tool may know about the session it runs in.
#[derive(Clone)]
pub struct ToolContext {
    /// The working directory, canonical. File tools resolve relative paths against it.
    pub workdir: PathBuf,
    /// Whether file tools may reach outside `workdir` (`[tools] allow_outside_workdir`).
    pub allow_outside_workdir: bool,
    /// Folders `read_file` may read even outside `workdir`: the tool-output spill folder, so a
    /// spilled result can be read back in pieces.
    pub readable_roots: Vec<PathBuf>,
    /// Asked before a destructive command runs.
    pub approver: Arc<dyn Approver>,
    /// Raised when the user interrupts the turn; long tools stop at it.
    pub interrupt: Interrupt,
    /// The session the call belongs to.
    pub session_id: String,
    /// The session's compression chain, root first (ends with `session_id`).
    pub lineage: Vec<String>,
    /// Default timeout of the `terminal` tool when the model gives none.
    pub command_timeout: Duration,
}

/// Why a call produced no normal result. Shown to the model as the tool message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the schema (missing field, wrong type, invalid JSON).
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: String, message: String },
    /// Not allowed: a path outside the working directory, a destructive command not approved.
    #[error("{0}")]
    Refused(String),
    /// The tool ran and failed (file missing, patch text not found, …).
    #[error("{0}")]
    Failed(String),
    /// The user interrupted the turn while the tool ran.
    #[error("interrupted by the user")]
    Interrupted,
}

/// One tool the model can call.
pub trait Tool: Send + Sync {
    /// The function name the model calls.
    fn name(&self) -> &str;

    /// The schema in OpenAI form: `{"type":"function","function":{"name","description","parameters"}}`.
    fn schema(&self) -> Value;

    /// Runs one call. `arguments` is the parsed JSON object the model sent.
    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>>;
}

/// The tools of one agent, by name, in registration order for the schemas.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a tool of the same name is replaced in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_string();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// Every schema, in registration order (stable, so the request prefix stays cacheable).
    pub fn schemas(&self) -> Vec<Value> {
        self.order
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(|t| t.schema())
            .collect()
    }
}

/// A schema in the OpenAI function form, for tool implementations.
pub fn function_schema(name: &str, description: &str, parameters: Value) -> Value {
    serde_json::json!({
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters}
    })
}

/// Reading a call's arguments, with the errors a model can act on.
pub mod args {
    use super::ToolError;
    use serde_json::Value;

    fn invalid(tool: &str, message: String) -> ToolError {
        ToolError::InvalidArguments {
            tool: tool.to_string(),
            message,
        }
    }

    /// A required string argument.
    pub fn required_str<'v>(
        tool: &str,
        arguments: &'v Value,
        key: &str,
    ) -> Result<&'v str, ToolError> {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(tool, format!("`{key}` (a string) is required")))
    }

    /// A required string argument that must not be blank.
    pub fn required_text<'v>(
        tool: &str,
        arguments: &'v Value,
        key: &str,
    ) -> Result<&'v str, ToolError> {
        let text = required_str(tool, arguments, key)?;
        if text.trim().is_empty() {
            return Err(invalid(tool, format!("`{key}` must not be empty")));
        }
        Ok(text)
    }

    /// An optional whole number of at least `min`; absent or `null` gives `None`.
    pub fn optional_count(
        tool: &str,
        arguments: &Value,
        key: &str,
        min: u64,
    ) -> Result<Option<u64>, ToolError> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n >= min)
                .map(Some)
                .ok_or_else(|| invalid(tool, format!("`{key}` must be a whole number ≥ {min}"))),
        }
    }
}
