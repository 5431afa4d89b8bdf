//! A scripted model server on 127.0.0.1 for provider and agent tests.
//!
//! [`MockModel::start`] serves one [`WireFormat`] from its own thread and
//! tokio runtime, so sync tests (and `warden` subprocesses pointed at
//! [`MockModel::base_url`]) can use it as well as async ones. Each request
//! takes the next [`Reply`] from the queue: a model turn ([`Script`],
//! rendered as that format's SSE events, split into small chunks), raw SSE
//! events, or an HTTP error. Every request is recorded for assertions.
//! Bounded: it serves at most [`MAX_REQUESTS`] requests and stops, dropping
//! open connections, when the [`MockModel`] is dropped.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;
use warden::provider::{FinishReason, WireFormat};

mod script;

pub use script::{Script, encrypted, redacted, signature};

/// Requests served before the mock refuses every further one.
pub const MAX_REQUESTS: usize = 1000;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::String` with the raw text if not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    kind: ReplyKind,
    /// Wait between two SSE events.
    delay: Duration,
    /// Close the connection abruptly after this many events.
    cut_after: Option<usize>,
    /// Go silent after this many events, keeping the connection open,
    /// with an SSE comment every so often if given.
    stall_after: Option<(usize, Option<Duration>)>,
}

#[derive(Debug, Clone)]
enum ReplyKind {
    Turn(Script),
    /// The turn as one JSON completion, not streamed.
    Completion(Script),
    Events(Vec<String>),
    Status {
        status: u16,
        body: String,
        retry_after: Option<String>,
    },
    ContextOverflow,
}

impl Reply {
    fn new(kind: ReplyKind) -> Reply {
        Reply {
            kind,
            delay: Duration::ZERO,
            cut_after: None,
            stall_after: None,
        }
    }

    /// A model turn, streamed in the server's wire format.
    pub fn turn(script: Script) -> Reply {
        Reply::new(ReplyKind::Turn(script))
    }

    /// A model turn answered as one JSON completion (`Content-Type:
    /// application/json`), as a server that does not stream answers.
    pub fn completion(script: Script) -> Reply {
        Reply::new(ReplyKind::Completion(script))
    }

    /// Raw SSE events, each a complete event text (see [`sse_event`]);
    /// nothing is added, so leaving out the terminal event cuts the stream
    /// short with a clean end.
    pub fn events<S: Into<String>>(events: impl IntoIterator<Item = S>) -> Reply {
        Reply::new(ReplyKind::Events(
            events.into_iter().map(Into::into).collect(),
        ))
    }

    /// An HTTP error with `body` as JSON.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply::new(ReplyKind::Status {
            status,
            body: body.into(),
            retry_after: None,
        })
    }

    /// HTTP 400 with the server format's "context window exceeded" error.
    pub fn context_overflow() -> Reply {
        Reply::new(ReplyKind::ContextOverflow)
    }

    /// Add a `Retry-After` header (to a [`Reply::status`]).
    pub fn retry_after(mut self, value: &str) -> Reply {
        if let ReplyKind::Status { retry_after, .. } = &mut self.kind {
            *retry_after = Some(value.to_string());
        }
        self
    }

    /// Wait `delay` between two events of the stream.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Send `events` events, then close the connection mid-stream.
    pub fn cut_after(mut self, events: usize) -> Reply {
        self.cut_after = Some(events);
        self
    }

    /// Send `events` events, then nothing, holding the connection open
    /// until the server stops.
    pub fn stall_after(mut self, events: usize) -> Reply {
        self.stall_after = Some((events, None));
        self
    }

    /// Send `events` events, then only an SSE comment (`: keep-alive`)
    /// every `every`, never another event.
    pub fn keep_alive_after(mut self, events: usize, every: Duration) -> Reply {
        self.stall_after = Some((events, Some(every)));
        self
    }
}

impl From<Script> for Reply {
    fn from(script: Script) -> Reply {
        Reply::turn(script)
    }
}

