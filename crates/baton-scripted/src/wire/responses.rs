//! OpenAI Responses.

use super::{Answer, deltas, sse};
use crate::reply::ReplyKind;
use serde_json::{Value, json};

fn usage(answer: &Answer<'_>) -> Value {
    let u = answer.usage;
    json!({
        "input_tokens": u.prompt,
        "input_tokens_details": {"cached_tokens": u.cached},
        "output_tokens": u.completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.prompt + u.completion
    })
}

fn output(answer: &Answer<'_>) -> Vec<Value> {
    let message = |text: &str| {
        json!({"id": format!("msg_{}", answer.number), "type": "message", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    match &answer.reply.kind {
        ReplyKind::Text(t) | ReplyKind::BrokenStream(t) => vec![message(t)],
        ReplyKind::ToolCalls { text, calls } => {
            let mut out: Vec<Value> = text.as_deref().map(message).into_iter().collect();
            for (i, c) in calls.iter().enumerate() {
                out.push(
                    json!({"id": format!("fc_{}_{}", answer.number, i), "type": "function_call",
                    "status": "completed", "arguments": c.arguments.to_string(),
                    "call_id": answer.call_id(i), "name": c.name}),
                );
            }
            out
        }
        ReplyKind::Error { .. } => Vec::new(),
    }
}

fn response(answer: &Answer<'_>, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({"id": format!("resp_{}", answer.number), "object": "response",
        "created_at": 1_700_000_000u64, "status": status, "model": answer.model,
        "output": output, "usage": usage})
}

pub(super) fn json(answer: &Answer<'_>) -> Value {
    response(answer, "completed", output(answer), usage(answer))
}

pub(super) fn events(answer: &Answer<'_>) -> Vec<String> {
    let mut seq = 0u64;
    let mut event = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(seq);
        seq += 1;
        sse(Some(name), &data)
    };
    let mut out = vec![event(
        "response.created",
        json!({"response": response(answer, "in_progress", Vec::new(), Value::Null)}),
    )];
    let items = output(answer);
    for (index, item) in items.iter().enumerate() {
        let kind = item["type"].as_str().unwrap_or_default();
        let mut added = item.clone();
        if kind == "message" {
            added["content"] = json!([]);
            added["status"] = json!("in_progress");
            out.push(event(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            ));
            let text = item["content"][0]["text"].as_str().unwrap_or_default();
            for d in deltas(text) {
                out.push(event(
                    "response.output_text.delta",
                    json!({"item_id": item["id"], "output_index": index, "content_index": 0, "delta": d}),
                ));
            }
        } else {
            added["arguments"] = json!("");
            added["status"] = json!("in_progress");
            out.push(event(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            ));
            out.push(event(
                "response.function_call_arguments.delta",
                json!({"item_id": item["id"], "output_index": index, "delta": item["arguments"]}),
            ));
        }
        if matches!(answer.reply.kind, ReplyKind::BrokenStream(_)) {
            return out;
        }
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        ));
    }
    out.push(event(
        "response.completed",
        json!({"response": response(answer, "completed", items, usage(answer))}),
    ));
    out
}
