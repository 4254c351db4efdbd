//! Listing the models a server offers, with the context length where the server reports one.
//!
//! Each server family reports the window in its own place: OpenAI-compatible `/models`
//! entries (`context_length` on OpenRouter, `max_model_len` on vLLM), Ollama's `/api/show`
//! (`num_ctx` in the parameters when the model was configured with one, else the trained
//! length in `model_info`), LM Studio's `/api/v0/models` (`loaded_context_length`, else
//! `max_context_length`). Ollama's configured `num_ctx` wins over the trained length because it
//! is what the server actually uses; ignoring it is how auto-compaction never fires on a 16K
//! Ollama window.

use crate::errors::LlmError;
use crate::transport::Transport;
use serde::Serialize;
use serde_json::{Value, json};

/// One model a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    pub id: String,
    /// Context window in tokens, when the server reports it.
    pub context_length: Option<u64>,
    /// The field the context length was read from (`max_model_len`, `num_ctx`, …).
    pub context_source: Option<String>,
}

/// Which listing API a server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// `GET {base}/models` (OpenAI, OpenRouter, vLLM, llama.cpp).
    OpenAi,
    /// `GET {base}/v1/models` with `x-api-key`.
    Anthropic,
    /// `GET {root}/api/tags`, then `POST {root}/api/show` per model.
    Ollama,
    /// `GET {root}/api/v0/models`.
    LmStudio,
}

/// Fields of an OpenAI-compatible model entry that state a context window, in priority order.
const OPENAI_CONTEXT_FIELDS: [&str; 6] = [
    "context_length",
    "max_model_len",
    "context_window",
    "max_context_length",
    "max_input_tokens",
    "/top_provider/context_length",
];

pub(crate) async fn list(
    transport: &Transport,
    listing: Listing,
) -> Result<Vec<ModelInfo>, LlmError> {
    match listing {
        Listing::OpenAi => Ok(parse_openai_models(&transport.get_json("/models").await?)),
        Listing::Anthropic => Ok(parse_openai_models(
            &transport.get_json("/v1/models").await?,
        )),
        Listing::LmStudio => Ok(parse_lmstudio_models(
            &transport.get_json("/api/v0/models").await?,
        )),
        Listing::Ollama => {
            let names = parse_ollama_tags(&transport.get_json("/api/tags").await?);
            let mut out = Vec::with_capacity(names.len());
            for id in names {
                let shown = transport
                    .post_json("/api/show", &json!({ "model": id }))
                    .await;
                let (context_length, context_source) = match shown {
                    Ok(body) => parse_ollama_show(&body)
                        .map_or((None, None), |(n, s)| (Some(n), Some(s.to_string()))),
                    Err(e) => {
                        tracing::warn!(model = %id, error = %e, "ollama /api/show failed");
                        (None, None)
                    }
                };
                out.push(ModelInfo {
                    id,
                    context_length,
                    context_source,
                });
            }
            Ok(out)
        }
    }
}

/// `{"data":[{"id":…, "context_length"|"max_model_len"|…: N}]}`.
pub fn parse_openai_models(body: &Value) -> Vec<ModelInfo> {
    entries(body, "data")
        .filter_map(|entry| {
            let id = entry.get("id")?.as_str()?.to_string();
            let found = OPENAI_CONTEXT_FIELDS.iter().find_map(|field| {
                let value = if field.starts_with('/') {
                    entry.pointer(field)
                } else {
                    entry.get(*field)
                };
                positive(value).map(|n| (n, field.trim_start_matches('/').to_string()))
            });
            Some(ModelInfo {
                id,
                context_length: found.as_ref().map(|f| f.0),
                context_source: found.map(|f| f.1),
            })
        })
        .collect()
}

/// `{"data":[{"id":…, "loaded_context_length":N, "max_context_length":M}]}`.
pub fn parse_lmstudio_models(body: &Value) -> Vec<ModelInfo> {
    entries(body, "data")
        .filter_map(|entry| {
            let id = entry.get("id")?.as_str()?.to_string();
            let found = ["loaded_context_length", "max_context_length"]
                .iter()
                .find_map(|f| positive(entry.get(*f)).map(|n| (n, f.to_string())));
            Some(ModelInfo {
                id,
                context_length: found.as_ref().map(|f| f.0),
                context_source: found.map(|f| f.1),
            })
        })
        .collect()
}

/// Model names of Ollama's `{"models":[{"name":…}]}`.
pub fn parse_ollama_tags(body: &Value) -> Vec<String> {
    entries(body, "models")
        .filter_map(|m| {
            m.get("name")
                .or_else(|| m.get("model"))?
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// The window of an Ollama `/api/show` answer: `num_ctx` from `parameters` (a text block of
/// `name value` lines), else `<arch>.context_length` from `model_info`.
pub fn parse_ollama_show(body: &Value) -> Option<(u64, &'static str)> {
    let configured = body
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|params| {
            params.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
            })
        })
        .filter(|n| *n > 0);
    if let Some(n) = configured {
        return Some((n, "num_ctx"));
    }
    body.get("model_info")
        .and_then(Value::as_object)?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| positive(Some(v)))
        .map(|n| (n, "model_info.context_length"))
}

fn entries<'a>(body: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    body.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn positive(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64).filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_and_openrouter_fields() {
        let body = json!({"data":[
            {"id":"a","max_model_len":32768},
            {"id":"b","context_length":200000},
            {"id":"c","top_provider":{"context_length":65536}},
            {"id":"d"}
        ]});
        let m = parse_openai_models(&body);
        assert_eq!(m[0].context_length, Some(32768));
        assert_eq!(m[1].context_length, Some(200000));
        assert_eq!(m[2].context_length, Some(65536));
        assert_eq!(m[3].context_length, None);
    }

    #[test]
    fn ollama_num_ctx_beats_the_trained_length() {
        let body = json!({"parameters":"stop \"<|im_end|>\"\nnum_ctx 16384","model_info":{"qwen2.context_length":32768}});
        assert_eq!(parse_ollama_show(&body), Some((16384, "num_ctx")));
        let body = json!({"model_info":{"llama.context_length":131072}});
        assert_eq!(
            parse_ollama_show(&body),
            Some((131072, "model_info.context_length"))
        );
    }
}