/// One SSE event: `event: NAME` (if any) and `data: DATA`.
pub fn sse_event(name: Option<&str>, data: &str) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

struct Shared {
    format: WireFormat,
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The running server; stops when dropped.
pub struct MockModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockModel {
    /// Serve `format` on 127.0.0.1 at a free port.
    pub fn start(format: WireFormat) -> MockModel {
        let shared = Arc::new(Shared {
            format,
            replies: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mock-model".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    addr_tx.send(listener.local_addr().unwrap()).unwrap();
                    tokio::select! {
                        _ = axum::serve(listener, app).into_future() => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime cancels every open connection.
            })
            .unwrap();
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the mock model server did not start");
        MockModel {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The base URL a provider of this format is configured with:
    /// `http://127.0.0.1:PORT/v1` for OpenAI formats, `http://127.0.0.1:PORT`
    /// for Anthropic (whose paths start with `/v1`).
    pub fn base_url(&self) -> String {
        match self.shared.format {
            WireFormat::OpenAiChat | WireFormat::OpenAiResponses => {
                format!("http://{}/v1", self.addr)
            }
            WireFormat::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn format(&self) -> WireFormat {
        self.shared.format
    }

    /// Queue the reply to the next unanswered request.
    pub fn push(&self, reply: impl Into<Reply>) -> &Self {
        self.shared.replies.lock().unwrap().push_back(reply.into());
        self
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }

    /// Replies queued and not yet served.
    pub fn remaining(&self) -> usize {
        self.shared.replies.lock().unwrap().len()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let text = String::from_utf8_lossy(&body).into_owned();
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    };
    let count = {
        let mut requests = shared.requests.lock().unwrap();
        requests.push(recorded);
        requests.len()
    };
    let reply = shared.replies.lock().unwrap().pop_front();
    let reply = match reply {
        Some(reply) if count <= MAX_REQUESTS => reply,
        Some(_) => Reply::status(
            400,
            r#"{"error":{"message":"mock model: too many requests"}}"#,
        ),
        None => Reply::status(
            400,
            r#"{"error":{"message":"mock model: no scripted reply left"}}"#,
        ),
    };
    respond(shared.format, reply)
}

fn respond(format: WireFormat, reply: Reply) -> Response {
    let events = match reply.kind {
        ReplyKind::Turn(script) => script.render(format),
        ReplyKind::Completion(script) => {
            return json_response(200, script.completion(format).to_string(), None);
        }
        ReplyKind::Events(events) => events,
        ReplyKind::Status {
            status,
            body,
            retry_after,
        } => return json_response(status, body, retry_after),
        ReplyKind::ContextOverflow => {
            let body = match format {
                WireFormat::OpenAiChat | WireFormat::OpenAiResponses => {
                    r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#
                }
                WireFormat::Anthropic => {
                    r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#
                }
            };
            return json_response(400, body.to_string(), None);
        }
    };
    let (delay, cut_after, stall_after) = (reply.delay, reply.cut_after, reply.stall_after);
    let stream = futures_util::stream::unfold(0usize, move |n| {
        let next = events.get(n).cloned();
        async move {
            if let Some((at, keep_alive)) = stall_after
                && n >= at
            {
                match keep_alive {
                    Some(every) => {
                        tokio::time::sleep(every).await;
                        return Some((Ok(Bytes::from_static(b": keep-alive\n\n")), n + 1));
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            if cut_after == Some(n) {
                // Let the events before the cut reach the client first.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let cut = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut");
                return Some((Err(cut), usize::MAX));
            }
            let event = next?;
            if n > 0 && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok(Bytes::from(event)), n + 1))
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn json_response(status: u16, body: String, retry_after: Option<String>) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json");
    if let Some(after) = retry_after {
        response = response.header("retry-after", after);
    }
    response.body(Body::from(body)).unwrap()
}

/// The finish reason a script ends with when it names none.
pub(crate) fn default_finish(has_calls: bool) -> FinishReason {
    if has_calls {
        FinishReason::ToolCalls
    } else {
        FinishReason::Stop
    }
}
