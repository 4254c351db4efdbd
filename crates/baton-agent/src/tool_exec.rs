//! Runs the tool calls of one assistant message: all at once when the model asked for several,
//! results appended in call order, each through the per-result spill and the batch through the
//! per-turn budget, so no single turn can flood the window.

use crate::event::AgentEvent;
use crate::tool::{ToolContext, ToolError, ToolRegistry};
use baton_core::Message;
use baton_core::message::ToolCall;
use baton_core::tool_output::{ToolResultStore, persisted_path};
use futures_util::future::join_all;
use serde_json::Value;
use std::time::Instant;

/// Chars of a result shown in its [`AgentEvent::ToolResult`] preview.
const PREVIEW_CHARS: usize = 200;

/// One finished call.
struct Finished {
    call: ToolCall,
    text: String,
    is_error: bool,
    duration_ms: u64,
}

/// Executes `calls` (from `assistant`) and returns their tool messages in call order.
pub(crate) async fn run_tool_calls(
    assistant: &Message,
    tools: &ToolRegistry,
    ctx: &ToolContext,
    results: &ToolResultStore,
    sink: &mut (dyn FnMut(AgentEvent) + Send),
) -> Vec<Message> {
    let calls = assistant.calls().to_vec();
    for call in &calls {
        sink(AgentEvent::ToolCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: call.function.arguments.clone(),
        });
    }
    let finished = join_all(calls.into_iter().map(|call| run_one(call, tools, ctx))).await;
    let mut messages: Vec<Message> = finished
        .iter()
        .map(|f| {
            let mut message = Message::tool(f.call.id.clone(), f.text.clone());
            // A failed spill leaves the result as it was; the turn budget below still applies.
            let _ = results.persist_if_oversized(&f.call.function.name, &mut message);
            message
        })
        .collect();
    let mut turn = Vec::with_capacity(messages.len() + 1);
    turn.push(assistant.clone());
    turn.append(&mut messages);
    let _ = results.enforce_turn_budget(&mut turn);
    let messages: Vec<Message> = turn.into_iter().skip(1).collect();
    for (f, message) in finished.iter().zip(&messages) {
        let text = message.text();
        sink(AgentEvent::ToolResult {
            id: f.call.id.clone(),
            name: f.call.function.name.clone(),
            is_error: f.is_error,
            chars: f.text.chars().count(),
            preview: text.chars().take(PREVIEW_CHARS).collect(),
            spilled_to: persisted_path(&text).map(|p| p.display().to_string()),
            duration_ms: f.duration_ms,
        });
    }
    messages
}

async fn run_one(call: ToolCall, tools: &ToolRegistry, ctx: &ToolContext) -> Finished {
    let started = Instant::now();
    let outcome = match parse_arguments(&call) {
        Err(e) => Err(e),
        Ok(arguments) => match tools.get(&call.function.name) {
            None => Err(ToolError::Failed(format!(
                "unknown tool `{}`; the tools are: {}",
                call.function.name,
                tools.names().join(", ")
            ))),
            Some(_) if ctx.interrupt.is_raised() => Err(ToolError::Interrupted),
            Some(tool) => tool.call(arguments, ctx).await,
        },
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match outcome {
        Ok(text) => Finished {
            call,
            text,
            is_error: false,
            duration_ms,
        },
        Err(error) => Finished {
            call,
            text: format!("Error: {error}"),
            is_error: true,
            duration_ms,
        },
    }
}

/// The call's arguments as a JSON object; an empty string means no arguments.
fn parse_arguments(call: &ToolCall) -> Result<Value, ToolError> {
    let text = call.function.arguments.trim();
    if text.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(ToolError::InvalidArguments {
            tool: call.function.name.clone(),
            message: format!(
                "arguments must be a JSON object, got {}",
                baton_core::message::describe_value(&other)
            ),
        }),
        Err(e) => Err(ToolError::InvalidArguments {
            tool: call.function.name.clone(),
            message: format!("arguments are not valid JSON ({e})"),
        }),
    }
}
