//! Anthropic Messages.

use super::{Answer, deltas, sse};
use crate::reply::ReplyKind;
use serde_json::{Value, json};

/// Anthropic counts uncached input apart from both cache buckets.
fn usage(answer: &Answer<'_>) -> Value {
    let u = answer.usage;
    json!({
        "input_tokens": u.prompt.saturating_sub(u.cached + u.cache_write),
        "cache_read_input_tokens": u.cached,
        "cache_creation_input_tokens": u.cache_write,
        "output_tokens": u.completion
    })
}

fn blocks(answer: &Answer<'_>) -> (Vec<Value>, &'static str) {
    let mut out = Vec::new();
    if let Some(r) = &answer.reply.reasoning {
        out.push(json!({"type": "thinking", "thinking": r, "signature": "c2NyaXB0ZWQ="}));
    }
    let stop = match &answer.reply.kind {
        ReplyKind::Text(t) | ReplyKind::BrokenStream(t) => {
            out.push(json!({"type": "text", "text": t}));
            "end_turn"
        }
        ReplyKind::ToolCalls { text, calls } => {
            if let Some(t) = text {
                out.push(json!({"type": "text", "text": t}));
            }
            for (i, c) in calls.iter().enumerate() {
                out.push(json!({"type": "tool_use", "id": answer.call_id(i), "name": c.name, "input": c.arguments}));
            }
            "tool_use"
        }
        ReplyKind::Error { .. } => "end_turn",
    };
    (out, stop)
}

pub(super) fn json(answer: &Answer<'_>) -> Value {
    let (content, stop) = blocks(answer);
    json!({
        "id": format!("msg_{}", answer.number), "type": "message", "role": "assistant",
        "model": answer.model, "content": content, "stop_reason": stop,
        "stop_sequence": null, "usage": usage(answer)
    })
}

pub(super) fn events(answer: &Answer<'_>) -> Vec<String> {
    let (content, stop) = blocks(answer);
    let mut start_usage = usage(answer);
    start_usage["output_tokens"] = json!(1);
    let mut out = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": format!("msg_{}", answer.number),
            "type": "message", "role": "assistant", "model": answer.model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    )];
    let broken = matches!(answer.reply.kind, ReplyKind::BrokenStream(_));
    for (index, block) in content.iter().enumerate() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("text");
        let (start, pieces): (Value, Vec<Value>) = match kind {
            "thinking" => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            "tool_use" => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                vec![
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                ],
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                deltas(block["text"].as_str().unwrap_or_default())
                    .into_iter()
                    .map(|d| json!({"type": "text_delta", "text": d}))
                    .collect(),
            ),
        };
        out.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in pieces {
            out.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        if broken {
            return out;
        }
        out.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    out.push(sse(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": answer.usage.completion}}),
    ));
    out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    out
}
