//! The stdio transport: one JSON-RPC message per line on stdin and stdout,
//! read and written by two threads of their own.
//!
//! Invariants: a line longer than the limit is never buffered whole, and
//! it, a line that is not JSON, a batch, a message of the wrong shape and
//! a request before `initialize` each get a JSON-RPC error (with the
//! request's id when it has one) while the server keeps reading; stdout
//! carries whole lines only; the end of stdin cancels every running call.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::handler::McpSession;
use super::server::McpServer;
use super::{McpError, watch};
use crate::base::CancelToken;

/// How long calls may take to end once the client is gone.
const DRAIN: Duration = Duration::from_secs(10);

/// Serve one client on stdin/stdout until it closes stdin or the process
/// is told to stop (SIGINT, SIGTERM).
pub async fn serve_stdio(server: Arc<McpServer>, max_message_bytes: usize) -> Result<(), McpError> {
    let _watch = watch::spawn(server.clone());
    let transport = StdioTransport::start(server.stopping.clone(), max_message_bytes);
    let running = tokio::select! {
        r = McpSession::new(server.clone()).serve(transport) => r,
        _ = stop_signal() => return finish(&server).await,
    };
    match running {
        Ok(running) => {
            tokio::select! {
                _ = running.waiting() => {}
                _ = stop_signal() => {}
            }
        }
        Err(ServerInitializeError::ConnectionClosed(_)) => {}
        Err(e) => {
            let _ = finish(&server).await;
            return Err(McpError::Handshake(e.to_string()));
        }
    }
    finish(&server).await
}

async fn finish(server: &McpServer) -> Result<(), McpError> {
    if let Err(e) = server.finish(DRAIN).await {
        eprintln!("warden mcp: warning: {e}");
    }
    Ok(())
}

/// Resolves on SIGINT or SIGTERM (never, if they cannot be watched).
pub(super) async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut int), Ok(mut term)) => {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

/// Lines in and out of the process, for `rmcp`.
struct StdioTransport {
    inbound: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    outbound: std_mpsc::Sender<Vec<u8>>,
}

impl StdioTransport {
    fn start(stopping: CancelToken, max_message_bytes: usize) -> StdioTransport {
        let (out_tx, out_rx) = std_mpsc::channel::<Vec<u8>>();
        let (in_tx, inbound) = mpsc::unbounded_channel();
        std::thread::spawn(move || write_lines(out_rx));
        let errors = out_tx.clone();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            read_lines(stdin.lock(), max_message_bytes, &in_tx, &errors);
            // The client is gone: stop what it started.
            stopping.cancel();
        });
        StdioTransport {
            inbound,
            outbound: out_tx,
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.outbound
                    .send(line)
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.inbound.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inbound.close();
        Ok(())
    }
}

/// Write each line to stdout, flushing whenever nothing more is queued;
/// ends when every sender is gone or stdout is closed.
fn write_lines(lines: std_mpsc::Receiver<Vec<u8>>) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while let Ok(line) = lines.recv() {
        if out.write_all(&line).is_err() {
            return;
        }
        while let Ok(more) = lines.try_recv() {
            if out.write_all(&more).is_err() {
                return;
            }
        }
        if out.flush().is_err() {
            return;
        }
    }
}

/// Read messages from `input` until it ends, passing good ones to
/// `messages` and answering bad ones on `errors`.
fn read_lines(
    mut input: impl BufRead,
    max: usize,
    messages: &mpsc::UnboundedSender<ClientJsonRpcMessage>,
    errors: &std_mpsc::Sender<Vec<u8>>,
) {
    let mut line = Vec::new();
    let mut initialized = false;
    loop {
        match read_line(&mut input, &mut line, max) {
            Line::End => return,
            Line::Oversized => {
                let msg =
                    format!("message too large: the limit is {max} bytes (--max-message-bytes)");
                let _ = errors.send(error_line(&Value::Null, INVALID_REQUEST, &msg));
            }
            Line::Complete => match classify(&line, initialized) {
                Inbound::Blank | Inbound::Ignored => {}
                Inbound::Message(m) => {
                    initialized |= is_initialize(&m);
                    if messages.send(*m).is_err() {
                        return;
                    }
                }
                Inbound::Error { id, code, message } => {
                    let _ = errors.send(error_line(&id, code, &message));
                }
            },
        }
    }
}

enum Line {
    /// `line` holds one whole line, without its end.
    Complete,
    /// A line past the limit was skipped.
    Oversized,
    End,
}

/// Read one line into `line`, keeping at most `max` bytes of it.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> Line {
    line.clear();
    let mut oversized = false;
    loop {
        let (used, done) = match input.fill_buf() {
            Ok([]) if line.is_empty() && !oversized => return Line::End,
            Ok([]) => (0, true),
            Ok(buf) => {
                let end = buf.iter().position(|&b| b == b'\n');
                let take = end.map_or(buf.len(), |i| i + 1);
                if !oversized && line.len() + take > max + 1 {
                    oversized = true;
                    line.clear();
                }
                if !oversized {
                    line.extend_from_slice(&buf[..take]);
                }
                (take, end.is_some())
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => (0, false),
            Err(_) => return Line::End,
        };
        input.consume(used);
        if done {
            break;
        }
    }
    if oversized {
        return Line::Oversized;
    }
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    Line::Complete
}

