//! The stdio transport: one JSON-RPC message per line on stdin and stdout,
//! read and written on the runtime's own tasks when they are pipes
//! (`stdio_fd`), by two threads of their own otherwise (a terminal, a file).
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
use super::stdio_fd::{PipeIn, PipeOut};
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
    input: Input,
    output: Output,
    /// Cancelled at the end of stdin.
    stopping: CancelToken,
}

enum Input {
    /// Read by the task asking for the next message.
    Pipe {
        pipe: PipeIn,
        line: LineBuf,
        initialized: bool,
    },
    /// Read by a thread of its own.
    Thread(mpsc::UnboundedReceiver<Read>),
}

#[derive(Clone)]
enum Output {
    /// Written by the task sending the line.
    Pipe(Arc<PipeOut>),
    /// Written by a thread of its own.
    Thread(std_mpsc::Sender<Vec<u8>>),
}

impl Output {
    fn start() -> Output {
        if let Some(pipe) = PipeOut::stdout() {
            return Output::Pipe(Arc::new(pipe));
        }
        let (tx, rx) = std_mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || write_lines(rx));
        Output::Thread(tx)
    }

    /// Queue `line` now (lines keep the order of the calls); the future
    /// writes it out.
    fn send(
        &self,
        line: Vec<u8>,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let queued = match self {
            Output::Pipe(pipe) => {
                pipe.queue(&line);
                Ok(Some(pipe.clone()))
            }
            Output::Thread(lines) => lines
                .send(line)
                .map(|()| None)
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        async move {
            match queued? {
                Some(pipe) => pipe.flush().await,
                None => Ok(()),
            }
        }
    }
}

impl StdioTransport {
    fn start(stopping: CancelToken, max_message_bytes: usize) -> StdioTransport {
        let output = Output::start();
        let input = match PipeIn::stdin() {
            Some(pipe) => Input::Pipe {
                pipe,
                line: LineBuf::new(max_message_bytes),
                initialized: false,
            },
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                let stopping = stopping.clone();
                std::thread::spawn(move || {
                    let stdin = std::io::stdin();
                    read_lines(stdin.lock(), max_message_bytes, &tx);
                    // The client is gone: stop what it started.
                    stopping.cancel();
                });
                Input::Thread(rx)
            }
        };
        StdioTransport {
            input,
            output,
            stopping,
        }
    }

    /// The next message or error answer from stdin; `None` at its end.
    /// Cancel-safe: what was read stays in `self`.
    async fn next(&mut self) -> Option<Read> {
        loop {
            match &mut self.input {
                Input::Thread(rx) => return rx.recv().await,
                Input::Pipe {
                    pipe,
                    line,
                    initialized,
                } => match next_line(pipe, line).await {
                    Line::End => {
                        // The client is gone: stop what it started.
                        self.stopping.cancel();
                        return None;
                    }
                    read => {
                        if let Some(read) = judge(read, line.max, initialized) {
                            return Some(read);
                        }
                    }
                },
            }
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let sent = line.map(|line| self.output.send(line));
        async move { sent.map_err(std::io::Error::other)?.await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.next().await? {
                Read::Message(m) => return Some(*m),
                Read::Answer(line) => {
                    // Queued now, written by a task of its own so that
                    // dropping this future cannot hold the answer back.
                    let sent = self.output.send(line);
                    tokio::spawn(sent);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Input::Thread(rx) = &mut self.input {
            rx.close();
        }
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

/// What one line of input asks of the server.
enum Read {
    /// A message for `rmcp`.
    Message(Box<ClientJsonRpcMessage>),
    /// A line to answer with, at once (a JSON-RPC error).
    Answer(Vec<u8>),
}

/// Read messages from `input` until it ends, passing good ones and the
/// answers to bad ones to `reads`.
fn read_lines(mut input: impl BufRead, max: usize, reads: &mpsc::UnboundedSender<Read>) {
    let mut line = LineBuf::new(max);
    let mut initialized = false;
    loop {
        match read_line(&mut input, &mut line) {
            Line::End => return,
            read => {
                if let Some(read) = judge(read, max, &mut initialized)
                    && reads.send(read).is_err()
                {
                    return;
                }
            }
        }
    }
}

/// What to do with `line`: nothing (a blank line, an unanswerable
/// notification), take a message, or answer an error.
fn judge(line: Line, max: usize, initialized: &mut bool) -> Option<Read> {
    let line = match line {
        Line::End => return None,
        Line::Oversized => {
            let msg = format!("message too large: the limit is {max} bytes (--max-message-bytes)");
            return Some(Read::Answer(error_line(
                &Value::Null,
                INVALID_REQUEST,
                &msg,
            )));
        }
        Line::Complete(line) => line,
    };
    match classify(&line, *initialized) {
        Inbound::Blank | Inbound::Ignored => None,
        Inbound::Message(m) => {
            *initialized |= is_initialize(&m);
            Some(Read::Message(m))
        }
        Inbound::Error { id, code, message } => Some(Read::Answer(error_line(&id, code, &message))),
    }
}

enum Line {
    /// One whole line, without its end.
    Complete(Vec<u8>),
    /// A line past the limit was skipped.
    Oversized,
    End,
}

/// One line as it comes in, keeping at most `max` bytes of it.
struct LineBuf {
    line: Vec<u8>,
    oversized: bool,
    max: usize,
}

impl LineBuf {
    fn new(max: usize) -> LineBuf {
        LineBuf {
            line: Vec::new(),
            oversized: false,
            max,
        }
    }

    /// Nothing of a line has come in yet.
    fn is_empty(&self) -> bool {
        self.line.is_empty() && !self.oversized
    }

    /// Take `buf` up to the end of the line: the bytes used, and whether
    /// the line ended.
    fn take(&mut self, buf: &[u8]) -> (usize, bool) {
        let end = buf.iter().position(|&b| b == b'\n');
        let take = end.map_or(buf.len(), |i| i + 1);
        if !self.oversized && self.line.len() + take > self.max + 1 {
            self.oversized = true;
            self.line = Vec::new();
        }
        if !self.oversized {
            self.line.extend_from_slice(&buf[..take]);
        }
        (take, end.is_some())
    }

    /// The line that ended, and a fresh start for the next one.
    fn finish(&mut self) -> Line {
        if std::mem::take(&mut self.oversized) {
            return Line::Oversized;
        }
        let mut line = std::mem::take(&mut self.line);
        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            line.pop();
        }
        Line::Complete(line)
    }
}

/// Read one line from `input` into `line`.
fn read_line(input: &mut impl BufRead, line: &mut LineBuf) -> Line {
    loop {
        let (used, done) = match input.fill_buf() {
            Ok([]) if line.is_empty() => return Line::End,
            Ok([]) => (0, true),
            Ok(buf) => line.take(buf),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => (0, false),
            Err(_) => return Line::End,
        };
        input.consume(used);
        if done {
            return line.finish();
        }
    }
}

/// [`read_line`] from a pipe; cancel-safe (a part read stays in `line`).
async fn next_line(input: &mut PipeIn, line: &mut LineBuf) -> Line {
    loop {
        let (used, done) = match input.fill_buf().await {
            Ok([]) if line.is_empty() => return Line::End,
            Ok([]) => (0, true),
            Ok(buf) => line.take(buf),
            Err(_) => return Line::End,
        };
        input.consume(used);
        if done {
            return line.finish();
        }
    }
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
        let mut line = LineBuf::new(max);
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line) {
                Line::End => return out,
                Line::Oversized => out.push(Err("oversized")),
                Line::Complete(line) => out.push(Ok(String::from_utf8(line).unwrap())),
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
