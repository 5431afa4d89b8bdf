//! `http_raw`: one request exactly as described, through `wasi:http`.

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};

use crate::wasi_http::wasi::http::outgoing_handler;
use crate::wasi_http::wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
    http_error_code,
};
use crate::wasi_http::wasi::io::streams::StreamError;

/// Input of `http_raw`.
#[derive(serde::Deserialize, serde::Serialize, Clone)]
pub struct RawInput {
    method: String,
    /// `http`, `https` or anything else (sent as `other`); absent: unset.
    scheme: Option<String>,
    /// Sent verbatim: user info, odd IP spellings, ports and all.
    authority: Option<String>,
    path: Option<String>,
    /// Header names and values, appended in order, verbatim.
    #[serde(default)]
    headers: Vec<(String, String)>,
    /// Bytes of body to stream (`x` repeated), after `handle`.
    #[serde(default)]
    body_bytes: u64,
    /// Timeouts for `request-options`, in milliseconds.
    connect_timeout_ms: Option<u64>,
    first_byte_timeout_ms: Option<u64>,
    between_bytes_timeout_ms: Option<u64>,
    /// Stop reading the response body after this many bytes.
    read_limit: Option<u64>,
    /// Send the request this many times (default once).
    repeat: Option<u32>,
    /// Send from this many `fan-out` workers instead, each `repeat` times.
    workers: Option<u32>,
}

/// Sends the described request and reports everything that happened.
pub struct HttpRaw;

impl Tool for HttpRaw {
    type Input = RawInput;
    const NAME: &'static str = "http_raw";
    const DESCRIPTION: &'static str = "Send exactly the described HTTP request through wasi:http and \
         return, as JSON, the status, headers and body, or the error code at the step that failed.";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"method": {"type": "string"}}, "required": ["method"]})
    }

    fn call(&self, input: RawInput, cx: &Context) -> Result<Output, ToolError> {
        if let Some(n) = input.workers {
            let task = RawInput {
                workers: None,
                ..input.clone()
            };
            let task = warden_sdk::serde_json::to_string(&task)
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let results = warden_sdk::fan_out(&vec![task; n as usize])
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let shown: Vec<Value> = results
                .into_iter()
                .map(|r| match r {
                    Ok(out) => out.structured.unwrap_or(Value::Null),
                    Err(e) => json!({"worker_error": e.message}),
                })
                .collect();
            let report = json!({"workers": shown});
            return Ok(Output::text(report.to_string()).with_structured(report));
        }
        self.work_on(&input, cx)
    }

    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError> {
        let input: RawInput = warden_sdk::serde_json::from_str(task)
            .map_err(|e| ToolError::invalid_input(e.to_string()))?;
        self.work_on(&input, cx)
    }
}

impl HttpRaw {
    /// Send `input`'s request `repeat` times and report the last (and all).
    fn work_on(&self, input: &RawInput, _cx: &Context) -> Result<Output, ToolError> {
        let all: Vec<Value> = (0..input.repeat.unwrap_or(1).max(1))
            .map(|_| send(input))
            .collect();
        let mut report = all.last().cloned().unwrap_or(Value::Null);
        if all.len() > 1 {
            report["all"] = Value::from(all);
        }
        Ok(Output::text(report.to_string()).with_structured(report))
    }
}

fn failed(step: &str, detail: String) -> Value {
    json!({"failed": step, "error": detail})
}

fn send(input: &RawInput) -> Value {
    let headers = Fields::new();
    for (name, value) in &input.headers {
        if let Err(e) = headers.append(name, value.as_bytes()) {
            return failed("header", format!("{name}: {e:?}"));
        }
    }
    let request = OutgoingRequest::new(headers);
    let method = match input.method.as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        other => Method::Other(other.to_string()),
    };
    if request.set_method(&method).is_err() {
        return failed("method", input.method.clone());
    }
    let scheme = input.scheme.as_deref().map(|s| match s {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_string()),
    });
    if request.set_scheme(scheme.as_ref()).is_err() {
        return failed("scheme", format!("{:?}", input.scheme));
    }
    if request.set_authority(input.authority.as_deref()).is_err() {
        return failed("authority", format!("{:?}", input.authority));
    }
    if request.set_path_with_query(input.path.as_deref()).is_err() {
        return failed("path", format!("{:?}", input.path));
    }
    let Ok(body) = request.body() else {
        return failed("body", "no body".into());
    };
    let options = RequestOptions::new();
    let ms = |v: Option<u64>| v.map(|ms| ms * 1_000_000);
    let _ = options.set_connect_timeout(ms(input.connect_timeout_ms));
    let _ = options.set_first_byte_timeout(ms(input.first_byte_timeout_ms));
    let _ = options.set_between_bytes_timeout(ms(input.between_bytes_timeout_ms));
    let future = match outgoing_handler::handle(request, Some(options)) {
        Ok(f) => f,
        Err(e) => return failed("handle", code(&e)),
    };
    let mut sent = 0u64;
    let mut write_error = None;
    if let Ok(stream) = body.write() {
        let chunk = vec![b'x'; 4096];
        while sent < input.body_bytes {
            let n = (input.body_bytes - sent).min(chunk.len() as u64) as usize;
            if let Err(e) = stream.blocking_write_and_flush(&chunk[..n]) {
                write_error = Some(stream_error(e));
                break;
            }
            sent += n as u64;
        }
    }
    let finish = OutgoingBody::finish(body, None).err().map(|e| code(&e));
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(r))) => r,
        Some(Ok(Err(e))) => {
            return json!({"failed": "response", "error": code(&e), "sent": sent,
                          "write_error": write_error, "finish_error": finish});
        }
        other => return failed("response", format!("{:?}", other.map(|r| r.is_ok()))),
    };
    let status = response.status();
    let headers: Vec<(String, String)> = response
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
        .collect();
    let (bytes, read_error) = match response.consume() {
        Ok(body) => read_body(body, input.read_limit.unwrap_or(u64::MAX)),
        Err(()) => (Vec::new(), Some("no body".to_string())),
    };
    json!({
        "status": status,
        "headers": headers,
        "body": String::from_utf8_lossy(&bytes),
        "body_len": bytes.len(),
        "read_error": read_error,
        "sent": sent,
        "write_error": write_error,
        "finish_error": finish,
    })
}

fn read_body(body: IncomingBody, limit: u64) -> (Vec<u8>, Option<String>) {
    let mut bytes = Vec::new();
    let mut error = None;
    if let Ok(stream) = body.stream() {
        while (bytes.len() as u64) < limit {
            match stream.blocking_read(65536) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(e) => {
                    error = Some(stream_error(e));
                    break;
                }
            }
        }
    }
    (bytes, error)
}

fn stream_error(e: StreamError) -> String {
    match e {
        StreamError::Closed => "closed".into(),
        StreamError::LastOperationFailed(err) => match http_error_code(&err) {
            Some(c) => code(&c),
            // Body errors other than error codes: their first line says it.
            None => err
                .to_debug_string()
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        },
    }
}

/// The error code's name and payload, e.g. `HttpRequestDenied`.
fn code(e: &ErrorCode) -> String {
    let text = format!("{e:?}");
    text.strip_prefix("ErrorCode::")
        .unwrap_or(&text)
        .to_string()
}