/// The requests of the protocol revisions this server offers.
const STANDARD_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;
/// As in LSP: a request before the handshake.
const NOT_INITIALIZED: i64 = -32002;

enum Inbound {
    Blank,
    /// A notification or response that cannot be answered, dropped.
    Ignored,
    Message(Box<ClientJsonRpcMessage>),
    Error {
        id: Value,
        code: i64,
        message: String,
    },
}

fn classify(line: &[u8], initialized: bool) -> Inbound {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Blank;
    }
    let message = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => m,
        Err(e) => return misfit(line, &e),
    };
    // A standard method whose params do not parse arrives as a custom
    // request: it is malformed, not unknown.
    if let JsonRpcMessage::Request(r) = &message
        && let ClientRequest::CustomRequest(c) = &r.request
        && STANDARD_REQUESTS.contains(&c.method.as_str())
    {
        let why = match c.method.as_str() {
            "tools/call" => serde_json::from_value::<CallToolRequestParams>(
                c.params.clone().unwrap_or(Value::Null),
            )
            .err()
            .map(|e| format!(": {e}")),
            _ => None,
        };
        return Inbound::Error {
            id: serde_json::to_value(&r.id).unwrap_or(Value::Null),
            code: INVALID_PARAMS,
            message: format!("invalid params for {}{}", c.method, why.unwrap_or_default()),
        };
    }
    if initialized {
        return Inbound::Message(Box::new(message));
    }
    match &message {
        JsonRpcMessage::Request(r) => match r.request {
            ClientRequest::InitializeRequest(_) | ClientRequest::PingRequest(_) => {
                Inbound::Message(Box::new(message))
            }
            _ => Inbound::Error {
                id: serde_json::to_value(&r.id).unwrap_or(Value::Null),
                code: NOT_INITIALIZED,
                message: "the server is not initialized: send `initialize` first".into(),
            },
        },
        JsonRpcMessage::Notification(_)
        | JsonRpcMessage::Response(_)
        | JsonRpcMessage::Error(_) => Inbound::Ignored,
    }
}

/// The error for a line that is not a message we can take.
fn misfit(line: &[u8], e: &serde_json::Error) -> Inbound {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) => {
            return Inbound::Error {
                id: Value::Null,
                code: PARSE_ERROR,
                message: format!("parse error: the message is not JSON ({e})"),
            };
        }
    };
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "batches are not supported: send one message per line"
        } else {
            "a message must be a JSON object"
        };
        return Inbound::Error {
            id: Value::Null,
            code: INVALID_REQUEST,
            message: format!("invalid request: {what}"),
        };
    };
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    let method = object.get("method").and_then(Value::as_str);
    match (method, &id) {
        // A notification or response of the wrong shape cannot be answered.
        (_, Value::Null) if object.get("jsonrpc") == Some(&json!("2.0")) => Inbound::Ignored,
        (Some(method), _) if object.get("jsonrpc") == Some(&json!("2.0")) => Inbound::Error {
            id,
            code: INVALID_PARAMS,
            message: format!("invalid params for {method}: {e}"),
        },
        _ => Inbound::Error {
            id,
            code: INVALID_REQUEST,
            message: format!("invalid request: not a JSON-RPC 2.0 message ({e})"),
        },
    }
}

fn is_initialize(m: &ClientJsonRpcMessage) -> bool {
    matches!(m, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut reader = std::io::BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, max) {
                Line::End => return out,
                Line::Oversized => out.push(Err("oversized")),
                Line::Complete => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
            }
        }
    }

    #[test]
    fn lines_past_the_limit_are_skipped_whole_and_reading_goes_on() {
        let input = b"short\r\n0123456789abcdef\nok\nlast";
        assert_eq!(
            read_all(input, 8),
            vec![
                Ok("short".into()),
                Err("oversized"),
                Ok("ok".into()),
                Ok("last".into())
            ]
        );
        assert_eq!(read_all(b"12345678\n", 8), vec![Ok("12345678".into())]);
    }

    fn error_of(line: &str, initialized: bool) -> (Value, i64) {
        match classify(line.as_bytes(), initialized) {
            Inbound::Error { id, code, .. } => (id, code),
            Inbound::Blank | Inbound::Ignored | Inbound::Message(_) => panic!("{line}: no error"),
        }
    }

    #[test]
    fn bad_messages_get_the_json_rpc_error_for_what_is_wrong() {
        assert_eq!(error_of("{not json", true), (Value::Null, PARSE_ERROR));
        assert_eq!(error_of("[1,2]", true), (Value::Null, INVALID_REQUEST));
        assert_eq!(error_of("42", true), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            error_of(r#"{"id":3,"method":"ping"}"#, true),
            (json!(3), INVALID_REQUEST)
        );
        let bad_params = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":7}}"#;
        assert_eq!(error_of(bad_params, true), (json!("a"), INVALID_PARAMS));
        let early = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
        assert_eq!(error_of(early, false), (json!(9), NOT_INITIALIZED));
        assert!(matches!(
            classify(early.as_bytes(), true),
            Inbound::Message(_)
        ));
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(classify(note.as_bytes(), false), Inbound::Ignored));
    }
}
