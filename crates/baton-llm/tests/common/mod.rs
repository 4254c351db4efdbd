//! Loopback servers for the client tests: wiremock for plain JSON, a small axum server for
//! SSE streams (chunked at arbitrary byte boundaries, optionally cut off) and slow answers.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use baton_llm::{ApiKey, HttpSettings, Provider, ProviderConfig, ProviderKind, RetryPolicy};
use futures_util::StreamExt;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fast, bounded settings so failing tests fail quickly.
pub fn settings(max_attempts: u32) -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
            max_total: Duration::from_secs(30),
        },
    }
}

pub fn client(
    kind: ProviderKind,
    base_url: &str,
    key: Option<&str>,
    max_attempts: u32,
) -> Arc<dyn Provider> {
    ProviderConfig::new(kind)
        .base_url(base_url)
        .api_key(key.and_then(ApiKey::new))
        .http(settings(max_attempts))
        .build()
        .unwrap()
}

/// What the test server received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone)]
pub enum Behaviour {
    /// Serve `body` as an SSE stream in pieces of `piece` bytes; `cut` drops the connection
    /// after `cut` bytes instead of finishing.
    Sse {
        body: String,
        piece: usize,
        cut: Option<usize>,
    },
    /// Answer only after `delay`.
    Slow { delay: Duration },
}

struct Shared {
    behaviour: Behaviour,
    captured: Mutex<Vec<Captured>>,
}

pub struct TestServer {
    pub url: String,
    shared: Arc<Shared>,
}

impl TestServer {
    pub async fn start(behaviour: Behaviour) -> TestServer {
        let shared = Arc::new(Shared {
            behaviour,
            captured: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer {
            url: format!("http://{addr}"),
            shared,
        }
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.shared.captured.lock().unwrap().clone()
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.captured.lock().unwrap().push(Captured {
        path: uri.path().to_string(),
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    match shared.behaviour.clone() {
        Behaviour::Slow { delay } => {
            tokio::time::sleep(delay).await;
            Response::new(Body::from("{}"))
        }
        Behaviour::Sse { body, piece, cut } => {
            let bytes = body.into_bytes();
            let end = cut.unwrap_or(bytes.len()).min(bytes.len());
            let pieces: Vec<Vec<u8>> = bytes[..end]
                .chunks(piece.max(1))
                .map(<[u8]>::to_vec)
                .collect();
            let stream = futures_util::stream::iter(pieces)
                .then(|p| async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    Ok::<_, std::io::Error>(Bytes::from(p))
                })
                .chain(futures_util::stream::iter(cut).then(|_| async {
                    // Let the bytes before the cut reach the client before the connection drops.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Err(std::io::Error::other("connection dropped by the test"))
                }));
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
    }
}

/// A URL where nothing listens.
pub async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
