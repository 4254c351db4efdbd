//! OpenAI Chat Completions.

use super::{Answer, deltas, sse};
use crate::reply::ReplyKind;
use serde_json::{Value, json};

fn usage(answer: &Answer<'_>) -> Value {
    let u = answer.usage;
    json!({
        "prompt_tokens": u.prompt,
        "completion_tokens": u.completion,
        "total_tokens": u.prompt + u.completion,
        "prompt_tokens_details": {"cached_tokens": u.cached}
    })
}

fn id(answer: &Answer<'_>) -> String {
    format!("chatcmpl-{}", answer.number)
}

pub(super) fn json(answer: &Answer<'_>) -> Value {
    let (content, calls, finish) = match &answer.reply.kind {
        ReplyKind::Text(t) | ReplyKind::BrokenStream(t) => (json!(t), None, "stop"),
        ReplyKind::ToolCalls { text, calls } => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"id": answer.call_id(i), "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                })
                .collect();
            (json!(text), Some(calls), "tool_calls")
        }
        ReplyKind::Error { .. } => (Value::Null, None, "stop"),
    };
    let mut message = json!({"role": "assistant", "content": content});
    if let Some(calls) = calls {
        message["tool_calls"] = Value::Array(calls);
    }
    if let Some(r) = &answer.reply.reasoning {
        message["reasoning_content"] = json!(r);
    }
    json!({
        "id": id(answer), "object": "chat.completion", "created": 1_700_000_000u64,
        "model": answer.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage(answer)
    })
}

fn chunk(answer: &Answer<'_>, delta: Value, finish: Option<&str>) -> String {
    sse(
        None,
        &json!({"id": id(answer), "object": "chat.completion.chunk", "created": 1_700_000_000u64,
            "model": answer.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

pub(super) fn events(answer: &Answer<'_>) -> Vec<String> {
    let mut out = vec![chunk(
        answer,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    if let Some(r) = &answer.reply.reasoning {
        out.push(chunk(answer, json!({"reasoning_content": r}), None));
    }
    let finish = match &answer.reply.kind {
        ReplyKind::Text(t) => {
            for d in deltas(t) {
                out.push(chunk(answer, json!({"content": d}), None));
            }
            "stop"
        }
        ReplyKind::BrokenStream(t) => {
            for d in deltas(t) {
                out.push(chunk(answer, json!({"content": d}), None));
            }
            return out;
        }
        ReplyKind::ToolCalls { text, calls } => {
            if let Some(t) = text {
                out.push(chunk(answer, json!({"content": t}), None));
            }
            for (i, c) in calls.iter().enumerate() {
                out.push(chunk(
                    answer,
                    json!({"tool_calls": [{"index": i, "id": answer.call_id(i), "type": "function",
                        "function": {"name": c.name, "arguments": ""}}]}),
                    None,
                ));
                let args = c.arguments.to_string();
                let mid = args
                    .char_indices()
                    .nth(args.chars().count() / 2)
                    .map_or(0, |(b, _)| b);
                for piece in [&args[..mid], &args[mid..]] {
                    out.push(chunk(
                        answer,
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
            }
            "tool_calls"
        }
        ReplyKind::Error { .. } => "stop",
    };
    out.push(chunk(answer, json!({}), Some(finish)));
    out.push(sse(
        None,
        &json!({"id": id(answer), "object": "chat.completion.chunk", "created": 1_700_000_000u64,
            "model": answer.model, "choices": [], "usage": usage(answer)}),
    ));
    out.push("data: [DONE]\n\n".to_string());
    out
}
