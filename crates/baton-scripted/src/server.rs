//! The HTTP side: one axum server on 127.0.0.1, a script consumed one reply per request, and
//! the record of every request.

use crate::reply::{Reply, ReplyKind};
use crate::usage::UsageMeter;
use crate::wire::{self, Answer};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures_util::stream;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

/// The wire family a request used, told by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    ChatCompletions,
    Messages,
    Responses,
}

impl Api {
    fn from_path(path: &str) -> Option<Api> {
        if path.ends_with("/chat/completions") {
            Some(Api::ChatCompletions)
        } else if path.ends_with("/messages") {
            Some(Api::Messages)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else {
            None
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    pub api: Api,
    pub path: String,
    /// Lower-case names; `authorization` and `x-api-key` values are `[redacted]`.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl Captured {
    /// Whether the request asked for a stream.
    pub fn streamed(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// The text of the last user message (any API), for responders that branch on it.
    pub fn last_user_text(&self) -> String {
        wire::last_user_text(self.api, &self.body)
    }

    /// The role of the request's last message (`tool` means the model is answering tool
    /// results), as the API names it; Responses items without a role report their `type`.
    pub fn last_role(&self) -> String {
        let list = match self.api {
            Api::Responses => self.body.get("input"),
            _ => self.body.get("messages"),
        };
        let Some(last) = list.and_then(Value::as_array).and_then(|m| m.last()) else {
            return String::new();
        };
        last.get("role")
            .or_else(|| last.get("type"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    /// The whole request as text, for responders that look for a marker anywhere in it.
    pub fn text(&self) -> String {
        self.body.to_string()
    }
}

type Responder = Box<dyn Fn(&Captured) -> Reply + Send + Sync>;

/// Where replies come from.
pub enum Script {
    /// One reply per request, in order.
    Queue(VecDeque<Reply>),
    /// A function of the request (soak tests, replies that depend on what was sent).
    Responder(Responder),
}

impl Script {
    pub fn replies(replies: impl IntoIterator<Item = Reply>) -> Script {
        Script::Queue(replies.into_iter().collect())
    }

    pub fn responder(f: impl Fn(&Captured) -> Reply + Send + Sync + 'static) -> Script {
        Script::Responder(Box::new(f))
    }
}

struct Inner {
    script: Script,
    /// What `/models` lists: id and context window.
    models: Vec<(String, u64)>,
    requests: Vec<Captured>,
    meter: UsageMeter,
    answered: usize,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Inner> {
    match shared.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// A running server. Stops when dropped.
pub struct ScriptedServer {
    url: String,
    shared: Shared,
    _runtime: Option<tokio::runtime::Runtime>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ScriptedServer {
    /// Starts on the current tokio runtime.
    pub async fn start(script: Script) -> std::io::Result<ScriptedServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        Ok(Self::serve(listener, script, None))
    }

    /// Starts on a runtime of its own (for synchronous tests that run the `baton` binary).
    pub fn start_background(script: Script) -> std::io::Result<ScriptedServer> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let _guard = runtime.enter();
        let mut server = Self::serve(listener, script, None);
        drop(_guard);
        server._runtime = Some(runtime);
        Ok(server)
    }

    fn serve(
        listener: tokio::net::TcpListener,
        script: Script,
        runtime: Option<tokio::runtime::Runtime>,
    ) -> ScriptedServer {
        let url = listener
            .local_addr()
            .map(|a| format!("http://{a}"))
            .unwrap_or_default();
        let shared: Shared = Arc::new(Mutex::new(Inner {
            script,
            models: vec![("scripted-model".into(), 200_000)],
            requests: Vec::new(),
            meter: UsageMeter::default(),
            answered: 0,
        }));
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        ScriptedServer {
            url,
            shared,
            _runtime: runtime,
            shutdown: Some(tx),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The base URL Baton's client of `api` expects (`…/v1` for the OpenAI families, the bare
    /// address for Anthropic, whose client adds `/v1/messages`).
    pub fn base_url(&self, api: Api) -> String {
        match api {
            Api::Messages => self.url.clone(),
            Api::ChatCompletions | Api::Responses => format!("{}/v1", self.url),
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Captured> {
        lock(&self.shared).requests.clone()
    }

    /// Requests answered from the script so far.
    pub fn answered(&self) -> usize {
        lock(&self.shared).answered
    }

    /// Appends replies to a queue script.
    pub fn push(&self, reply: Reply) {
        if let Script::Queue(queue) = &mut lock(&self.shared).script {
            queue.push_back(reply);
        }
    }

    /// Replies left in a queue script.
    pub fn remaining(&self) -> usize {
        match &lock(&self.shared).script {
            Script::Queue(queue) => queue.len(),
            Script::Responder(_) => usize::MAX,
        }
    }

    /// Sets what `/models` lists (default: `scripted-model` with a 200,000-token window), for
    /// hosts that discover windows or switch models.
    pub fn set_models(&self, models: &[(&str, u64)]) {
        lock(&self.shared).models = models.iter().map(|(id, n)| (id.to_string(), *n)).collect();
    }

    /// Simulate a prompt cache: a request's longest prefix shared with the previous request
    /// is reported as cached (Anthropic: only up to its last `cache_control` marker).
    pub fn simulate_prompt_cache(&self, on: bool) {
        lock(&self.shared).meter.cache = on;
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn handle(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    if method == Method::GET && path.ends_with("/models") {
        let data: Vec<Value> = lock(&shared)
            .models
            .iter()
            .map(|(id, n)| json!({"id": id, "object": "model", "context_length": n}))
            .collect();
        return json_response(
            StatusCode::OK,
            json!({"object": "list", "data": data}).to_string(),
            None,
        );
    }
    let Some(api) = Api::from_path(&path) else {
        return json_response(
            StatusCode::NOT_FOUND,
            json!({"error": {"message": format!("no route {method} {path}")}}).to_string(),
            None,
        );
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": {"message": format!("body is not JSON: {e}")}}).to_string(),
                None,
            );
        }
    };
    let captured = Captured {
        api,
        path,
        headers: redacted(&headers),
        body,
    };
    let (reply, number, usage) = {
        let mut inner = lock(&shared);
        inner.requests.push(captured.clone());
        let number = inner.requests.len();
        let reply = match &mut inner.script {
            Script::Queue(queue) => queue.pop_front(),
            Script::Responder(f) => Some(f(&captured)),
        };
        let Some(reply) = reply else {
            return json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": {"message": format!("script exhausted after {} requests", number - 1), "type": "server_error"}})
                    .to_string(),
                None,
            );
        };
        inner.answered += 1;
        let usage = reply
            .usage
            .unwrap_or_else(|| inner.meter.measure(api, &captured.body, &reply));
        (reply, number, usage)
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if let ReplyKind::Error {
        status,
        body,
        retry_after,
    } = &reply.kind
    {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return json_response(status, body.clone(), *retry_after);
    }
    let model = captured
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted-model")
        .to_string();
    let answer = Answer {
        api,
        number,
        model,
        reply: &reply,
        usage,
    };
    if captured.streamed() {
        sse_response(wire::events(&answer), reply.stream_interval)
    } else {
        json_response(StatusCode::OK, wire::json(&answer).to_string(), None)
    }
}

fn redacted(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if matches!(name.as_str(), "authorization" | "x-api-key" | "api-key") {
                "[redacted]".to_string()
            } else {
                value.to_str().unwrap_or("[binary]").to_string()
            };
            (name, value)
        })
        .collect()
}

fn json_response(status: StatusCode, body: String, retry_after: Option<u64>) -> Response {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    if let Some(seconds) = retry_after {
        builder = builder.header("retry-after", seconds.to_string());
    }
    builder
        .body(Body::from(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn sse_response(events: Vec<String>, interval: std::time::Duration) -> Response {
    let chunks = stream::unfold(events.into_iter(), move |mut rest| async move {
        let next = rest.next()?;
        if !interval.is_zero() {
            tokio::time::sleep(interval).await;
        }
        Some((Ok::<_, std::io::Error>(next), rest))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(chunks))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
